//===- TrainingKernelTest.cpp - loss scaling and optimizer kernels -------===//
//
// The kinds of docs/training.md's "Loss scaling and optimizer kernels".
// The optimizer tests build a training-step plan whose kernels update
// parameter tensors in place, run it through the C API and compare each
// run with a float64 evaluation of PyTorch's formulas; after three runs the
// parameters must also equal, bit for bit, what torch.optim.SGD / AdamW
// (torch 2.15, CPU, foreach=False) computed from the same inputs.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "cpu/Parallel.h"
#include "mptrt.h"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

namespace mptrt {
namespace test {
namespace {

// Four threads unless the environment says otherwise (set before main, so
// before the runtime first reads it), so the block-wise reductions are
// split across the pool on any machine.
const bool kThreadsSet = [] {
  setenv("MPTRT_NUM_THREADS", "4", /*overwrite=*/0);
  return true;
}();

HostTensor f32Result(std::vector<int64_t> shape = {}) { return HostTensor(DType::F32, shape); }

float f32At(const HostTensor &t, int64_t i) {
  float v;
  std::memcpy(&v, t.bytes.data() + 4 * i, 4);
  return v;
}
uint32_t bitsOf(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}
float fromBits(uint32_t b) {
  float v;
  std::memcpy(&v, &b, 4);
  return v;
}

/// Runs a one-kernel plan and returns its outputs (failing the test if it
/// does not run).
std::vector<HostTensor> run(const std::string &kind, const std::vector<HostTensor> &operands,
                            const std::vector<HostTensor> &results,
                            std::vector<Attribute> attrs = {}) {
  KernelRun r = runKernel(kind, operands, results, std::move(attrs));
  EXPECT_TRUE(r.ok) << kind << ": " << r.error;
  if (!r.ok)
    return std::vector<HostTensor>(results.size(), HostTensor());
  return r.outputs;
}

/// Loads a plan through the C API and runs its entry points; parameters are
/// read back as raw bytes.
class CModel {
public:
  explicit CModel(const PlanBuilder &b) {
    std::vector<uint8_t> bytes = b.bytes();
    EXPECT_EQ(mptrt_model_load_memory(bytes.data(), bytes.size(), "cpu", &model), MPTRT_OK)
        << mptrt_last_error();
  }
  ~CModel() { mptrt_model_free(model); }
  CModel(const CModel &) = delete;
  CModel &operator=(const CModel &) = delete;

  bool loaded() const { return model != nullptr; }
  void input(const char *name, const HostTensor &t) {
    ASSERT_EQ(mptrt_bind_input(model, name, static_cast<mptrt_dtype>(t.dtype), t.shape.data(),
                               t.shape.size(), t.bytes.data(), t.bytes.size()),
              MPTRT_OK)
        << mptrt_last_error();
  }
  void param(const char *name, const HostTensor &t) {
    ASSERT_EQ(mptrt_bind_parameter(model, name, static_cast<mptrt_dtype>(t.dtype), t.shape.data(),
                                   t.shape.size(), t.bytes.data(), t.bytes.size()),
              MPTRT_OK)
        << mptrt_last_error();
  }
  void runEntry(const char *entry) {
    ASSERT_EQ(mptrt_run(model, entry), MPTRT_OK) << mptrt_last_error();
  }
  std::vector<uint8_t> read(const char *name, size_t bytes) const {
    std::vector<uint8_t> out(bytes);
    EXPECT_EQ(mptrt_read_parameter(model, name, out.data(), bytes), MPTRT_OK) << mptrt_last_error();
    return out;
  }
  std::vector<float> readF32(const char *name, size_t n) const {
    std::vector<uint8_t> raw = read(name, 4 * n);
    std::vector<float> v(n);
    std::memcpy(v.data(), raw.data(), 4 * n);
    return v;
  }
  int64_t readI64(const char *name) const {
    std::vector<uint8_t> raw = read(name, 8);
    int64_t v;
    std::memcpy(&v, raw.data(), 8);
    return v;
  }
  float readScalarF32(const char *name) const { return readF32(name, 1)[0]; }

private:
  mptrt_model *model = nullptr;
};

/// |got - ref| <= atol + rtol * |ref| for every element.
::testing::AssertionResult near(const std::vector<float> &got, const std::vector<double> &ref,
                                double rtol, double atol) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - ref[i]) <= atol + rtol * std::fabs(ref[i])))
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << ", reference " << ref[i];
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult sameBits(const std::vector<float> &got,
                                    const std::vector<uint32_t> &expected) {
  for (size_t i = 0; i < got.size(); ++i)
    if (bitsOf(got[i]) != expected[i])
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << got[i] << " (0x" << std::hex << bitsOf(got[i])
             << "), PyTorch " << fromBits(expected[i]) << " (0x" << expected[i] << ")";
  return ::testing::AssertionSuccess();
}

//===----------------------------------------------------------------------===//
// Optimizer data: an 8-element parameter and three gradients, random f32
// values of several magnitudes, written exactly (hex floats).
//===----------------------------------------------------------------------===//

constexpr int64_t kN = 8;
const float kP0[kN] = {0x1.8b14cp+0f,   0x1.3b3fa8p+1f, 0x1.b8571ep+0f, -0x1.75b37p+0f,
                       -0x1.0b6aeap+1f, 0x1.9cdabap-4f, 0x1.4ac23ep+0f, 0x1.870e32p-1f};
const float kGrads[3][kN] = {
    {0x1.cf6eep+0f, 0x1.ec12a2p-8f, 0x1.eb55d8p+0f, -0x1.7f6c72p-11f, -0x1.1b9358p-1f,
     0x1.7c0202p+1f, 0x1.408d66p-8f, 0x1.9f7f9p-1f},
    {-0x1.605d4p+0f, -0x1.1dfadcp-8f, -0x1.efc778p+1f, -0x1.96add4p-11f, 0x1.ce5e48p-2f,
     -0x1.7b076p+1f, -0x1.b58762p-5f, 0x1.4f7062p-3f},
    {-0x1.5641bep-1f, -0x1.4aae66p-9f, -0x1.54c782p-1f, 0x1.b67338p-12f, -0x1.b99acap-3f,
     0x1.16cb8p-1f, 0x1.745ecap-8f, 0x1.b2c248p-2f},
};

HostTensor vectorF32(const float *values, int64_t n) {
  HostTensor t(DType::F32, {n});
  std::memcpy(t.bytes.data(), values, 4 * n);
  return t;
}

//===----------------------------------------------------------------------===//
// sgd_update
//===----------------------------------------------------------------------===//

struct SgdCase {
  const char *name;
  float lr;
  double momentum, dampening, weightDecay;
  bool nesterov;
  std::vector<uint32_t> torchParam, torchBuf; // after three steps
};

