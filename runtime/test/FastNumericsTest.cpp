//===- FastNumericsTest.cpp - the CPU's fast mode against the reference --===//
//
// The CPU's `fast` numerics mode (MPTRT_CPU_NUMERICS=fast: conv, its
// gradients, matmul and gemm through oneDNN) against float64, held to twice
// the `reference` mode's error on the same inputs (docs/runtime.md, "CPU
// numerics modes"), in f32, bf16 and f16; and bit-identical from run to run.
// Every test here names the mode it checks; in a build without oneDNN they
// skip, saying so.
//
// Each case also checks that the fast path takes it (cpu::prepareFast, the
// CPU backend's fast-mode hook, returns a kernel): a case oneDNN refused
// would fall back to the reference kernel and pass trivially.
//
// The error is relative and normwise: ||got - ref64|| / ||ref64||. In f32
// the reference's error is a unit or two of rounding (1e-7 to 3e-7: OpenBLAS
// sums in f32 in a fixed order, conv_grad_weight adds the images in
// double), and oneDNN's other summation order measured up to 3x that on
// these cases (4.1e-7 on a 16-channel weight gradient, 2.9e-7 on a
// 257-long gemm); so each bound is twice the larger of the reference's
// error and kAccumulationFloor, eight units of f32 rounding (4.8e-7). In
// bf16 the rounding of the result (4e-3) dominates both, and the bound is
// twice the reference's. A wrong window, layout or transpose gives errors
// near 1, far past either. The criterion itself (twice the
// reference's error on every zoo model) is a model-level one; bench/
// resnet_train measures it on the CNNs. The fast
// path must also be the one that ran: over the f32 cases, some outputs
// differ in their bits from the reference's (oneDNN sums in another order),
// which a silent fallback to the reference kernels would not give.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "cpu/CpuKernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

using namespace mptrt;
using namespace mptrt::test;

