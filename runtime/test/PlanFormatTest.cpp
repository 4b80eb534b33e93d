//===- PlanFormatTest.cpp - writer, reader and verifier of plans ---------===//
//
// The encoding is pinned by a byte-exact golden plan (docs/plan-format.md
// walks through the same bytes); the reader is attacked with every
// truncation and with byte flips; each verifier rule has a targeted case.
//
//===----------------------------------------------------------------------===//
#include "mptrt/PlanFormat.h"
#include "PlanBuilder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iterator>

using namespace mptrt;
using namespace mptrt::plan;
using mptrt::test::PlanBuilder;

namespace {

bool operator==(const Attribute &a, const Attribute &b) {
  return a.name == b.name && a.type == b.type && a.i == b.i &&
         std::memcmp(&a.f, &b.f, sizeof(double)) == 0 && a.ints == b.ints && a.s == b.s;
}

void expectSamePlan(const Plan &a, const Plan &b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor &x = a.tensors[i], &y = b.tensors[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.storage, y.storage);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.hasInitializer, y.hasInitializer);
  }
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].kind, b.kernels[i].kind);
    EXPECT_EQ(a.kernels[i].operands, b.kernels[i].operands);
    EXPECT_EQ(a.kernels[i].results, b.kernels[i].results);
    EXPECT_EQ(a.kernels[i].origin, b.kernels[i].origin);
    EXPECT_EQ(a.kernels[i].phase, b.kernels[i].phase);
    ASSERT_EQ(a.kernels[i].attrs.size(), b.kernels[i].attrs.size());
    for (size_t j = 0; j < a.kernels[i].attrs.size(); ++j)
      EXPECT_TRUE(a.kernels[i].attrs[j] == b.kernels[i].attrs[j]);
  }
  ASSERT_EQ(a.entries.size(), b.entries.size());
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const EntryPoint &x = a.entries[i], &y = b.entries[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.arenaBytes, y.arenaBytes);
    EXPECT_EQ(x.kernels, y.kernels);
    EXPECT_EQ(x.inputs, y.inputs);
    EXPECT_EQ(x.params, y.params);
    EXPECT_EQ(x.outputs, y.outputs);
    for (size_t o = 0; o < x.outputs.size(); ++o)
      EXPECT_EQ(x.outputRole(o), y.outputRole(o)) << x.name << " output " << o;
  }
  EXPECT_EQ(a.constants.bytes(), b.constants.bytes());
}

/// A plan that uses every dtype, storage kind and attribute type, with two
/// entry points sharing a parameter.
Plan richPlan() {
  PlanBuilder b;
  const float w[6] = {1, 2, 3, 4, 5, 6};
  const int64_t idx[2] = {1, 0};
  uint32_t x = b.input("x", DType::BF16, {2, 3});
  uint32_t wp = b.param("w", DType::F32, {3, 2}, w, sizeof(w));
  uint32_t lr = b.param("lr", DType::F32, {});
  uint32_t c = b.constant(DType::I64, {2}, idx, sizeof(idx), "idx");
  uint32_t t = b.temp(DType::F16, {2, 2});
  uint32_t t8 = b.temp(DType::F8E4M3FN, {2, 2});
  uint32_t t5 = b.temp(DType::F8E5M2, {2, 2});
  uint32_t ti = b.temp(DType::I32, {2});
  uint32_t tb = b.temp(DType::I1, {2, 2});
  uint32_t y = b.output("y", DType::F32, {2, 2});
  b.kernel("matmul", {x, wp}, {t});
  b.kernel("cast", {t}, {t8}, {Attribute::makeInt("saturate", 1)});
  b.kernel("cast", {t8}, {t5});
  b.kernel("cast", {c}, {ti});
  b.kernel("greater", {t5, t}, {tb});
  b.kernel("gelu", {t5}, {y},
           {Attribute::makeString("approximate", "tanh"), Attribute::makeFloat("alpha", -0.25),
            Attribute::makeInts("perm", {1, 0, -7})});
  b.entry("forward");
  uint32_t g = b.input("g", DType::F32, {3, 2});
  uint32_t s = b.temp(DType::F32, {3, 2});
  b.kernel("mul", {g, lr}, {s});
  b.kernel("sub", {wp, s}, {wp});
  b.entry("sgd");
  b.plan.kernels[0].origin = "fc1";
  b.plan.kernels[0].phase = Phase::Forward;
  b.plan.kernels[6].origin = "fc1";
  b.plan.kernels[6].phase = Phase::Backward;
  return b.plan;
}

