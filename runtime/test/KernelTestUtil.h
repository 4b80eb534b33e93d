//===- KernelTestUtil.h - run one kernel through the C API -------*- C++ -*-===//
//
// Kernel tests build a one-kernel plan (operands as inputs, results as
// outputs), load it through the public C++ wrapper, run it and compare the
// outputs with a float64 reference computed from the exact stored inputs.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TEST_KERNELTESTUTIL_H
#define MPTRT_TEST_KERNELTESTUTIL_H

#include "PlanBuilder.h"
#include "mptrt.hpp"
#include "mptrt/Numerics.h"
#include "mptrt/plan/Layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace mptrt {
namespace test {

/// Why the CUDA backend cannot run here ("" when it can): the GPU tests
/// skip with it.
inline std::string cudaUnusableReason() {
  int available = 0;
  const char *detail = nullptr;
  if (mptrt_backend_probe("cuda", &available, &detail) != MPTRT_OK)
    return "this build has no CUDA backend";
  return available ? "" : std::string("no usable GPU: ") + detail;
}

using plan::Attribute;
using plan::DType;

/// A tensor in host memory with element access as double.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape) : dtype(dtype), shape(std::move(shape)) {
    bytes.assign(numel() * plan::dtypeSize(dtype), 0);
  }

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }

  double get(int64_t i) const {
    const uint8_t *p = bytes.data() + i * plan::dtypeSize(dtype);
    switch (dtype) {
    case DType::F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::F16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return numerics::f16ToF32(v);
    }
    case DType::BF16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return numerics::bf16ToF32(v);
    }
    case DType::F8E4M3FN:
      return numerics::f8E4M3FNToF32(*p);
    case DType::F8E5M2:
      return numerics::f8E5M2ToF32(*p);
    case DType::I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::I1:
      return *p ? 1.0 : 0.0;
    }
    return 0;
  }
  int64_t getInt(int64_t i) const {
    const uint8_t *p = bytes.data() + i * plan::dtypeSize(dtype);
    if (dtype == DType::I64) {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    if (dtype == DType::I32) {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    return static_cast<int64_t>(get(i));
  }
  /// Stores `v` rounded to the dtype (floats: via float32, RNE).
  void set(int64_t i, double v) {
    uint8_t *p = bytes.data() + i * plan::dtypeSize(dtype);
    const float f = static_cast<float>(v);
    switch (dtype) {
    case DType::F32:
      std::memcpy(p, &f, 4);
      return;
    case DType::F16: {
      uint16_t b = numerics::f32ToF16(f);
      std::memcpy(p, &b, 2);
      return;
    }
    case DType::BF16: {
      uint16_t b = numerics::f32ToBf16(f);
      std::memcpy(p, &b, 2);
      return;
    }
    case DType::F8E4M3FN:
      *p = numerics::f32ToF8E4M3FN(f);
      return;
    case DType::F8E5M2:
      *p = numerics::f32ToF8E5M2(f);
      return;
    case DType::I64: {
      int64_t x = static_cast<int64_t>(v);
      std::memcpy(p, &x, 8);
      return;
    }
    case DType::I32: {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
      return;
    }
    case DType::I1:
      *p = v != 0;
      return;
    }
  }
  std::vector<double> values() const {
    std::vector<double> v(numel());
    for (int64_t i = 0; i < numel(); ++i)
      v[i] = get(i);
    return v;
  }
};

/// Random values in [lo, hi] with |x| >= minAbs (non-zero inputs), stored
/// exactly in the tensor's dtype; integer dtypes get integers in [lo, hi].
inline HostTensor randomTensor(DType dtype, std::vector<int64_t> shape, std::mt19937 &rng,
                               double lo = -2.0, double hi = 2.0, double minAbs = 0.1) {
  HostTensor t(dtype, std::move(shape));
  std::uniform_real_distribution<double> real(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype == DType::I64 || dtype == DType::I32) {
      std::uniform_int_distribution<int64_t> dist(static_cast<int64_t>(lo),
                                                  static_cast<int64_t>(hi));
      t.set(i, static_cast<double>(dist(rng)));
      continue;
    }
    if (dtype == DType::I1) {
      t.set(i, rng() & 1);
      continue;
    }
    double v;
    do {
      v = real(rng);
    } while (std::fabs(v) < minAbs);
    t.set(i, v);
  }
  return t;
}

