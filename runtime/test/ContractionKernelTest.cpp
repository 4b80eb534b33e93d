//===- ContractionKernelTest.cpp - matmul, gemm and conv -----------------===//
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

using namespace mptrt;
using namespace mptrt::test;

namespace {

//===----------------------------------------------------------------------===//
// matmul.
//===----------------------------------------------------------------------===//

/// numpy matmul in float64.
std::vector<double> matmulRef(const HostTensor &a, const HostTensor &b,
                              const std::vector<int64_t> &outShape) {
  std::vector<int64_t> as = a.shape, bs = b.shape;
  const bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  std::vector<int64_t> batch(outShape.begin(), outShape.end() - (aVec ? 0 : 1) - (bVec ? 0 : 1));
  int64_t nb = 1;
  for (int64_t d : batch)
    nb *= d;
  std::vector<double> out;
  for (int64_t n = 0; n < nb; ++n) {
    std::vector<int64_t> idx = unflatten(n, batch);
    // Broadcast batch index into each operand's batch axes.
    auto batchOffset = [&](const std::vector<int64_t> &s) {
      const size_t r = s.size() - 2, lead = batch.size() - r;
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d)
        off = off * s[d] + (s[d] == 1 ? 0 : idx[lead + d]);
      return off;
    };
    const int64_t ao = batchOffset(as) * M * K, bo = batchOffset(bs) * K * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k)
          s += a.get(ao + i * K + k) * b.get(bo + k * N + j);
        out.push_back(s);
      }
  }
  return out;
}

// Tests matmul on 2-D, batched, broadcast-batched and 1-D operands, in
// every float dtype.
TEST(MatMulKernel, ShapesAndDTypes) {
  std::mt19937 rng(10);
  struct {
    std::vector<int64_t> a, b, out;
  } cases[] = {
      {{5, 7}, {7, 3}, {5, 3}},
      {{2, 5, 7}, {2, 7, 3}, {2, 5, 3}},
      {{2, 1, 5, 7}, {3, 7, 4}, {2, 3, 5, 4}},
      {{7}, {7, 3}, {3}},
      {{4, 5, 7}, {7}, {4, 5}},
      {{7}, {7}, {}},
      {{3, 0}, {0, 2}, {3, 2}},
  };
  for (auto &c : cases)
    for (DType t : floatDTypes()) {
      HostTensor a = randomTensor(t, c.a, rng), b = randomTensor(t, c.b, rng);
      KernelRun r = runKernel("matmul", {a, b}, {HostTensor(t, c.out)});
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_TRUE(closeTo(r.outputs[0], matmulRef(a, b, c.out), 1e-5, 1e-4)) << plan::dtypeName(t);
    }
  // bf16 operands with an f32 result.
  HostTensor a = randomTensor(DType::BF16, {16, 33}, rng),
             b = randomTensor(DType::BF16, {33, 9}, rng);
  KernelRun r = runKernel("matmul", {a, b}, {HostTensor(DType::F32, {16, 9})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(closeTo(r.outputs[0], matmulRef(a, b, {16, 9}), 1e-5, 1e-4));
}

//===----------------------------------------------------------------------===//
// gemm.
//===----------------------------------------------------------------------===//

double activate(const std::string &act, double x) {
  if (act == "relu")
    return x > 0 ? x : 0;
  if (act == "gelu")
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (act == "gelu_tanh")
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
  return x;
}

std::vector<double> gemmRef(const HostTensor &a, const HostTensor &b, const HostTensor *c, bool ta,
                            bool tb, double alpha, double beta, int64_t M, int64_t N, int64_t K,
                            const std::string &act) {
  std::vector<double> y(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += a.get(ta ? k * M + i : i * K + k) * b.get(tb ? j * K + k : k * N + j);
      s *= alpha;
      if (c) {
        std::vector<int64_t> cs = c->shape;
        while (cs.size() < 2)
          cs.insert(cs.begin(), 1);
        s += beta * c->get((cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j));
      }
      y[i * N + j] = activate(act, s);
    }
  return y;
}

// Tests gemm's transposes, alpha/beta, every C broadcast shape and the
// fused activations, in every float dtype.
TEST(GemmKernel, AllVariants) {
  std::mt19937 rng(11);
  const int64_t M = 6, N = 5, K = 9;
  const std::vector<std::vector<int64_t>> cShapes = {{}, {N}, {1}, {M, N}, {1, N}, {M, 1}, {1, 1}};
  int cases = 0;
  for (DType t : floatDTypes())
    for (int trans = 0; trans < 4; ++trans) {
      const bool ta = trans & 1, tb = trans & 2;
      for (size_t ci = 0; ci <= cShapes.size(); ++ci) {
        const std::string act =
            std::vector<std::string>{"none", "relu", "gelu", "gelu_tanh"}[(ci + trans) % 4];
        HostTensor a =
            randomTensor(t, ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, rng);
        HostTensor b =
            randomTensor(t, tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, rng);
        std::vector<HostTensor> ops = {a, b};
        if (ci < cShapes.size())
          ops.push_back(randomTensor(t, cShapes[ci], rng));
        std::vector<Attribute> attrs = {
            Attribute::makeFloat("alpha", 0.75), Attribute::makeFloat("beta", -1.5),
            Attribute::makeInt("trans_a", ta), Attribute::makeInt("trans_b", tb),
            Attribute::makeString("activation", act)};
        KernelRun r = runKernel("gemm", ops, {HostTensor(t, {M, N})}, attrs);
        ASSERT_TRUE(r.ok) << r.error;
        std::vector<double> ref =
            gemmRef(a, b, ops.size() == 3 ? &ops[2] : nullptr, ta, tb, 0.75, -1.5, M, N, K, act);
        EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-5, 1e-4))
            << plan::dtypeName(t) << " trans " << trans << " C " << ci << " " << act;
        ++cases;
      }
    }
  EXPECT_EQ(cases, 5 * 4 * 8);
}

