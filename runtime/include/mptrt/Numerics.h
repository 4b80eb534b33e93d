//===- Numerics.h - float32 <-> bf16 / fp16 / fp8 conversions ----*- C++ -*-===//
//
// The one place where MPT's low-precision storage formats are encoded and
// decoded. Every backend includes it, so a value rounds the same way on every
// device; the compiler side may include it too (no other dependency).
//
// Formats (bit layout sign | exponent | mantissa, bias):
//   bf16        1 | 8 | 7, bias 127   IEEE-like: subnormals, +-inf, NaN
//   fp16        1 | 5 | 10, bias 15   IEEE binary16
//   f8E4M3FN    1 | 4 | 3, bias 7     no infinities; NaN is S.1111.111 only;
//                                     max finite 448 (S.1111.110)
//   f8E5M2      1 | 5 | 2, bias 15    IEEE-like: subnormals, +-inf, NaN;
//                                     max finite 57344
//
// Three families of float32 -> narrow conversions:
//
//   f32ToBf16, f32ToF16, f32ToF8E4M3FN, f32ToF8E5M2
//     Round to nearest, ties to even, with exactly the results of
//     llvm::APFloat::convert(..., rmNearestTiesToEven) for every non-NaN
//     input: a magnitude that rounds past the largest finite value becomes
//     +-inf, or NaN (with the input's sign) for f8E4M3FN, which has no
//     infinity; +-inf becomes +-inf, or NaN for f8E4M3FN. So for f8E4M3FN,
//     |x| <= 464 rounds to at most 448 (464 is a tie that goes to the even
//     448) and |x| > 464 gives NaN; for f8E5M2, |x| >= 61440 gives inf.
//
//   f32ToF8E4M3FNSaturating, f32ToF8E5M2Saturating
//     The same rounding, but a result beyond the largest finite value
//     (including +-inf inputs) is clamped to +-max finite (448 / 57344), as
//     FP8 training recipes expect. NaN stays NaN.
//
//   f32ToBf16Stochastic
//     Stochastic rounding into bf16 with a caller-supplied random word
//     (unbiased: the expected result is the input); the optimizer updates of
//     bf16 master weights use it with Philox words (mptrt/Philox.h).
//
// NaN inputs give the target's canonical quiet NaN with the input's sign
// (bf16 0x7FC0, fp16 0x7E00, f8E4M3FN 0x7F, f8E5M2 0x7E, sign bit or'ed in);
// NaN payload bits are not carried over (APFloat keeps some of them).
//
// Decoding (xxxToF32) is exact: every value of these formats is a float32.
// Nothing here depends on the floating-point environment: the rounding is
// done in integer arithmetic, so flush-to-zero modes do not change results.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_NUMERICS_H
#define MPTRT_NUMERICS_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define MPTRT_HOST_DEVICE __host__ __device__
#else
#define MPTRT_HOST_DEVICE
#endif