namespace {

using NumericsMode = CpuNumericsMode;

/// Whether this build has the fast mode: loading a plan with it fails
/// otherwise, saying so.
bool haveFastMode(std::string *why) {
  NumericsMode fast("fast");
  HostTensor a(DType::F32, {2, 2}), b(DType::F32, {2, 2});
  KernelRun r = runKernel("matmul", {a, b}, {HostTensor(DType::F32, {2, 2})});
  *why = r.error;
  return r.ok;
}

#define SKIP_WITHOUT_FAST_MODE()                                                                   \
  do {                                                                                             \
    std::string why;                                                                               \
    if (!haveFastMode(&why))                                                                       \
      GTEST_SKIP() << "no fast CPU numerics in this build: " << why;                               \
  } while (0)

KernelRun runIn(const char *mode, const std::string &kind, const std::vector<HostTensor> &operands,
                const HostTensor &result, const std::vector<Attribute> &attrs) {
  NumericsMode scope(mode);
  return runKernel(kind, operands, {result}, attrs);
}

/// Eight units of f32 rounding: the floor of the f32 bounds (above).
constexpr double kAccumulationFloor = 8 * 0x1p-24;

double relativeError(const HostTensor &got, const std::vector<double> &ref) {
  return relativeL2Error(got, ref);
}

/// Whether the fast mode prepares `kind` on these tensors through oneDNN
/// (rather than falling back to the reference kernel); with `channelsLast`,
/// whether it does so for the kernel stored channels last, whose
/// channels-first form these tensors are (cpu::prepareFastChannelsLast).
bool fastPathTakes(const std::string &kind, const std::vector<HostTensor> &operands,
                   const HostTensor &result, const std::vector<Attribute> &attrs,
                   bool channelsLast = false) {
  auto desc = [](const HostTensor &t) {
    rt::TensorDesc d;
    d.dtype = t.dtype;
    d.shape = t.shape;
    d.numel = t.numel();
    d.bytes = t.bytes.size();
    return d;
  };
  std::vector<rt::TensorDesc> descs;
  for (const HostTensor &t : operands)
    descs.push_back(desc(t));
  descs.push_back(desc(result));
  std::vector<const rt::TensorDesc *> ops;
  for (size_t i = 0; i < operands.size(); ++i)
    ops.push_back(&descs[i]);
  plan::Kernel kernel;
  kernel.kind = kind;
  kernel.attrs = attrs;
  const rt::KernelView view(kernel, ops, {&descs.back()});
  std::unique_ptr<rt::PreparedKernel> prepared;
  const rt::Status status = channelsLast ? rt::cpu::prepareFastChannelsLast(view, &prepared)
                                         : rt::cpu::prepareFast(view, &prepared);
  return static_cast<bool>(status) && prepared != nullptr;
}

/// Runs `kind` in both modes and checks the fast error against twice the
/// reference's; counts the f32 results whose bits differ between the modes.
void checkAgainstReference(const std::string &kind, const std::vector<HostTensor> &operands,
                           const HostTensor &result, const std::vector<Attribute> &attrs,
                           const std::vector<double> &ref64, const std::string &label,
                           int *differing) {
  EXPECT_TRUE(fastPathTakes(kind, operands, result, attrs)) << label << ": oneDNN refused it";
  KernelRun reference = runIn("reference", kind, operands, result, attrs);
  KernelRun fast = runIn("fast", kind, operands, result, attrs);
  ASSERT_TRUE(reference.ok) << label << ": " << reference.error;
  ASSERT_TRUE(fast.ok) << label << ": " << fast.error;
  const double refErr = relativeError(reference.outputs[0], ref64);
  const double fastErr = relativeError(fast.outputs[0], ref64);
  EXPECT_LE(fastErr, 2 * std::max(refErr, kAccumulationFloor))
      << label << ": fast " << fastErr << ", reference " << refErr;
  if (result.dtype == DType::F32 && fast.outputs[0].bytes != reference.outputs[0].bytes)
    ++*differing;
  if (result.dtype == DType::F16) {
    // Both round an f32 sum to nearest even: they differ only where the two
    // sums straddle a rounding boundary (a wrong rounding mode in oneDNN's
    // f16 reorder would change about half the elements).
    int64_t other = 0;
    for (int64_t i = 0; i < result.numel(); ++i)
      other += fast.outputs[0].get(i) != reference.outputs[0].get(i);
    EXPECT_LT(other, result.numel() / 100 + 1)
        << label << ": " << other << " of " << result.numel() << " f16 results differ";
  }
}

struct ConvCase {
  int64_t N, C, H, W, M, kh, kw, stride, pad, dilation, group;
};

/// conv's output, and the float64 gradients for an upstream `dy`: one pass
/// over every (output, input channel, kernel position) term.
struct ConvRef {
  std::vector<double> y, dx, dw;
};

ConvRef convRef(const ConvCase &c, const HostTensor &x, const HostTensor &w, const HostTensor &dy,
                int64_t OH, int64_t OW) {
  const int64_t Cg = c.C / c.group, Mg = c.M / c.group;
  ConvRef r;
  r.y.assign(c.N * c.M * OH * OW, 0.0);
  r.dx.assign(x.numel(), 0.0);
  r.dw.assign(w.numel(), 0.0);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t yi = ((n * c.M + m) * OH + oh) * OW + ow;
          for (int64_t cg = 0; cg < Cg; ++cg)
            for (int64_t i = 0; i < c.kh; ++i)
              for (int64_t j = 0; j < c.kw; ++j) {
                const int64_t ih = oh * c.stride - c.pad + i * c.dilation;
                const int64_t iw = ow * c.stride - c.pad + j * c.dilation;
                if (ih < 0 || ih >= c.H || iw < 0 || iw >= c.W)
                  continue;
                const int64_t xi = ((n * c.C + m / Mg * Cg + cg) * c.H + ih) * c.W + iw;
                const int64_t wi = ((m * Cg + cg) * c.kh + i) * c.kw + j;
                r.y[yi] += x.get(xi) * w.get(wi);
                r.dx[xi] += dy.get(yi) * w.get(wi);
                r.dw[wi] += x.get(xi) * dy.get(yi);
              }
        }
  return r;
}

/// The conv cases of the tests below: ResNet's 3x3, a stem, depthwise
/// (MobileNetV2's, strided), pointwise, grouped and dilated, and a longer
/// gradient sum.
const ConvCase kConvCases[] = {
    {4, 16, 12, 12, 32, 3, 3, 1, 1, 1, 1}, {2, 3, 20, 20, 16, 7, 7, 2, 3, 1, 1},
    {3, 32, 9, 9, 32, 3, 3, 2, 1, 1, 32},  {2, 24, 8, 8, 48, 1, 1, 1, 0, 1, 1},
    {2, 12, 10, 11, 18, 3, 2, 1, 2, 2, 3}, {8, 64, 8, 8, 64, 3, 3, 1, 1, 1, 1},
};

