//===- TensorProto.cpp - decode onnx.TensorProto from protobuf wire format ===//
//
// A protobuf message is a sequence of (key, value) records: key = varint
// (field number << 3 | wire type); wire type 0 is a varint, 1 eight bytes,
// 2 a varint length and that many bytes, 5 four bytes (3 and 4, groups,
// are obsolete). Repeated scalars come either one record per value or
// "packed" as one length-delimited record of concatenated values; readers
// must accept both. The TensorProto fields used here:
//
//   1 dims (int64)        2 data_type (int32)     4 float_data (float)
//   5 int32_data (int32)  7 int64_data (int64)    8 name (string)
//   9 raw_data (bytes)   14 data_location (enum; 1 = EXTERNAL)
//
//===----------------------------------------------------------------------===//
#include "TensorFile.h"

#include <cstring>

namespace mptrt {
namespace tools {

namespace {

/// onnx.TensorProto.DataType values.
enum OnnxType : int64_t {
  kFloat = 1,
  kUInt16 = 4,
  kInt32 = 6,
  kInt64 = 7,
  kBool = 9,
  kFloat16 = 10,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E5M2 = 19,
};

class WireReader {
public:
  WireReader(const uint8_t *data, size_t size) : p(data), end(data + size) {}
  bool done() const { return p == end; }

  bool varint(uint64_t *v) {
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end)
        return false;
      const uint8_t b = *p++;
      r |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) {
        *v = r;
        return true;
      }
    }
    return false; // more than 10 bytes
  }
  bool fixed32(uint32_t *v) {
    if (end - p < 4)
      return false;
    *v = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
    p += 4;
    return true;
  }
  bool bytes(const uint8_t **data, size_t *size) {
    uint64_t n;
    if (!varint(&n) || n > uint64_t(end - p))
      return false;
    *data = p;
    *size = static_cast<size_t>(n);
    p += n;
    return true;
  }
  bool skip(int wireType) {
    uint64_t v;
    const uint8_t *d;
    size_t n;
    switch (wireType) {
    case 0:
      return varint(&v);
    case 1:
      if (end - p < 8)
        return false;
      p += 8;
      return true;
    case 2:
      return bytes(&d, &n);
    case 5:
      if (end - p < 4)
        return false;
      p += 4;
      return true;
    default:
      return false;
    }
  }

private:
  const uint8_t *p;
  const uint8_t *end;
};

/// Appends a repeated varint field, packed (wire type 2) or not (0).
bool readVarints(WireReader &r, int wireType, std::vector<int64_t> *out) {
  uint64_t v;
  if (wireType == 0) {
    if (!r.varint(&v))
      return false;
    out->push_back(static_cast<int64_t>(v));
    return true;
  }
  if (wireType != 2)
    return false;
  const uint8_t *data;
  size_t size;
  if (!r.bytes(&data, &size))
    return false;
  WireReader packed(data, size);
  while (!packed.done()) {
    if (!packed.varint(&v))
      return false;
    out->push_back(static_cast<int64_t>(v));
  }
  return true;
}

/// Appends a repeated float field, packed (wire type 2) or not (5).
bool readFloats(WireReader &r, int wireType, std::vector<uint32_t> *out) {
  uint32_t v;
  if (wireType == 5) {
    if (!r.fixed32(&v))
      return false;
    out->push_back(v);
    return true;
  }
  if (wireType != 2)
    return false;
  const uint8_t *data;
  size_t size;
  if (!r.bytes(&data, &size) || size % 4 != 0)
    return false;
  WireReader packed(data, size);
  while (!packed.done()) {
    if (!packed.fixed32(&v))
      return false;
    out->push_back(v);
  }
  return true;
}

template <typename T> void appendLE(std::vector<uint8_t> &out, T v, size_t size) {
  for (size_t i = 0; i < size; ++i)
    out.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
}

} // namespace

