#!/usr/bin/env python3
"""CPU forward-pass benchmark: MPT against PyTorch eager on the same model,
the same weights and the same inputs.

For each fixture under ``test/fixtures/models/<name>/`` (default: mlp, gpt,
resnet18, mobilenetv2):

* MPT: ``mpt-compile model.onnx -o <tmp>/model.mptp``, then
  ``mpt-run <plan> --input NAME=input_NAME.npy ... --warmup W --repeat R
  --output-dir <tmp>/out``; the time is the median wall time per run that
  mpt-run prints (the time of ``mptrt_run`` alone: no plan loading, no file
  I/O). The outputs of the last run are compared with the fixture's
  reference outputs and the max abs difference is reported (MPT may compute
  in reduced precision, so this is information, not a pass/fail check).
* PyTorch: the module is rebuilt from the model definitions in
  ``scripts/gen_fixtures.py`` (the code the fixture was exported from), its
  state_dict is filled from the ONNX initializers by name, and it runs in
  eager mode under ``torch.inference_mode()`` with ``--threads`` threads,
  W untimed and R timed calls; the time is the median. Its outputs must
  match the fixture's reference outputs (max abs diff <= 1e-4), otherwise
  the weights were not mapped correctly. If a model cannot be mapped (a
  state_dict entry with no ONNX counterpart, an ONNX initializer left over,
  a shape mismatch or wrong outputs) the script says why and times
  onnxruntime on the ONNX file instead, labelled as such.

Both sides get the same thread count: ``torch.set_num_threads(T)`` and, for
mpt-run, ``MPTRT_NUM_THREADS=T OPENBLAS_NUM_THREADS=T``.

Usage (from the repository root)::

    python3 bench/forward_cpu.py [--models mlp gpt ...] [--warmup 10]
        [--repeat 50] [--threads N] [--json out.json]
        [--mpt-compile build/bin/mpt-compile] [--mpt-run build/bin/mpt-run]
        [--no-mpt]

Needs torch, onnx and numpy (onnxruntime only for the fallback peer). See
bench/README.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnx.numpy_helper
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["mlp", "gpt", "resnet18", "mobilenetv2"]
REFERENCE_TOLERANCE = 1e-4  # the tolerance scripts/gen_fixtures.py uses


def load_gen_fixtures():
    """Imports scripts/gen_fixtures.py as a module (it generates nothing on
    import; its onnxruntime import is optional)."""
    path = os.path.join(REPO, "scripts", "gen_fixtures.py")
    spec = importlib.util.spec_from_file_location("gen_fixtures", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_fixtures"] = mod  # dataclasses look the module up
    spec.loader.exec_module(mod)
    return mod


# --------------------------------------------------------------------------
# Fixture files
# --------------------------------------------------------------------------


class Fixture:
    """One fixture directory: the ONNX model and its reference data."""

    def __init__(self, root: str, name: str):
        self.name = name
        self.dir = os.path.join(root, name)
        self.onnx_path = os.path.join(self.dir, "model.onnx")
        self.proto = onnx.load(self.onnx_path)
        g = self.proto.graph
        init_names = {i.name for i in g.initializer}
        self.input_names = [i.name for i in g.input if i.name not in init_names]
        self.output_names = [o.name for o in g.output]
        self.input_paths = {n: os.path.join(self.dir, f"input_{n}.npy") for n in self.input_names}
        self.inputs = {n: np.load(p) for n, p in self.input_paths.items()}
        self.outputs = {n: np.load(os.path.join(self.dir, f"output_{n}.npy"))
                        for n in self.output_names}

    def shapes_text(self) -> str:
        return ", ".join(f"{n} {a.dtype.name}{list(a.shape)}" for n, a in self.inputs.items())


def max_abs_diff(got: dict, want: dict) -> float:
    """Max |got - want| over all outputs (inf on a shape mismatch or NaN)."""
    worst = 0.0
    for name, ref in want.items():
        g = np.asarray(got[name])
        if g.shape != ref.shape:
            return float("inf")
        if ref.size:
            d = float(np.max(np.abs(g.astype(np.float64) - ref.astype(np.float64))))
            if not np.isfinite(d):
                return float("inf")
            worst = max(worst, d)
    return worst


# --------------------------------------------------------------------------
# PyTorch peer
# --------------------------------------------------------------------------


class MappingError(RuntimeError):
    """The ONNX initializers cannot be mapped onto the module's state_dict."""


