//===- CudaParityTest.cpp - the CUDA backend against the CPU backend ------===//
//
// The CPU backend is the numerics reference; the CUDA backend must compute
// the same thing (docs/runtime.md, "The CUDA backend"). For every case of
// KernelCases.h whose kind the CUDA backend has, the one-kernel plan runs on
// both backends on the same random operands, and every result is compared:
//
//   - bit for bit for kinds that involve no rounding choice: data movement,
//     casts and quantize (the same Numerics.h rounding code on both),
//     compares and selects, and the IEEE-exact arithmetic (add, sub, mul,
//     div, sqrt, neg, abs, relu, max, min, clip, leaky_relu: the CUDA build
//     contracts nothing into FMAs), the training kinds that repeat the
//     CPU's f32 operations and double sums in its order (gather_grad,
//     global_norm, sgd_update, ...), reduce_max, and the pooling kinds and
//     their gradients (the CPU's arithmetic in the CPU's order, the
//     gradients gathered per input element);
//   - long sums computed in another order (matmul, gemm, conv and its
//     gradients): the whole tensor within a relative L2 difference of 2 ulp
//     of the result's dtype (plus 1e-6);
//   - the FP8 contractions (scaled_matmul, scaled_gemm) likewise, plus K
//     ulp of float32 (the sums' order) and 2^-10 (the FP8 tensor cores'
//     adds between promotions into float32 keep about 14 bits on Hopper):
//     a wrong scale or layout is off by far more;
//   - otherwise within 2 units in the last place of the result's dtype,
//     relative to the element (CUDA's expf / erff / tanhf / powf are within
//     2 ulp, glibc's within 1, so f32 results of a transcendental differ in
//     the last bits, and a narrow result may round the other way).
//
// Needs a GPU: skipped, saying why, on a host without one and in a build
// without the CUDA backend. The coverage test (which kinds the CUDA backend
// still lacks) needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "KernelCases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