/// One conv case in one dtype: random x, w and dy, their float64 results,
/// the window attributes and a label.
struct ConvTensors {
  HostTensor x, w, dy;
  ConvRef ref;
  std::vector<Attribute> attrs;
  std::string label;
};
ConvTensors convTensors(const ConvCase &c, DType t, std::mt19937 &rng) {
  const int64_t OH = (c.H + 2 * c.pad - c.dilation * (c.kh - 1) - 1) / c.stride + 1;
  const int64_t OW = (c.W + 2 * c.pad - c.dilation * (c.kw - 1) - 1) / c.stride + 1;
  ConvTensors r;
  r.x = randomTensor(t, {c.N, c.C, c.H, c.W}, rng, -1, 1, 0);
  r.w = randomTensor(t, {c.M, c.C / c.group, c.kh, c.kw}, rng, -1, 1, 0);
  r.dy = randomTensor(t, {c.N, c.M, OH, OW}, rng, -1, 1, 0);
  r.ref = convRef(c, r.x, r.w, r.dy, OH, OW);
  r.attrs = {Attribute::makeInts("strides", {c.stride, c.stride}),
             Attribute::makeInts("pads", {c.pad, c.pad, c.pad, c.pad}),
             Attribute::makeInts("dilations", {c.dilation, c.dilation}),
             Attribute::makeInt("group", c.group)};
  r.label = std::string(plan::dtypeName(t)) + " conv C=" + std::to_string(c.C) +
            " M=" + std::to_string(c.M) + " group=" + std::to_string(c.group) +
            " stride=" + std::to_string(c.stride);
  return r;
}

// Tests the fast mode's conv, conv_grad_input and conv_grad_weight against
// float64, within twice the reference mode's error, in f32, bf16 and f16,
// over strides, padding, dilation and groups.
TEST(FastNumerics, ConvWithinTwiceReferenceError) {
  SKIP_WITHOUT_FAST_MODE();
  std::mt19937 rng(2711);
  int differing = 0;
  for (const ConvCase &c : kConvCases)
    for (DType t : {DType::F32, DType::BF16, DType::F16}) {
      const ConvTensors r = convTensors(c, t, rng);
      checkAgainstReference("conv", {r.x, r.w}, HostTensor(t, r.dy.shape), r.attrs, r.ref.y,
                            r.label + " forward", &differing);
      checkAgainstReference("conv_grad_input", {r.dy, r.w}, HostTensor(t, r.x.shape), r.attrs,
                            r.ref.dx, r.label + " grad input", &differing);
      checkAgainstReference("conv_grad_weight", {r.x, r.dy}, HostTensor(t, r.w.shape), r.attrs,
                            r.ref.dw, r.label + " grad weight", &differing);
    }
  EXPECT_GT(differing, 0) << "every f32 result has the reference's bits: did oneDNN run?";
}

// Tests the fast mode's conv, conv_grad_input and conv_grad_weight on
// channels-last activations (layout = nhwc, which oneDNN reads and writes
// as stored) against float64, within twice the reference mode's error on
// the channels-first tensors, over the cases above, a strided 1x1
// downsample and a 3-channel stem, in every dtype; and that oneDNN, not
// the adapter's transposes around it, ran them.
TEST(FastNumerics, ChannelsLastConvWithinTwiceReferenceError) {
  SKIP_WITHOUT_FAST_MODE();
  std::vector<ConvCase> cases(std::begin(kConvCases), std::end(kConvCases));
  cases.push_back({8, 8, 16, 16, 16, 1, 1, 2, 0, 1, 1}); // a strided 1x1 downsample
  cases.push_back({8, 3, 16, 16, 8, 3, 3, 1, 1, 1, 1});  // a 3-channel stem
  std::mt19937 rng(2714);
  for (const ConvCase &c : cases)
    for (DType t : {DType::F32, DType::BF16, DType::F16}) {
      const ConvTensors r = convTensors(c, t, rng);
      std::vector<Attribute> nhwc = r.attrs;
      nhwc.push_back(Attribute::makeString("layout", "nhwc"));
      struct Kind {
        const char *kind;
        std::vector<HostTensor> first, last; // operands channels first, stored
        HostTensor result, resultLast;       // the result's type, both ways
        const std::vector<double> *ref;
        bool resultIsActivation;
      };
      const Kind kinds[] = {
          {"conv",
           {r.x, r.w},
           {permuteChannels(r.x, true), r.w},
           HostTensor(t, r.dy.shape),
           permuteChannels(r.dy, true),
           &r.ref.y,
           true},
          {"conv_grad_input",
           {r.dy, r.w},
           {permuteChannels(r.dy, true), r.w},
           HostTensor(t, r.x.shape),
           permuteChannels(r.x, true),
           &r.ref.dx,
           true},
          {"conv_grad_weight",
           {r.x, r.dy},
           {permuteChannels(r.x, true), permuteChannels(r.dy, true)},
           HostTensor(t, r.w.shape),
           HostTensor(t, r.w.shape),
           &r.ref.dw,
           false},
      };
      for (const Kind &k : kinds) {
        const std::string what = r.label + " channels last " + k.kind;
        EXPECT_TRUE(fastPathTakes(k.kind, k.first, k.result, r.attrs, /*channelsLast=*/true))
            << what << ": oneDNN refused it";
        KernelRun reference = runIn("reference", k.kind, k.first, k.result, r.attrs);
        KernelRun fast = runIn("fast", k.kind, k.last, HostTensor(t, k.resultLast.shape), nhwc);
        ASSERT_TRUE(reference.ok) << what << ": " << reference.error;
        ASSERT_TRUE(fast.ok) << what << ": " << fast.error;
        const std::vector<double> ref64 =
            k.resultIsActivation ? channelsLastValues(*k.ref, k.result.shape) : *k.ref;
        const double refErr = relativeError(reference.outputs[0], *k.ref);
        const double fastErr = relativeError(fast.outputs[0], ref64);
        EXPECT_LE(fastErr, 2 * std::max(refErr, kAccumulationFloor))
            << what << ": fast " << fastErr << ", reference " << refErr;
      }
    }
}