const SgdCase kSgdCases[] = {
    {"plain",
     0.1f,
     0,
     0,
     0,
     false,
     {0x3FC88B23, 0x401D9ECF, 0x3FFDB366, 0xBFBAD627, 0xC003AC85, 0x3D3AAF81, 0x3FA5ED7D,
      0x3F1FB0DB},
     {}},
    {"weight decay",
     0.1f,
     0,
     0,
     1e-2,
     false,
     {0x3FC7FAED, 0x401D25E5, 0x3FFD0A5C, 0xBFBA46CD, 0xC0034702, 0x3D3AAA8A, 0x3FA56E76,
      0x3F1F268C},
     {}},
    {"momentum",
     0.1f,
     0.9,
     0,
     0,
     false,
     {0x3FB0C6BF, 0x401D9036, 0x400027E7, 0xBFBACFC4, 0xC000369B, 0xBE484752, 0x3FA66F97,
      0x3EF0C8BB},
     {0xBEE1C038, 0xB9C12618, 0xC02633E0, 0xBA64ADFA, 0xBE840819, 0x3E91843F, 0xBD1D630A,
      0x3F9D5A0A}},
    {"momentum, dampening, weight decay",
     0.05f,
     0.8,
     0.25,
     5e-3,
     false,
     {0x3FB8278C, 0x401D6969, 0x3FE29D12, 0xBFBA9F50, 0xC002AAAA, 0xBDA7E350, 0x3FA58CAB,
      0x3F230FC6},
     {0xBE1DA827, 0x3CCB1424, 0xBFC9FF11, 0xBC780BAE, 0xBE881CE7, 0x3F081DC9, 0xBC414839,
      0x3F7178EF}},
    {"nesterov, weight decay",
     0.1f,
     0.9,
     0,
     1e-3,
     true,
     {0x3FB5B6DC, 0x401D704A, 0x400F077A, 0xBFBAA6B4, 0xBFFD3EF3, 0xBE6259E1, 0x3FA6BECB,
      0x3EB7DE5C},
     {0xBEDFE2C4, 0x3BCE80A7, 0xC025E95C, 0xBB9E2B2E, 0xBE86D92E, 0x3E9145D3, 0xBD0F040C,
      0x3F9D9112}},
};

// Tests that sgd_update + advance_step update the parameter, its momentum
// buffer and the step counter in place over three runs as torch.optim.SGD
// does (float64 reference each run, PyTorch's bits at the end), and that a
// run with finite = 0 leaves every parameter's bytes unchanged.
TEST(SgdUpdate, UpdatesParametersInPlaceLikePyTorch) {
  for (const SgdCase &c : kSgdCases) {
    SCOPED_TRACE(c.name);
    const bool hasBuf = c.momentum != 0;
    const std::vector<float> zeros(kN, 0.0f);
    const int64_t zero = 0;
    PlanBuilder b;
    uint32_t p = b.param("w", DType::F32, {kN}, kP0, sizeof kP0);
    uint32_t buf =
        hasBuf ? b.param("w.momentum_buffer", DType::F32, {kN}, zeros.data(), 4 * kN) : 0;
    uint32_t step = b.param("optimizer.step", DType::I64, {}, &zero, 8);
    uint32_t g = b.input("grad", DType::F32, {kN});
    uint32_t lr = b.input("lr", DType::F32, {});
    uint32_t finite = b.input("finite", DType::I1, {});
    std::vector<Attribute> attrs = {Attribute::makeFloat("momentum", c.momentum),
                                    Attribute::makeFloat("dampening", c.dampening),
                                    Attribute::makeFloat("weight_decay", c.weightDecay),
                                    Attribute::makeInt("nesterov", c.nesterov)};
    if (hasBuf)
      b.kernel("sgd_update", {p, g, buf, step, lr, finite}, {p, buf}, attrs);
    else
      b.kernel("sgd_update", {p, g, step, lr, finite}, {p}, attrs);
    b.kernel("advance_step", {step, finite}, {step});
    b.entry("train_step");
    CModel model(b);
    ASSERT_TRUE(model.loaded());
    model.input("lr", scalarF32(c.lr));
    model.input("finite", scalarI1(true));

    // PyTorch's formulas in float64, from the same f32 inputs.
    std::vector<double> refP(kP0, kP0 + kN), refBuf(kN, 0.0);
    const double lr64 = c.lr;
    for (int s = 0; s < 3; ++s) {
      model.input("grad", vectorF32(kGrads[s], kN));
      model.runEntry("train_step");
      for (int64_t i = 0; i < kN; ++i) {
        double d = kGrads[s][i] + c.weightDecay * refP[i];
        if (hasBuf) {
          refBuf[i] = s == 0 ? d : c.momentum * refBuf[i] + (1 - c.dampening) * d;
          d = c.nesterov ? d + c.momentum * refBuf[i] : refBuf[i];
        }
        refP[i] -= lr64 * d;
      }
      EXPECT_EQ(model.readI64("optimizer.step"), s + 1);
      EXPECT_TRUE(near(model.readF32("w", kN), refP, 1e-6, 1e-6)) << "run " << s;
      if (hasBuf) {
        EXPECT_TRUE(near(model.readF32("w.momentum_buffer", kN), refBuf, 1e-6, 1e-6))
            << "run " << s;
      }
    }
    EXPECT_TRUE(sameBits(model.readF32("w", kN), c.torchParam));
    if (hasBuf) {
      EXPECT_TRUE(sameBits(model.readF32("w.momentum_buffer", kN), c.torchBuf));
    }

    // A skipped step (a non-finite gradient): nothing changes.
    const std::vector<uint8_t> p3 = model.read("w", 4 * kN), s3 = model.read("optimizer.step", 8);
    const std::vector<uint8_t> b3 =
        hasBuf ? model.read("w.momentum_buffer", 4 * kN) : std::vector<uint8_t>();
    std::vector<float> bad(kGrads[0], kGrads[0] + kN);
    bad[3] = std::numeric_limits<float>::quiet_NaN();
    model.input("grad", vectorF32(bad.data(), kN));
    model.input("finite", scalarI1(false));
    model.runEntry("train_step");
    EXPECT_EQ(std::memcmp(model.read("w", 4 * kN).data(), p3.data(), 4 * kN), 0);
    EXPECT_EQ(std::memcmp(model.read("optimizer.step", 8).data(), s3.data(), 8), 0);
    if (hasBuf) {
      EXPECT_EQ(std::memcmp(model.read("w.momentum_buffer", 4 * kN).data(), b3.data(), 4 * kN), 0);
    }
  }
}

// Tests the first momentum step (buf = g, whatever the buffer held) and a
// later one (buf = momentum * buf + (1 - dampening) * g) on given values.
TEST(SgdUpdate, MomentumBufferStartsAsTheGradient) {
  const HostTensor p = fromValues(DType::F32, {3}, {1, 2, 3});
  const HostTensor g = fromValues(DType::F32, {3}, {0.5, -1, 2});
  const HostTensor staleBuf = fromValues(DType::F32, {3}, {100, 100, 100});
  const std::vector<Attribute> attrs = {Attribute::makeFloat("momentum", 0.5),
                                        Attribute::makeFloat("dampening", 0.5)};
  const std::vector<HostTensor> results = {f32Result({3}), f32Result({3})};
  std::vector<HostTensor> first =
      run("sgd_update", {p, g, staleBuf, scalarI64(0), scalarF32(0.5f), scalarI1(true)}, results,
          attrs);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(f32At(first[1], i), f32At(g, i));                      // buf = g
    EXPECT_EQ(f32At(first[0], i), f32At(p, i) - 0.5f * f32At(g, i)); // p -= lr * g
  }
  std::vector<HostTensor> later =
      run("sgd_update", {p, g, staleBuf, scalarI64(7), scalarF32(0.5f), scalarI1(true)}, results,
          attrs);
  for (int i = 0; i < 3; ++i) {
    const float buf = 0.5f * 100 + 0.5f * f32At(g, i); // exact in f32
    EXPECT_EQ(f32At(later[1], i), buf);
    EXPECT_EQ(f32At(later[0], i), f32At(p, i) - 0.5f * buf);
  }
}