// Tests that serialize -> parse gives back the same structs and bytes.
TEST(PlanFormat, RoundTrip) {
  Plan plan = richPlan();
  std::string error;
  ASSERT_TRUE(verifyPlan(plan, &error)) << error;
  std::vector<uint8_t> bytes = serializePlan(plan);
  Plan back;
  ASSERT_TRUE(parsePlan(bytes.data(), bytes.size(), &back, &error)) << error;
  expectSamePlan(plan, back);
  EXPECT_EQ(serializePlan(back), bytes);
  uint64_t constantsOffset;
  std::memcpy(&constantsOffset, bytes.data() + 40, 8);
  EXPECT_EQ(constantsOffset % 64, 0u);
}

// Tests the exact bytes of a small plan, as docs/plan-format.md lays out.
/// The plan of the golden-bytes tests, as a version-`version` file holds
/// it: one relu, a 4-byte constants blob; from version 3 the relu came from
/// the forward ONNX node "r1"; from version 4 its output is a gradient.
Plan goldenPlan(uint32_t version) {
  const bool origin = version >= 3;
  Plan plan;
  Tensor x;
  x.name = "x";
  x.dtype = DType::F32;
  x.storage = Storage::Input;
  x.shape = {2};
  Tensor y = x;
  y.name = "y";
  y.storage = Storage::Output;
  plan.tensors = {x, y};
  Kernel k;
  k.kind = "relu";
  k.operands = {0};
  k.results = {1};
  k.attrs = {Attribute::makeInt("k", 7)};
  if (origin) {
    k.origin = "r1";
    k.phase = Phase::Forward;
  }
  plan.kernels = {k};
  EntryPoint e;
  e.name = "main";
  e.kernels = {0};
  e.inputs = {0};
  e.outputs = {1};
  if (version >= 4)
    e.outputRoles = {OutputRole::Gradient};
  plan.entries = {e};
  plan.constants = {0xAA, 0xBB, 0xCC, 0xDD};
  return plan;
}