def identity_aliases(proto: onnx.ModelProto) -> dict:
    """Identity-node output -> input, followed to the end of the chain. The
    exporter deduplicates identical buffers this way (gpt's second causal
    mask is Identity(blocks.0.attn.causal))."""
    alias = {n.output[0]: n.input[0] for n in proto.graph.node if n.op_type == "Identity"}
    out = {}
    for name in alias:
        src = name
        seen = set()
        while src in alias and src not in seen:
            seen.add(src)
            src = alias[src]
        out[name] = src
    return out


def build_torch_model(gf, fx: Fixture):
    """Rebuilds the fixture's module and loads the ONNX weights into it.

    Returns (module, notes). Raises MappingError if the mapping is not exact.
    """
    spec = next((f for f in gf.FIXTURES if f.name == fx.name), None)
    if spec is None:
        raise MappingError(f"scripts/gen_fixtures.py has no fixture named {fx.name!r}")
    # Build with a different seed than the fixture's: every weight the module
    # starts with is wrong, so matching the reference outputs below proves
    # that all of them were replaced by the ONNX values.
    module = spec.build(torch.Generator().manual_seed(0)).eval()

    inits = {i.name: onnx.numpy_helper.to_array(i) for i in fx.proto.graph.initializer}
    aliases = identity_aliases(fx.proto)
    state = module.state_dict(keep_vars=True)
    # Parameters shared between keys (weight tying): key -> first key with
    # the same tensor.
    first_key_of = {}
    tied = {}
    for key, t in state.items():
        ident = (t.data_ptr(), t.shape, t.stride()) if t.numel() else None
        if ident is not None and ident in first_key_of:
            tied[key] = first_key_of[ident]
        elif ident is not None:
            first_key_of[ident] = key

    new_state, used, notes, problems = {}, set(), [], []
    for key, t in state.items():
        src = key if key in inits else aliases.get(key)
        if src in inits:
            arr = inits[src]
            if tuple(arr.shape) != tuple(t.shape):
                problems.append(f"{key}: ONNX {src} is {list(arr.shape)}, torch {list(t.shape)}")
                continue
            new_state[key] = torch.from_numpy(arr.copy()).to(t.dtype)
            used.add(src)
            if src != key:
                notes.append(f"{key} <- {src} (ONNX Identity)")
        elif key in tied and tied[key] in inits:
            new_state[key] = torch.from_numpy(inits[tied[key]].copy()).to(t.dtype)
            used.add(tied[key])
            notes.append(f"{key} tied to {tied[key]}")
        elif key.endswith("num_batches_tracked"):
            # Only read in train mode (momentum=None); not exported.
            new_state[key] = t.detach().clone()
        else:
            problems.append(f"{key}: no ONNX initializer")
    leftover = sorted(set(inits) - used)
    if leftover:
        problems.append("ONNX initializers not mapped to the module: " + ", ".join(leftover[:5])
                        + (" ..." if len(leftover) > 5 else ""))
    if problems:
        raise MappingError("; ".join(problems))
    module.load_state_dict(new_state, strict=True)
    if tied:
        # load_state_dict copies into the shared tensor twice; check that the
        # tie survived (it must: both keys got the same ONNX values).
        for key, first in tied.items():
            if module.state_dict()[key].data_ptr() != module.state_dict()[first].data_ptr():
                raise MappingError(f"weight tie {key} = {first} was broken")
    notes.append(f"{len(used)} ONNX initializers -> {len(state)} state_dict entries")
    return module.eval(), notes


