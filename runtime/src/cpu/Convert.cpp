//===- Convert.cpp - blocks of elements to and from f32 / i64 ------------===//
#include "cpu/Convert.h"

#include "mptrt/Numerics.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace mptrt {
namespace rt {
namespace cpu {

using namespace mptrt::numerics;

namespace {

/// Decoding tables for the 8-bit formats (256 entries each).
const std::array<float, 256> &e4m3Table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i)
      t[i] = f8E4M3FNToF32(static_cast<uint8_t>(i));
    return t;
  }();
  return table;
}

const std::array<float, 256> &e5m2Table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i)
      t[i] = f8E5M2ToF32(static_cast<uint8_t>(i));
    return t;
  }();
  return table;
}

/// Applies `fn(element pointer)` -> value to each of n elements at either
/// consecutive positions or the given offsets.
template <typename T, typename Out, typename Fn>
void loadEach(const void *base, const int64_t *offsets, int64_t n, Out *dst, Fn fn) {
  const T *p = static_cast<const T *>(base);
  if (offsets)
    for (int64_t i = 0; i < n; ++i)
      dst[i] = fn(p[offsets[i]]);
  else
    for (int64_t i = 0; i < n; ++i)
      dst[i] = fn(p[i]);
}

void toF32(DType dtype, const void *base, const int64_t *offsets, int64_t n, float *dst) {
  switch (dtype) {
  case DType::F32:
    if (!offsets) {
      std::memcpy(dst, base, n * sizeof(float));
      return;
    }
    loadEach<float>(base, offsets, n, dst, [](float v) { return v; });
    return;
  case DType::F16:
    loadEach<uint16_t>(base, offsets, n, dst, [](uint16_t v) { return f16ToF32(v); });
    return;
  case DType::BF16:
    loadEach<uint16_t>(base, offsets, n, dst, [](uint16_t v) { return bf16ToF32(v); });
    return;
  case DType::F8E4M3FN: {
    const float *t = e4m3Table().data();
    loadEach<uint8_t>(base, offsets, n, dst, [t](uint8_t v) { return t[v]; });
    return;
  }
  case DType::F8E5M2: {
    const float *t = e5m2Table().data();
    loadEach<uint8_t>(base, offsets, n, dst, [t](uint8_t v) { return t[v]; });
    return;
  }
  case DType::I64:
    loadEach<int64_t>(base, offsets, n, dst, [](int64_t v) { return static_cast<float>(v); });
    return;
  case DType::I32:
    loadEach<int32_t>(base, offsets, n, dst, [](int32_t v) { return static_cast<float>(v); });
    return;
  case DType::I1:
    loadEach<uint8_t>(base, offsets, n, dst, [](uint8_t v) { return v ? 1.0f : 0.0f; });
    return;
  }
}

void toI64(DType dtype, const void *base, const int64_t *offsets, int64_t n, int64_t *dst) {
  switch (dtype) {
  case DType::I64:
    if (!offsets) {
      std::memcpy(dst, base, n * sizeof(int64_t));
      return;
    }
    loadEach<int64_t>(base, offsets, n, dst, [](int64_t v) { return v; });
    return;
  case DType::I32:
    loadEach<int32_t>(base, offsets, n, dst, [](int32_t v) { return int64_t{v}; });
    return;
  case DType::I1:
    loadEach<uint8_t>(base, offsets, n, dst, [](uint8_t v) { return int64_t{v != 0}; });
    return;
  default: {
    float buf[kBlock];
    for (int64_t i = 0; i < n; i += kBlock) {
      int64_t m = std::min(kBlock, n - i);
      toF32(dtype, offsets ? base : elementPtr(base, dtype, i), offsets ? offsets + i : nullptr, m,
            buf);
      for (int64_t j = 0; j < m; ++j)
        dst[i + j] = f32ToI64(buf[j]);
    }
    return;
  }
  }
}

template <typename T, typename Fn> void storeEach(const float *src, int64_t n, void *dst, Fn fn) {
  T *p = static_cast<T *>(dst);
  for (int64_t i = 0; i < n; ++i)
    p[i] = fn(src[i]);
}

} // namespace

int64_t f32ToI64(float x) {
  if (std::isnan(x))
    return 0;
  // 2^63 is exactly representable; anything at or above it clamps.
  if (x >= 9223372036854775808.0f)
    return std::numeric_limits<int64_t>::max();
  if (x < -9223372036854775808.0f)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(x);
}