namespace mptrt {
namespace numerics {

MPTRT_HOST_DEVICE inline uint32_t bitsOfF32(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
}

MPTRT_HOST_DEVICE inline float f32OfBits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

namespace detail {

/// What a narrow format does with values past its largest finite one.
enum class Overflow {
  Infinity, // IEEE-like formats: round to +-inf.
  NaN,      // no infinity (f8E4M3FN): the NaN pattern, keeping the sign.
  Saturate, // clamp to +-max finite.
};

/// Rounds the float32 `x` to a binary format with `EBits` exponent bits and
/// `MBits` explicit mantissa bits (round to nearest, ties to even) and
/// returns its bit pattern in the low 1 + EBits + MBits bits.
///
/// `FiniteOnly` formats (f8E4M3FN) use the all-ones exponent for finite
/// values and reserve only exponent and mantissa all ones for NaN.
template <int EBits, int MBits, bool FiniteOnly>
MPTRT_HOST_DEVICE inline uint32_t roundF32ToNarrow(float x, Overflow overflow) {
  static_assert(EBits >= 2 && EBits <= 8 && MBits >= 1 && MBits < 23,
                "a format narrower than float32");
  constexpr int kBias = (1 << (EBits - 1)) - 1;
  constexpr int kMinExp = 1 - kBias; // exponent of the smallest normal
  constexpr uint32_t kExpMask = (1u << EBits) - 1;
  constexpr uint32_t kMantMask = (1u << MBits) - 1;
  constexpr uint32_t kSignBit = 1u << (EBits + MBits);
  // Largest finite value's exponent and mantissa fields.
  constexpr uint32_t kMaxExpField = FiniteOnly ? kExpMask : kExpMask - 1;
  constexpr uint32_t kMaxMantField = FiniteOnly ? kMantMask - 1 : kMantMask;
  constexpr uint32_t kMaxFinite = (kMaxExpField << MBits) | kMaxMantField;
  constexpr uint32_t kInf = kExpMask << MBits; // IEEE-like only
  constexpr uint32_t kNaN =
      FiniteOnly ? (kExpMask << MBits) | kMantMask : (kExpMask << MBits) | (1u << (MBits - 1));

  const uint32_t bits = bitsOfF32(x);
  const uint32_t sign = (bits >> 31) ? kSignBit : 0u;
  const uint32_t absBits = bits & 0x7FFFFFFFu;

  if (absBits > 0x7F800000u) // NaN
    return sign | kNaN;
  auto overflowed = [&]() -> uint32_t {
    switch (overflow) {
    case Overflow::Saturate:
      return sign | kMaxFinite;
    case Overflow::NaN:
      return sign | kNaN;
    case Overflow::Infinity:
      break;
    }
    return sign | kInf;
  };
  if (absBits == 0x7F800000u) // +-inf
    return overflow == Overflow::Infinity && !FiniteOnly ? (sign | kInf) : overflowed();
  if (absBits == 0)
    return sign;

  // |x| = sig * 2^exp with sig < 2^24, and log2(|x|) in [log2, log2 + 1).
  const int exp32 = static_cast<int>(absBits >> 23);
  uint32_t sig;
  int exp;
  int log2;
  if (exp32 == 0) { // float32 subnormal
    sig = absBits;
    exp = -149;
    log2 = -127;
    for (uint32_t s = sig; s < (1u << 23); s <<= 1)
      --log2;
  } else {
    sig = (absBits & 0x7FFFFFu) | 0x800000u;
    exp = exp32 - 150;
    log2 = exp32 - 127;
  }

  // The target's spacing at |x| is 2^quantum: normal values have MBits
  // fraction bits below their leading one; below the normal range the
  // spacing stays that of the smallest normal binade.
  const int quantum = (log2 > kMinExp ? log2 : kMinExp) - MBits;
  const int shift = quantum - exp; // bits of sig below the target's ulp
  uint32_t rounded;                // |x| / 2^quantum, rounded
  if (shift <= 0) {
    rounded = sig << -shift; // exact (never taken by the formats here)
  } else if (shift > 25) {
    rounded = 0; // |x| < 2^(quantum-1): below half the smallest step
  } else {
    const uint32_t kept = sig >> shift;
    const uint32_t rest = sig & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    rounded = kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
  }

  // Encode. `rounded` is the significand in units of 2^quantum: below
  // 2^MBits the value is subnormal in the target; 2^(MBits+1) means the
  // rounding carried into the next binade (mantissa 0, exponent + 1).
  uint32_t expField;
  uint32_t mantField;
  const uint32_t biased = static_cast<uint32_t>(quantum + MBits + kBias);
  if (rounded < (1u << MBits)) {
    expField = 0;
    mantField = rounded;
  } else if (rounded < (2u << MBits)) {
    expField = biased;
    mantField = rounded & kMantMask;
  } else {
    expField = biased + 1;
    mantField = 0;
  }
  if (expField > kMaxExpField || (expField == kMaxExpField && mantField > kMaxMantField))
    return overflowed();
  return sign | (expField << MBits) | mantField;
}

/// Decodes a narrow format's bit pattern exactly into float32.
template <int EBits, int MBits, bool FiniteOnly>
MPTRT_HOST_DEVICE inline float narrowToF32(uint32_t v) {
  constexpr int kBias = (1 << (EBits - 1)) - 1;
  constexpr uint32_t kExpMask = (1u << EBits) - 1;
  constexpr uint32_t kMantMask = (1u << MBits) - 1;
  const uint32_t sign = ((v >> (EBits + MBits)) & 1u) << 31;
  const uint32_t expField = (v >> MBits) & kExpMask;
  const uint32_t mant = v & kMantMask;
  if (expField == kExpMask) {
    if (FiniteOnly) {
      if (mant == kMantMask)
        return f32OfBits(sign | 0x7FC00000u);
      // Finite: falls through to the normal case below.
    } else {
      return f32OfBits(sign | (mant ? 0x7FC00000u : 0x7F800000u));
    }
  }
  if (expField == 0) {
    if (mant == 0)
      return f32OfBits(sign);
    // Subnormal: mant * 2^(1 - bias - MBits); normalise for float32.
    int e = 1 - kBias;
    uint32_t m = mant;
    while (!(m & (1u << MBits))) {
      m <<= 1;
      --e;
    }
    return f32OfBits(sign | (static_cast<uint32_t>(e + 127) << 23) |
                     ((m & kMantMask) << (23 - MBits)));
  }
  const int e = static_cast<int>(expField) - kBias;
  return f32OfBits(sign | (static_cast<uint32_t>(e + 127) << 23) | (mant << (23 - MBits)));
}

} // namespace detail

//===----------------------------------------------------------------------===//
// bf16
//===----------------------------------------------------------------------===//

MPTRT_HOST_DEVICE inline float bf16ToF32(uint16_t v) {
  return f32OfBits(static_cast<uint32_t>(v) << 16);
}

/// Round to nearest even; overflow gives +-inf (as APFloat).
MPTRT_HOST_DEVICE inline uint16_t f32ToBf16(float x) {
  const uint32_t bits = bitsOfF32(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) // NaN
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7FC0u);
  // bf16 is float32 with the low 16 bits dropped, so rounding is integer
  // rounding of the bit pattern: add just under half, plus one if the kept
  // part is odd (ties to even). A carry out of the mantissa bumps the
  // exponent, which is exactly the next binade (or inf past the max).
  const uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

/// Stochastic rounding into bf16: `x` rounds away from zero (in magnitude)
/// with probability (the dropped low 16 bits of x) / 2^16 and toward zero
/// otherwise, so E[bf16ToF32(result)] == x for every finite x whose
/// rounding stays finite. `random` is a uniformly random 32-bit word; its
/// high 16 bits are added to the bit pattern below bf16's last kept bit and
/// the sum truncated. Within a binade the bf16 neighbours of x are adjacent
/// bit patterns and x's pattern lies between them linearly, so the carry
/// happens with exactly that probability; a carry out of the mantissa is
/// the next binade (or inf past bf16's max, whose neighbour is inf), and
/// subnormals share float32's layout. NaN gives f32ToBf16's quiet NaN;
/// +-inf stays +-inf (its low bits are 0 and the carry never reaches the
/// exponent). Shared by every backend (the optimizer updates with
/// master-weights=bf16-sr), so a draw rounds alike on every device.
MPTRT_HOST_DEVICE inline uint16_t f32ToBf16Stochastic(float x, uint32_t random) {
  const uint32_t bits = bitsOfF32(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) // NaN
    return f32ToBf16(x);
  return static_cast<uint16_t>((bits + (random >> 16)) >> 16);
}

//===----------------------------------------------------------------------===//
// fp16
//===----------------------------------------------------------------------===//

MPTRT_HOST_DEVICE inline float f16ToF32(uint16_t v) { return detail::narrowToF32<5, 10, false>(v); }

/// Round to nearest even; overflow (|x| >= 65520) gives +-inf (as APFloat).
MPTRT_HOST_DEVICE inline uint16_t f32ToF16(float x) {
  return static_cast<uint16_t>(
      detail::roundF32ToNarrow<5, 10, false>(x, detail::Overflow::Infinity));
}

//===----------------------------------------------------------------------===//
// fp8 E4M3FN
//===----------------------------------------------------------------------===//

MPTRT_HOST_DEVICE inline float f8E4M3FNToF32(uint8_t v) {
  return detail::narrowToF32<4, 3, true>(v);
}

/// APFloat semantics: round to nearest even; |x| > 464 and +-inf give NaN.
MPTRT_HOST_DEVICE inline uint8_t f32ToF8E4M3FN(float x) {
  return static_cast<uint8_t>(detail::roundF32ToNarrow<4, 3, true>(x, detail::Overflow::NaN));
}

/// Saturating: round to nearest even, then clamp to +-448 (inf included).
MPTRT_HOST_DEVICE inline uint8_t f32ToF8E4M3FNSaturating(float x) {
  return static_cast<uint8_t>(detail::roundF32ToNarrow<4, 3, true>(x, detail::Overflow::Saturate));
}

//===----------------------------------------------------------------------===//
// fp8 E5M2
//===----------------------------------------------------------------------===//

MPTRT_HOST_DEVICE inline float f8E5M2ToF32(uint8_t v) {
  return detail::narrowToF32<5, 2, false>(v);
}

/// APFloat semantics: round to nearest even; |x| >= 61440 gives +-inf.
MPTRT_HOST_DEVICE inline uint8_t f32ToF8E5M2(float x) {
  return static_cast<uint8_t>(detail::roundF32ToNarrow<5, 2, false>(x, detail::Overflow::Infinity));
}

/// Saturating: round to nearest even, then clamp to +-57344 (inf included).
MPTRT_HOST_DEVICE inline uint8_t f32ToF8E5M2Saturating(float x) {
  return static_cast<uint8_t>(detail::roundF32ToNarrow<5, 2, false>(x, detail::Overflow::Saturate));
}

//===----------------------------------------------------------------------===//
// Integers into float32 without double rounding.
//===----------------------------------------------------------------------===//

/// Converts an int64 to float32 rounding to odd (truncate, then set the
/// lowest mantissa bit if anything was dropped). Rounding to odd into a
/// format with at least two more significand bits than the final target
/// and then to nearest even into the target equals one direct rounding, so
/// int64 -> bf16/fp16/fp8 goes through this without a double-rounding error.
MPTRT_HOST_DEVICE inline float int64ToF32RoundToOdd(int64_t v) {
  if (v == 0)
    return 0.0f;
  const bool negative = v < 0;
  uint64_t mag = negative ? ~static_cast<uint64_t>(v) + 1u : static_cast<uint64_t>(v);
  int top = 63;
  while (!(mag >> top))
    --top;
  uint32_t sig;
  if (top <= 23) {
    sig = static_cast<uint32_t>(mag << (23 - top));
  } else {
    const int drop = top - 23;
    sig = static_cast<uint32_t>(mag >> drop);
    if (mag & ((uint64_t{1} << drop) - 1))
      sig |= 1u; // sticky: round to odd
  }
  const uint32_t bits =
      (negative ? 0x80000000u : 0u) | (static_cast<uint32_t>(top + 127) << 23) | (sig & 0x7FFFFFu);
  return f32OfBits(bits);
}

} // namespace numerics
} // namespace mptrt

#endif // MPTRT_NUMERICS_H
