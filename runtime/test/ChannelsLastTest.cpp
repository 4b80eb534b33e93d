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

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace mptrt;
using namespace mptrt::test;

namespace {

/// `t` ([N, C, spatial...]) channels last, or back (`toLast` false: `t` is
/// [N, spatial..., C]).
HostTensor permuted(const HostTensor &t, bool toLast) {
  const size_t rank = t.shape.size();
  std::vector<int64_t> outShape = {t.shape[0]};
  if (toLast) {
    outShape.insert(outShape.end(), t.shape.begin() + 2, t.shape.end());
    outShape.push_back(t.shape[1]);
  } else {
    outShape.push_back(t.shape.back());
    outShape.insert(outShape.end(), t.shape.begin() + 1, t.shape.end() - 1);
  }
  HostTensor out(t.dtype, outShape);
  const size_t size = plan::dtypeSize(t.dtype);
  const std::vector<int64_t> inStrides = stridesOf(t.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const std::vector<int64_t> o = unflatten(i, outShape);
    // The source index: channels first [n, c, s...] from channels last
    // [n, s..., c], or the other way.
    std::vector<int64_t> src(rank);
    src[0] = o[0];
    if (toLast) {
      src[1] = o[rank - 1];
      for (size_t d = 2; d < rank; ++d)
        src[d] = o[d - 1];
    } else {
      src[rank - 1] = o[1];
      for (size_t d = 1; d + 1 < rank; ++d)
        src[d] = o[d + 1];
    }
    int64_t at = 0;
    for (size_t d = 0; d < rank; ++d)
      at += src[d] * inStrides[d];
    std::memcpy(out.bytes.data() + i * size, t.bytes.data() + at * size, size);
  }
  return out;
}

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
    ops[i] = permuted(ops[i], true);
  for (size_t i : c.actResults)
    res[i] = permuted(res[i], true);
  std::vector<Attribute> attrs = c.attrs;
  attrs.push_back(Attribute::makeString("layout", "nhwc"));
  KernelRun last = runKernel(c.kind, ops, res, attrs, backend);
  ASSERT_TRUE(last.ok) << c.kind << " nhwc: " << last.error;
  for (size_t r = 0; r < c.results.size(); ++r) {
    bool act = false;
    for (size_t i : c.actResults)
      act = act || i == r;
    const HostTensor got = act ? permuted(last.outputs[r], false) : last.outputs[r];
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

// Tests every channels-last kind on the CPU: the channels-first kernel's
// bits, transposed.
TEST(ChannelsLast, SameBitsAsChannelsFirstOnTheCpu) {
  for (const Case &c : cases())
    expectSameBits(c, "cpu");
}

// Tests the same on CUDA (skipped without a GPU).
TEST(ChannelsLast, SameBitsAsChannelsFirstOnCuda) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  for (const Case &c : cases())
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
}

} // namespace