inline HostTensor fromValues(DType dtype, std::vector<int64_t> shape,
                             const std::vector<double> &values) {
  HostTensor t(dtype, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.set(i, values[i]);
  return t;
}

/// Relative precision of a dtype (one ulp at 1.0).
inline double dtypeEpsilon(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 0x1p-23;
  case DType::F16:
    return 0x1p-10;
  case DType::BF16:
    return 0x1p-7;
  case DType::F8E4M3FN:
    return 0x1p-3;
  case DType::F8E5M2:
    return 0x1p-2;
  default:
    return 0;
  }
}

/// Distance between the two smallest positive values of a dtype (the
/// absolute resolution near zero).
inline double dtypeMinSpacing(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return 0x1p-24;
  case DType::F8E4M3FN:
    return 0x1p-9;
  case DType::F8E5M2:
    return 0x1p-16;
  default:
    return 0;
  }
}

/// The result of running a one-kernel plan.
struct KernelRun {
  bool ok = false;
  std::string error;
  std::vector<HostTensor> outputs;
};

/// Builds, loads and runs a plan with one kernel on `backend`; `results`
/// gives each result's dtype and shape (contents ignored).
inline KernelRun runKernel(const std::string &kind, const std::vector<HostTensor> &operands,
                           const std::vector<HostTensor> &results,
                           std::vector<Attribute> attrs = {}, const char *backend = "cpu") {
  PlanBuilder b;
  std::vector<uint32_t> in, out;
  for (size_t i = 0; i < operands.size(); ++i)
    in.push_back(b.input("in" + std::to_string(i), operands[i].dtype, operands[i].shape));
  for (size_t i = 0; i < results.size(); ++i)
    out.push_back(b.output("out" + std::to_string(i), results[i].dtype, results[i].shape));
  b.kernel(kind, in, out, std::move(attrs));
  b.entry("main");
  std::vector<uint8_t> bytes = b.bytes();

  KernelRun r;
  Model model;
  if (!model.loadMemory(bytes.data(), bytes.size(), backend)) {
    r.error = lastError();
    return r;
  }
  for (size_t i = 0; i < operands.size(); ++i)
    if (!model.bindInput("in" + std::to_string(i), static_cast<mptrt_dtype>(operands[i].dtype),
                         operands[i].shape, operands[i].bytes.data(), operands[i].bytes.size())) {
      r.error = lastError();
      return r;
    }
  if (!model.run("main")) {
    r.error = lastError();
    return r;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    HostTensor t(results[i].dtype, results[i].shape);
    if (!model.readOutput("out" + std::to_string(i), &t.bytes)) {
      r.error = lastError();
      return r;
    }
    r.outputs.push_back(std::move(t));
  }
  r.ok = true;
  return r;
}

/// ||got - ref|| / ||ref|| (L2 over every element; ||got - ref|| when ref
/// is all zero).
inline double relativeL2Error(const HostTensor &got, const std::vector<double> &ref) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double d = got.get(i) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/// conv's output shape [N, M, o...] for x [N, C, in...], w [M, C/g, k...]
/// and pads (begins, then ends).
inline std::vector<int64_t> convOutputShape(const std::vector<int64_t> &x,
                                            const std::vector<int64_t> &w,
                                            const std::vector<int64_t> &strides,
                                            const std::vector<int64_t> &pads,
                                            const std::vector<int64_t> &dilations) {
  const size_t nsp = x.size() - 2;
  std::vector<int64_t> out = {x[0], w[0]};
  for (size_t d = 0; d < nsp; ++d)
    out.push_back(
        (x[2 + d] + pads[d] + pads[nsp + d] - dilations[d] * (w[2 + d] - 1) - 1) / strides[d] + 1);
  return out;
}

/// Checks got[i] against the float64 reference: |got - ref| <= atol +
/// (rtol + eps(dtype)) * |ref|. NaNs must match NaNs.
inline ::testing::AssertionResult closeTo(const HostTensor &got, const std::vector<double> &ref,
                                          double rtol = 1e-5, double atol = 1e-6) {
  if (static_cast<int64_t>(ref.size()) != got.numel())
    return ::testing::AssertionFailure()
           << "size " << got.numel() << " vs reference " << ref.size();
  const double eps = dtypeEpsilon(got.dtype);
  int bad = 0;
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.get(i), r = ref[i];
    bool ok;
    if (std::isnan(r))
      ok = std::isnan(g);
    else if (std::isinf(r))
      ok = g == r;
    else
      ok = std::fabs(g - r) <= atol + dtypeMinSpacing(got.dtype) + (rtol + eps) * std::fabs(r);
    if (!ok) {
      if (bad == 0)
        result = ::testing::AssertionFailure();
      if (bad < 5)
        result << "element " << i << ": got " << g << ", reference " << r << "; ";
      ++bad;
    }
  }
  if (bad)
    result << bad << " of " << got.numel() << " elements differ (" << plan::dtypeName(got.dtype)
           << ")";
  return result;
}