/// The golden plan's tables section: version 4 (156 bytes) gives the output
/// its role, version 3 (155 bytes) the kernel its origin and phase, version
/// 2 (148 bytes) has neither.
std::vector<uint8_t> goldenTables(uint32_t version) {
  std::vector<uint8_t> t = {
      // Tensor table: count, then name, dtype, storage, rank, flags, dims, offset.
      2, 0, 0, 0, 1, 0, 0, 0, 'x', 1, 2, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0,
      0, 0, 'y', 1, 3, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      // Kernel table: count, then kind, operands, results, (version 3:
      // origin, phase,) attributes.
      1, 0, 0, 0, 4, 0, 0, 0, 'r', 'e', 'l', 'u', 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  if (version >= 3)
    t.insert(t.end(), {2, 0, 0, 0, 'r', '1', 1}); // origin "r1", forward
  const std::vector<uint8_t> rest = {
      1, 0, 0, 0, 1, 0, 0, 0, 'k', 1, 7, 0, 0, 0, 0, 0, 0, 0,
      // Entry points: count, then name, arena size, kernels, inputs, params, outputs.
      1, 0, 0, 0, 4, 0, 0, 0, 'm', 'a', 'i', 'n', 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1,
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  t.insert(t.end(), rest.begin(), rest.end());
  if (version >= 4)
    t.push_back(6); // (version 4:) the output's role, gradient
  return t;
}

/// Header, tables, zero padding up to `constantsOffset`, then the constants.
std::vector<uint8_t> goldenFile(std::vector<uint8_t> header, uint64_t constantsOffset) {
  std::vector<uint8_t> bytes = std::move(header);
  const std::vector<uint8_t> tables = goldenTables(bytes[8]);
  bytes.insert(bytes.end(), tables.begin(), tables.end());
  bytes.resize(constantsOffset, 0);
  for (uint8_t c : {0xAA, 0xBB, 0xCC, 0xDD})
    bytes.push_back(c);
  return bytes;
}

// Tests the writer's bytes against a file written out by hand (version 4:
// the constants section starts at byte 4096, a page), and that it reads
// back. The CRCs were computed independently with Python's zlib.crc32.
TEST(PlanFormat, GoldenBytes) {
  const std::vector<uint8_t> golden = goldenFile(
      {
          'M', 'P', 'T', 'P', 'L', 'A', 'N', 0, // magic
          4,   0,   0,   0,                     // version 4
          182, 62,  190, 129,                   // header CRC-32
          4,   16,  0,   0,   0,   0,   0,   0, // file size 4100
          64,  0,   0,   0,   0,   0,   0,   0, // tables offset 64
          156, 0,   0,   0,   0,   0,   0,   0, // tables size 156
          0,   16,  0,   0,   0,   0,   0,   0, // constants offset 4096
          4,   0,   0,   0,   0,   0,   0,   0, // constants size 4
          230, 160, 191, 179,                   // tables CRC-32
          167, 1,   180, 85,                    // constants CRC-32
      },
      4096);
  const Plan plan = goldenPlan(4);
  std::vector<uint8_t> bytes = serializePlan(plan);
  ASSERT_EQ(bytes.size(), 4100u);
  EXPECT_EQ(bytes, golden);
  Plan back;
  std::string error;
  ASSERT_TRUE(parsePlan(golden.data(), golden.size(), &back, &error)) << error;
  expectSamePlan(plan, back);
  // The kernel's phase byte (0x98) takes only the codes 0, 1 and 2.
  std::vector<uint8_t> badPhase = golden;
  ASSERT_EQ(badPhase[0x98], 1);
  badPhase[0x98] = 3;
  EXPECT_FALSE(parsePlan(badPhase.data(), badPhase.size(), &back, &error,
                         /*checkChecksums=*/false));
  EXPECT_NE(error.find("kernel 0: invalid phase code 3"), std::string::npos) << error;
  // The output's role byte (0xDB, the last of the tables) takes only the
  // codes 0 to 6; a changed one fails the tables' checksum.
  std::vector<uint8_t> badRole = golden;
  ASSERT_EQ(badRole[0xDB], 6);
  badRole[0xDB] = 7;
  EXPECT_FALSE(parsePlan(badRole.data(), badRole.size(), &back, &error,
                         /*checkChecksums=*/false));
  EXPECT_NE(error.find("entry point 0 'main': output 0: invalid role code 7"), std::string::npos)
      << error;
  badRole[0xDB] = 1;
  EXPECT_FALSE(parsePlan(badRole.data(), badRole.size(), &back, &error));
  EXPECT_NE(error.find("tables section checksum mismatch"), std::string::npos) << error;
}

/// `bytes` (a version-4 file of a plan whose last entry point has
/// `roleBytes` outputs) as version 3 writes it: without that entry point's
/// role bytes. The constants keep their offset.
std::vector<uint8_t> asVersion3(std::vector<uint8_t> bytes, size_t roleBytes) {
  uint64_t tablesSize;
  std::memcpy(&tablesSize, bytes.data() + 32, 8);
  const size_t tablesEnd = kHeaderSize + tablesSize;
  bytes.erase(bytes.begin() + (tablesEnd - roleBytes), bytes.begin() + tablesEnd);
  bytes.insert(bytes.begin() + (tablesEnd - roleBytes), roleBytes, 0);
  tablesSize -= roleBytes;
  auto put32 = [&](size_t at, uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); };
  put32(8, 3);
  std::memcpy(bytes.data() + 32, &tablesSize, 8);
  put32(56, crc32(0, bytes.data() + kHeaderSize, tablesSize));
  put32(12, 0);
  put32(12, crc32(0, bytes.data(), kHeaderSize));
  return bytes;
}

// Tests that a version-3 file, which records no roles, still reads, each
// output's role derived from its name (the names train_step gave them), and
// that the golden version-3 bytes read with the output "y" of no role.
TEST(PlanFormat, ReadsVersion3) {
  const std::vector<uint8_t> golden3 = goldenFile(
      {
          'M', 'P', 'T', 'P', 'L', 'A', 'N', 0, // magic
          3,   0,   0,   0,                     // version 3
          8,   142, 50,  13,                    // header CRC-32
          4,   16,  0,   0,   0,   0,   0,   0, // file size 4100
          64,  0,   0,   0,   0,   0,   0,   0, // tables offset 64
          155, 0,   0,   0,   0,   0,   0,   0, // tables size 155
          0,   16,  0,   0,   0,   0,   0,   0, // constants offset 4096
          4,   0,   0,   0,   0,   0,   0,   0, // constants size 4
          216, 184, 176, 214,                   // tables CRC-32
          167, 1,   180, 85,                    // constants CRC-32
      },
      4096);
  Plan back;
  std::string error;
  ASSERT_TRUE(parsePlan(golden3.data(), golden3.size(), &back, &error)) << error;
  expectSamePlan(goldenPlan(3), back);
  ASSERT_EQ(back.entries[0].outputRoles.size(), 1u);
  EXPECT_EQ(back.entries[0].outputRoles[0], OutputRole::None);

  // A train_step as version 3 wrote it: its roles are its names'.
  PlanBuilder b;
  uint32_t x = b.input("x", DType::F32, {2});
  const char *names[] = {"loss",   "skipped", "grad_norm", "loss_scale", "lr",
                         "grad.w", "grad.",   "logits",    "lossy"};
  const OutputRole roles[] = {OutputRole::Loss,      OutputRole::Skipped, OutputRole::GradNorm,
                              OutputRole::LossScale, OutputRole::Lr,      OutputRole::Gradient,
                              OutputRole::None,      OutputRole::None,    OutputRole::None};
  for (const char *name : names)
    b.kernel("relu", {x}, {b.output(name, DType::F32, {2})});
  b.entry("train_step");
  const std::vector<uint8_t> v4 = serializePlan(b.plan);
  const std::vector<uint8_t> v3 = asVersion3(v4, std::size(names));
  ASSERT_TRUE(parsePlan(v3.data(), v3.size(), &back, &error)) << error;
  ASSERT_EQ(back.entries[0].outputRoles.size(), std::size(names));
  for (size_t i = 0; i < std::size(names); ++i)
    EXPECT_EQ(back.entries[0].outputRoles[i], roles[i]) << names[i];
  // The same plan as version 4 says no roles: the names mean nothing.
  ASSERT_TRUE(parsePlan(v4.data(), v4.size(), &back, &error)) << error;
  for (size_t i = 0; i < std::size(names); ++i)
    EXPECT_EQ(back.entries[0].outputRoles[i], OutputRole::None) << names[i];
}

// Tests that roles are the plan's, not the names': any output may have any
// role, they survive a round trip, and the verifier rejects a role list of
// the wrong length, an unknown code, and a one-value role given twice in
// one entry point (gradients may repeat).
TEST(PlanFormat, OutputRoles) {
  PlanBuilder b;
  uint32_t x = b.input("x", DType::F32, {2});
  uint32_t a = b.output("a", DType::F32, {2});
  uint32_t c = b.output("c", DType::F32, {2});
  uint32_t d = b.output("d", DType::F32, {2});
  b.kernel("relu", {x}, {a});
  b.kernel("relu", {x}, {c});
  b.kernel("relu", {x}, {d});
  b.entry("train_step");
  Plan plan = b.plan;
  plan.entries[0].outputRoles = {OutputRole::Loss, OutputRole::Gradient, OutputRole::Gradient};
  std::string error;
  ASSERT_TRUE(verifyPlan(plan, &error)) << error;
  std::vector<uint8_t> bytes = serializePlan(plan);
  Plan back;
  ASSERT_TRUE(parsePlan(bytes.data(), bytes.size(), &back, &error)) << error;
  expectSamePlan(plan, back);

  Plan bad = plan;
  bad.entries[0].outputRoles.pop_back();
  EXPECT_FALSE(verifyPlan(bad, &error));
  EXPECT_NE(error.find("2 output roles for 3 outputs"), std::string::npos) << error;
  bad = plan;
  bad.entries[0].outputRoles[1] = static_cast<OutputRole>(9);
  EXPECT_FALSE(verifyPlan(bad, &error));
  EXPECT_NE(error.find("output tensor 2 'c': invalid role code 9"), std::string::npos) << error;
  bad = plan;
  bad.entries[0].outputRoles[2] = OutputRole::Loss;
  EXPECT_FALSE(verifyPlan(bad, &error));
  EXPECT_NE(error.find("outputs tensor 1 'a' and tensor 3 'd' both have the role loss"),
            std::string::npos)
      << error;
  bytes = serializePlan(bad);
  EXPECT_FALSE(parsePlan(bytes.data(), bytes.size(), &back, &error));
  EXPECT_NE(error.find("both have the role loss"), std::string::npos) << error;
}

// Tests that a version-2 file (constants only 64-byte aligned) still reads,
// and that a version-3 header on the version-2 layout does not.
TEST(PlanFormat, ReadsVersion2) {
  std::vector<uint8_t> v2 = goldenFile(
      {
          'M', 'P', 'T', 'P', 'L', 'A', 'N', 0, // magic
          2,   0,   0,   0,                     // version 2
          48,  206, 67,  204,                   // header CRC-32
          4,   1,   0,   0,   0,   0,   0,   0, // file size 260
          64,  0,   0,   0,   0,   0,   0,   0, // tables offset 64
          148, 0,   0,   0,   0,   0,   0,   0, // tables size 148
          0,   1,   0,   0,   0,   0,   0,   0, // constants offset 256
          4,   0,   0,   0,   0,   0,   0,   0, // constants size 4
          187, 172, 107, 51,                    // tables CRC-32
          167, 1,   180, 85,                    // constants CRC-32
      },
      256);
  Plan back;
  std::string error;
  ASSERT_TRUE(parsePlan(v2.data(), v2.size(), &back, &error)) << error;
  expectSamePlan(goldenPlan(2), back);
  v2[8] = 3;
  EXPECT_FALSE(parsePlan(v2.data(), v2.size(), &back, &error, /*checkChecksums=*/false));
  EXPECT_NE(error.find("constants offset 256 is not the first multiple of 4096"), std::string::npos)
      << error;
}

// Tests that every proper prefix of a valid plan is rejected with a message.
TEST(PlanFormat, TruncatedAtEveryLength) {
  std::vector<uint8_t> bytes = serializePlan(richPlan());
  for (size_t len = 0; len < bytes.size(); ++len) {
    Plan out;
    std::string error;
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + len);
    ASSERT_FALSE(parsePlan(prefix.data(), prefix.size(), &out, &error)) << len;
    ASSERT_EQ(error.rfind("plan:", 0), 0u) << error;
  }
}