// Tests that a gradient of another float type is read exactly (bf16 here).
TEST(SgdUpdate, AcceptsNarrowGradients) {
  const HostTensor p = fromValues(DType::F32, {4}, {1, -2, 0.5, 4});
  const HostTensor g = fromValues(DType::BF16, {4}, {0.3, -0.7, 1.1, 3e-3});
  std::vector<HostTensor> out =
      run("sgd_update", {p, g, scalarI64(3), scalarF32(0.25f), scalarI1(true)}, {f32Result({4})});
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(f32At(out[0], i), std::fma(static_cast<float>(g.get(i)), -0.25f, f32At(p, i)));
}

//===----------------------------------------------------------------------===//
// adamw_update
//===----------------------------------------------------------------------===//

struct AdamWCase {
  const char *name;
  float lr;
  double beta1, beta2, eps, weightDecay;
  std::vector<uint32_t> torchParam, torchExpAvg, torchExpAvgSq;
};

const AdamWCase kAdamWCases[] = {
    {"defaults",
     1e-3f,
     0.9,
     0.999,
     1e-8,
     0.01,
     {0x3FC56945, 0x401D8B4D, 0x3FDC21A5, 0xBFBA86C1, 0xC0059FA0, 0x3DCC63E4, 0x3FA56448,
      0x3F42D802},
     {0xBD3499C6, 0xB81A84D8, 0xBE84F64D, 0xB8B6F195, 0xBCD3402B, 0x3CE8D39B, 0xBB7BD1AA,
      0x3DFBC343},
     {0x3BB7D4C6, 0x33AF5890, 0x3C9C8549, 0x30B4003D, 0x3A11D5DF, 0x3C923F48, 0x36430249,
      0x3A6292B0}},
    // 1 - beta1 = 0.7: lerp's other branch, end - (end - self) * (1 - w).
    {"beta1 0.3, weight decay 0.1",
     3e-3f,
     0.3,
     0.95,
     1e-6,
     0.1,
     {0x3FC55208, 0x401D6D33, 0x3FDC1616, 0xBFB9F5DB, 0xC0057025, 0x3DCB8A8B, 0x3FA5558D,
      0x3F41991B},
     {0xBF249710, 0xBB10CB2B, 0xBF9445E0, 0x38AF98D1, 0xBDBA63BD, 0xBD5BB9EA, 0xBBE318E6,
      0x3EC3F3DB},
     {0x3E853AC3, 0x367CC80B, 0x3F66A6B5, 0x3383F9CA, 0x3CD3C6BD, 0x3F543CCC, 0x3910E718,
      0x3D23DC3E}},
    {"no weight decay",
     1e-2f,
     0.9,
     0.999,
     1e-8,
     0.0,
     {0x3FC44E8C, 0x401CDEA2, 0x3FDBD94E, 0xBFB7AA73, 0xC004E56B, 0x3DBA1E60, 0x3FA58D76,
      0x3F3CBF30},
     {0xBD3499C6, 0xB81A84D8, 0xBE84F64D, 0xB8B6F195, 0xBCD3402B, 0x3CE8D39B, 0xBB7BD1AA,
      0x3DFBC343},
     {0x3BB7D4C6, 0x33AF5890, 0x3C9C8549, 0x30B4003D, 0x3A11D5DF, 0x3C923F48, 0x36430249,
      0x3A6292B0}},
};

// Tests that adamw_update + advance_step update the parameter and both
// moments in place over steps 1..3 (bias corrections 1 - beta^t) as
// torch.optim.AdamW does: float64 reference each run, PyTorch's bits at the
// end; a run with finite = 0 changes no parameter byte.
TEST(AdamWUpdate, UpdatesParametersInPlaceLikePyTorch) {
  for (const AdamWCase &c : kAdamWCases) {
    SCOPED_TRACE(c.name);
    const std::vector<float> zeros(kN, 0.0f);
    const int64_t zero = 0;
    PlanBuilder b;
    uint32_t p = b.param("w", DType::F32, {kN}, kP0, sizeof kP0);
    uint32_t m = b.param("w.exp_avg", DType::F32, {kN}, zeros.data(), 4 * kN);
    uint32_t v = b.param("w.exp_avg_sq", DType::F32, {kN}, zeros.data(), 4 * kN);
    uint32_t step = b.param("optimizer.step", DType::I64, {}, &zero, 8);
    uint32_t g = b.input("grad", DType::F32, {kN});
    uint32_t lr = b.input("lr", DType::F32, {});
    uint32_t finite = b.input("finite", DType::I1, {});
    b.kernel("adamw_update", {p, g, m, v, step, lr, finite}, {p, m, v},
             {Attribute::makeFloat("beta1", c.beta1), Attribute::makeFloat("beta2", c.beta2),
              Attribute::makeFloat("eps", c.eps),
              Attribute::makeFloat("weight_decay", c.weightDecay)});
    b.kernel("advance_step", {step, finite}, {step});
    b.entry("train_step");
    CModel model(b);
    ASSERT_TRUE(model.loaded());
    model.input("lr", scalarF32(c.lr));
    model.input("finite", scalarI1(true));

    std::vector<double> refP(kP0, kP0 + kN), refM(kN, 0.0), refV(kN, 0.0);
    const double lr64 = c.lr;
    for (int s = 0; s < 3; ++s) {
      model.input("grad", vectorF32(kGrads[s], kN));
      model.runEntry("train_step");
      const double t = s + 1;
      for (int64_t i = 0; i < kN; ++i) {
        const double gi = kGrads[s][i];
        refP[i] *= 1 - lr64 * c.weightDecay;
        refM[i] += (1 - c.beta1) * (gi - refM[i]);
        refV[i] = refV[i] * c.beta2 + (1 - c.beta2) * gi * gi;
        const double denom = std::sqrt(refV[i]) / std::sqrt(1 - std::pow(c.beta2, t)) + c.eps;
        refP[i] -= lr64 / (1 - std::pow(c.beta1, t)) * refM[i] / denom;
      }
      EXPECT_EQ(model.readI64("optimizer.step"), s + 1);
      EXPECT_TRUE(near(model.readF32("w", kN), refP, 1e-6, 1e-7)) << "run " << s;
      EXPECT_TRUE(near(model.readF32("w.exp_avg", kN), refM, 1e-5, 0)) << "run " << s;
      EXPECT_TRUE(near(model.readF32("w.exp_avg_sq", kN), refV, 1e-5, 0)) << "run " << s;
    }
    EXPECT_TRUE(sameBits(model.readF32("w", kN), c.torchParam));
    EXPECT_TRUE(sameBits(model.readF32("w.exp_avg", kN), c.torchExpAvg));
    EXPECT_TRUE(sameBits(model.readF32("w.exp_avg_sq", kN), c.torchExpAvgSq));

    const char *names[] = {"w", "w.exp_avg", "w.exp_avg_sq"};
    std::vector<std::vector<uint8_t>> before;
    for (const char *name : names)
      before.push_back(model.read(name, 4 * kN));
    std::vector<float> bad(kGrads[1], kGrads[1] + kN);
    bad[0] = INFINITY;
    model.input("grad", vectorF32(bad.data(), kN));
    model.input("finite", scalarI1(false));
    model.runEntry("train_step");
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(std::memcmp(model.read(names[k], 4 * kN).data(), before[k].data(), 4 * kN), 0)
          << names[k];
    EXPECT_EQ(model.readI64("optimizer.step"), 3);
  }
}

