//===- Philox.h - the counter-based RNG behind training dropout --*- C++ -*-===//
//
// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
// easy as 1, 2, 3", SC11): a keyed bijection of a 128-bit counter, so the
// random bits at any counter are a pure function of (counter, key) and any
// element can be drawn alone, in any order, on any thread or device. Every
// backend includes this header, so a mask drawn on one device is the mask
// drawn on every other; the compiler side may include it too (no other
// dependency).
//
// One round maps (x0, x1, x2, x3) with key (k0, k1) to
//   (hi(M1 * x2) ^ x1 ^ k0,  lo(M1 * x2),  hi(M0 * x0) ^ x3 ^ k1,  lo(M0 * x0))
// with M0 = 0xD2511F53, M1 = 0xCD9E8D57 (32 x 32 -> 64-bit products); the key
// is bumped by (0x9E3779B9, 0xBB67AE85) between rounds. Ten rounds.
//
// The dropout stream (dropoutBits below) fixes how MPT lays out the counter:
//
//   key     = (seed & 0xffffffff, seed >> 32)          the 64-bit seed
//   counter = (i / 4, stream, step & 0xffffffff, step >> 32)
//   bits(i) = word (i % 4) of philox(counter, key)
//
// i is the element's row-major index in the tensor (below 2^34), stream the
// dropout op's own stream id and step the training step. So the mask of
// element i of op `stream` at step `step` depends on (seed, step, stream, i)
// alone: not on thread counts, chunking or the device.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PHILOX_H
#define MPTRT_PHILOX_H

#include <cstdint>

#if defined(__CUDACC__)
#define MPTRT_PHILOX_FN __host__ __device__ inline
#else
#define MPTRT_PHILOX_FN inline
#endif

namespace mptrt {
namespace philox {

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kBump0 = 0x9E3779B9u;
constexpr uint32_t kBump1 = 0xBB67AE85u;
constexpr int kRounds = 10;

struct Block {
  uint32_t v[4];
};

/// Philox4x32 with `rounds` rounds of (counter, key); 10 is the standard.
MPTRT_PHILOX_FN Block philox4x32(Block counter, uint32_t key0, uint32_t key1,
                                 int rounds = kRounds) {
  uint32_t x0 = counter.v[0], x1 = counter.v[1], x2 = counter.v[2], x3 = counter.v[3];
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      key0 += kBump0;
      key1 += kBump1;
    }
    const uint64_t p0 = uint64_t(kMul0) * x0;
    const uint64_t p1 = uint64_t(kMul1) * x2;
    const uint32_t y0 = uint32_t(p1 >> 32) ^ x1 ^ key0;
    const uint32_t y2 = uint32_t(p0 >> 32) ^ x3 ^ key1;
    x1 = uint32_t(p1);
    x3 = uint32_t(p0);
    x0 = y0;
    x2 = y2;
  }
  return Block{{x0, x1, x2, x3}};
}

/// The largest element count a dropout stream covers: the block index i / 4
/// is one 32-bit counter word.
constexpr int64_t kMaxStreamElements = int64_t(1) << 34;

/// The four random words of elements 4g .. 4g+3 of a dropout stream.
MPTRT_PHILOX_FN Block dropoutBlock(uint64_t seed, uint64_t step, uint32_t stream, uint32_t g) {
  return philox4x32(Block{{g, stream, uint32_t(step), uint32_t(step >> 32)}}, uint32_t(seed),
                    uint32_t(seed >> 32));
}

/// The random word of element i of a dropout stream (i < kMaxStreamElements).
MPTRT_PHILOX_FN uint32_t dropoutBits(uint64_t seed, uint64_t step, uint32_t stream, int64_t i) {
  return dropoutBlock(seed, step, stream, uint32_t(i >> 2)).v[i & 3];
}

/// Stochastic rounding of optimizer updates (master-weights=bf16-sr) draws
/// from the same counter layout, with the parameter's own stream: element i
/// of the parameter with stream `stream` at optimizer step `step` rounds
/// with dropoutBits(seed, step, stream, i). --build-training-step numbers
/// these streams from kRoundingStreamBase (2^31) up, one per trainable
/// parameter, so they never meet a dropout's stream (0, 1, ...).
constexpr uint32_t kRoundingStreamBase = 0x80000000u;

/// The random word that rounds element i of a stochastically rounded
/// update (i < kMaxStreamElements).
MPTRT_PHILOX_FN uint32_t roundingBits(uint64_t seed, uint64_t step, uint32_t stream, int64_t i) {
  return dropoutBits(seed, step, stream, i);
}

/// The drop threshold of a ratio in [0, 1]: round(ratio * 2^32). An element
/// is kept when its word is >= the threshold, i.e. when the uniform
/// u = bits / 2^32 in [0, 1) satisfies u >= ratio (to 2^-32), so it is kept
/// with probability (2^32 - threshold) / 2^32 ~= 1 - ratio. Ratio 0 keeps
/// every element and ratio 1 none.
inline uint64_t dropThreshold(double ratio) {
  if (!(ratio > 0.0))
    return 0;
  if (ratio >= 1.0)
    return uint64_t(1) << 32;
  return static_cast<uint64_t>(ratio * 4294967296.0 + 0.5);
}

/// Whether element i is kept under `threshold` (dropThreshold).
MPTRT_PHILOX_FN bool dropoutKeep(uint64_t seed, uint64_t step, uint32_t stream, int64_t i,
                                 uint64_t threshold) {
  return uint64_t(dropoutBits(seed, step, stream, i)) >= threshold;
}

} // namespace philox
} // namespace mptrt

#endif // MPTRT_PHILOX_H