// Tests the fast mode's f32 conv_grad_weight on long sums (the shapes of
// mptrt-backward-accuracy-test's conv cases: 32 images of 16 x 16, 8192
// products per weight, and 128 images of 4 x 4) within twice the reference
// mode's error, with no floor: it runs oneDNN image by image and adds the
// images in double, as the reference does. Measured relative L2 errors:
// 2.7e-7 and 6.9e-8, the reference's to six digits; oneDNN over the whole
// batch (the kernel before) gave 1.1e-6 and 4.9e-7, 4.1x and 7.0x.
TEST(FastNumerics, ConvGradWeightLongSumsWithinTwiceReferenceError) {
  SKIP_WITHOUT_FAST_MODE();
  const ConvCase cases[] = {
      {32, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1},
      {128, 32, 4, 4, 32, 3, 3, 1, 1, 1, 1},
  };
  std::mt19937 rng(2713);
  for (const ConvCase &c : cases) {
    const DType t = DType::F32;
    const HostTensor x = randomTensor(t, {c.N, c.C, c.H, c.W}, rng, -1, 1, 0);
    const HostTensor w = randomTensor(t, {c.M, c.C, c.kh, c.kw}, rng, -1, 1, 0);
    const HostTensor dy = randomTensor(t, {c.N, c.M, c.H, c.W}, rng, -1, 1, 0);
    const ConvRef ref = convRef(c, x, w, dy, c.H, c.W);
    const std::vector<Attribute> attrs = {
        Attribute::makeInts("strides", {1, 1}), Attribute::makeInts("pads", {1, 1, 1, 1}),
        Attribute::makeInts("dilations", {1, 1}), Attribute::makeInt("group", 1)};
    const std::string label = "conv_grad_weight N=" + std::to_string(c.N) +
                              " HxW=" + std::to_string(c.H) + "x" + std::to_string(c.W);
    EXPECT_TRUE(fastPathTakes("conv_grad_weight", {x, dy}, HostTensor(t, w.shape), attrs))
        << label << ": oneDNN refused it";
    KernelRun reference =
        runIn("reference", "conv_grad_weight", {x, dy}, HostTensor(t, w.shape), attrs);
    KernelRun fast = runIn("fast", "conv_grad_weight", {x, dy}, HostTensor(t, w.shape), attrs);
    ASSERT_TRUE(reference.ok) << reference.error;
    ASSERT_TRUE(fast.ok) << fast.error;
    const double refErr = relativeError(reference.outputs[0], ref.dw);
    const double fastErr = relativeError(fast.outputs[0], ref.dw);
    std::cout << label << ": relative L2 error fast " << fastErr << ", reference " << refErr
              << "\n";
    EXPECT_LE(fastErr, 2 * refErr) << label;
  }
}