bool parseTensorProto(const std::vector<uint8_t> &file, FileTensor *out, std::string *error) {
  WireReader r(file.data(), file.size());
  std::vector<int64_t> dims, int32Data, int64Data;
  std::vector<uint32_t> floatData;
  int64_t dataType = 0;
  const uint8_t *raw = nullptr;
  size_t rawSize = 0;
  bool hasRaw = false, external = false;
  while (!r.done()) {
    uint64_t key;
    if (!r.varint(&key)) {
      *error = "malformed TensorProto: bad field key";
      return false;
    }
    const uint64_t field = key >> 3;
    const int wireType = static_cast<int>(key & 7);
    bool ok;
    switch (field) {
    case 1:
      ok = readVarints(r, wireType, &dims);
      break;
    case 2: {
      std::vector<int64_t> v;
      ok = wireType == 0 && readVarints(r, wireType, &v);
      if (ok)
        dataType = v[0];
      break;
    }
    case 4:
      ok = readFloats(r, wireType, &floatData);
      break;
    case 5:
      ok = readVarints(r, wireType, &int32Data);
      break;
    case 7:
      ok = readVarints(r, wireType, &int64Data);
      break;
    case 8: {
      const uint8_t *d;
      size_t n;
      ok = wireType == 2 && r.bytes(&d, &n);
      if (ok)
        out->name.assign(reinterpret_cast<const char *>(d), n);
      break;
    }
    case 9:
      ok = wireType == 2 && r.bytes(&raw, &rawSize);
      hasRaw = ok;
      break;
    case 14: {
      std::vector<int64_t> v;
      ok = wireType == 0 && readVarints(r, wireType, &v);
      if (ok && v[0] == 1)
        external = true;
      break;
    }
    default:
      ok = r.skip(wireType);
      break;
    }
    if (!ok) {
      *error = "malformed TensorProto: field " + std::to_string(field) + " (wire type " +
               std::to_string(wireType) + ") is truncated or has the wrong wire type";
      return false;
    }
  }
  if (external) {
    *error = "TensorProto with external data is not supported";
    return false;
  }
  size_t size;
  mptrt_dtype dtype;
  switch (dataType) {
  case kFloat:
    dtype = MPTRT_F32;
    size = 4;
    out->typeName = "onnx FLOAT";
    break;
  case kFloat16:
    dtype = MPTRT_F16;
    size = 2;
    out->typeName = "onnx FLOAT16";
    break;
  case kBFloat16:
    dtype = MPTRT_BF16;
    size = 2;
    out->typeName = "onnx BFLOAT16";
    break;
  case kFloat8E4M3FN:
    dtype = MPTRT_F8E4M3FN;
    size = 1;
    out->typeName = "onnx FLOAT8E4M3FN";
    break;
  case kFloat8E5M2:
    dtype = MPTRT_F8E5M2;
    size = 1;
    out->typeName = "onnx FLOAT8E5M2";
    break;
  case kInt64:
    dtype = MPTRT_I64;
    size = 8;
    out->typeName = "onnx INT64";
    break;
  case kInt32:
    dtype = MPTRT_I32;
    size = 4;
    out->typeName = "onnx INT32";
    break;
  case kBool:
    dtype = MPTRT_I1;
    size = 1;
    out->typeName = "onnx BOOL";
    break;
  case kUInt16:
    // ONNX's own test data (1.12) stores bfloat16 tensors as UINT16 bit
    // patterns; like '<u2' in .npy, they take their meaning from the plan.
    dtype = MPTRT_BF16;
    size = 2;
    out->typeName = "onnx UINT16 (16-bit float patterns)";
    break;
  default:
    *error = "unsupported TensorProto data_type " + std::to_string(dataType);
    return false;
  }
  out->compatible = {dtype};
  if (dataType == kUInt16)
    out->compatible = {MPTRT_BF16, MPTRT_F16};
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      *error = "TensorProto has a negative dimension";
      return false;
    }
    if (d != 0 && count > (uint64_t{1} << 46) / uint64_t(d)) {
      *error = "TensorProto shape is too large";
      return false;
    }
    count *= uint64_t(d);
  }
  out->shape = dims;
  out->bytes.clear();
  auto countError = [&](const char *field, size_t have) {
    *error = std::string("TensorProto ") + field + " holds " + std::to_string(have) +
             " values, its dims need " + std::to_string(count);
    return false;
  };
  if (hasRaw) {
    if (rawSize != count * size) {
      *error = "TensorProto raw_data has " + std::to_string(rawSize) + " bytes, its dims need " +
               std::to_string(count * size);
      return false;
    }
    out->bytes.assign(raw, raw + rawSize);
    return true;
  }
  switch (dtype) {
  case MPTRT_F32:
    if (floatData.size() != count)
      return countError("float_data", floatData.size());
    for (uint32_t v : floatData)
      appendLE(out->bytes, v, 4);
    return true;
  case MPTRT_I64:
    if (int64Data.size() != count)
      return countError("int64_data", int64Data.size());
    for (int64_t v : int64Data)
      appendLE(out->bytes, v, 8);
    return true;
  default:
    // int32_data carries int32, bool and the bit patterns of the 16- and
    // 8-bit float types in its low bits.
    if (int32Data.size() != count)
      return countError("int32_data", int32Data.size());
    for (int64_t v : int32Data)
      appendLE(out->bytes, dtype == MPTRT_I1 ? int64_t(v != 0) : v, size);
    return true;
  }
}

} // namespace tools
} // namespace mptrt