/// The float dtypes a kernel is tested with.
inline const std::vector<DType> &floatDTypes() {
  static const std::vector<DType> v = {DType::F32, DType::F16, DType::BF16, DType::F8E4M3FN,
                                       DType::F8E5M2};
  return v;
}

/// Row-major strides of a shape.
inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Multi-index of flat index `flat` in `shape`.
inline std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t> &shape) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

/// Calls move(channelsFirst, channelsLast) with the flat index of each
/// element of an [N, C, spatial...] shape and of the same element stored
/// channels last ([N, spatial..., C]).
template <typename Move>
void forEachChannelsLastPair(const std::vector<int64_t> &firstShape, const Move &move) {
  const int64_t N = firstShape[0], C = firstShape[1];
  int64_t inner = 1;
  for (size_t d = 2; d < firstShape.size(); ++d)
    inner *= firstShape[d];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i)
        move((n * C + c) * inner + i, (n * inner + i) * C + c);
}

/// The channels-last shape of [N, C, spatial...], and back.
inline std::vector<int64_t> channelsLastShape(const std::vector<int64_t> &first) {
  std::vector<int64_t> last = {first[0]};
  last.insert(last.end(), first.begin() + 2, first.end());
  last.push_back(first[1]);
  return last;
}
inline std::vector<int64_t> channelsFirstShape(const std::vector<int64_t> &last) {
  std::vector<int64_t> first = {last.front(), last.back()};
  first.insert(first.end(), last.begin() + 1, last.end() - 1);
  return first;
}

/// `t` ([N, C, spatial...]) stored channels last, or (`toLast` false) `t`
/// stored channels last ([N, spatial..., C]) back to channels first.
inline HostTensor permuteChannels(const HostTensor &t, bool toLast) {
  const std::vector<int64_t> first = toLast ? t.shape : channelsFirstShape(t.shape);
  HostTensor out(t.dtype, toLast ? channelsLastShape(first) : first);
  const size_t size = plan::dtypeSize(t.dtype);
  forEachChannelsLastPair(first, [&](int64_t f, int64_t l) {
    std::memcpy(out.bytes.data() + (toLast ? l : f) * size,
                t.bytes.data() + (toLast ? f : l) * size, size);
  });
  return out;
}

/// Values of a channels-first `shape`, in channels-last order.
inline std::vector<double> channelsLastValues(const std::vector<double> &v,
                                              const std::vector<int64_t> &shape) {
  std::vector<double> out(v.size());
  forEachChannelsLastPair(shape, [&](int64_t f, int64_t l) { out[l] = v[f]; });
  return out;
}

/// 0-d tensors of one value.
inline HostTensor scalarF32(float v) { return fromValues(DType::F32, {}, {v}); }
inline HostTensor scalarI64(int64_t v) {
  HostTensor t(DType::I64, {});
  std::memcpy(t.bytes.data(), &v, 8);
  return t;
}
inline HostTensor scalarI1(bool v) { return fromValues(DType::I1, {}, {v ? 1.0 : 0.0}); }

/// `n` floats uniform in [-1, 1), from `seed`.
inline std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Sets (or, with null, unsets) an environment variable for the scope.
class ScopedVariable {
public:
  ScopedVariable(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) {
      had_ = true;
      old_ = old;
    }
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedVariable() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedVariable(const ScopedVariable &) = delete;
  ScopedVariable &operator=(const ScopedVariable &) = delete;

private:
  const char *name_;
  bool had_ = false;
  std::string old_;
};

/// Sets MPTRT_CPU_NUMERICS for the models loaded in its scope (each load
/// makes a CPU backend, which reads it; docs/runtime.md, "CPU numerics
/// modes"), restoring the old value after. A test of a property only one
/// mode has pins that mode with it, so it holds whatever the environment
/// selects.
class CpuNumericsMode {
public:
  explicit CpuNumericsMode(const char *mode) : variable_("MPTRT_CPU_NUMERICS", mode) {}

private:
  ScopedVariable variable_;
};

} // namespace test
} // namespace mptrt

#endif // MPTRT_TEST_KERNELTESTUTIL_H