// Tests truncation inside the tables with the header patched to agree, so
// that the record reader itself meets the end of the data at every byte.
TEST(PlanFormat, TablesTruncatedAtEveryLengthWithConsistentHeader) {
  std::vector<uint8_t> bytes = serializePlan(richPlan());
  uint64_t tablesSize;
  std::memcpy(&tablesSize, bytes.data() + 32, 8);
  for (uint64_t cut = 0; cut < tablesSize; ++cut) {
    uint64_t tablesEnd = kHeaderSize + cut;
    uint64_t constantsOffset = alignUp(tablesEnd, kSectionAlignment);
    std::vector<uint8_t> b(bytes.begin(), bytes.begin() + tablesEnd);
    b.resize(constantsOffset, 0);
    auto put = [&](size_t at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); };
    put(16, b.size());
    put(32, cut);
    put(40, constantsOffset);
    put(48, 0);
    Plan out;
    std::string error;
    ASSERT_FALSE(parsePlan(b.data(), b.size(), &out, &error)) << cut;
    ASSERT_FALSE(error.empty());
  }
}

// Tests that flipping any byte either still parses or fails with a message
// (never crashes or reads out of bounds; run under ASan to see the latter).
TEST(PlanFormat, ByteFlips) {
  std::vector<uint8_t> bytes = serializePlan(richPlan());
  int rejected = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t mask : {0x01, 0x10, 0x80, 0xFF}) {
      std::vector<uint8_t> b = bytes;
      b[at] ^= mask;
      Plan out;
      std::string error;
      if (!parsePlan(b.data(), b.size(), &out, &error)) {
        ASSERT_FALSE(error.empty());
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, 0);
}