def time_calls(fn, warmup: int, repeat: int) -> list:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def stats(times_ms: list) -> dict:
    return {"median_ms": statistics.median(times_ms), "min_ms": min(times_ms),
            "mean_ms": statistics.fmean(times_ms), "runs": len(times_ms)}


def run_torch(gf, fx: Fixture, args) -> dict:
    module, notes = build_torch_model(gf, fx)
    feeds = [torch.from_numpy(fx.inputs[n].copy()) for n in fx.input_names]

    def call():
        return module(*feeds)

    with torch.inference_mode():
        out = call()
        out = out if isinstance(out, (tuple, list)) else (out,)
        got = {n: o.numpy() for n, o in zip(fx.output_names, out)}
        diff = max_abs_diff(got, fx.outputs)
        if not diff <= REFERENCE_TOLERANCE:
            raise MappingError(f"PyTorch outputs differ from the reference by {diff:.3e} "
                               f"(> {REFERENCE_TOLERANCE:.0e}) after loading the ONNX weights")
        times = time_calls(call, args.warmup, args.repeat)
    return {"peer": "pytorch", "max_abs_diff_vs_reference": diff, "notes": notes, **stats(times)}


def run_onnxruntime_peer(fx: Fixture, args, reason: str) -> dict:
    try:
        import onnxruntime as ort
    except ImportError:
        return {"peer": "none", "error": f"PyTorch mapping failed ({reason}) and onnxruntime "
                                         "is not installed for the fallback"}
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(fx.onnx_path, so, providers=["CPUExecutionProvider"])
    feeds = {n: fx.inputs[n] for n in fx.input_names}
    got = dict(zip(fx.output_names, sess.run(fx.output_names, feeds)))
    diff = max_abs_diff(got, fx.outputs)
    times = time_calls(lambda: sess.run(fx.output_names, feeds), args.warmup, args.repeat)
    return {"peer": "onnxruntime", "fallback_reason": reason,
            "max_abs_diff_vs_reference": diff, **stats(times)}


def run_peer(gf, fx: Fixture, args) -> dict:
    try:
        return run_torch(gf, fx, args)
    except MappingError as e:
        print(f"  [{fx.name}] cannot run it in PyTorch: {e}; timing onnxruntime instead",
              file=sys.stderr)
        return run_onnxruntime_peer(fx, args, str(e))


# --------------------------------------------------------------------------
# MPT
# --------------------------------------------------------------------------


def output_file_name(name: str) -> str:
    """The file name mpt-run gives an output (see docs/runtime.md)."""
    s = "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_" for c in name)
    return "_" + s if s in ("", ".", "..") else s


def load_npy_any(path: str) -> np.ndarray:
    """Loads an mpt-run output; bf16 ('<V2') becomes float32."""
    a = np.load(path)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:
        bits = a.view("<u2").astype(np.uint32) << 16
        return bits.view(np.float32)
    return a


def run_proc(cmd: list, env=None, timeout=1800) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env, timeout=timeout)


MEDIAN_RE = re.compile(r"wall time min ([0-9.]+) ms, median ([0-9.]+) ms, mean ([0-9.]+) ms")
SINGLE_RE = re.compile(r"wall time ([0-9.]+) ms")