// Tests the bias correction of the first step: with zero moments and no
// weight decay, step 1 moves every parameter by lr against its gradient's
// sign (|g| >> eps); without the correction it would move 3.16 lr.
TEST(AdamWUpdate, FirstStepMovesByLr) {
  const HostTensor p = fromValues(DType::F32, {4}, {1, -1, 0.25, 0.5});
  const HostTensor g = fromValues(DType::F32, {4}, {0.3, -2, 1e-3, -50});
  const HostTensor zeros = fromValues(DType::F32, {4}, {0, 0, 0, 0});
  std::vector<HostTensor> out = run(
      "adamw_update", {p, g, zeros, zeros, scalarI64(0), scalarF32(0.01f), scalarI1(true)},
      {f32Result({4}), f32Result({4}), f32Result({4})}, {Attribute::makeFloat("weight_decay", 0)});
  for (int i = 0; i < 4; ++i) {
    const double moved = f32At(out[0], i) - f32At(p, i);
    EXPECT_NEAR(moved, g.get(i) > 0 ? -0.01 : 0.01, 3e-7) << i;
    EXPECT_FLOAT_EQ(f32At(out[1], i), static_cast<float>(0.1 * g.get(i)));
    EXPECT_FLOAT_EQ(f32At(out[2], i), static_cast<float>(0.001 * g.get(i) * g.get(i)));
  }
}

// Tests that with finite = 0 the results are copies of their operands bit
// for bit (NaN payloads and negative zero included) when they do not share
// bytes.
TEST(OptimizerUpdates, SkippedStepCopiesOperandsBitForBit) {
  HostTensor p(DType::F32, {4}), m(DType::F32, {4}), v(DType::F32, {4});
  const uint32_t pBits[4] = {0x7FC12345, 0x80000000, 0x3F800001, 0xFF800000};
  const uint32_t mBits[4] = {0x00000001, 0x7F7FFFFF, 0xBF000000, 0x7FA00000};
  const uint32_t vBits[4] = {0x3DCCCCCD, 0x00000000, 0x7F800000, 0x12345678};
  std::memcpy(p.bytes.data(), pBits, 16);
  std::memcpy(m.bytes.data(), mBits, 16);
  std::memcpy(v.bytes.data(), vBits, 16);
  const HostTensor g = fromValues(DType::F32, {4}, {1, 2, 3, 4});
  std::vector<HostTensor> adam =
      run("adamw_update", {p, g, m, v, scalarI64(4), scalarF32(0.1f), scalarI1(false)},
          {f32Result({4}), f32Result({4}), f32Result({4})});
  EXPECT_EQ(adam[0].bytes, p.bytes);
  EXPECT_EQ(adam[1].bytes, m.bytes);
  EXPECT_EQ(adam[2].bytes, v.bytes);
  std::vector<HostTensor> sgd =
      run("sgd_update", {p, g, m, scalarI64(4), scalarF32(0.1f), scalarI1(false)},
          {f32Result({4}), f32Result({4})}, {Attribute::makeFloat("momentum", 0.9)});
  EXPECT_EQ(sgd[0].bytes, p.bytes);
  EXPECT_EQ(sgd[1].bytes, m.bytes);
}

//===----------------------------------------------------------------------===//
// scale_loss, unscale, clip_by_norm
//===----------------------------------------------------------------------===//

// Tests scale_loss: one f32 product.
TEST(LossScaling, ScaleLoss) {
  std::vector<HostTensor> out =
      run("scale_loss", {scalarF32(2.5f), scalarF32(65536.0f)}, {f32Result()});
  EXPECT_EQ(f32At(out[0], 0), 163840.0f);
  out = run("scale_loss", {scalarF32(0.1f), scalarF32(3.0f)}, {f32Result()});
  EXPECT_EQ(f32At(out[0], 0), 0.1f * 3.0f);
}

// Tests unscale on f32, f16 and bf16 gradients: f32(g) * f32(1 / f64(scale)).
TEST(LossScaling, Unscale) {
  std::mt19937 rng(7);
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    for (float scale : {1024.0f, 3.0f, 0.7f}) {
      SCOPED_TRACE(std::string(plan::dtypeName(dt)) + " scale " + std::to_string(scale));
      const HostTensor g = randomTensor(dt, {3, 50}, rng, -1000, 1000);
      std::vector<HostTensor> out = run("unscale", {g, scalarF32(scale)}, {f32Result({3, 50})});
      const float inv = static_cast<float>(1.0 / scale);
      for (int64_t i = 0; i < g.numel(); ++i)
        ASSERT_EQ(f32At(out[0], i), static_cast<float>(g.get(i)) * inv) << i;
    }
  }
}

// Tests unscale and clip_by_norm writing over their gradient in the arena.
TEST(LossScaling, InPlaceInTheArena) {
  PlanBuilder b;
  uint32_t x = b.input("x", DType::F32, {5});
  uint32_t scale = b.input("scale", DType::F32, {});
  uint32_t norm = b.input("norm", DType::F32, {});
  uint32_t t = b.temp(DType::F32, {5});
  b.kernel("copy", {x}, {t});
  b.kernel("unscale", {t, scale}, {t});
  b.kernel("clip_by_norm", {t, norm}, {t}, {Attribute::makeFloat("max_norm", 1.0)});
  b.kernel("copy", {t}, {b.output("y", DType::F32, {5})});
  b.entry("main");
  std::vector<uint8_t> bytes = b.bytes();
  Model model;
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  const std::vector<float> x0 = {4, -8, 12, 0.5f, 1};
  ASSERT_TRUE(model.bindInput("x", MPTRT_F32, {5}, x0));
  ASSERT_TRUE(model.bindInput("scale", MPTRT_F32, {}, std::vector<float>{4.0f}));
  ASSERT_TRUE(model.bindInput("norm", MPTRT_F32, {}, std::vector<float>{2.0f}));
  ASSERT_TRUE(model.run("main")) << lastError();
  std::vector<float> y;
  ASSERT_TRUE(model.readOutput("y", &y));
  const float c = 1.0f / (2.0f + 1e-6f);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(y[i], x0[i] * 0.25f * c) << i;
}

// Tests clip_by_norm: unchanged below max_norm, scaled by about
// max_norm / norm above it, NaN for a NaN norm, zero for an infinite norm.
TEST(LossScaling, ClipByNorm) {
  const HostTensor g = fromValues(DType::F32, {6}, {3, -4, 0.25, 1e-3, -7.5, 100});
  auto clip = [&](const HostTensor &grad, float norm, double maxNorm) {
    return run("clip_by_norm", {grad, scalarF32(norm)}, {f32Result(grad.shape)},
               {Attribute::makeFloat("max_norm", maxNorm)})[0];
  };
  HostTensor same = clip(g, 5.0f, 10.0);
  EXPECT_EQ(same.bytes, g.bytes);
  // max_norm / (norm + 1e-6) just below 1 still scales.
  HostTensor edge = clip(g, 5.0f, 5.0);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_LT(std::fabs(f32At(edge, i)), std::fabs(f32At(g, i))) << i;
    EXPECT_NEAR(f32At(edge, i), f32At(g, i) * (1 - 2e-7), 1e-6 * std::fabs(f32At(g, i)));
  }
  HostTensor clipped = clip(g, 250.0f, 1.0);
  const float c = (1.0f / (250.0f + 1e-6f)) * 1.0f;
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(f32At(clipped, i), f32At(g, i) * c) << i;
    EXPECT_NEAR(f32At(clipped, i), f32At(g, i) / 250.0, 1e-6 * std::fabs(f32At(g, i) / 250.0));
  }
  HostTensor nan = clip(g, NAN, 1.0);
  HostTensor zero = clip(g, INFINITY, 1.0);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_TRUE(std::isnan(f32At(nan, i))) << i;
    EXPECT_EQ(f32At(zero, i), 0.0f) << i;
  }
  // An f16 gradient gives an f32 result.
  const HostTensor h = fromValues(DType::F16, {2}, {1.5, -3});
  HostTensor hc = clip(h, 6.0f, 3.0);
  const float ch = (1.0f / (6.0f + 1e-6f)) * 3.0f;
  EXPECT_EQ(f32At(hc, 0), 1.5f * ch);
  EXPECT_EQ(f32At(hc, 1), -3.0f * ch);
}