//===----------------------------------------------------------------------===//
// One case per rule.
//===----------------------------------------------------------------------===//

/// Serializes `plan` after `mutate` and expects parsing to fail mentioning
/// `expected`.
template <typename Mutate> void expectRejected(Mutate mutate, const std::string &expected) {
  Plan plan = richPlan();
  mutate(plan);
  std::string error;
  EXPECT_FALSE(verifyPlan(plan, &error));
  EXPECT_NE(error.find(expected), std::string::npos) << error;
  std::vector<uint8_t> bytes = serializePlan(plan);
  Plan out;
  error.clear();
  EXPECT_FALSE(parsePlan(bytes.data(), bytes.size(), &out, &error));
  EXPECT_NE(error.find(expected), std::string::npos) << error;
}

/// Patches the serialized bytes and expects a parse failure mentioning
/// `expected`.
template <typename Patch>
/// The structural checks, with the checksums skipped (a patched plan fails
/// its checksum first otherwise: ChecksumsNameTheSection tests that).
void expectBytesRejected(Patch patch, const std::string &expected) {
  std::vector<uint8_t> bytes = serializePlan(richPlan());
  patch(bytes);
  Plan out;
  std::string error;
  EXPECT_FALSE(parsePlan(bytes.data(), bytes.size(), &out, &error, /*checkChecksums=*/false));
  EXPECT_NE(error.find(expected), std::string::npos) << error;
}

