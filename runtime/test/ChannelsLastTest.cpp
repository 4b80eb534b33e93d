//===- ChannelsLastTest.cpp - conv and batch norm with layout = nhwc ------===//
//
// A conv or batch norm kernel with `layout = nhwc` takes and gives its
// activations channels last ([N, spatial..., C]) and means what its
// channels-first form means (ChannelsLast.h): on the same values, its
// results are the channels-first kernel's, transposed, bit for bit. On the
// CPU, and on CUDA where a GPU is present.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "cpu/CpuKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace mptrt;
using namespace mptrt::test;

namespace {

/// One kernel: its operands and result types channels first, and which of
/// them are activations.
struct Case {
  std::string kind;
  std::vector<HostTensor> operands, results;
  std::vector<Attribute> attrs;
  std::vector<size_t> actOperands, actResults;
};

void expectSameBits(const Case &c, const char *backend) {
  KernelRun first = runKernel(c.kind, c.operands, c.results, c.attrs, backend);
  ASSERT_TRUE(first.ok) << c.kind << ": " << first.error;
  std::vector<HostTensor> ops = c.operands, res = c.results;
  for (size_t i : c.actOperands)
    ops[i] = permuteChannels(ops[i], true);
  for (size_t i : c.actResults)
    res[i] = permuteChannels(res[i], true);
  std::vector<Attribute> attrs = c.attrs;
  attrs.push_back(Attribute::makeString("layout", "nhwc"));
  KernelRun last = runKernel(c.kind, ops, res, attrs, backend);
  ASSERT_TRUE(last.ok) << c.kind << " nhwc: " << last.error;
  for (size_t r = 0; r < c.results.size(); ++r) {
    bool act = false;
    for (size_t i : c.actResults)
      act = act || i == r;
    const HostTensor got = act ? permuteChannels(last.outputs[r], false) : last.outputs[r];
    EXPECT_TRUE(got.bytes == first.outputs[r].bytes)
        << backend << " " << c.kind << " result " << r << ": nhwc differs from nchw";
  }
}

std::vector<Case> cases() {
  std::mt19937 rng(41);
  const DType B = DType::BF16, F = DType::F32;
  const std::vector<int64_t> x = {2, 6, 5, 7}, y = {2, 8, 5, 7}, w = {8, 3, 3, 3};
  const std::vector<Attribute> conv = {Attribute::makeInts("pads", {1, 1, 1, 1}),
                                       Attribute::makeInt("group", 2)};
  std::vector<Case> cs;
  cs.push_back({"conv",
                {randomTensor(B, x, rng), randomTensor(B, w, rng), randomTensor(F, {8}, rng)},
                {HostTensor(B, y)},
                conv,
                {0},
                {0}});
  cs.push_back({"conv_grad_input",
                {randomTensor(B, y, rng), randomTensor(B, w, rng)},
                {HostTensor(B, x)},
                conv,
                {0},
                {0}});
  cs.push_back({"conv_grad_weight",
                {randomTensor(B, x, rng), randomTensor(B, y, rng)},
                {HostTensor(F, w)},
                conv,
                {0, 1},
                {}});
  const std::vector<int64_t> c6 = {6};
  cs.push_back(
      {"batch_norm_train",
       {randomTensor(B, x, rng), randomTensor(F, c6, rng), randomTensor(F, c6, rng),
        randomTensor(F, c6, rng), randomTensor(F, c6, rng, 0.5, 2), randomTensor(B, x, rng)},
       {HostTensor(B, x), HostTensor(F, c6), HostTensor(F, c6)},
       {Attribute::makeString("activation", "relu")},
       {0, 5},
       {0}});
  cs.push_back({"batch_norm",
                {randomTensor(F, x, rng), randomTensor(F, c6, rng), randomTensor(F, c6, rng),
                 randomTensor(F, c6, rng), randomTensor(F, c6, rng, 0.5, 2)},
                {HostTensor(F, x)},
                {},
                {0},
                {0}});
  cs.push_back({"batch_norm_grad",
                {randomTensor(B, x, rng), randomTensor(F, c6, rng), randomTensor(B, x, rng),
                 randomTensor(B, x, rng)},
                {HostTensor(B, x), HostTensor(F, c6), HostTensor(F, c6)},
                {Attribute::makeString("activation", "relu")},
                {0, 2, 3},
                {0}});
  return cs;
}

/// The batch norms on 40 channels: with two threads or more, each thread
/// takes a part of the channels and walks them a position at a time (the
/// cases above, 6 channels, are one thread's tiles of whole rows).
std::vector<Case> wideNormCases() {
  std::mt19937 rng(43);
  const DType B = DType::BF16, F = DType::F32, H = DType::F16;
  const std::vector<int64_t> x = {3, 40, 9, 11}, c40 = {40};
  std::vector<Case> cs;
  cs.push_back(
      {"batch_norm_train",
       {randomTensor(H, x, rng), randomTensor(F, c40, rng), randomTensor(F, c40, rng),
        randomTensor(F, c40, rng), randomTensor(F, c40, rng, 0.5, 2), randomTensor(H, x, rng)},
       {HostTensor(H, x), HostTensor(F, c40), HostTensor(F, c40)},
       {Attribute::makeString("activation", "relu")},
       {0, 5},
       {0}});
  cs.push_back({"batch_norm_train",
                {randomTensor(F, x, rng), randomTensor(F, c40, rng), randomTensor(F, c40, rng),
                 randomTensor(F, c40, rng), randomTensor(F, c40, rng, 0.5, 2)},
                {HostTensor(F, x)},
                {},
                {0},
                {0}});
  cs.push_back(
      {"batch_norm",
       {randomTensor(B, x, rng), randomTensor(F, c40, rng), randomTensor(F, c40, rng),
        randomTensor(F, c40, rng), randomTensor(F, c40, rng, 0.5, 2), randomTensor(B, x, rng)},
       {HostTensor(B, x)},
       {Attribute::makeString("activation", "relu")},
       {0, 5},
       {0}});
  cs.push_back({"batch_norm_grad",
                {randomTensor(F, x, rng), randomTensor(F, c40, rng), randomTensor(F, x, rng)},
                {HostTensor(F, x), HostTensor(F, c40), HostTensor(F, c40)},
                {},
                {0, 2},
                {0}});
  cs.push_back({"batch_norm_grad",
                {randomTensor(H, x, rng), randomTensor(F, c40, rng), randomTensor(H, x, rng),
                 randomTensor(H, x, rng)},
                {HostTensor(H, x), HostTensor(F, c40), HostTensor(F, c40)},
                {Attribute::makeString("activation", "relu")},
                {0, 2, 3},
                {0}});
  return cs;
}

/// The pooling kinds and their gradients on 70 channels (the CPU's
/// channels-last kernels take them in blocks of 16: whole blocks and a
/// part of one per image): overlapping windows with padding, so that
/// max_pool_grad and average_pool_grad add several terms into one input,
/// and max pooling over few distinct values, so that windows tie (the first
/// maximum, in row-major window order, wins in both layouts).
std::vector<Case> poolCases() {
  std::mt19937 rng(47);
  const DType B = DType::BF16, F = DType::F32, H = DType::F16;
  const std::vector<int64_t> x = {2, 70, 9, 11}, y = {2, 70, 5, 6};
  const std::vector<Attribute> window = {Attribute::makeInts("kernel_shape", {3, 3}),
                                         Attribute::makeInts("strides", {2, 2}),
                                         Attribute::makeInts("pads", {1, 1, 1, 1})};
  std::vector<Attribute> included = window;
  included.push_back(Attribute::makeInt("count_include_pad", 1));
  // Dilated, with ceil_mode: windows that reach past the padded extent.
  const std::vector<Attribute> dilated = {
      Attribute::makeInts("kernel_shape", {2, 3}), Attribute::makeInts("strides", {2, 2}),
      Attribute::makeInts("dilations", {2, 1}), Attribute::makeInt("ceil_mode", 1)};
  const std::vector<int64_t> yDilated = {2, 70, 4, 5};
  HostTensor ties = randomTensor(F, x, rng, -2.0, 2.0, 0.0);
  for (int64_t i = 0; i < ties.numel(); ++i)
    ties.set(i, std::round(ties.get(i)));
  std::vector<Case> cs;
  cs.push_back({"max_pool", {randomTensor(B, x, rng)}, {HostTensor(B, y)}, window, {0}, {0}});
  cs.push_back({"max_pool", {ties}, {HostTensor(F, y)}, window, {0}, {0}});
  cs.push_back({"average_pool", {randomTensor(F, x, rng)}, {HostTensor(F, y)}, included, {0}, {0}});
  cs.push_back(
      {"average_pool", {randomTensor(H, x, rng)}, {HostTensor(H, yDilated)}, dilated, {0}, {0}});
  cs.push_back({"global_average_pool",
                {randomTensor(B, x, rng)},
                {HostTensor(B, {2, 70, 1, 1})},
                {},
                {0},
                {0}});
  cs.push_back(
      {"max_pool_grad", {ties, randomTensor(F, y, rng)}, {HostTensor(F, x)}, window, {0, 1}, {0}});
  cs.push_back({"max_pool_grad",
                {randomTensor(B, x, rng), randomTensor(B, y, rng)},
                {HostTensor(B, x)},
                window,
                {0, 1},
                {0}});
  cs.push_back(
      {"average_pool_grad", {randomTensor(F, y, rng)}, {HostTensor(F, x)}, included, {0}, {0}});
  cs.push_back({"average_pool_grad",
                {randomTensor(H, yDilated, rng)},
                {HostTensor(H, x)},
                dilated,
                {0},
                {0}});
  return cs;
}

/// Whether the CPU backend (in the current numerics mode) prepares case
/// `c` channels last with a kernel of its own rather than the adapter; with
/// `first`, whether its fast mode takes the channels-first kernel.
bool cpuHasNativeKernel(const Case &c, bool first = false) {
  std::vector<rt::TensorDesc> descs;
  auto add = [&](const HostTensor &t, bool act) {
    const HostTensor stored = act && !first ? permuteChannels(t, true) : t;
    descs.push_back(rt::makeDesc(stored.dtype, stored.shape));
  };
  for (size_t i = 0; i < c.operands.size(); ++i)
    add(c.operands[i], std::count(c.actOperands.begin(), c.actOperands.end(), i) > 0);
  for (size_t i = 0; i < c.results.size(); ++i)
    add(c.results[i], std::count(c.actResults.begin(), c.actResults.end(), i) > 0);
  std::vector<const rt::TensorDesc *> ops, res;
  for (size_t i = 0; i < descs.size(); ++i)
    (i < c.operands.size() ? ops : res).push_back(&descs[i]);
  plan::Kernel kernel;
  kernel.kind = c.kind;
  kernel.attrs = c.attrs;
  if (!first)
    kernel.attrs.push_back(Attribute::makeString("layout", "nhwc"));
  std::unique_ptr<rt::PreparedKernel> prepared;
  const rt::KernelView view(kernel, ops, res);
  const rt::Status status =
      first ? rt::cpu::prepareFast(view, &prepared)
            : rt::createCpuBackend()->prepareChannelsLastKernel(view, &prepared);
  EXPECT_TRUE(static_cast<bool>(status)) << c.kind << ": " << status.message();
  return prepared != nullptr;
}

// Tests every channels-last kind on the CPU: the channels-first kernel's
// bits, transposed, in the reference numerics (the batch norms and the
// pooling kinds by the CPU's own channels-last kernels, the convolutions
// between transposes).
TEST(ChannelsLast, SameBitsAsChannelsFirstOnTheCpu) {
  CpuNumericsMode reference("reference");
  for (const Case &c : cases())
    expectSameBits(c, "cpu");
  for (const Case &c : wideNormCases())
    expectSameBits(c, "cpu");
  for (const Case &c : poolCases())
    expectSameBits(c, "cpu");
}

// Tests which channels-last kernels the CPU runs as they are stored: the
// batch norms in both numerics modes; the convolutions in the fast mode
// wherever oneDNN takes their channels-first form (here all but the weight
// gradient of bf16 activations into an f32 weight, a mix oneDNN 2.6 lacks;
// FastNumerics.ChannelsLastConvWithinTwiceReferenceError checks their
// values), never in the reference mode, whose convolutions run between
// transposes.
TEST(ChannelsLast, CpuNativeKernels) {
  int fastConvs = 0;
  for (const char *mode : {"reference", "fast"}) {
    CpuNumericsMode scope(mode);
    const bool fast = std::string(mode) == "fast";
    if (fast && !rt::cpu::haveFastNumerics())
      continue;
    for (const Case &c : cases()) {
      const bool norm = c.kind.rfind("batch_norm", 0) == 0;
      const bool expected = norm || (fast && cpuHasNativeKernel(c, /*first=*/true));
      EXPECT_EQ(cpuHasNativeKernel(c), expected) << mode << " " << c.kind;
      fastConvs += fast && !norm && expected;
    }
    for (const Case &c : poolCases())
      EXPECT_TRUE(cpuHasNativeKernel(c)) << mode << " " << c.kind;
  }
  if (rt::cpu::haveFastNumerics()) {
    EXPECT_EQ(fastConvs, 2) << "conv and conv_grad_input run natively in the fast mode";
  }
}

// Tests the same on CUDA (skipped without a GPU), with the direct
// convolutions: cuDNN's channels-last convolutions run other engines than
// its channels-first ones, and CudnnConv.WithinTwiceReferenceErrorAnd-
// Deterministic checks them against float64.
TEST(ChannelsLast, SameBitsAsChannelsFirstOnCuda) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  ScopedVariable direct("MPTRT_CUDA_CONV", "direct");
  for (const Case &c : cases())
    expectSameBits(c, "cuda");
  for (const Case &c : wideNormCases())
    expectSameBits(c, "cuda");
  for (const Case &c : poolCases())
    expectSameBits(c, "cuda");
}

