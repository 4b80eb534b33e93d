//===- Fp8GemmBench.cpp - FP8 against bf16 GEMMs on the CUDA backend ------===//
//
// Times one-kernel plans on the CUDA backend (or the backend given as the
// second argument; "cpu" checks the plans on a host without a GPU) at
// M = N = K = 4096 (or the size given as the first argument), each run a
// whole mptrt_run (launches,
// the kernel's own transposes and scale kernel, and the final synchronize):
//
//   gemm         bf16 A [M, K], B [N, K] (trans_b), f32 result: cuBLASLt bf16
//   scaled_gemm  e4m3 A and B the same way: cuBLASLt FP8, TN as they are
//   scaled_gemm  e4m3 B stored [K, N]: TN after a transposed copy of B
//
// and prints each time, its TFLOP/s and the FP8 speedups over bf16 (issue
// 14's goal: >= 1.4x on an H100). scripts/gpu-check.sh runs it. Exit status:
// 0 after timing, 2 without a usable backend, 1 when a plan fails.
//
//===----------------------------------------------------------------------===//
#include "KernelCases.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace mptrt;
using namespace mptrt::test;

namespace {

/// Milliseconds per run of `c` on `backend` (after warm-up), or a negative
/// value.
double timeOn(const char *backend, const Case &c, int runs) {
  const std::vector<uint8_t> bytes = planOf(c, "main");
  Model model;
  if (!model.loadMemory(bytes.data(), bytes.size(), backend)) {
    std::fprintf(stderr, "%s: %s\n", describeCase(c).c_str(), lastError().c_str());
    return -1;
  }
  for (size_t i = 0; i < c.operands.size(); ++i)
    if (!model.bindInput("in" + std::to_string(i), static_cast<mptrt_dtype>(c.operands[i].dtype),
                         c.operands[i].shape, c.operands[i].bytes.data(),
                         c.operands[i].bytes.size())) {
      std::fprintf(stderr, "%s: %s\n", describeCase(c).c_str(), lastError().c_str());
      return -1;
    }
  for (int i = 0; i < 3; ++i)
    if (!model.run("main")) {
      std::fprintf(stderr, "%s: %s\n", describeCase(c).c_str(), lastError().c_str());
      return -1;
    }
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i)
    if (!model.run("main"))
      return -1;
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  return took.count() / runs;
}

} // namespace

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 4096;
  const char *backend = argc > 2 ? argv[2] : "cuda";
  const int runs = std::string(backend) == "cuda" ? 20 : 2;
  const T a = {n, n}, b = {n, n}, y = {n, n};
  const Operand scale = {F32, {}, 0.5, 2.0};
  const Case bf16 = make("gemm", {{BF16, a}, {BF16, b}}, {{F32, y}}, {aInt("trans_b", 1)});
  const Case fp8Tn =
      make("scaled_gemm", {{F8, a}, {F8, b}, scale, scale}, {{F32, y}}, {aInt("trans_b", 1)});
  const Case fp8Nn = make("scaled_gemm", {{F8, a}, {F8, b}, scale, scale}, {{F32, y}}, {});
  int hasFp8 = 0;
  if (mptrt_backend_has_kernel(backend, "scaled_gemm", &hasFp8) != MPTRT_OK || !hasFp8) {
    std::printf("fp8-gemm-bench: no backend '%s' with scaled_gemm in this build\n", backend);
    return 2;
  }
  const double flops = 2.0 * double(n) * double(n) * double(n);
  struct Row {
    const char *name;
    const Case *c;
    double ms;
  } rows[] = {{"gemm bf16 (TN)", &bf16, 0},
              {"scaled_gemm e4m3 (TN)", &fp8Tn, 0},
              {"scaled_gemm e4m3 (NN, B transposed)", &fp8Nn, 0}};
  for (Row &r : rows) {
    r.ms = timeOn(backend, *r.c, runs);
    if (r.ms < 0) {
      std::printf("fp8-gemm-bench: %s failed: %s\n", r.name, lastError().c_str());
      return lastError().find("GPU") != std::string::npos ||
                     lastError().find("CUDA device") != std::string::npos
                 ? 2
                 : 1;
    }
    std::printf("%-38s %lldx%lldx%lld  %8.3f ms  %7.1f TFLOP/s\n", r.name, (long long)n,
                (long long)n, (long long)n, r.ms, flops / (r.ms * 1e-3) / 1e12);
  }
  std::printf("fp8 speedup over bf16: %.2fx (TN), %.2fx (NN); goal >= 1.4x\n",
              rows[0].ms / rows[1].ms, rows[0].ms / rows[2].ms);
  return 0;
}