// Tests that one flipped bit in the header, the tables or the constants
// fails the load with a message naming that part, and that skipping the
// checksums loads a plan whose constants changed (structure intact).
TEST(PlanFormat, ChecksumsNameTheSection) {
  const std::vector<uint8_t> good = serializePlan(richPlan());
  Plan out;
  std::string error;
  ASSERT_TRUE(parsePlan(good.data(), good.size(), &out, &error)) << error;
  const uint64_t constantsOffset = good.size() - out.constants.size();
  ASSERT_GT(out.constants.size(), 0u);
  struct Case {
    size_t at;
    const char *section;
  };
  for (Case c : {Case{20, "header checksum mismatch"}, Case{12, "header checksum mismatch"},
                 Case{kHeaderSize + 5, "tables section checksum mismatch"},
                 Case{constantsOffset, "constants section checksum mismatch"},
                 Case{good.size() - 1, "constants section checksum mismatch"}}) {
    std::vector<uint8_t> bad = good;
    bad[c.at] ^= 0x10;
    EXPECT_FALSE(parsePlan(bad.data(), bad.size(), &out, &error)) << "byte " << c.at;
    EXPECT_NE(error.find(c.section), std::string::npos) << "byte " << c.at << ": " << error;
  }
  std::vector<uint8_t> bad = good;
  bad[constantsOffset] ^= 0x10;
  EXPECT_TRUE(parsePlan(bad.data(), bad.size(), &out, &error, /*checkChecksums=*/false)) << error;
}

// Tests that a zero-initialized parameter stores no bytes, counts as
// initialized, and cannot also have an initial value.
TEST(PlanFormat, ZeroInitializedParameter) {
  Plan plan = richPlan();
  const size_t before = serializePlan(plan).size();
  Tensor m;
  m.name = "moment";
  m.dtype = DType::F32;
  m.storage = Storage::Parameter;
  m.shape = {1024};
  m.zeroInitialized = true;
  plan.tensors.push_back(m);
  std::string error;
  ASSERT_TRUE(verifyPlan(plan, &error)) << error;
  std::vector<uint8_t> bytes = serializePlan(plan);
  EXPECT_LT(bytes.size(), before + 64) << "4 KiB of zeros must not be stored";
  Plan back;
  ASSERT_TRUE(parsePlan(bytes.data(), bytes.size(), &back, &error)) << error;
  EXPECT_TRUE(back.tensors.back().zeroInitialized);
  EXPECT_FALSE(back.tensors.back().hasInitializer);
  plan.tensors.back().hasInitializer = true;
  EXPECT_FALSE(verifyPlan(plan, &error));
  EXPECT_NE(error.find("both an initial value and the zero flag"), std::string::npos) << error;
}

TEST(PlanFormatRules, Header) {
  expectBytesRejected([](auto &b) { b[0] = 'X'; }, "bad magic");
  expectBytesRejected([](auto &b) { b[8] = 1; }, "unsupported format version 1");
  expectBytesRejected([](auto &b) { b.push_back(0); }, "truncated or padded");
  expectBytesRejected([](auto &b) { b[24] = 72; }, "must start at byte 64");
  expectBytesRejected([](auto &b) { b[40] ^= 64; }, "constants offset");
  expectBytesRejected([](auto &b) { b[37] = 1; }, "runs past the end");
}

TEST(PlanFormatRules, Encoding) {
  // Tensor count far beyond what the bytes can hold.
  expectBytesRejected([](auto &b) { b[64 + 3] = 0x7F; }, "cannot fit");
  // First tensor name length beyond the limit.
  expectBytesRejected([](auto &b) { b[68 + 3] = 0x10; }, "exceeds the limit");
  // First tensor's dtype, storage and rank codes.
  expectBytesRejected([](auto &b) { b[68 + 5] = 9; }, "invalid dtype code 9");
  expectBytesRejected([](auto &b) { b[68 + 6] = 5; }, "invalid storage code 5");
  expectBytesRejected([](auto &b) { b[68 + 7] = 9; }, "rank 9 exceeds 8");
  expectBytesRejected([](auto &b) { b[68 + 8] = 4; }, "unknown flag bits");
}

