//===- ParamsFiles.h - write .safetensors and .npz files for tests -*- C++ -*-===//
//
// Small writers for the parameter files mpt-train --params reads
// (mptrt/train/Params.h), so that the tests make their files themselves:
// a safetensors file from named tensors, and an .npz (a zip of stored .npy
// entries, as numpy.savez writes it, without Zip64 records).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TEST_PARAMSFILES_H
#define MPTRT_TEST_PARAMSFILES_H

#include "mptrt/Crc32.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mptrt {
namespace test {

struct NamedBytes {
  std::string name, dtype; // dtype: the safetensors name (F32, BF16, ...)
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

template <typename T> std::vector<uint8_t> bytesOf(const std::vector<T> &values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(out.data(), values.data(), out.size());
  return out;
}

/// The JSON header of `tensors`, laid out one after the other.
inline std::string safetensorsHeader(const std::vector<NamedBytes> &tensors) {
  std::string json = "{\"__metadata__\":{\"format\":\"pt\"}";
  size_t offset = 0;
  for (const NamedBytes &t : tensors) {
    json += ",\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i)
      json += (i ? "," : "") + std::to_string(t.shape[i]);
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," +
            std::to_string(offset + t.bytes.size()) + "]}";
    offset += t.bytes.size();
  }
  return json + "}";
}

/// A safetensors file with header `json` (padded with spaces to a multiple
/// of 8, as the Python writer does) and data `data`.
inline std::vector<uint8_t> safetensorsWithHeader(std::string json,
                                                  const std::vector<uint8_t> &data) {
  while (json.size() % 8)
    json += ' ';
  std::vector<uint8_t> out(8 + json.size() + data.size());
  for (int i = 0; i < 8; ++i)
    out[i] = uint8_t(uint64_t(json.size()) >> (8 * i));
  std::memcpy(out.data() + 8, json.data(), json.size());
  if (!data.empty())
    std::memcpy(out.data() + 8 + json.size(), data.data(), data.size());
  return out;
}

inline std::vector<uint8_t> safetensorsFile(const std::vector<NamedBytes> &tensors) {
  std::vector<uint8_t> data;
  for (const NamedBytes &t : tensors)
    data.insert(data.end(), t.bytes.begin(), t.bytes.end());
  return safetensorsWithHeader(safetensorsHeader(tensors), data);
}

/// A zip archive of `entries` (name, contents), stored; `method` is written
/// into the headers unchanged (8 claims deflate).
inline std::vector<uint8_t>
zipFile(const std::vector<std::pair<std::string, std::vector<uint8_t>>> &entries,
        uint16_t method = 0) {
  std::vector<uint8_t> out, central;
  auto put = [](std::vector<uint8_t> &v, uint64_t x, int n) {
    for (int i = 0; i < n; ++i)
      v.push_back(uint8_t(x >> (8 * i)));
  };
  for (const auto &[name, data] : entries) {
    const uint32_t crc = mptrt::crc32(0, data.data(), data.size());
    const uint64_t local = out.size();
    put(out, 0x04034b50, 4);
    put(out, 20, 2);
    put(out, 0, 2);
    put(out, method, 2);
    put(out, 0, 4); // time, date
    put(out, crc, 4);
    put(out, data.size(), 4);
    put(out, data.size(), 4);
    put(out, name.size(), 2);
    put(out, 0, 2);
    out.insert(out.end(), name.begin(), name.end());
    out.insert(out.end(), data.begin(), data.end());
    put(central, 0x02014b50, 4);
    put(central, 20, 2);
    put(central, 20, 2);
    put(central, 0, 2);
    put(central, method, 2);
    put(central, 0, 4);
    put(central, crc, 4);
    put(central, data.size(), 4);
    put(central, data.size(), 4);
    put(central, name.size(), 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, local, 4);
    central.insert(central.end(), name.begin(), name.end());
  }
  const uint64_t cdOffset = out.size();
  out.insert(out.end(), central.begin(), central.end());
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, entries.size(), 2);
  put(out, entries.size(), 2);
  put(out, central.size(), 4);
  put(out, cdOffset, 4);
  put(out, 0, 2);
  return out;
}

} // namespace test
} // namespace mptrt

#endif // MPTRT_TEST_PARAMSFILES_H