namespace mptrt {
namespace test {
namespace {

/// Whether this build has the CUDA backend, and whether it can run here.
bool cudaBuilt() {
  int available = 0;
  const char *detail = nullptr;
  return mptrt_backend_probe("cuda", &available, &detail) == MPTRT_OK;
}

std::string cudaUnusableReason() {
  int available = 0;
  const char *detail = nullptr;
  if (mptrt_backend_probe("cuda", &available, &detail) != MPTRT_OK)
    return "this build has no CUDA backend (the CUDA toolkit was not found, or "
           "MPTRT_ENABLE_CUDA=OFF)";
  return available ? "" : std::string("no usable GPU: ") + detail;
}

std::set<std::string> kindsOf(const char *backend) {
  std::set<std::string> kinds;
  size_t count = 0;
  if (mptrt_backend_kind_count(backend, &count) != MPTRT_OK)
    return kinds;
  for (size_t i = 0; i < count; ++i) {
    const char *kind = nullptr;
    if (mptrt_backend_kind_name(backend, i, &kind) == MPTRT_OK)
      kinds.insert(kind);
  }
  return kinds;
}

/// Kinds whose results must be bit-identical on both backends.
const std::set<std::string> kExactKinds = {
    "copy", "identity", "reshape", "flatten", "squeeze", "unsqueeze", "transpose", "concat",
    "split", "slice", "gather", "expand", "trilu", "constant_of_shape", "cast", "quantize", "where",
    "equal", "less", "greater", "not", "add", "sub", "mul", "div", "sqrt", "neg", "abs", "relu",
    "max", "min", "clip", "leaky_relu", "dropout", "slice_grad", "advance_step", "max_pool",
    // Training and backward data movement (docs/runtime.md, "The CUDA backend"): the
    // CPU's f32 operation sequence with fmaf where it has std::fma, and its double
    // sums in its order (gather_grad per row in index order; global_norm per fixed
    // block in element order, then in block order). Not here: adamw_update and
    // lr_schedule, whose double pow / cos are CUDA's (2 ulp) before an f32 rounding.
    "gather_grad", "scale_loss", "unscale", "all_finite", "global_norm", "clip_by_norm",
    "sgd_update", "update_loss_scale", "amax", "update_fp8_scale",
    // The same float32 / double operations in the same order as the CPU's
    // (PoolingKernels.cu: per output window, and per input element for the
    // gathered gradients), and a maximum, which rounds nothing.
    "average_pool", "global_average_pool", "max_pool_grad", "average_pool_grad", "reduce_max"};

/// Kinds whose results are long float32 sums computed in another order on
/// each backend (OpenBLAS's blocking or the CPU's im2col GEMMs against
/// cuBLASLt or a direct loop): single elements that cancel may differ by
/// far more than 2 ulp of themselves, so these are compared as whole
/// tensors, relative L2 within 2 ulp of the result's dtype plus 1e-6.
const std::set<std::string> kSummedKinds = {"matmul", "gemm", "conv", "conv_grad_input",
                                            "conv_grad_weight"};

/// The FP8 contractions: summed kinds whose CUDA products come from FP8
/// tensor cores (cuBLASLt, precise accumulation), whose adds inside one MMA
/// keep fewer bits than float32 before the partial sum is promoted.
const std::set<std::string> kFp8Kinds = {"scaled_matmul", "scaled_gemm"};

/// An upper bound on a contraction's K: the largest dimension of its lhs.
double depthBound(const Case &c) {
  int64_t k = 1;
  for (int64_t d : c.operands[0].shape)
    k = std::max(k, d);
  return static_cast<double>(k);
}

/// The length of conv_grad_weight's sums (images x output positions):
/// cuDNN adds them in f32 in its own order (the CPU in double), which
/// allows about sqrt(L) units of f32 rounding (docs/runtime.md,
/// "Convolutions through cuDNN"); 1 for the other kinds.
double weightGradientSumLength(const Case &c) {
  if (c.kind != "conv_grad_weight")
    return 1;
  const std::vector<int64_t> &dy = c.operands[1].shape;
  double n = 1;
  for (size_t i = 0; i < dy.size(); ++i)
    if (i != 1)
      n *= static_cast<double>(dy[i]);
  return n;
}

/// Kinds of the CPU backend the CUDA backend does not have yet. The coverage
/// test fails when a kind is missing and not listed here, and when a listed
/// kind has arrived (delete its entry then).
const std::set<std::string> kNotYetOnCuda = {};

/// The outputs of `c` run on `backend`; false (with a failure) if it fails.
bool runOn(const char *backend, const Case &c, std::vector<std::vector<uint8_t>> *outputs) {
  const std::vector<uint8_t> bytes = planOf(c, "main");
  Model model;
  if (!model.loadMemory(bytes.data(), bytes.size(), backend)) {
    ADD_FAILURE() << backend << ": " << describeCase(c) << ": " << lastError();
    return false;
  }
  for (size_t i = 0; i < c.operands.size(); ++i)
    if (!model.bindInput("in" + std::to_string(i), static_cast<mptrt_dtype>(c.operands[i].dtype),
                         c.operands[i].shape, c.operands[i].bytes.data(),
                         c.operands[i].bytes.size())) {
      ADD_FAILURE() << backend << ": " << describeCase(c) << ": " << lastError();
      return false;
    }
  if (!model.run("main")) {
    ADD_FAILURE() << backend << ": " << describeCase(c) << ": " << lastError();
    return false;
  }
  outputs->clear();
  for (size_t i = 0; i < c.results.size(); ++i) {
    std::vector<uint8_t> out(c.results[i].bytes.size());
    if (mptrt_read_output(model.handle(), ("out" + std::to_string(i)).c_str(), out.data(),
                          out.size()) != MPTRT_OK) {
      ADD_FAILURE() << backend << ": " << describeCase(c) << ": " << lastError();
      return false;
    }
    outputs->push_back(std::move(out));
  }
  return true;
}

/// A float tensor's bytes as doubles (HostTensor::values, once per result).
std::vector<double> floatsOf(DType dtype, const std::vector<uint8_t> &bytes) {
  HostTensor t(dtype, {static_cast<int64_t>(bytes.size() / plan::dtypeSize(dtype))});
  std::memcpy(t.bytes.data(), bytes.data(), bytes.size());
  return t.values();
}

/// Compares one result: bit for bit, or within 2 ulp of its dtype.
void expectMatch(const Case &c, size_t r, const std::vector<uint8_t> &cpu,
                 const std::vector<uint8_t> &gpu) {
  const DType dtype = c.results[r].dtype;
  ASSERT_EQ(cpu.size(), gpu.size());
  if (kExactKinds.count(c.kind) || !plan::isFloatDType(dtype)) {
    EXPECT_TRUE(cpu == gpu) << describeCase(c) << " result " << r
                            << ": the CUDA bytes differ from the CPU's";
    return;
  }
  const std::vector<double> want = floatsOf(dtype, cpu), got = floatsOf(dtype, gpu);
  const size_t n = want.size();
  const double ulp = dtypeEpsilon(dtype);
  if (kSummedKinds.count(c.kind) || kFp8Kinds.count(c.kind)) {
    double diff = 0, norm = 0;
    for (size_t i = 0; i < n; ++i) {
      const double a = want[i], b = got[i];
      diff += (a - b) * (a - b);
      norm += a * a;
    }
    const double rel = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    const double bound = kFp8Kinds.count(c.kind)
                             ? 2 * ulp + 1e-6 + depthBound(c) * 0x1p-23 + 0x1p-10
                             : 2 * ulp + 1e-6 + 2 * std::sqrt(weightGradientSumLength(c)) * 0x1p-24;
    EXPECT_LE(rel, bound) << describeCase(c) << " result " << r << ": relative L2 difference "
                          << rel;
    return;
  }
  size_t bad = 0, first = n;
  for (size_t i = 0; i < n; ++i) {
    const double a = want[i], b = got[i];
    if (std::isnan(a) && std::isnan(b))
      continue;
    if (!(std::fabs(a - b) <= 2 * ulp * std::fabs(a) + dtypeMinSpacing(dtype))) {
      bad += 1;
      first = std::min(first, i);
    }
  }
  EXPECT_EQ(bad, 0u) << describeCase(c) << " result " << r << ": " << bad << " of " << n
                     << " elements beyond 2 ulp; the first, element " << first << ": cpu "
                     << (first < n ? want[first] : 0) << ", cuda " << (first < n ? got[first] : 0);
}

// Tests that the list of kinds the CUDA backend lacks is exact (no GPU
// needed: a backend's kinds are known without its device).
TEST(CudaBackend, CoverageIsTheListedOne) {
  if (!cudaBuilt())
    GTEST_SKIP() << cudaUnusableReason();
  const std::set<std::string> cpu = kindsOf("cpu"), gpu = kindsOf("cuda");
  ASSERT_GT(cpu.size(), 80u);
  for (const std::string &k : gpu)
    EXPECT_TRUE(cpu.count(k)) << "the CUDA backend has '" << k << "', the CPU backend not";
  for (const std::string &k : cpu) {
    if (gpu.count(k))
      EXPECT_FALSE(kNotYetOnCuda.count(k))
          << "'" << k << "' is on CUDA now: delete it from kNotYetOnCuda";
    else
      EXPECT_TRUE(kNotYetOnCuda.count(k))
          << "the CUDA backend has no '" << k << "', and kNotYetOnCuda does not list it";
  }
  std::printf("CUDA backend: %zu of %zu CPU kernel kinds\n", gpu.size(), cpu.size());
}

// Tests every kernel case the CUDA backend can run against the CPU backend.
TEST(CudaBackend, EveryKindMatchesTheCpuBackend) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  const std::set<std::string> gpu = kindsOf("cuda");
  int compared = 0;
  for (const Case &c : allCases()) {
    if (!gpu.count(c.kind))
      continue;
    SCOPED_TRACE(describeCase(c));
    std::vector<std::vector<uint8_t>> cpuOut, gpuOut;
    if (!runOn("cpu", c, &cpuOut) || !runOn("cuda", c, &gpuOut))
      continue;
    for (size_t r = 0; r < c.results.size(); ++r)
      expectMatch(c, r, cpuOut[r], gpuOut[r]);
    compared += 1;
  }
  EXPECT_GT(compared, 0);
  std::printf("compared %d kernel cases on CUDA and CPU\n", compared);
}

} // namespace
} // namespace test
} // namespace mptrt
