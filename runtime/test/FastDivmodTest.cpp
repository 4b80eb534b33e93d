//===- FastDivmodTest.cpp - the CUDA kernels' divisions by a multiply ----===//
//
// cuda/FastDivmod.h divides by a divisor fixed at prepare with a high
// multiply and a shift; its host branch computes the same bits as the
// device's __umulhi, so the quotients are checked here, without a GPU,
// against plain division: every divisor up to 4096 and the powers of two
// and their neighbours up to 2^31 - 1, each with the dividends where an
// error would show (multiples of the divisor and their neighbours, the
// ends of the range) and random ones.
//
//===----------------------------------------------------------------------===//
#include "cuda/FastDivmod.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

constexpr uint32_t kMaxDividend = 0x7fffffffu;

void checkDivisor(uint32_t d, std::mt19937 &rng) {
  const FastDivmod f(d);
  std::vector<uint32_t> dividends = {0, 1, 2, kMaxDividend, kMaxDividend - 1, d - 1, d, d + 1};
  for (uint32_t k : {1u, 2u, 3u, 1000u, kMaxDividend / d - 1, kMaxDividend / d})
    for (int64_t delta : {-1, 0, 1}) {
      const int64_t n = int64_t(k) * d + delta;
      if (n >= 0 && n <= kMaxDividend)
        dividends.push_back(static_cast<uint32_t>(n));
    }
  std::uniform_int_distribution<uint32_t> any(0, kMaxDividend);
  for (int i = 0; i < 64; ++i)
    dividends.push_back(any(rng));
  for (uint32_t n : dividends) {
    if (n > kMaxDividend)
      continue;
    uint32_t rem = 0;
    const uint32_t q = f.divmod(n, &rem);
    ASSERT_EQ(q, n / d) << n << " / " << d;
    ASSERT_EQ(rem, n % d) << n << " % " << d;
  }
}

// Tests the quotient and remainder of small divisors, which tensor extents
// mostly are.
TEST(FastDivmod, SmallDivisors) {
  std::mt19937 rng(1);
  for (uint32_t d = 1; d <= 4096; ++d)
    checkDivisor(d, rng);
}

// Tests powers of two, their neighbours and random divisors up to 2^31 - 1,
// where the multiplier is largest.
TEST(FastDivmod, LargeDivisors) {
  std::mt19937 rng(2);
  for (int b = 12; b <= 31; ++b)
    for (int64_t delta : {-1, 0, 1}) {
      const int64_t d = (int64_t(1) << b) + delta;
      if (d >= 1 && d <= kMaxDividend)
        checkDivisor(static_cast<uint32_t>(d), rng);
    }
  std::uniform_int_distribution<uint32_t> any(1, kMaxDividend);
  for (int i = 0; i < 2000; ++i)
    checkDivisor(any(rng), rng);
}

// Tests every dividend below 2^20 against a few divisors (exhaustive where
// most tensors are).
TEST(FastDivmod, EveryDividendBelow2To20) {
  for (uint32_t d : {3u, 7u, 10u, 129u, 517u, 768u, 50257u}) {
    const FastDivmod f(d);
    for (uint32_t n = 0; n < (1u << 20); ++n)
      ASSERT_EQ(f.div(n), n / d) << n << " / " << d;
  }
}

} // namespace
} // namespace cuda
} // namespace rt
} // namespace mptrt