//===----------------------------------------------------------------------===//
// all_finite, global_norm, amax
//===----------------------------------------------------------------------===//

/// Three operands of different float types and shapes, one large enough for
/// several blocks (and chunks across threads).
std::vector<HostTensor> gradientSet(std::mt19937 &rng) {
  return {randomTensor(DType::F32, {4, 5}, rng, -3, 3),
          randomTensor(DType::F16, {33}, rng, -60000, 60000),
          randomTensor(DType::BF16, {2, 3}, rng, -1e30, 1e30),
          randomTensor(DType::F32, {40001}, rng, -10, 10)};
}

bool allFinite(const std::vector<HostTensor> &ops) {
  std::vector<HostTensor> out = run("all_finite", ops, {HostTensor(DType::I1, {})});
  EXPECT_TRUE(out[0].bytes[0] == 0 || out[0].bytes[0] == 1);
  return out[0].bytes[0] == 1;
}

// Tests all_finite: 1 for finite values up to each format's maximum; 0 for
// one inf, -inf or NaN at the first, a middle or the last element of any one
// of the operands.
TEST(AllFinite, FindsOneNonFiniteElementInAnyOperand) {
  std::mt19937 rng(11);
  std::vector<HostTensor> ops = gradientSet(rng);
  EXPECT_TRUE(allFinite(ops));
  ops[0].set(0, FLT_MAX);
  ops[1].set(1, -65504);
  ops[2].set(2, 3.3895313892515355e38); // bf16 max
  EXPECT_TRUE(allFinite(ops));
  for (size_t k = 0; k < ops.size(); ++k) {
    const int64_t n = ops[k].numel();
    for (int64_t pos : {int64_t{0}, n / 2, n - 1}) {
      for (double bad : {double(INFINITY), -double(INFINITY), double(NAN)}) {
        std::vector<HostTensor> broken = ops;
        broken[k].set(pos, bad);
        EXPECT_FALSE(allFinite(broken)) << "operand " << k << " element " << pos << " " << bad;
      }
    }
  }
}

// Tests all_finite on the FP8 formats: E4M3FN has no inf, only NaN.
TEST(AllFinite, Fp8Operands) {
  HostTensor e4(DType::F8E4M3FN, {3}), e5(DType::F8E5M2, {3});
  e4.set(0, 448);
  e4.set(1, -448);
  e5.set(0, 57344);
  EXPECT_TRUE(allFinite({e4, e5}));
  e4.bytes[2] = 0x7F; // NaN
  EXPECT_FALSE(allFinite({e4, e5}));
  e4.bytes[2] = 0;
  e5.bytes[1] = 0xFC; // -inf
  EXPECT_FALSE(allFinite({e4, e5}));
}

// Tests global_norm against a long-double sum of squares of the stored
// values, over operands of several types, shapes and blocks.
TEST(GlobalNorm, MatchesReference) {
  std::mt19937 rng(5);
  std::vector<HostTensor> ops = {randomTensor(DType::F32, {4, 5}, rng, -3, 3),
                                 randomTensor(DType::F16, {33}, rng, -100, 100),
                                 randomTensor(DType::BF16, {2, 2, 2}, rng, -1e3, 1e3),
                                 randomTensor(DType::F32, {70000}, rng, -1, 1)};
  long double sum = 0;
  for (const HostTensor &t : ops)
    for (int64_t i = 0; i < t.numel(); ++i)
      sum += static_cast<long double>(t.get(i)) * t.get(i);
  const double ref = static_cast<double>(std::sqrt(sum));
  std::vector<HostTensor> out = run("global_norm", ops, {f32Result()});
  EXPECT_NEAR(f32At(out[0], 0), ref, ref * 0x1p-24 * 1.01);
  // Deterministic: the same bits again.
  std::vector<HostTensor> again = run("global_norm", ops, {f32Result()});
  EXPECT_EQ(again[0].bytes, out[0].bytes);

  EXPECT_EQ(f32At(run("global_norm", {fromValues(DType::F32, {2}, {3, 4})}, {f32Result()})[0], 0),
            5.0f);
  EXPECT_EQ(
      f32At(run("global_norm", {fromValues(DType::F32, {3}, {0, 0, 0})}, {f32Result()})[0], 0),
      0.0f);
  ops[1].set(5, INFINITY);
  EXPECT_EQ(f32At(run("global_norm", ops, {f32Result()})[0], 0), INFINITY);
  ops[3].set(69999, NAN);
  EXPECT_TRUE(std::isnan(f32At(run("global_norm", ops, {f32Result()})[0], 0)));
}

// Tests amax: max |x| in several float types; NaN anywhere gives NaN; -inf
// gives inf.
TEST(Amax, MaxAbsolute) {
  std::mt19937 rng(3);
  for (DType dt : {DType::F32, DType::F16, DType::BF16, DType::F8E4M3FN}) {
    SCOPED_TRACE(plan::dtypeName(dt));
    HostTensor x = randomTensor(dt, {50001}, rng, -4, 4);
    x.set(12345, -300); // the largest magnitude, negative
    HostTensor out = run("amax", {x}, {f32Result()})[0];
    EXPECT_EQ(f32At(out, 0), static_cast<float>(std::fabs(x.get(12345))));
    x.set(49999, NAN);
    EXPECT_TRUE(std::isnan(f32At(run("amax", {x}, {f32Result()})[0], 0)));
  }
  HostTensor y = fromValues(DType::F32, {3}, {1, -INFINITY, 2});
  EXPECT_EQ(f32At(run("amax", {y}, {f32Result()})[0], 0), INFINITY);
  HostTensor z = fromValues(DType::F32, {2}, {-0.0, 0.0});
  EXPECT_EQ(f32At(run("amax", {z}, {f32Result()})[0], 0), 0.0f);
}

//===----------------------------------------------------------------------===//
// update_loss_scale, advance_step, lr_schedule, update_fp8_scale
//===----------------------------------------------------------------------===//

/// A plan whose one kernel updates the loss scale and growth tracker
/// parameters in place from a `finite` input.
PlanBuilder lossScalePlan(std::vector<Attribute> attrs, float scale0) {
  PlanBuilder b;
  const int64_t zero = 0;
  uint32_t scale = b.param("loss_scale.scale", DType::F32, {}, &scale0, 4);
  uint32_t tracker = b.param("loss_scale.growth_tracker", DType::I64, {}, &zero, 8);
  uint32_t finite = b.input("finite", DType::I1, {});
  b.kernel("update_loss_scale", {scale, tracker, finite}, {scale, tracker}, std::move(attrs));
  b.entry("update");
  return b;
}