def tail(text: str, n: int = 6) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def run_mpt(fx: Fixture, args, work: str) -> dict:
    plan = os.path.join(work, f"{fx.name}.mptp")
    out_dir = os.path.join(work, f"{fx.name}_out")
    t0 = time.perf_counter()
    p = run_proc([args.mpt_compile, fx.onnx_path, "-o", plan])
    compile_s = time.perf_counter() - t0
    if p.returncode != 0 or not os.path.exists(plan):
        return {"error": f"mpt-compile failed (exit {p.returncode}): {tail(p.stdout)}"}

    env = dict(os.environ)
    env["MPTRT_NUM_THREADS"] = str(args.threads)
    env["OPENBLAS_NUM_THREADS"] = str(args.threads)
    cmd = [args.mpt_run, plan]
    for n in fx.input_names:
        cmd += ["--input", f"{n}={fx.input_paths[n]}"]
    cmd += ["--warmup", str(args.warmup), "--repeat", str(args.repeat), "--output-dir", out_dir]
    entry = args.mpt_entry
    p = run_proc(cmd + (["--entry", entry] if entry else []), env=env)
    if p.returncode != 0 and not entry and "choose one with --entry" in p.stdout:
        # A plan with several entry points (e.g. a training step too): time
        # the forward pass.
        entry = "forward"
        p = run_proc(cmd + ["--entry", entry], env=env)
    if p.returncode != 0:
        return {"error": f"mpt-run failed (exit {p.returncode}): {tail(p.stdout)}",
                "compile_s": compile_s}
    m = MEDIAN_RE.search(p.stdout)
    if m:
        res = {"min_ms": float(m.group(1)), "median_ms": float(m.group(2)),
               "mean_ms": float(m.group(3))}
    else:
        m = SINGLE_RE.search(p.stdout)
        if not m:
            return {"error": f"cannot find the wall time in mpt-run's output: {tail(p.stdout)}"}
        v = float(m.group(1))
        res = {"min_ms": v, "median_ms": v, "mean_ms": v}
    res["runs"] = args.repeat
    res["entry"] = entry or "(the plan's only entry point)"
    res["compile_s"] = compile_s
    peak = re.search(r"peak arena (\d+) bytes", p.stdout)
    if peak:
        res["peak_arena_bytes"] = int(peak.group(1))
    try:
        got = {n: load_npy_any(os.path.join(out_dir, output_file_name(n) + ".npy"))
               for n in fx.output_names}
        res["max_abs_diff_vs_reference"] = max_abs_diff(got, fx.outputs)
    except (OSError, ValueError) as e:
        res["max_abs_diff_vs_reference"] = None
        res["output_error"] = str(e)
    return res


# --------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------


def fmt_ms(v) -> str:
    if v is None:
        return "n/a"
    return f"{v:.4f}" if v < 1 else f"{v:.3f}"


