//===- PoolingKernelTest.cpp - max, average and global average pool ------===//
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mptrt;
using namespace mptrt::test;

namespace {

struct PoolCase {
  std::vector<int64_t> x, kernel, strides, pads, dilations;
  bool ceil;
  bool includePad;
};

/// Output size per the ONNX formula; with ceil_mode the last window must
/// start inside the input or the begin padding.
std::vector<int64_t> poolOutShape(const PoolCase &c) {
  const size_t nsp = c.kernel.size();
  std::vector<int64_t> out = {c.x[0], c.x[1]};
  for (size_t d = 0; d < nsp; ++d) {
    const double span = c.dilations[d] * (c.kernel[d] - 1) + 1;
    const double num = c.x[2 + d] + c.pads[d] + c.pads[nsp + d] - span;
    int64_t o = static_cast<int64_t>(
                    (c.ceil ? std::ceil(num / c.strides[d]) : std::floor(num / c.strides[d]))) +
                1;
    if (c.ceil && (o - 1) * c.strides[d] >= c.x[2 + d] + c.pads[d])
      --o;
    out.push_back(o);
  }
  return out;
}

std::vector<double> poolRef(const PoolCase &c, const HostTensor &x, bool isMax) {
  const size_t nsp = c.kernel.size();
  const std::vector<int64_t> outShape = poolOutShape(c);
  const std::vector<int64_t> xs = stridesOf(c.x);
  int64_t total = 1, kSize = 1;
  for (int64_t d : outShape)
    total *= d;
  for (int64_t k : c.kernel)
    kSize *= k;
  std::vector<double> y(total);
  for (int64_t i = 0; i < total; ++i) {
    std::vector<int64_t> o = unflatten(i, outShape);
    double best = -INFINITY, sum = 0;
    int64_t valid = 0, padded = 0;
    for (int64_t kf = 0; kf < kSize; ++kf) {
      std::vector<int64_t> k = unflatten(kf, c.kernel);
      bool inside = true, inPad = true;
      int64_t off = o[0] * xs[0] + o[1] * xs[1];
      for (size_t d = 0; d < nsp; ++d) {
        const int64_t pos = o[2 + d] * c.strides[d] - c.pads[d] + k[d] * c.dilations[d];
        inside = inside && pos >= 0 && pos < c.x[2 + d];
        inPad = inPad && pos >= -c.pads[d] && pos < c.x[2 + d] + c.pads[nsp + d];
        off += pos * xs[2 + d];
      }
      padded += inPad;
      if (inside) {
        ++valid;
        best = std::max(best, x.get(off));
        sum += x.get(off);
      }
    }
    y[i] = isMax ? best : sum / (c.includePad ? padded : valid);
  }
  return y;
}

std::vector<Attribute> poolAttrs(const PoolCase &c, bool isMax) {
  std::vector<Attribute> a = {
      Attribute::makeInts("kernel_shape", c.kernel), Attribute::makeInts("strides", c.strides),
      Attribute::makeInts("pads", c.pads), Attribute::makeInts("dilations", c.dilations),
      Attribute::makeInt("ceil_mode", c.ceil)};
  if (!isMax)
    a.push_back(Attribute::makeInt("count_include_pad", c.includePad));
  return a;
}

const PoolCase kCases[] = {
    {{2, 3, 9}, {3}, {2}, {1, 1}, {1}, false, false},
    {{2, 3, 9}, {3}, {2}, {1, 1}, {1}, true, true},
    {{1, 2, 7, 8}, {3, 2}, {2, 3}, {1, 0, 1, 1}, {1, 1}, true, false},
    {{1, 2, 7, 8}, {3, 2}, {2, 3}, {1, 0, 1, 1}, {1, 1}, true, true},
    {{2, 2, 6, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, false},
    {{1, 3, 8, 7}, {2, 3}, {1, 2}, {1, 1, 0, 1}, {2, 1}, false, true},
    {{1, 2, 5, 4, 6}, {2, 2, 3}, {2, 1, 2}, {1, 0, 1, 0, 1, 1}, {1, 1, 1}, true, true},
};

// Tests max_pool and average_pool (both count_include_pad settings, both
// ceil modes, asymmetric pads, dilation) in every float dtype.
TEST(PoolKernels, MaxAndAverage) {
  std::mt19937 rng(20);
  for (const PoolCase &c : kCases)
    for (DType t : floatDTypes())
      for (bool isMax : {true, false}) {
        HostTensor x = randomTensor(t, c.x, rng);
        KernelRun r = runKernel(isMax ? "max_pool" : "average_pool", {x},
                                {HostTensor(t, poolOutShape(c))}, poolAttrs(c, isMax));
        ASSERT_TRUE(r.ok) << r.error;
        EXPECT_TRUE(closeTo(r.outputs[0], poolRef(c, x, isMax), 1e-6))
            << (isMax ? "max " : "average ") << plan::dtypeName(t);
      }
}

// Tests max_pool over integers.
TEST(PoolKernels, MaxPoolIntegers) {
  std::mt19937 rng(21);
  for (DType t : {DType::I32, DType::I64}) {
    const PoolCase &c = kCases[2];
    HostTensor x = randomTensor(t, c.x, rng, -100, 100);
    KernelRun r = runKernel("max_pool", {x}, {HostTensor(t, poolOutShape(c))}, poolAttrs(c, true));
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(closeTo(r.outputs[0], poolRef(c, x, true), 0, 0));
  }
}

// Tests global_average_pool on 1-D and 2-D inputs.
TEST(PoolKernels, GlobalAverage) {
  std::mt19937 rng(22);
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{2, 3, 10}, std::vector<int64_t>{2, 4, 5, 6}})
    for (DType t : floatDTypes()) {
      HostTensor x = randomTensor(t, shape, rng);
      std::vector<int64_t> outShape = {shape[0], shape[1]};
      int64_t inner = 1;
      for (size_t d = 2; d < shape.size(); ++d) {
        outShape.push_back(1);
        inner *= shape[d];
      }
      KernelRun r = runKernel("global_average_pool", {x}, {HostTensor(t, outShape)});
      ASSERT_TRUE(r.ok) << r.error;
      std::vector<double> ref(shape[0] * shape[1], 0.0);
      for (int64_t i = 0; i < x.numel(); ++i)
        ref[i / inner] += x.get(i) / inner;
      EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-6)) << plan::dtypeName(t);
    }
}

} // namespace

