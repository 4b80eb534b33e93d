//===- Crc32.h - the CRC-32 of plans and checkpoints -------------*- C++ -*-===//
//
// CRC-32 (the IEEE 802.3 / zlib polynomial, reflected 0xEDB88320, initial
// and final value 0xFFFFFFFF): crc32(0, "123456789", 9) == 0xCBF43926.
// Plans (docs/plan-format.md) and mpt-train checkpoints checksum their
// sections with it. Header-only, C++17 standard library alone.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_CRC32_H
#define MPTRT_CRC32_H

#include <array>
#include <cstddef>
#include <cstdint>

namespace mptrt {

namespace detail {
inline const std::array<uint32_t, 256> &crc32Table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}
} // namespace detail

/// Continues the CRC `crc` (0 to start) over `n` bytes at `data`.
inline uint32_t crc32(uint32_t crc, const void *data, size_t n) {
  const std::array<uint32_t, 256> &table = detail::crc32Table();
  const uint8_t *p = static_cast<const uint8_t *>(data);
  crc = ~crc;
  for (size_t i = 0; i < n; ++i)
    crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

} // namespace mptrt

#endif // MPTRT_CRC32_H
