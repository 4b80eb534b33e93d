//===- ConstantBlobTest.cpp - The plan's constants section and CRC-32 ----===//

#include "mptrt/plan/ConstantBlob.h"
#include "mptrt/Crc32.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

using mptrt::plan::ConstantBlob;

namespace {

std::vector<uint8_t> iota(size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// Tests that copies and views lie at aligned offsets, that the gaps read as
// zeros, and that a view is not copied.
TEST(ConstantBlob, PiecesAndGaps) {
  const std::vector<uint8_t> a = iota(5, 1), b = iota(70, 100), c = iota(3, 200);
  ConstantBlob blob;
  EXPECT_EQ(blob.append(a.data(), a.size(), 64), 0u);
  EXPECT_EQ(blob.appendView(b.data(), b.size(), 64), 64u);
  EXPECT_EQ(blob.append(c.data(), c.size(), 64), 192u);
  EXPECT_EQ(blob.size(), 195u);
  EXPECT_EQ(blob.find(64, 70), b.data()); // the view itself
  EXPECT_EQ(blob.find(100, 10), b.data() + 36);
  EXPECT_EQ(blob.find(60, 8), nullptr);  // across a gap and a piece
  EXPECT_EQ(blob.find(134, 1), nullptr); // in the gap after the view
  std::vector<uint8_t> expected(195, 0);
  std::copy(a.begin(), a.end(), expected.begin());
  std::copy(b.begin(), b.end(), expected.begin() + 64);
  std::copy(c.begin(), c.end(), expected.begin() + 192);
  EXPECT_EQ(blob.bytes(), expected);
  std::vector<uint8_t> runs;
  blob.forEachRun([&](const uint8_t *p, size_t n) { runs.insert(runs.end(), p, p + n); });
  EXPECT_EQ(runs, expected);
  std::vector<uint8_t> middle(20);
  blob.copyOut(60, 20, middle.data());
  EXPECT_EQ(middle, std::vector<uint8_t>(expected.begin() + 60, expected.begin() + 80));
}

// Tests that copying nothing touches nothing: the destination may be null,
// as an empty vector's data() is (found by the plan fuzzer under UBSan: a
// plan with no constants packed into an empty buffer).
TEST(ConstantBlob, CopyingNothing) {
  ConstantBlob empty;
  empty.copyOut(0, 0, nullptr);
  EXPECT_TRUE(empty.bytes().empty());
  std::vector<uint8_t> none;
  empty.forEachRun([&](const uint8_t *p, size_t n) { none.insert(none.end(), p, p + n); });
  EXPECT_TRUE(none.empty());
}

// Tests that small copies share one owned piece, padding included.
TEST(ConstantBlob, CopiesShareAPiece) {
  ConstantBlob blob;
  const uint8_t x = 7, y = 9;
  blob.append(&x, 1, 64);
  blob.append(&y, 1, 64);
  const uint8_t *p = blob.find(0, 65);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p[0], 7);
  EXPECT_EQ(p[64], 9);
}

// Tests that makeOwned keeps the bytes once their source is gone.
TEST(ConstantBlob, MakeOwned) {
  ConstantBlob blob;
  {
    std::vector<uint8_t> source = iota(10, 3);
    blob.assignView(source.data(), source.size());
    blob.makeOwned();
    std::fill(source.begin(), source.end(), 0);
  }
  EXPECT_EQ(blob.bytes(), iota(10, 3));
}

uint32_t crc32Bytewise(const uint8_t *p, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k)
      crc = crc & 1 ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
  }
  return ~crc;
}

// Tests the eight-bytes-a-step CRC-32 against the check value and against
// the bit-at-a-time definition at every length and alignment up to 64, and
// that a CRC continued over pieces equals the CRC of the whole.
TEST(Crc32, MatchesTheDefinition) {
  EXPECT_EQ(mptrt::crc32(0, "123456789", 9), 0xCBF43926u);
  std::vector<uint8_t> data(80);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t start = 0; start < 8; ++start)
    for (size_t n = 0; n + start <= 72; ++n)
      EXPECT_EQ(mptrt::crc32(0, data.data() + start, n), crc32Bytewise(data.data() + start, n))
          << "start " << start << ", length " << n;
  for (size_t cut = 0; cut <= data.size(); ++cut)
    EXPECT_EQ(mptrt::crc32(mptrt::crc32(0, data.data(), cut), data.data() + cut, data.size() - cut),
              crc32Bytewise(data.data(), data.size()));
}

} // namespace