// Tests the fast mode's matmul (batched, broadcast) and gemm (transposes,
// bias, ReLU) against float64, within twice the reference mode's error.
TEST(FastNumerics, MatMulWithinTwiceReferenceError) {
  SKIP_WITHOUT_FAST_MODE();
  std::mt19937 rng(2712);
  int differing = 0;
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    const std::string dtype = plan::dtypeName(t);
    { // matmul [3, 40, 300] x [300, 50]: b broadcast over the batch
      const HostTensor a = randomTensor(t, {3, 40, 300}, rng, -1, 1, 0);
      const HostTensor b = randomTensor(t, {300, 50}, rng, -1, 1, 0);
      std::vector<double> ref(3 * 40 * 50, 0.0);
      for (int64_t n = 0; n < 3; ++n)
        for (int64_t i = 0; i < 40; ++i)
          for (int64_t j = 0; j < 50; ++j)
            for (int64_t k = 0; k < 300; ++k)
              ref[(n * 40 + i) * 50 + j] += a.get((n * 40 + i) * 300 + k) * b.get(k * 50 + j);
      checkAgainstReference("matmul", {a, b}, HostTensor(t, {3, 40, 50}), {}, ref,
                            dtype + " matmul", &differing);
    }
    for (int variant = 0; variant < 4; ++variant) { // gemm, every transpose
      const bool ta = variant & 1, tb = variant & 2;
      const int64_t M = 33, K = 257, N = 20;
      const HostTensor a = randomTensor(
          t, ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, rng, -1, 1, 0);
      const HostTensor b = randomTensor(
          t, tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, rng, -1, 1, 0);
      const HostTensor c = randomTensor(t, {N}, rng, -1, 1, 0);
      std::vector<double> ref(M * N);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double s = c.get(j);
          for (int64_t k = 0; k < K; ++k)
            s += a.get(ta ? k * M + i : i * K + k) * b.get(tb ? j * K + k : k * N + j);
          ref[i * N + j] = s < 0 ? 0 : s;
        }
      checkAgainstReference("gemm", {a, b, c}, HostTensor(t, {M, N}),
                            {Attribute::makeInt("trans_a", ta), Attribute::makeInt("trans_b", tb),
                             Attribute::makeString("activation", "relu")},
                            ref, dtype + " gemm variant " + std::to_string(variant), &differing);
    }
  }
  EXPECT_GT(differing, 0) << "every f32 result has the reference's bits: did oneDNN run?";
}

// Tests that the fast mode gives the same bits on every run, of one model
// and of a second model of the same plan, at the process's thread count,
// channels first and channels last.
TEST(FastNumerics, RunToRunBitIdentical) {
  SKIP_WITHOUT_FAST_MODE();
  std::mt19937 rng(2713);
  const HostTensor x = randomTensor(DType::F32, {8, 32, 16, 16}, rng, -1, 1, 0);
  const HostTensor w = randomTensor(DType::F32, {64, 32, 3, 3}, rng, -1, 1, 0);
  const HostTensor dy = randomTensor(DType::F32, {8, 64, 16, 16}, rng, -1, 1, 0);
  const HostTensor xl = permuteChannels(x, true), dyl = permuteChannels(dy, true);
  for (const bool last : {false, true}) { // channels first, then last (layout = nhwc)
    std::vector<Attribute> attrs = {Attribute::makeInts("pads", {1, 1, 1, 1})};
    if (last)
      attrs.push_back(Attribute::makeString("layout", "nhwc"));
    const HostTensor &xs = last ? xl : x, &dys = last ? dyl : dy;
    for (const char *kind : {"conv", "conv_grad_input", "conv_grad_weight"}) {
      const std::string k = kind;
      const std::vector<HostTensor> ops = k == "conv" ? std::vector<HostTensor>{xs, w}
                                          : k == "conv_grad_input"
                                              ? std::vector<HostTensor>{dys, w}
                                              : std::vector<HostTensor>{xs, dys};
      const HostTensor result(DType::F32, k == "conv"              ? dys.shape
                                          : k == "conv_grad_input" ? xs.shape
                                                                   : w.shape);
      KernelRun first = runIn("fast", kind, ops, result, attrs);
      ASSERT_TRUE(first.ok) << first.error;
      for (int i = 0; i < 3; ++i) {
        KernelRun again = runIn("fast", kind, ops, result, attrs);
        ASSERT_TRUE(again.ok) << again.error;
        EXPECT_EQ(again.outputs[0].bytes, first.outputs[0].bytes)
            << kind << (last ? " nhwc" : "") << ", run " << i + 2;
      }
    }
  }
}

// Tests that an unknown MPTRT_CPU_NUMERICS fails the load, naming the
// variable and the modes (in any build).
TEST(FastNumerics, UnknownModeIsAnError) {
  HostTensor a(DType::F32, {2, 2}), b(DType::F32, {2, 2});
  KernelRun r = runIn("quick", "matmul", {a, b}, HostTensor(DType::F32, {2, 2}), {});
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("MPTRT_CPU_NUMERICS"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("\"reference\" or \"fast\""), std::string::npos) << r.error;
}

} // namespace