TEST(PlanFormatRules, Tensors) {
  expectRejected([](Plan &p) { p.tensors[0].shape = {2, -3}; }, "negative dimension");
  expectRejected([](Plan &p) { p.tensors[0].shape = {1 << 30, 1 << 30}; }, "overflows 2^48");
  // Products that overflow int64 and uint64, not only 2^48.
  expectRejected([](Plan &p) { p.tensors[0].shape = {INT64_MAX, INT64_MAX}; },
                 "tensor 0 'x': byte size overflows 2^48");
  expectRejected([](Plan &p) { p.tensors[0].shape = {int64_t(1) << 32, int64_t(1) << 32, 16}; },
                 "tensor 0 'x': byte size overflows 2^48");
  expectRejected([](Plan &p) { p.tensors[0].shape = {3, INT64_MIN}; },
                 "tensor 0 'x': negative dimension");
  // A zero dimension does not hide an overflowing one.
  expectRejected([](Plan &p) { p.tensors[0].shape = {INT64_MAX, 0, -1}; }, "negative dimension -1");
  // An initial value that the constants blob holds only in part: its data is
  // shorter than its shape says.
  expectRejected([](Plan &p) { p.tensors[1].shape = {5, 5}; },
                 "tensor 1 'w': bytes [0, 100) lie outside the constants blob of 80 bytes");
  // Empty, but a kernel multiplying the other dims would overflow int64.
  expectRejected([](Plan &p) { p.tensors[0].shape = {0, int64_t{1} << 40, 1 << 30}; },
                 "overflows 2^48 (counting its nonzero dimensions only)");
  expectRejected([](Plan &p) { p.tensors[4].offset = 32; }, "not a multiple of 64");
  expectRejected([](Plan &p) { p.tensors[3].offset = alignUp(p.constants.size()); },
                 "outside the constants blob");
  expectRejected([](Plan &p) { p.tensors[0].offset = 64; }, "must have offset 0");
  expectRejected([](Plan &p) { p.tensors[0].hasInitializer = true; },
                 "only parameters may have an initializer");
  expectRejected([](Plan &p) { p.tensors[2].name = ""; }, "need a name");
  expectRejected([](Plan &p) { p.tensors[2].name = "w"; }, "two parameter tensors");
}

TEST(PlanFormatRules, Kernels) {
  expectRejected([](Plan &p) { p.kernels[0].operands[1] = 99; }, "operand id 99 out of range");
  expectRejected([](Plan &p) { p.kernels[0].results[0] = 1000; }, "result id 1000 out of range");
  expectRejected([](Plan &p) { p.kernels[0].results[0] = 0; }, "read-only");
  expectRejected([](Plan &p) { p.kernels[0].kind = ""; }, "empty or overlong kind");
  expectRejected([](Plan &p) { p.kernels[1].attrs.push_back(Attribute::makeInt("saturate", 0)); },
                 "given twice");
  expectRejected([](Plan &p) { p.kernels[1].results.push_back(p.kernels[1].results[0]); },
                 "twice among the results");
}

TEST(PlanFormatRules, EntryPoints) {
  expectRejected([](Plan &p) { p.entries[0].arenaBytes -= 64; }, "exceed the arena");
  expectRejected([](Plan &p) { p.entries[0].arenaBytes += 1; }, "not a multiple of 64");
  expectRejected([](Plan &p) { p.entries[0].kernels.push_back(77); }, "kernel id 77 out of range");
  expectRejected([](Plan &p) { p.entries[0].inputs.clear(); },
                 "not among the entry point's inputs");
  expectRejected([](Plan &p) { p.entries[1].params.clear(); },
                 "not among the entry point's parameters");
  expectRejected(
      [](Plan &p) {
        p.entries[0].outputs.clear();
        p.entries[0].outputRoles.clear();
      },
      "not among the entry point's outputs");
  expectRejected([](Plan &p) { p.entries[0].outputs.push_back(0); }, "has storage input");
  expectRejected([](Plan &p) { p.entries[1].inputs.push_back(p.entries[1].inputs[0]); },
                 "lists the same input twice");
  expectRejected([](Plan &p) { p.entries[1].name = "forward"; },
                 "two entry points are named 'forward'");
}

} // namespace
