# Shell functions the GPU benchmarks' scripts share (bench/gpt2_train,
# bench/resnet_train); sourced, not run.

# torch_python: sets PY to $PYTHON, else the first of python3 and
# /usr/bin/python3 that imports torch, onnx and numpy; exits 77 ("skipped")
# when none does.
torch_python() {
  PY=${PYTHON:-}
  if [ -z "$PY" ]; then
    for candidate in python3 /usr/bin/python3; do
      if "$candidate" -c 'import torch, onnx, numpy' 2>/dev/null; then PY=$candidate; break; fi
    done
  fi
  if [ -z "$PY" ] || ! "$PY" -c 'import torch, onnx, numpy' 2>/dev/null; then
    echo "prepare: SKIP: no Python with torch, onnx and numpy here (set PYTHON; e.g. apt-get install python3-torch python3-onnx)" >&2
    exit 77
  fi
}

# device_mpt_train PREP LOGS SECONDS: on the GPU host, sets BIN to the
# mpt-train that prepare carried in PREP/bin when it starts, else builds one
# for sm_90 in build-gpu-bench (at most SECONDS; the log in LOGS/build.log);
# NOTE says which.
device_mpt_train() {
  local prep=$1 logs=$2 seconds=$3 b0
  BIN=$prep/bin/mpt-train
  if [ -x "$BIN" ] && "$BIN" --help >/dev/null 2>&1; then
    NOTE="carried: $(cat "$prep/bin/build.txt" 2>/dev/null)"
    return
  fi
  BIN=build-gpu-bench/bin/mpt-train
  b0=$(date +%s)
  if timeout "$seconds" bash -c '
      cmake -G Ninja -S runtime -B build-gpu-bench -DCMAKE_BUILD_TYPE=Release -DMPTRT_ENABLE_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DMPTRT_BUILD_TESTS=OFF -DMPTRT_REQUIRE_BLAS=OFF &&
      ninja -C build-gpu-bench mpt-train' >"$logs/build.log" 2>&1; then
    NOTE="built here in $(( $(date +%s) - b0 )) s (ninja mpt-train, sm_90)"
  else
    echo "run_gpu: building mpt-train failed (build.log); PyTorch phases only" >&2
    tail -20 "$logs/build.log"
    NOTE="build FAILED after $(( $(date +%s) - b0 )) s"
  fi
}