// Tests that a channels-last activation of rank below 3, and a kernel
// without the operands its layout reads, are refused, naming the kernel.
TEST(ChannelsLast, Errors) {
  HostTensor x(DType::F32, {4, 3}), c(DType::F32, {3});
  KernelRun r = runKernel("batch_norm", {x, c, c, c, c}, {HostTensor(DType::F32, {4, 3})},
                          {Attribute::makeString("layout", "nhwc")});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("must be [N, ..., C]"), std::string::npos) << r.error;
  // A conv without operands or results (a malformed plan) is an error, not
  // a read past its lists.
  KernelRun none = runKernel("conv", {}, {}, {Attribute::makeString("layout", "nhwc")});
  EXPECT_FALSE(none.ok);
  EXPECT_NE(none.error.find("too few for its channels-last form"), std::string::npos) << none.error;
  // The channels-first pooling kernels refuse layout = nhwc themselves, so
  // a channels-last pool never runs as channels first by mistake.
  for (const char *kind : {"max_pool", "max_pool_grad"}) {
    const bool grad = std::string(kind) == "max_pool_grad";
    const rt::TensorDesc in = rt::makeDesc(DType::F32, {1, 4, 4, 2});
    const rt::TensorDesc out = rt::makeDesc(DType::F32, {1, 2, 2, 2});
    std::vector<const rt::TensorDesc *> ops = {&in}, res = {grad ? &in : &out};
    if (grad)
      ops.push_back(&out);
    plan::Kernel kernel;
    kernel.kind = kind;
    kernel.attrs = {Attribute::makeInts("kernel_shape", {2, 2}),
                    Attribute::makeInts("strides", {2, 2}),
                    Attribute::makeString("layout", "nhwc")};
    std::unique_ptr<rt::PreparedKernel> prepared;
    const rt::KernelView view(kernel, ops, res);
    const rt::Status status =
        grad ? rt::cpu::preparePoolGrad(view, &prepared) : rt::cpu::preparePool(view, &prepared);
    EXPECT_FALSE(static_cast<bool>(status)) << kind;
    EXPECT_NE(status.message().find("reaches a backend's channels-first kernel only as channels "
                                    "first"),
              std::string::npos)
        << status.message();
  }
}

} // namespace
