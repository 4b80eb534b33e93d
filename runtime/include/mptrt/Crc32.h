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
/// Eight tables for eight bytes a step: table[0] is the classic bytewise
/// table, and table[k][i] is the CRC of byte i followed by k zero bytes.
inline const std::array<std::array<uint32_t, 256>, 8> &crc32Tables() {
  static const std::array<std::array<uint32_t, 256>, 8> tables = [] {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int k = 1; k < 8; ++k)
        t[k][i] = t[0][t[k - 1][i] & 0xFF] ^ (t[k - 1][i] >> 8);
    return t;
  }();
  return tables;
}
} // namespace detail

/// Continues the CRC `crc` (0 to start) over `n` bytes at `data`.
inline uint32_t crc32(uint32_t crc, const void *data, size_t n) {
  const auto &t = detail::crc32Tables();
  const uint8_t *p = static_cast<const uint8_t *>(data);
  crc = ~crc;
  // Eight bytes a step (byte order spelled out, so any host gives the same
  // result), then the tail a byte at a time.
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo =
        crc ^ (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n > 0; --n, ++p)
    crc = t[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

} // namespace mptrt

#endif // MPTRT_CRC32_H