// Tests GradScaler.update's rule over a sequence of runs: the tracker
// counts finite steps, the scale grows at exactly growth_interval and the
// tracker restarts; a non-finite step backs off and resets the tracker.
TEST(UpdateLossScale, GrowthAndBackoff) {
  CModel model(lossScalePlan({Attribute::makeInt("growth_interval", 3)}, 1024.0f));
  ASSERT_TRUE(model.loaded());
  struct Expect {
    bool finite;
    float scale;
    int64_t tracker;
  };
  const Expect steps[] = {
      {true, 1024, 1}, {true, 1024, 2}, {true, 2048, 0},  // grows on the 3rd
      {true, 2048, 1}, {true, 2048, 2}, {false, 1024, 0}, // backoff resets
      {true, 1024, 1}, {true, 1024, 2}, {true, 2048, 0},  {false, 1024, 0}, {false, 512, 0},
  };
  for (const Expect &e : steps) {
    model.input("finite", scalarI1(e.finite));
    model.runEntry("update");
    EXPECT_EQ(model.readScalarF32("loss_scale.scale"), e.scale);
    EXPECT_EQ(model.readI64("loss_scale.growth_tracker"), e.tracker);
  }
}

// Tests the default growth_interval (2000) at its boundary, other factors
// (rounded as f32(f64(scale) * factor)), and that growth never reaches inf.
TEST(UpdateLossScale, DefaultsFactorsAndOverflow) {
  {
    CModel model(lossScalePlan({}, 65536.0f));
    ASSERT_TRUE(model.loaded());
    model.param("loss_scale.growth_tracker", scalarI64(1998));
    model.input("finite", scalarI1(true));
    model.runEntry("update");
    EXPECT_EQ(model.readScalarF32("loss_scale.scale"), 65536.0f);
    EXPECT_EQ(model.readI64("loss_scale.growth_tracker"), 1999);
    model.runEntry("update");
    EXPECT_EQ(model.readScalarF32("loss_scale.scale"), 131072.0f);
    EXPECT_EQ(model.readI64("loss_scale.growth_tracker"), 0);
    model.input("finite", scalarI1(false));
    model.runEntry("update");
    EXPECT_EQ(model.readScalarF32("loss_scale.scale"), 65536.0f); // backoff 0.5
  }
  {
    CModel model(lossScalePlan({Attribute::makeFloat("growth_factor", 1.7),
                                Attribute::makeFloat("backoff_factor", 0.3),
                                Attribute::makeInt("growth_interval", 1)},
                               1000.0f));
    ASSERT_TRUE(model.loaded());
    model.input("finite", scalarI1(false));
    model.runEntry("update");
    EXPECT_EQ(model.readScalarF32("loss_scale.scale"), static_cast<float>(1000.0 * 0.3));
    model.input("finite", scalarI1(true));
    model.runEntry("update");
    EXPECT_EQ(model.readScalarF32("loss_scale.scale"),
              static_cast<float>(static_cast<double>(static_cast<float>(1000.0 * 0.3)) * 1.7));
    EXPECT_EQ(model.readI64("loss_scale.growth_tracker"), 0);
  }
  {
    CModel model(lossScalePlan({Attribute::makeInt("growth_interval", 1)}, 0x1.8p127f));
    ASSERT_TRUE(model.loaded());
    model.input("finite", scalarI1(true));
    model.runEntry("update"); // 2 * 1.5 * 2^127 overflows: kept
    EXPECT_EQ(model.readScalarF32("loss_scale.scale"), 0x1.8p127f);
    EXPECT_EQ(model.readI64("loss_scale.growth_tracker"), 0);
  }
}

// Tests advance_step with and without the finite operand.
TEST(AdvanceStep, CountsFiniteSteps) {
  auto advance = [](std::vector<HostTensor> ops) {
    return run("advance_step", ops, {HostTensor(DType::I64, {})})[0].getInt(0);
  };
  EXPECT_EQ(advance({scalarI64(0)}), 1);
  EXPECT_EQ(advance({scalarI64(41)}), 42);
  EXPECT_EQ(advance({scalarI64(41), scalarI1(true)}), 42);
  EXPECT_EQ(advance({scalarI64(41), scalarI1(false)}), 41);
  EXPECT_EQ(advance({scalarI64(int64_t{1} << 40)}), (int64_t{1} << 40) + 1);
}

float lrAt(int64_t step, std::vector<Attribute> attrs) {
  return f32At(run("lr_schedule", {scalarI64(step)}, {f32Result()}, std::move(attrs))[0], 0);
}

// Tests the constant schedule and warmup_cosine at the warmup boundary, the
// middle and the end of the cosine, and past the end.
TEST(LrSchedule, ConstantAndWarmupCosine) {
  const std::vector<Attribute> constant = {Attribute::makeString("schedule", "constant"),
                                           Attribute::makeFloat("lr", 0.1)};
  for (int64_t s : {0, 7, 100000})
    EXPECT_EQ(lrAt(s, constant), 0.1f);
  const std::vector<Attribute> cosine = {
      Attribute::makeString("schedule", "warmup_cosine"), Attribute::makeFloat("lr", 1e-3),
      Attribute::makeInt("warmup_steps", 10), Attribute::makeInt("total_steps", 110),
      Attribute::makeFloat("min_lr", 1e-5)};
  EXPECT_EQ(lrAt(0, cosine), static_cast<float>(1e-3 * 1 / 10));
  EXPECT_EQ(lrAt(4, cosine), static_cast<float>(1e-3 * 5 / 10));
  EXPECT_EQ(lrAt(9, cosine), 1e-3f);  // last warmup step reaches lr
  EXPECT_EQ(lrAt(10, cosine), 1e-3f); // cosine starts at lr
  EXPECT_EQ(lrAt(35, cosine),
            static_cast<float>(1e-5 + 0.5 * (1 + std::cos(M_PI * 0.25)) * (1e-3 - 1e-5)));
  EXPECT_EQ(lrAt(60, cosine), static_cast<float>(1e-5 + 0.5 * (1e-3 - 1e-5)));
  EXPECT_EQ(lrAt(109, cosine),
            static_cast<float>(1e-5 + 0.5 * (1 + std::cos(M_PI * 0.99)) * (1e-3 - 1e-5)));
  EXPECT_EQ(lrAt(110, cosine), 1e-5f); // the end of the cosine: min_lr
  EXPECT_EQ(lrAt(5000, cosine), 1e-5f);
  // No warmup, min_lr 0: cosine from the first step down to 0.
  const std::vector<Attribute> noWarmup = {Attribute::makeString("schedule", "warmup_cosine"),
                                           Attribute::makeFloat("lr", 2.0),
                                           Attribute::makeInt("total_steps", 4)};
  EXPECT_EQ(lrAt(0, noWarmup), 2.0f);
  EXPECT_EQ(lrAt(2, noWarmup), 1.0f);
  EXPECT_EQ(lrAt(4, noWarmup), 0.0f);
}

/// A plan that updates an FP8 amax history [4] and scale in place.
PlanBuilder fp8ScalePlan(std::vector<Attribute> attrs, int64_t history) {
  PlanBuilder b;
  const std::vector<float> zeros(history, 0.0f);
  const float one = 1.0f;
  uint32_t h = b.param("amax_history", DType::F32, {history}, zeros.data(), 4 * history);
  uint32_t s = b.param("scale", DType::F32, {}, &one, 4);
  uint32_t a = b.input("amax", DType::F32, {});
  b.kernel("update_fp8_scale", {h, s, a}, {h, s}, std::move(attrs));
  b.entry("update");
  return b;
}

