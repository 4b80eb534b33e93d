//===- TensorFileTest.h - write TensorProto files in tests -------*- C++ -*-===//
#ifndef MPTRT_TEST_TENSORFILETEST_H
#define MPTRT_TEST_TENSORFILETEST_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mptrt {
namespace test {

/// A minimal protobuf wire-format writer, enough for onnx.TensorProto.
struct ProtoWriter {
  std::vector<uint8_t> out;

  void varint(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<uint8_t>(v));
  }
  void key(int field, int wireType) { varint(uint64_t(field) << 3 | wireType); }
  void intField(int field, int64_t v) {
    key(field, 0);
    varint(static_cast<uint64_t>(v));
  }
  void bytesField(int field, const void *data, size_t n) {
    key(field, 2);
    varint(n);
    const uint8_t *p = static_cast<const uint8_t *>(data);
    out.insert(out.end(), p, p + n);
  }
  void stringField(int field, const std::string &s) { bytesField(field, s.data(), s.size()); }
  void packedInts(int field, const std::vector<int64_t> &v) {
    ProtoWriter inner;
    for (int64_t x : v)
      inner.varint(static_cast<uint64_t>(x));
    bytesField(field, inner.out.data(), inner.out.size());
  }
  void packedFloats(int field, const std::vector<float> &v) {
    bytesField(field, v.data(), v.size() * 4);
  }
  void unpackedFloat(int field, float f) {
    key(field, 5);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<uint8_t>(b >> (8 * i)));
  }
};

} // namespace test
} // namespace mptrt

#endif // MPTRT_TEST_TENSORFILETEST_H
