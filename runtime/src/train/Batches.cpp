//===- Batches.cpp - cut data arrays into batches; synthetic data --------===//
#include "mptrt/train/Batches.h"

#include "mptrt/Numerics.h"

#include <cmath>
#include <cstring>

namespace mptrt {
namespace train {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string describeType(mptrt_dtype dtype, const std::vector<int64_t> &shape) {
  return std::string(mptrt_dtype_name(dtype)) + " " + shapeText(shape);
}

std::string joinNames(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "'" : ", '") + n + "'";
  return s.empty() ? "none" : s;
}

Array Array::of(mptrt_dtype dtype, std::vector<int64_t> shape, const void *data, size_t bytes,
                std::string source) {
  Array a;
  a.source = std::move(source);
  a.typeName = mptrt_dtype_name(dtype);
  a.dtypes = {dtype};
  a.shape = std::move(shape);
  const uint8_t *p = static_cast<const uint8_t *>(data);
  a.bytes.assign(p, p + bytes);
  return a;
}

bool cutBatches(const std::string &name, Array tensor, const TensorInfo &info, BatchedInput *out,
                std::string *error, DataSlice slice) {
  const std::string &file = tensor.source;
  // A 0-d input is the same on every rank.
  const int64_t ranks = info.shape.empty() ? 1 : slice.ranks;
  auto mismatch = [&](const std::string &why) {
    std::string expected = describeType(info.dtype, info.shape);
    if (!info.shape.empty()) {
      std::vector<int64_t> rows = info.shape;
      std::string n = "[N";
      for (size_t i = 1; i < rows.size(); ++i)
        n += ", " + std::to_string(rows[i]);
      expected += " (a batch; the file may hold " + std::string(mptrt_dtype_name(info.dtype)) +
                  " " + n + "] with N >= " + std::to_string(info.shape[0] * ranks) + ")";
    }
    *error = "input '" + name + "': " + file + " holds " + tensor.typeName + " " +
             shapeText(tensor.shape) + ", the plan expects " + expected + ": " + why;
    return false;
  };
  bool dtypeOk = false;
  for (mptrt_dtype d : tensor.dtypes)
    dtypeOk = dtypeOk || d == info.dtype;
  if (!dtypeOk)
    return mismatch("the element types differ");

  out->name = name;
  out->file = file;
  out->info = info;
  out->unusedRows = 0;
  out->slice = DataSlice();
  if (ranks > 1) {
    if (info.shape[0] == 0)
      return mismatch("the plan's batch size is 0, which " + std::to_string(ranks) +
                      " ranks cannot share");
    out->slice = slice;
  }
  if (tensor.shape == info.shape && ranks == 1) {
    out->batches = 1;
  } else {
    if (info.shape.empty() || tensor.shape.size() != info.shape.size())
      return mismatch("the ranks differ");
    for (size_t i = 1; i < info.shape.size(); ++i)
      if (tensor.shape[i] != info.shape[i])
        return mismatch("dimension " + std::to_string(i) + " differs");
    const int64_t b = info.shape[0], n = tensor.shape[0];
    if (b == 0)
      return mismatch("the plan's batch size is 0, so only that exact shape is accepted");
    if (n < b * ranks)
      return mismatch(ranks == 1 ? "fewer rows than one batch"
                                 : "fewer rows than one global batch of " + std::to_string(ranks) +
                                       " ranks x " + std::to_string(b) +
                                       " rows = " + std::to_string(ranks * b));
    out->batches = n / (b * ranks);
    out->unusedRows = n % (b * ranks);
  }
  const size_t used = static_cast<size_t>(out->batches * ranks) * out->batchBytes();
  if (tensor.bytes.size() < used)
    return mismatch("it holds only " + std::to_string(tensor.bytes.size()) + " bytes");
  out->data = std::move(tensor.bytes);
  out->data.resize(used);
  if (info.dtype == MPTRT_I1)
    for (uint8_t &v : out->data)
      v = v != 0;
  return true;
}

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

/// The splitmix64 finalizer of x + golden ratio.
uint64_t mix(uint64_t x) {
  uint64_t z = x + kGolden;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001B3ull;
  return h;
}

/// A uniform double in (0, 1].
double unitOpen0(uint64_t r) { return static_cast<double>((r >> 11) + 1) * 0x1.0p-53; }

bool isFloat(mptrt_dtype d) {
  return d == MPTRT_F32 || d == MPTRT_F16 || d == MPTRT_BF16 || d == MPTRT_F8E4M3FN ||
         d == MPTRT_F8E5M2;
}

void storeFloat(mptrt_dtype dtype, float v, uint8_t *p) {
  namespace num = mptrt::numerics;
  uint16_t h;
  switch (dtype) {
  case MPTRT_F32:
    std::memcpy(p, &v, 4);
    break;
  case MPTRT_F16:
    h = num::f32ToF16(v);
    std::memcpy(p, &h, 2);
    break;
  case MPTRT_BF16:
    h = num::f32ToBf16(v);
    std::memcpy(p, &h, 2);
    break;
  case MPTRT_F8E4M3FN:
    *p = num::f32ToF8E4M3FN(v);
    break;
  case MPTRT_F8E5M2:
    *p = num::f32ToF8E5M2(v);
    break;
  default:
    break;
  }
}

} // namespace

bool syntheticBatch(const std::string &name, const TensorInfo &info, uint64_t seed, int64_t step,
                    int64_t intRange, std::vector<uint8_t> *out, std::string *error) {
  if (info.dtype == MPTRT_I32 && intRange > (int64_t(1) << 31)) {
    *error = "input '" + name + "' is i32: --synthetic-int-range " + std::to_string(intRange) +
             " does not fit (at most 2147483648)";
    return false;
  }
  const uint64_t key = mix(mix(mix(seed) ^ static_cast<uint64_t>(step)) ^ fnv1a(name));
  auto draw = [&](int64_t i) { return mix(key + static_cast<uint64_t>(i + 1) * kGolden); };
  const int64_t n = info.numel();
  const size_t size = mptrt_dtype_size(info.dtype);
  out->assign(static_cast<size_t>(n) * size, 0);
  uint8_t *p = out->data();
  if (isFloat(info.dtype)) {
    // Box-Muller on pairs of draws: elements 2k and 2k+1 share draws 2k, 2k+1.
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    for (int64_t i = 0; i < n; i += 2) {
      const double radius = std::sqrt(-2.0 * std::log(unitOpen0(draw(i))));
      const double angle = kTwoPi * unitOpen0(draw(i + 1));
      storeFloat(info.dtype, static_cast<float>(radius * std::cos(angle)), p + i * size);
      if (i + 1 < n)
        storeFloat(info.dtype, static_cast<float>(radius * std::sin(angle)), p + (i + 1) * size);
    }
    return true;
  }
  const uint64_t range = info.dtype == MPTRT_I1 ? 2 : static_cast<uint64_t>(intRange);
  for (int64_t i = 0; i < n; ++i) {
    // Lemire's multiply-high: uniform in [0, range) up to a bias of range / 2^64.
    const int64_t v = static_cast<int64_t>((static_cast<unsigned __int128>(draw(i)) * range) >> 64);
    if (info.dtype == MPTRT_I64)
      std::memcpy(p + i * 8, &v, 8);
    else if (info.dtype == MPTRT_I32) {
      const int32_t w = static_cast<int32_t>(v);
      std::memcpy(p + i * 4, &w, 4);
    } else
      p[i] = static_cast<uint8_t>(v);
  }
  return true;
}

} // namespace train
} // namespace mptrt