// Tests delayed scaling: the history shifts with the new amax at index 0,
// the oldest entry drops out, the scale is fp8_max / max(history), and the
// scale is kept while the history's maximum is 0, inf or NaN.
TEST(UpdateFp8Scale, DelayedScaling) {
  CModel model(fp8ScalePlan({}, 4));
  ASSERT_TRUE(model.loaded());
  struct Expect {
    float amax;
    std::vector<float> history;
    float scale;
  };
  const Expect steps[] = {
      {0, {0, 0, 0, 0}, 1}, // all zero: scale kept
      {2, {2, 0, 0, 0}, 224},
      {8, {8, 2, 0, 0}, 56},
      {1, {1, 8, 2, 0}, 56},
      {0.5f, {0.5f, 1, 8, 2}, 56},
      {0.25f, {0.25f, 0.5f, 1, 8}, 56},
      {0.25f, {0.25f, 0.25f, 0.5f, 1}, 448},           // the 8 dropped out
      {INFINITY, {INFINITY, 0.25f, 0.25f, 0.5f}, 448}, // inf: kept
      {3, {3, INFINITY, 0.25f, 0.25f}, 448},
      {3, {3, 3, INFINITY, 0.25f}, 448},
      {3, {3, 3, 3, INFINITY}, 448},
      {7, {7, 3, 3, 3}, 64},
  };
  for (const Expect &e : steps) {
    model.input("amax", scalarF32(e.amax));
    model.runEntry("update");
    std::vector<float> h = model.readF32("amax_history", 4);
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(h[i], e.history[i]) << "amax " << e.amax << " entry " << i;
    EXPECT_EQ(model.readScalarF32("scale"), e.scale) << "amax " << e.amax;
  }
  model.input("amax", scalarF32(NAN));
  model.runEntry("update");
  EXPECT_TRUE(std::isnan(model.readF32("amax_history", 4)[0]));
  EXPECT_EQ(model.readScalarF32("scale"), 64.0f); // NaN: kept
}

// Tests fp8_max and margin, and a history of one.
TEST(UpdateFp8Scale, MarginAndShortHistory) {
  CModel model(
      fp8ScalePlan({Attribute::makeFloat("fp8_max", 57344), Attribute::makeInt("margin", 2)}, 1));
  ASSERT_TRUE(model.loaded());
  model.input("amax", scalarF32(7));
  model.runEntry("update");
  EXPECT_EQ(model.readF32("amax_history", 1)[0], 7.0f);
  EXPECT_EQ(model.readScalarF32("scale"), 57344.0f / 7.0f / 4.0f);
  model.input("amax", scalarF32(0));
  model.runEntry("update");
  EXPECT_EQ(model.readScalarF32("scale"), 57344.0f / 7.0f / 4.0f); // amax 0: kept
}

// Tests amax_compute_algo: most_recent takes the newest entry where max
// takes the history's maximum; both keep the scale on a zero or NaN amax,
// and a NaN still in the history freezes max's scale but not most_recent's.
TEST(UpdateFp8Scale, MostRecentVersusMax) {
  CModel recent(fp8ScalePlan({Attribute::makeString("amax_compute_algo", "most_recent")}, 4));
  CModel max(fp8ScalePlan({Attribute::makeString("amax_compute_algo", "max")}, 4));
  ASSERT_TRUE(recent.loaded() && max.loaded());
  struct Expect {
    float amax, recentScale, maxScale;
  };
  const Expect steps[] = {
      {8, 56, 56},  {2, 224, 56},   // most_recent follows the newest amax
      {0, 224, 56},                 // zero: most_recent keeps its scale
      {4, 112, 56}, {NAN, 112, 56}, // NaN: both keep theirs
      {1, 448, 56},                 // the NaN is in max's history: max keeps 56
  };
  for (const Expect &e : steps) {
    for (CModel *m : {&recent, &max}) {
      m->input("amax", scalarF32(e.amax));
      m->runEntry("update");
    }
    EXPECT_EQ(recent.readScalarF32("scale"), e.recentScale) << "amax " << e.amax;
    EXPECT_EQ(max.readScalarF32("scale"), e.maxScale) << "amax " << e.amax;
  }
  // The histories roll the same way.
  EXPECT_EQ(recent.readF32("amax_history", 4)[0], 1.0f);
  EXPECT_TRUE(std::isnan(max.readF32("amax_history", 4)[1]));
}

// Tests that a scale which would overflow (a tiny amax) keeps the old one.
TEST(UpdateFp8Scale, KeepsScaleWhenTheQuotientOverflows) {
  CModel model(fp8ScalePlan({}, 1));
  ASSERT_TRUE(model.loaded());
  model.input("amax", scalarF32(1e-37f));
  model.runEntry("update");
  EXPECT_EQ(model.readScalarF32("scale"), 1.0f);
  model.input("amax", scalarF32(1e-30f));
  model.runEntry("update");
  EXPECT_EQ(model.readScalarF32("scale"), 448.0f / 1e-30f);
}

//===----------------------------------------------------------------------===//
// Thread-count independence
//===----------------------------------------------------------------------===//

/// Runs a kernel inside a chunk of a parallel loop, where its own loops run
/// inline: the single-threaded result.
KernelRun runSingleThreaded(const std::string &kind, const std::vector<HostTensor> &operands,
                            const std::vector<HostTensor> &results,
                            const std::vector<Attribute> &attrs) {
  KernelRun r;
  rt::cpu::parallelFor(2, 1, [&](int64_t begin, int64_t) {
    if (begin == 0)
      r = runKernel(kind, operands, results, attrs);
  });
  return r;
}

void expectSameBitsAsOneThread(const std::string &kind, const std::vector<HostTensor> &operands,
                               const std::vector<HostTensor> &results,
                               const std::vector<Attribute> &attrs = {}) {
  SCOPED_TRACE(kind);
  KernelRun pooled = runKernel(kind, operands, results, attrs);
  KernelRun single = runSingleThreaded(kind, operands, results, attrs);
  ASSERT_TRUE(pooled.ok) << pooled.error;
  ASSERT_TRUE(single.ok) << single.error;
  for (size_t i = 0; i < results.size(); ++i)
    EXPECT_TRUE(pooled.outputs[i].bytes == single.outputs[i].bytes) << "result " << i;
}

// Tests that the reductions (fixed blocks, combined in order) and the
// elementwise updates give the same bits on the pool as on one thread.
TEST(TrainingKernels, SameBitsAsOneThread) {
  std::mt19937 rng(12);
  const std::vector<HostTensor> grads = {randomTensor(DType::F32, {300, 701}, rng),
                                         randomTensor(DType::BF16, {70001}, rng),
                                         randomTensor(DType::F32, {3}, rng)};
  expectSameBitsAsOneThread("global_norm", grads, {f32Result()});
  expectSameBitsAsOneThread("all_finite", grads, {HostTensor(DType::I1, {})});
  expectSameBitsAsOneThread("amax", {grads[0]}, {f32Result()});
  const HostTensor &g = grads[0];
  const HostTensor p = randomTensor(DType::F32, g.shape, rng);
  const HostTensor m = randomTensor(DType::F32, g.shape, rng);
  const HostTensor v = randomTensor(DType::F32, g.shape, rng, 0.1, 2);
  expectSameBitsAsOneThread("unscale", {g, scalarF32(3.0f)}, {f32Result(g.shape)});
  expectSameBitsAsOneThread("adamw_update",
                            {p, g, m, v, scalarI64(5), scalarF32(1e-3f), scalarI1(true)},
                            {f32Result(g.shape), f32Result(g.shape), f32Result(g.shape)});
  expectSameBitsAsOneThread(
      "sgd_update", {p, g, m, scalarI64(5), scalarF32(1e-2f), scalarI1(true)},
      {f32Result(g.shape), f32Result(g.shape)},
      {Attribute::makeFloat("momentum", 0.9), Attribute::makeInt("nesterov", 1)});
}

//===----------------------------------------------------------------------===//
// Load-time checks
//===----------------------------------------------------------------------===//