int32_t f32ToI32(float x) {
  if (std::isnan(x))
    return 0;
  if (x >= 2147483648.0f)
    return std::numeric_limits<int32_t>::max();
  if (x < -2147483648.0f)
    return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(x);
}

void loadF32(DType dtype, const void *src, int64_t n, float *dst) {
  toF32(dtype, src, nullptr, n, dst);
}

void gatherF32(DType dtype, const void *base, const int64_t *offsets, int64_t n, float *dst) {
  toF32(dtype, base, offsets, n, dst);
}

void loadI64(DType dtype, const void *src, int64_t n, int64_t *dst) {
  toI64(dtype, src, nullptr, n, dst);
}

void gatherI64(DType dtype, const void *base, const int64_t *offsets, int64_t n, int64_t *dst) {
  toI64(dtype, base, offsets, n, dst);
}

void storeF64(const double *src, int64_t n, DType dtype, void *dst) {
  float buf[kBlock];
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    for (int64_t j = 0; j < m; ++j)
      buf[j] = static_cast<float>(src[i + j]);
    storeF32(buf, m, dtype, elementPtr(dst, dtype, i));
  }
}

void storeF32(const float *src, int64_t n, DType dtype, void *dst, bool saturate) {
  switch (dtype) {
  case DType::F32:
    std::memmove(dst, src, n * sizeof(float));
    return;
  case DType::F16:
    storeEach<uint16_t>(src, n, dst, [](float v) { return f32ToF16(v); });
    return;
  case DType::BF16:
    storeEach<uint16_t>(src, n, dst, [](float v) { return f32ToBf16(v); });
    return;
  case DType::F8E4M3FN:
    if (saturate)
      storeEach<uint8_t>(src, n, dst, [](float v) { return f32ToF8E4M3FNSaturating(v); });
    else
      storeEach<uint8_t>(src, n, dst, [](float v) { return f32ToF8E4M3FN(v); });
    return;
  case DType::F8E5M2:
    if (saturate)
      storeEach<uint8_t>(src, n, dst, [](float v) { return f32ToF8E5M2Saturating(v); });
    else
      storeEach<uint8_t>(src, n, dst, [](float v) { return f32ToF8E5M2(v); });
    return;
  case DType::I64:
    storeEach<int64_t>(src, n, dst, [](float v) { return f32ToI64(v); });
    return;
  case DType::I32:
    storeEach<int32_t>(src, n, dst, [](float v) { return f32ToI32(v); });
    return;
  case DType::I1:
    storeEach<uint8_t>(src, n, dst, [](float v) { return static_cast<uint8_t>(v != 0.0f); });
    return;
  }
}

void storeI64(const int64_t *src, int64_t n, DType dtype, void *dst) {
  switch (dtype) {
  case DType::I64:
    std::memmove(dst, src, n * sizeof(int64_t));
    return;
  case DType::I32: {
    int32_t *p = static_cast<int32_t *>(dst);
    for (int64_t i = 0; i < n; ++i)
      p[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(src[i])));
    return;
  }
  case DType::I1: {
    uint8_t *p = static_cast<uint8_t *>(dst);
    for (int64_t i = 0; i < n; ++i)
      p[i] = src[i] != 0;
    return;
  }
  case DType::F32: {
    float *p = static_cast<float *>(dst);
    for (int64_t i = 0; i < n; ++i)
      p[i] = static_cast<float>(src[i]); // round to nearest even
    return;
  }
  default: {
    // Round to odd into float32, then to nearest even into the narrow type.
    float buf[kBlock];
    for (int64_t i = 0; i < n; i += kBlock) {
      int64_t m = std::min(kBlock, n - i);
      for (int64_t j = 0; j < m; ++j)
        buf[j] = int64ToF32RoundToOdd(src[i + j]);
      storeF32(buf, m, dtype, elementPtr(dst, dtype, i));
    }
    return;
  }
  }
}

float loadOneF32(DType dtype, const void *base, int64_t index) {
  float v;
  toF32(dtype, elementPtr(base, dtype, index), nullptr, 1, &v);
  return v;
}

int64_t loadOneI64(DType dtype, const void *base, int64_t index) {
  int64_t v;
  toI64(dtype, elementPtr(base, dtype, index), nullptr, 1, &v);
  return v;
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