def fmt_diff(v) -> str:
    return "n/a" if v is None else f"{v:.1e}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=DEFAULT_MODELS, metavar="NAME",
                    help=f"fixtures to run (default: {' '.join(DEFAULT_MODELS)})")
    ap.add_argument("--fixtures", default=os.path.join(REPO, "test", "fixtures", "models"),
                    help="fixture root (default: <repo>/test/fixtures/models)")
    ap.add_argument("--warmup", type=int, default=10, help="untimed runs first (default 10)")
    ap.add_argument("--repeat", type=int, default=50, help="timed runs (default 50)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads for both sides (default: os.cpu_count() = "
                         f"{os.cpu_count()})")
    ap.add_argument("--mpt-compile", default=os.path.join(REPO, "build", "bin", "mpt-compile"),
                    help="mpt-compile binary (default: <repo>/build/bin/mpt-compile)")
    ap.add_argument("--mpt-run", default=os.path.join(REPO, "build", "bin", "mpt-run"),
                    help="mpt-run binary (default: <repo>/build/bin/mpt-run)")
    ap.add_argument("--mpt-entry", default="",
                    help="entry point for mpt-run (default: the plan's only one, else "
                         "'forward')")
    ap.add_argument("--no-mpt", action="store_true", help="time only the PyTorch side")
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument("--keep", metavar="DIR",
                    help="write plans and MPT outputs to DIR and keep them (default: a "
                         "temporary directory)")
    args = ap.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0 or args.threads < 1:
        ap.error("--repeat and --threads must be >= 1, --warmup >= 0")

    torch.set_num_threads(args.threads)
    gf = load_gen_fixtures()

    mpt_ok = not args.no_mpt
    if mpt_ok:
        for tool in (args.mpt_compile, args.mpt_run):
            if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
                print(f"warning: {tool} not found or not executable; skipping the MPT side "
                      "(build it, or pass --mpt-compile / --mpt-run, or --no-mpt)",
                      file=sys.stderr)
                mpt_ok = False
                break

    info = {
        "torch": torch.__version__, "onnx": onnx.__version__, "numpy": np.__version__,
        "python": platform.python_version(), "machine": platform.machine(),
        "processor": platform.processor(), "cpu_count": os.cpu_count(),
        "threads": args.threads, "warmup": args.warmup, "repeat": args.repeat,
        "mpt_compile": args.mpt_compile if mpt_ok else None,
        "mpt_run": args.mpt_run if mpt_ok else None,
    }
    print(f"torch {torch.__version__}, {args.threads} threads, warmup {args.warmup}, "
          f"repeat {args.repeat}; times are the median per forward call")

    work = args.keep or tempfile.mkdtemp(prefix="mpt_bench_")
    os.makedirs(work, exist_ok=True)
    results = []
    try:
        for name in args.models:
            fx = Fixture(args.fixtures, name)
            print(f"[{name}] inputs: {fx.shapes_text()}", flush=True)
            row = {"model": name, "inputs": {n: {"dtype": a.dtype.name, "shape": list(a.shape)}
                                             for n, a in fx.inputs.items()}}
            row["peer"] = run_peer(gf, fx, args)
            row["mpt"] = run_mpt(fx, args, work) if mpt_ok else {"error": "not run"}
            if row["mpt"].get("error") and mpt_ok:
                print(f"  [{name}] MPT: {row['mpt']['error']}", file=sys.stderr)
            m, t = row["mpt"].get("median_ms"), row["peer"].get("median_ms")
            row["ratio_mpt_over_peer"] = m / t if m is not None and t else None
            results.append(row)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    print()
    hdr = ("model", "inputs (batch = dim 0)", "MPT ms", "PyTorch ms", "MPT/PyTorch",
           "MPT |d|", "PyTorch |d|")
    rows = []
    for r in results:
        peer = r["peer"]
        peer_ms = fmt_ms(peer.get("median_ms"))
        if peer.get("peer") == "onnxruntime":
            peer_ms += " (ORT)"
        ratio = r["ratio_mpt_over_peer"]
        rows.append((r["model"],
                     "; ".join(f"{n} {v['dtype']}{v['shape']}" for n, v in r["inputs"].items()),
                     fmt_ms(r["mpt"].get("median_ms")), peer_ms,
                     "n/a" if ratio is None else f"{ratio:.2f}",
                     fmt_diff(r["mpt"].get("max_abs_diff_vs_reference")),
                     fmt_diff(peer.get("max_abs_diff_vs_reference"))))
    widths = [max(len(str(x)) for x in col) for col in zip(hdr, *rows)]
    for line in [hdr] + rows:
        print("  ".join(str(x).ljust(w) if i < 2 else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(line, widths))))
    print("\n|d| = max abs difference of the outputs from the fixture's reference outputs "
          "(onnxruntime, f32).")
    for r in results:
        if r["peer"].get("peer") == "onnxruntime":
            print(f"{r['model']}: the peer is onnxruntime, not PyTorch, because "
                  f"{r['peer']['fallback_reason']}")
        if r["peer"].get("error"):
            print(f"{r['model']}: no peer timing: {r['peer']['error']}")
        if mpt_ok and r["mpt"].get("error"):
            print(f"{r['model']}: no MPT timing: {r['mpt']['error']}")
    if not mpt_ok:
        print("MPT side not run.")

    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"info": info, "results": results}, fh, indent=2)
            fh.write("\n")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