/// Runs `build` on a fresh builder and expects the load to fail with `text`.
void expectLoadError(const std::function<void(PlanBuilder &)> &build, const std::string &text) {
  PlanBuilder b;
  build(b);
  b.entry("main");
  std::vector<uint8_t> bytes = b.bytes();
  Model model;
  EXPECT_FALSE(model.loadMemory(bytes.data(), bytes.size(), "cpu"));
  EXPECT_NE(lastError().find(text), std::string::npos) << "got: " << lastError();
}

// Tests that the CPU backend has every kind of the table.
TEST(TrainingKernels, BackendHasEveryKind) {
  for (const char *kind : {"scale_loss", "unscale", "all_finite", "global_norm", "clip_by_norm",
                           "sgd_update", "adamw_update", "update_loss_scale", "lr_schedule",
                           "advance_step", "amax", "update_fp8_scale"}) {
    int has = 0;
    ASSERT_EQ(mptrt_backend_has_kernel(nullptr, kind, &has), MPTRT_OK);
    EXPECT_EQ(has, 1) << kind;
  }
}

// Tests operand, attribute and aliasing errors at load time.
TEST(TrainingKernels, LoadErrors) {
  using B = PlanBuilder;
  auto scalar = [](B &b, const char *name, DType dt) { return b.input(name, dt, {}); };
  // sgd_update with momentum needs the buffer.
  expectLoadError(
      [&](B &b) {
        uint32_t p = b.param("p", DType::F32, {4});
        b.kernel("sgd_update",
                 {p, b.input("g", DType::F32, {4}), scalar(b, "s", DType::I64),
                  scalar(b, "lr", DType::F32), scalar(b, "f", DType::I1)},
                 {p}, {Attribute::makeFloat("momentum", 0.9)});
      },
      "expects 6 operands and 2 results");
  expectLoadError(
      [&](B &b) {
        uint32_t p = b.param("p", DType::F32, {4});
        b.kernel("sgd_update",
                 {p, b.input("g", DType::F32, {4}), scalar(b, "s", DType::I32),
                  scalar(b, "lr", DType::F32), scalar(b, "f", DType::I1)},
                 {p});
      },
      "(step) must be a 0-d i64");
  expectLoadError(
      [&](B &b) {
        uint32_t p = b.param("p", DType::BF16, {4});
        b.kernel("sgd_update",
                 {p, b.input("g", DType::F32, {4}), scalar(b, "s", DType::I64),
                  scalar(b, "lr", DType::F32), scalar(b, "f", DType::I1)},
                 {p});
      },
      "(param) must be f32 of shape [4]");
  expectLoadError(
      [&](B &b) {
        uint32_t p = b.param("p", DType::F32, {4});
        b.kernel("sgd_update",
                 {p, b.input("g", DType::F32, {4}), scalar(b, "s", DType::I64),
                  scalar(b, "lr", DType::F32), scalar(b, "f", DType::I1)},
                 {p}, {Attribute::makeFloat("lr", 0.1)});
      },
      "unknown attribute 'lr'");
  expectLoadError(
      [&](B &b) {
        uint32_t p = b.param("p", DType::F32, {4}), m = b.param("m", DType::F32, {4});
        b.kernel("sgd_update",
                 {p, b.input("g", DType::F32, {4}), m, scalar(b, "s", DType::I64),
                  scalar(b, "lr", DType::F32), scalar(b, "f", DType::I1)},
                 {p, m},
                 {Attribute::makeFloat("momentum", 0.9), Attribute::makeFloat("dampening", 0.1),
                  Attribute::makeInt("nesterov", 1)});
      },
      "nesterov needs a non-zero 'momentum' and zero 'dampening'");
  expectLoadError(
      [&](B &b) {
        uint32_t p = b.param("p", DType::F32, {4}), m = b.param("m", DType::F32, {4}),
                 v = b.param("v", DType::F32, {3});
        b.kernel("adamw_update",
                 {p, b.input("g", DType::F32, {4}), m, v, scalar(b, "s", DType::I64),
                  scalar(b, "lr", DType::F32), scalar(b, "f", DType::I1)},
                 {p, m, v});
      },
      "(exp_avg_sq) must be f32 of shape [4]");
  expectLoadError(
      [&](B &b) {
        uint32_t p = b.param("p", DType::F32, {4}), m = b.param("m", DType::F32, {4}),
                 v = b.param("v", DType::F32, {4});
        b.kernel("adamw_update",
                 {p, b.input("g", DType::F32, {4}), m, v, scalar(b, "s", DType::I64),
                  scalar(b, "lr", DType::F32), scalar(b, "f", DType::I1)},
                 {p, m, v}, {Attribute::makeFloat("beta2", 1.0)});
      },
      "must be in [0, 1)");
  expectLoadError(
      [&](B &b) {
        b.kernel("lr_schedule", {scalar(b, "s", DType::I64)}, {b.output("lr", DType::F32, {})},
                 {Attribute::makeString("schedule", "linear"), Attribute::makeFloat("lr", 1)});
      },
      "attribute 'schedule' must be \"constant\" or \"warmup_cosine\"");
  expectLoadError(
      [&](B &b) {
        b.kernel("lr_schedule", {scalar(b, "s", DType::I64)}, {b.output("lr", DType::F32, {})},
                 {Attribute::makeString("schedule", "constant")});
      },
      "missing required attribute 'lr'");
  expectLoadError(
      [&](B &b) {
        b.kernel("clip_by_norm", {b.input("g", DType::F32, {4}), scalar(b, "n", DType::F32)},
                 {b.output("c", DType::F32, {4})});
      },
      "missing required attribute 'max_norm'");
  expectLoadError(
      [&](B &b) {
        b.kernel("all_finite", {b.input("g", DType::I32, {4})}, {b.output("f", DType::I1, {})});
      },
      "must have a float element type");
  expectLoadError(
      [&](B &b) {
        b.kernel("global_norm", {b.input("g", DType::F32, {4})}, {b.output("n", DType::F32, {1})});
      },
      "(norm) must be a 0-d f32");
  expectLoadError(
      [&](B &b) {
        uint32_t s = b.param("s", DType::F32, {}), t = b.param("t", DType::I64, {});
        b.kernel("update_loss_scale", {s, t, scalar(b, "f", DType::I1)}, {s, t},
                 {Attribute::makeInt("growth_interval", 0)});
      },
      "'growth_interval' must be >= 1");
  // Update kinds write a result only over the operand it updates.
  expectLoadError(
      [&](B &b) {
        uint32_t p = b.param("p", DType::F32, {4}), g = b.param("g", DType::F32, {4});
        b.kernel("sgd_update",
                 {p, g, scalar(b, "s", DType::I64), scalar(b, "lr", DType::F32),
                  scalar(b, "f", DType::I1)},
                 {g});
      },
      "can write result 0 only over the operand it updates");
  // ... and not over a different type (f16 gradient, f32 result).
  expectLoadError(
      [&](B &b) {
        uint32_t t = b.temp(DType::F16, {8});
        b.kernel("copy", {b.input("x", DType::F16, {8})}, {t});
        uint32_t r = b.temp(DType::F32, {8});
        b.plan.tensors[r].offset = b.plan.tensors[t].offset;
        b.kernel("unscale", {t, scalar(b, "s", DType::F32)}, {r});
      },
      "without being the same bytes of the same type");
  // Kinds outside the update list still cannot run in place.
  expectLoadError(
      [&](B &b) {
        uint32_t x = b.param("x", DType::F32, {});
        b.kernel("amax", {x}, {x});
      },
      "this kind cannot run in place");
}

} // namespace
} // namespace test
} // namespace mptrt