namespace {

/// `c` with a trailing spatial axis of size 1 (kernel 1, stride 1, no pad):
/// the same windows, pooled by the generic N-D walk instead of the 2-D one.
PoolCase withUnitAxis(PoolCase c) {
  c.x.push_back(1);
  c.kernel.push_back(1);
  c.strides.push_back(1);
  c.dilations.push_back(1);
  std::vector<int64_t> pads = {c.pads[0], c.pads[1], 0, c.pads[2], c.pads[3], 0};
  c.pads = pads;
  return c;
}

/// The same bytes under another shape.
HostTensor reshaped(const HostTensor &t, std::vector<int64_t> shape) {
  HostTensor r(t.dtype, std::move(shape));
  r.bytes = t.bytes;
  return r;
}

} // namespace

// Tests that the 2-D planes (the kernels' fast path) pool, and pass the
// gradients back, bit for bit as the generic walk does: every 2-D case
// against itself with a unit third axis, in every float dtype, with ties
// and NaNs in the input (max takes the first NaN, the first maximum).
TEST(PoolKernels, TwoDimensionalPathMatchesGenericBitForBit) {
  std::mt19937 rng(27);
  for (const PoolCase &c : kCases) {
    if (c.kernel.size() != 2)
      continue;
    const PoolCase c3 = withUnitAxis(c);
    for (DType t : floatDTypes())
      for (bool isMax : {true, false}) {
        HostTensor x = randomTensor(t, c.x, rng);
        for (int64_t i = 0; i < x.numel(); i += 7) // ties
          x.set(i, 0.5);
        x.set(x.numel() / 2, NAN);
        const std::vector<int64_t> out2 = poolOutShape(c), out3 = poolOutShape(c3);
        const char *kind = isMax ? "max_pool" : "average_pool";
        KernelRun r2 = runKernel(kind, {x}, {HostTensor(t, out2)}, poolAttrs(c, isMax));
        KernelRun r3 =
            runKernel(kind, {reshaped(x, c3.x)}, {HostTensor(t, out3)}, poolAttrs(c3, isMax));
        ASSERT_TRUE(r2.ok && r3.ok) << r2.error << r3.error;
        EXPECT_EQ(r2.outputs[0].bytes, r3.outputs[0].bytes) << kind << " " << plan::dtypeName(t);
        HostTensor dy = randomTensor(t, out2, rng);
        const char *grad = isMax ? "max_pool_grad" : "average_pool_grad";
        std::vector<HostTensor> in2 = {dy}, in3 = {reshaped(dy, out3)};
        if (isMax) {
          in2.insert(in2.begin(), x);
          in3.insert(in3.begin(), reshaped(x, c3.x));
        }
        KernelRun g2 = runKernel(grad, in2, {HostTensor(t, c.x)}, poolAttrs(c, isMax));
        KernelRun g3 = runKernel(grad, in3, {HostTensor(t, c3.x)}, poolAttrs(c3, isMax));
        ASSERT_TRUE(g2.ok && g3.ok) << g2.error << g3.error;
        EXPECT_EQ(g2.outputs[0].bytes, g3.outputs[0].bytes) << grad << " " << plan::dtypeName(t);
      }
  }
}