// Tests the defaults (alpha = beta = 1, no transposes, no activation) with
// mixed dtypes: fp8 operands, bf16 bias, f32 result.
TEST(GemmKernel, DefaultsMixedDTypes) {
  std::mt19937 rng(12);
  HostTensor a = randomTensor(DType::F8E4M3FN, {33, 65}, rng);
  HostTensor b = randomTensor(DType::F8E5M2, {65, 17}, rng);
  HostTensor c = randomTensor(DType::BF16, {17}, rng);
  KernelRun r = runKernel("gemm", {a, b, c}, {HostTensor(DType::F32, {33, 17})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(
      closeTo(r.outputs[0], gemmRef(a, b, &c, false, false, 1, 1, 33, 17, 65, "none"), 1e-5, 1e-4));
}

//===----------------------------------------------------------------------===//
// scaled_matmul, scaled_gemm: FP8 operands, the product times
// f32(1/a_scale) * f32(1/b_scale) (cuBLASLt's A and B scales).
//===----------------------------------------------------------------------===//

// Tests scaled_matmul with E4M3 x E5M2 operands (batched, broadcast rhs)
// into f32 and bf16 results against the float64 product times the
// dequantisation factor.
TEST(ScaledMatMulKernel, DequantisesWithInverseScales) {
  std::mt19937 rng(21);
  HostTensor a = randomTensor(DType::F8E4M3FN, {3, 17, 40}, rng);
  HostTensor b = randomTensor(DType::F8E5M2, {40, 9}, rng);
  const float sa = 37.5f, sb = 0.3f;
  const double factor = (1.0f / sa) * (1.0f / sb);
  std::vector<double> ref = matmulRef(a, b, {3, 17, 9});
  for (double &v : ref)
    v *= factor;
  for (DType out : {DType::F32, DType::BF16}) {
    KernelRun r = runKernel("scaled_matmul", {a, b, scalarF32(sa), scalarF32(sb)},
                            {HostTensor(out, {3, 17, 9})});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(closeTo(r.outputs[0], ref, 1e-5, 1e-6)) << plan::dtypeName(out);
  }
}

// Tests scaled_gemm with C, alpha, beta and both transposes.
TEST(ScaledGemmKernel, AlphaBetaTransposes) {
  std::mt19937 rng(22);
  HostTensor a = randomTensor(DType::F8E5M2, {40, 13}, rng);   // A^T: [13, 40]
  HostTensor b = randomTensor(DType::F8E4M3FN, {11, 40}, rng); // B^T: [40, 11]
  HostTensor c = randomTensor(DType::F32, {11}, rng);
  const float sa = 2.0f, sb = 448.0f / 3.0f;
  KernelRun r = runKernel("scaled_gemm", {a, b, c, scalarF32(sa), scalarF32(sb)},
                          {HostTensor(DType::F32, {13, 11})},
                          {Attribute::makeFloat("alpha", 0.5), Attribute::makeFloat("beta", 2),
                           Attribute::makeInt("trans_a", 1), Attribute::makeInt("trans_b", 1)});
  ASSERT_TRUE(r.ok) << r.error;
  const double alpha = 0.5f * ((1.0f / sa) * (1.0f / sb));
  EXPECT_TRUE(closeTo(r.outputs[0], gemmRef(a, b, &c, true, true, alpha, 2, 13, 11, 40, "none"),
                      1e-5, 1e-6));
  // Without C.
  KernelRun r2 = runKernel("scaled_gemm", {a, b, scalarF32(sa), scalarF32(sb)},
                           {HostTensor(DType::BF16, {13, 11})},
                           {Attribute::makeInt("trans_a", 1), Attribute::makeInt("trans_b", 1)});
  ASSERT_TRUE(r2.ok) << r2.error;
  EXPECT_TRUE(
      closeTo(r2.outputs[0],
              gemmRef(a, b, nullptr, true, true, (1.0f / sa) * (1.0f / sb), 1, 13, 11, 40, "none"),
              1e-5, 1e-6));
}

// Tests what the scaled kinds refuse: non-FP8 operands, a non-scalar scale,
// an FP8 result (no D scale), and gemm's activation.
TEST(ScaledMatMulKernel, Rejects) {
  std::mt19937 rng(23);
  HostTensor a8 = randomTensor(DType::F8E4M3FN, {4, 8}, rng);
  HostTensor b8 = randomTensor(DType::F8E4M3FN, {8, 2}, rng);
  HostTensor bf = randomTensor(DType::BF16, {8, 2}, rng);
  HostTensor one = scalarF32(1);
  KernelRun r = runKernel("scaled_matmul", {a8, bf, one, one}, {HostTensor(DType::F32, {4, 2})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("must be f8E4M3FN or f8E5M2"), std::string::npos) << r.error;
  r = runKernel("scaled_matmul", {a8, b8, fromValues(DType::F32, {1}, {1}), one},
                {HostTensor(DType::F32, {4, 2})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("must be a 0-d f32"), std::string::npos) << r.error;
  r = runKernel("scaled_matmul", {a8, b8, one, one}, {HostTensor(DType::F8E4M3FN, {4, 2})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no D scale"), std::string::npos) << r.error;
  r = runKernel("scaled_gemm", {a8, b8, one, one}, {HostTensor(DType::F32, {4, 2})},
                {Attribute::makeString("activation", "relu")});
  EXPECT_FALSE(r.ok);
}

// Tests the quantise / dequantise round trip: quantize(x, s) into E4M3
// (round to nearest even, saturating), then scaled_matmul by a one-element
// E4M3 identity with scales (s, 1) gives back x within E4M3's half ulp
// (2^-4 relative) in the normal range, within its smallest subnormal step
// (2^-10 / s) below it, and +-448 / s beyond the range.
TEST(ScaledMatMulKernel, QuantizeDequantizeRoundTrip) {
  std::mt19937 rng(24);
  const int64_t n = 4096;
  HostTensor x(DType::F32, {n, 1});
  std::uniform_real_distribution<double> logMag(-12, 3), unit(0, 1);
  for (int64_t i = 0; i < n; ++i)
    x.set(i, (unit(rng) < 0.5 ? -1 : 1) * std::pow(10.0, logMag(rng)));
  const float s = 448.0f / 50.0f; // values up to 50 fit; the rest saturate
  KernelRun q = runKernel("quantize", {x, scalarF32(s)}, {HostTensor(DType::F8E4M3FN, {n, 1})});
  ASSERT_TRUE(q.ok) << q.error;
  HostTensor id = fromValues(DType::F8E4M3FN, {1, 1}, {1.0});
  KernelRun d = runKernel("scaled_matmul", {q.outputs[0], id, scalarF32(s), scalarF32(1)},
                          {HostTensor(DType::F32, {n, 1})});
  ASSERT_TRUE(d.ok) << d.error;
  int saturated = 0, subnormal = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double xv = x.get(i), back = d.outputs[0].get(i), scaled = xv * double(s);
    if (std::fabs(scaled) > 464) { // beyond 448 + half its ulp: saturates
      EXPECT_EQ(back, std::copysign(double(448.0f * (1.0f / s)), xv)) << xv;
      saturated += 1;
    } else if (std::fabs(scaled) < std::ldexp(1.0, -6)) {
      EXPECT_LE(std::fabs(back - xv), std::ldexp(1.0, -10) / s * 1.0001) << xv;
      subnormal += 1;
    } else {
      EXPECT_LE(std::fabs(back - xv), std::ldexp(std::fabs(xv), -4) * 1.0001) << xv;
    }
  }
  EXPECT_GT(saturated, 100);
  EXPECT_GT(subnormal, 100);
}

// Tests one scaled GEMM step against PyTorch's float8 emulation
// (scripts/gen_fp8_gemm_reference.py: torch.float8_e4m3fn casts with the
// same scales, saturated, and an FP32 matmul times (1/sa)(1/sb)): the CPU
// quantize + scaled_matmul give the same values up to the accumulation
// order, K float32 roundings of the sum of |products| at most.
TEST(ScaledMatMulKernel, MatchesPyTorchFloat8Emulation) {
  std::FILE *f = std::fopen(MPTRT_FP8_GEMM_REFERENCE, "rb");
  ASSERT_NE(f, nullptr) << MPTRT_FP8_GEMM_REFERENCE;
  int32_t dims[3];
  float scales[2];
  ASSERT_EQ(std::fread(dims, 4, 3, f), 3u);
  ASSERT_EQ(std::fread(scales, 4, 2, f), 2u);
  const int64_t M = dims[0], K = dims[1], N = dims[2];
  auto readTensor = [&](std::vector<int64_t> shape) {
    std::vector<float> v(shape[0] * shape[1]);
    EXPECT_EQ(std::fread(v.data(), 4, v.size(), f), v.size());
    return fromValues(DType::F32, shape, std::vector<double>(v.begin(), v.end()));
  };
  HostTensor a = readTensor({M, K}), b = readTensor({K, N}), ref = readTensor({M, N});
  std::fclose(f);
  KernelRun qa =
      runKernel("quantize", {a, scalarF32(scales[0])}, {HostTensor(DType::F8E4M3FN, {M, K})});
  KernelRun qb =
      runKernel("quantize", {b, scalarF32(scales[1])}, {HostTensor(DType::F8E4M3FN, {K, N})});
  ASSERT_TRUE(qa.ok && qb.ok) << qa.error << qb.error;
  KernelRun y = runKernel(
      "scaled_matmul", {qa.outputs[0], qb.outputs[0], scalarF32(scales[0]), scalarF32(scales[1])},
      {HostTensor(DType::F32, {M, N})});
  ASSERT_TRUE(y.ok) << y.error;
  const double factor = (1.0f / scales[0]) * (1.0f / scales[1]);
  int exact = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double absSum = 0;
      for (int64_t k = 0; k < K; ++k)
        absSum += std::fabs(qa.outputs[0].get(i * K + k) * qb.outputs[0].get(k * N + j));
      const double got = y.outputs[0].get(i * N + j), want = ref.get(i * N + j);
      EXPECT_LE(std::fabs(got - want), double(K) * std::ldexp(absSum * factor, -24) + 1e-30)
          << "element (" << i << ", " << j << ")";
      exact += got == want;
    }
  // Row 0 starts with values beyond the scaled range: they saturate to
  // +-448 in both, or that row would differ by far more than the bound.
  EXPECT_EQ(qa.outputs[0].get(0), 448.0);
  EXPECT_EQ(qa.outputs[0].get(1), -448.0);
  std::printf("scaled_matmul vs PyTorch float8 emulation: %d of %lld elements bit-identical\n",
              exact, static_cast<long long>(M * N));
}

//===----------------------------------------------------------------------===//
// conv.
//===----------------------------------------------------------------------===//

struct ConvCase {
  std::vector<int64_t> x, w; // [N, C, in...], [M, C/group, k...]
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
  bool bias;
};

std::vector<int64_t> convOutShape(const ConvCase &c) {
  return convOutputShape(c.x, c.w, c.strides, c.pads, c.dilations);
}

std::vector<double> convRef(const ConvCase &c, const HostTensor &x, const HostTensor &w,
                            const HostTensor *bias) {
  const size_t nsp = c.x.size() - 2;
  const std::vector<int64_t> outShape = convOutShape(c);
  const int64_t Cg = c.x[1] / c.group, Mg = c.w[0] / c.group;
  std::vector<int64_t> kShape(c.w.begin() + 2, c.w.end());
  int64_t kSize = 1;
  for (int64_t k : kShape)
    kSize *= k;
  int64_t total = 1;
  for (int64_t d : outShape)
    total *= d;
  std::vector<double> y(total);
  const std::vector<int64_t> xStrides = stridesOf(c.x), wStrides = stridesOf(c.w);
  for (int64_t i = 0; i < total; ++i) {
    std::vector<int64_t> o = unflatten(i, outShape);
    const int64_t n = o[0], m = o[1], g = m / Mg;
    double s = bias ? bias->get(m) : 0.0;
    for (int64_t cg = 0; cg < Cg; ++cg)
      for (int64_t kf = 0; kf < kSize; ++kf) {
        std::vector<int64_t> k = unflatten(kf, kShape);
        int64_t xOff = n * xStrides[0] + (g * Cg + cg) * xStrides[1];
        bool inside = true;
        for (size_t d = 0; d < nsp; ++d) {
          const int64_t pos = o[2 + d] * c.strides[d] - c.pads[d] + k[d] * c.dilations[d];
          inside = inside && pos >= 0 && pos < c.x[2 + d];
          xOff += pos * xStrides[2 + d];
        }
        if (!inside)
          continue;
        int64_t wOff = m * wStrides[0] + cg * wStrides[1];
        for (size_t d = 0; d < nsp; ++d)
          wOff += k[d] * wStrides[2 + d];
        s += x.get(xOff) * w.get(wOff);
      }
    y[i] = s;
  }
  return y;
}

// Tests 1-D, 2-D and 3-D convolutions with strides, asymmetric pads,
// dilations, groups (incl. depthwise) and bias, in every float dtype.
TEST(ConvKernel, Variants) {
  std::mt19937 rng(13);
  const ConvCase cases[] = {
      {{2, 3, 11}, {4, 3, 3}, {1}, {1, 1}, {1}, 1, true},
      {{1, 4, 9, 8}, {6, 2, 3, 3}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2, true},
      {{2, 4, 7, 7}, {4, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4, false}, // depthwise
      {{1, 2, 5, 6, 4}, {3, 2, 2, 3, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}, {2, 1, 1}, 1, true},
      {{3, 5, 6, 6}, {8, 5, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true}, // pointwise
  };
  for (const ConvCase &c : cases)
    for (DType t : floatDTypes()) {
      HostTensor x = randomTensor(t, c.x, rng), w = randomTensor(t, c.w, rng);
      std::vector<HostTensor> ops = {x, w};
      if (c.bias)
        ops.push_back(randomTensor(t, {c.w[0]}, rng));
      std::vector<Attribute> attrs = {
          Attribute::makeInts("strides", c.strides), Attribute::makeInts("pads", c.pads),
          Attribute::makeInts("dilations", c.dilations), Attribute::makeInt("group", c.group)};
      KernelRun r = runKernel("conv", ops, {HostTensor(t, convOutShape(c))}, attrs);
      ASSERT_TRUE(r.ok) << r.error;
      EXPECT_TRUE(closeTo(r.outputs[0], convRef(c, x, w, c.bias ? &ops[2] : nullptr), 1e-5, 1e-4))
          << plan::dtypeName(t) << " x " << x.shape.size();
    }
}

// Tests that conv rejects a result shape that does not follow the formula.
TEST(ConvKernel, RejectsWrongResultShape) {
  HostTensor x(DType::F32, {1, 1, 5, 5}), w(DType::F32, {1, 1, 3, 3});
  KernelRun r =
      runKernel("conv", {x, w}, {HostTensor(DType::F32, {1, 1, 5, 5})},
                {Attribute::makeInts("strides", {1, 1}), Attribute::makeInts("pads", {0, 0, 0, 0}),
                 Attribute::makeInts("dilations", {1, 1})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("must have shape [1, 1, 3, 3]"), std::string::npos) << r.error;
}

/// Whether this build has the CPU's fast numerics (oneDNN): a plan loads
/// in it.
bool haveFastMode() {
  CpuNumericsMode fast("fast");
  HostTensor a(DType::F32, {2, 2});
  return runKernel("matmul", {a, a}, {HostTensor(DType::F32, {2, 2})}).ok;
}

/// conv with `activation = relu` and conv then relu on `backend`, in the
/// current numerics; false (with a failure) when either run fails.
bool convWithAndWithoutRelu(const std::vector<HostTensor> &ops, const HostTensor &result,
                            const std::vector<Attribute> &attrs, const char *backend,
                            HostTensor *fused, HostTensor *unfused) {
  std::vector<Attribute> withRelu = attrs;
  withRelu.push_back(Attribute::makeString("activation", "relu"));
  KernelRun f = runKernel("conv", ops, {result}, withRelu, backend);
  KernelRun plain = runKernel("conv", ops, {result}, attrs, backend);
  EXPECT_TRUE(f.ok && plain.ok) << backend << ": " << f.error << plain.error;
  if (!f.ok || !plain.ok)
    return false;
  KernelRun relu = runKernel("relu", {plain.outputs[0]}, {result}, {}, backend);
  EXPECT_TRUE(relu.ok) << relu.error;
  if (!relu.ok)
    return false;
  *fused = f.outputs[0];
  *unfused = relu.outputs[0];
  return true;
}

// Tests conv with `activation = relu` (mpt-fuse-conv-relu) against conv
// then relu: the same bits in the CPU's reference numerics, with and
// without a bias, in f32, bf16 and f16 (the relu applies to the rounded
// result, so a -0 stays -0); the same values in the fast mode (oneDNN's
// post-op acts before the rounding: at most the sign of a zero differs;
// skipped in a build without oneDNN);
// the same bits on CUDA, direct and through cuDNN, where a GPU is present.
TEST(ConvFusion, ReluHasTheUnfusedBits) {
  std::mt19937 rng(17);
  const ConvCase cases[] = {
      {{2, 4, 9, 8}, {6, 2, 3, 3}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2, true},
      {{3, 5, 6, 6}, {8, 5, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false},
  };
  const std::string cudaWhy = cudaUnusableReason();
  for (const ConvCase &c : cases)
    for (DType t : {DType::F32, DType::BF16, DType::F16}) {
      HostTensor x = randomTensor(t, c.x, rng), w = randomTensor(t, c.w, rng);
      std::vector<HostTensor> ops = {x, w};
      if (c.bias)
        ops.push_back(randomTensor(t, {c.w[0]}, rng));
      const std::vector<Attribute> attrs = {
          Attribute::makeInts("strides", c.strides), Attribute::makeInts("pads", c.pads),
          Attribute::makeInts("dilations", c.dilations), Attribute::makeInt("group", c.group)};
      const HostTensor result(t, convOutShape(c));
      const std::string label = std::string(plan::dtypeName(t)) + (c.bias ? " with bias" : "");
      HostTensor fused, unfused;
      {
        CpuNumericsMode reference("reference");
        ASSERT_TRUE(convWithAndWithoutRelu(ops, result, attrs, "cpu", &fused, &unfused));
        EXPECT_TRUE(fused.bytes == unfused.bytes) << label << ": reference";
        int zeros = 0;
        for (int64_t i = 0; i < fused.numel(); ++i)
          zeros += fused.get(i) == 0.0;
        EXPECT_GT(zeros, 0) << label << ": the relu did nothing";
        EXPECT_LT(zeros, fused.numel()) << label;
      }
      if (haveFastMode()) {
        CpuNumericsMode fast("fast");
        if (convWithAndWithoutRelu(ops, result, attrs, "cpu", &fused, &unfused))
          for (int64_t i = 0; i < fused.numel(); ++i)
            ASSERT_EQ(fused.get(i), unfused.get(i)) << label << ": fast, element " << i;
      }
      if (!cudaWhy.empty())
        continue;
      for (const char *path : {"direct", "auto"}) {
        ScopedVariable conv("MPTRT_CUDA_CONV", path);
        ASSERT_TRUE(convWithAndWithoutRelu(ops, result, attrs, "cuda", &fused, &unfused));
        EXPECT_TRUE(fused.bytes == unfused.bytes) << label << ": CUDA " << path;
      }
    }
}

// Tests that conv refuses an activation its kernels do not have.
TEST(ConvFusion, RefusesOtherActivations) {
  HostTensor x(DType::F32, {1, 1, 5, 5}), w(DType::F32, {1, 1, 3, 3});
  KernelRun r = runKernel("conv", {x, w}, {HostTensor(DType::F32, {1, 1, 3, 3})},
                          {Attribute::makeString("activation", "gelu")});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("activation 'gelu' is not supported here (none or relu)"),
            std::string::npos)
      << r.error;
}

} // namespace
