//===- ParamsTest.cpp - .safetensors and .npz parameter files ------------===//
//
// The readers of mpt-train --params (mptrt/train/Params.h) on files written
// here: good files of each format and dtype, the float conversions, and
// malformed files (bad headers, holes and overlaps, every truncation,
// compressed and corrupt zip entries), each refused with a message naming
// the file and, where there is one, the tensor.
//
//===----------------------------------------------------------------------===//
#include "mptrt/train/Params.h"
#include "ParamsFiles.h"
#include "TensorFile.h"
#include "mptrt/Numerics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mptrt;
using namespace mptrt::test;
using namespace mptrt::numerics;
using train::ParamsFile;

namespace {

const std::vector<float> kW = {1.5f, -2.0f, 0.1f, 3.25f, 1e-3f, -7.0f};
const std::vector<int64_t> kStep = {42};

std::vector<NamedBytes> goodTensors() {
  return {{"w", "F32", {2, 3}, bytesOf(kW)}, {"train.step", "I64", {}, bytesOf(kStep)}};
}

std::string parseError(const std::vector<uint8_t> &bytes, bool npz = false) {
  ParamsFile file;
  std::string error;
  const bool ok = npz ? train::parseNpz(bytes, "p.npz", &file, &error)
                      : train::parseSafetensors(bytes, "p.safetensors", &file, &error);
  return ok ? "" : error;
}

} // namespace

// Tests that a safetensors file gives its tensors in the file's order, with
// their types, shapes and bytes.
TEST(Params, SafetensorsGood) {
  ParamsFile file;
  std::string error;
  ASSERT_TRUE(
      train::parseSafetensors(safetensorsFile(goodTensors()), "p.safetensors", &file, &error))
      << error;
  ASSERT_EQ(file.tensors.size(), 2u);
  EXPECT_EQ(file.tensors[0].name, "w");
  EXPECT_EQ(file.tensors[0].typeName, "F32");
  EXPECT_EQ(file.tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file.tensors[0].bytes, bytesOf(kW));
  EXPECT_EQ(file.tensors[1].name, "train.step");
  EXPECT_TRUE(file.tensors[1].shape.empty());
  EXPECT_EQ(file.tensors[1].bytes, bytesOf(kStep));
  // Escapes in names, an empty file of no tensors.
  ASSERT_TRUE(train::parseSafetensors(
      safetensorsWithHeader(
          "{\"a\\u00e9\\\"b\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[0,1]}}", {1}),
      "p", &file, &error))
      << error;
  EXPECT_EQ(file.tensors[0].name, "a\xc3\xa9\"b");
  ASSERT_TRUE(train::parseSafetensors(
      safetensorsWithHeader(
          "{\"x\\ty\\ud83d\\ude00\":{\"dtype\":\"BOOL\",\"shape\":[],\"data_offsets\":[0,1]}}",
          {1}),
      "p", &file, &error))
      << error;
  EXPECT_EQ(file.tensors[0].name, "x\ty\xf0\x9f\x98\x80");
  ASSERT_TRUE(train::parseSafetensors(safetensorsWithHeader("{}", {}), "p", &file, &error))
      << error;
  EXPECT_TRUE(file.tensors.empty());
}

// Tests the float conversions: exact widening, round to nearest even when
// narrowing (f64 through round-to-odd f32, so rounded once), and refusals.
TEST(Params, Conversions) {
  train::ParamsTensor t;
  std::vector<uint8_t> out;
  std::string why;
  // bf16 -> f32 exactly.
  t.floating = train::ParamsFloat::BF16;
  t.exact = {MPTRT_BF16};
  t.bytes = bytesOf(std::vector<uint16_t>{f32ToBf16(1.5f), f32ToBf16(-3.0f)});
  ASSERT_TRUE(train::convertParamsTensor(t, MPTRT_F32, &out, &why)) << why;
  EXPECT_EQ(out, bytesOf(std::vector<float>{1.5f, -3.0f}));
  ASSERT_TRUE(train::convertParamsTensor(t, MPTRT_BF16, &out, &why));
  EXPECT_EQ(out, t.bytes);
  // f32 -> bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even (1).
  t.floating = train::ParamsFloat::F32;
  t.exact = {MPTRT_F32};
  t.bytes = bytesOf(std::vector<float>{1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f});
  ASSERT_TRUE(train::convertParamsTensor(t, MPTRT_BF16, &out, &why)) << why;
  EXPECT_EQ(out, bytesOf(std::vector<uint16_t>{0x3F80, 0x3F82}));
  // f64 -> f32 rounds once; f64 -> bf16: 1 + 2^-8 + 2^-40 is above the
  // tie, so it rounds up (a plain f32 step would round it to the tie, then
  // to even, down).
  t.floating = train::ParamsFloat::F64;
  t.exact = {};
  t.bytes = bytesOf(std::vector<double>{1.0 + 0x1p-8 + 0x1p-40, 0.1});
  ASSERT_TRUE(train::convertParamsTensor(t, MPTRT_BF16, &out, &why)) << why;
  EXPECT_EQ(out[0] | (out[1] << 8), 0x3F81);
  ASSERT_TRUE(train::convertParamsTensor(t, MPTRT_F32, &out, &why)) << why;
  float f;
  std::memcpy(&f, out.data() + 4, 4);
  EXPECT_EQ(f, 0.1f);
  // Integers take only their own type; floats do not become integers.
  EXPECT_FALSE(train::convertParamsTensor(t, MPTRT_I64, &out, &why));
  EXPECT_NE(why.find("only its own element type"), std::string::npos) << why;
  t.floating = train::ParamsFloat::None;
  t.exact = {MPTRT_I32};
  EXPECT_FALSE(train::convertParamsTensor(t, MPTRT_I64, &out, &why));
  EXPECT_FALSE(train::convertParamsTensor(t, MPTRT_F32, &out, &why));
  EXPECT_NE(why.find("only f64, f32, f16 and bf16"), std::string::npos) << why;
}

// Tests that malformed safetensors files are refused, naming the file and
// the tensor.
TEST(Params, SafetensorsBad) {
  const std::vector<uint8_t> data = bytesOf(kW);
  const std::string w = "\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":";
  struct Case {
    std::string header;
    std::vector<uint8_t> data;
    std::string message;
  } cases[] = {
      {"[1]", data, "the header is not a JSON object"},
      {"{" + w + "[0,24]}}x", data, "text after"},
      {"{" + w + "[0,24]}", data, "expected ',' or '}'"},
      {"{" + w + "[0,24]},}", data, "expected a string"},
      {"{" + w + "[0,24]}," + w + "[0,24]}}", data, "'w' appears twice"},
      {"{" + w + "[0,20]}}", data, "tensor 'w': F32 [2, 3] needs 24 bytes, data_offsets give 20"},
      {"{" + w + "[0,28]}}", data, "outside the 24-byte data buffer"},
      {"{" + w + "[4,28]}}", bytesOf(std::vector<float>(7)), "leaves a hole"},
      {"{" + w + "[0,24]}}", bytesOf(std::vector<float>(7)), "4 bytes after the last tensor"},
      {"{" + w + "[0,24]},\"v\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[20,24]}}", data,
       "overlaps"},
      {"{\"w\":{\"dtype\":\"F32\",\"shape\":[6]}}", data, "needs \"dtype\""},
      {"{\"w\":{\"dtype\":\"U16\",\"shape\":[12],\"data_offsets\":[0,24]}}", data,
       "unsupported dtype 'U16'"},
      {"{\"w\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24],\"x\":1}}", data,
       "unknown key 'x'"},
      {"{\"w\":{\"dtype\":\"F32\",\"shape\":[-6],\"data_offsets\":[0,24]}}", data,
       "unexpected character"},
      {"{\"w\":{\"dtype\":\"F32\",\"shape\":[6.0],\"data_offsets\":[0,24]}}", data,
       "not a whole number"},
      {"{\"__metadata__\":{\"a\":1}}", {}, "__metadata__ is not an object of strings"},
      {"{\"a\\q\":{}}", {}, "a bad escape '\\q'"},
      {"{\"a\\udc00\":{}}", {}, "an unpaired surrogate"},
  };
  for (const Case &c : cases) {
    const std::string error = parseError(safetensorsWithHeader(c.header, c.data));
    EXPECT_NE(error.find("parameters file 'p.safetensors' (safetensors): "), std::string::npos)
        << c.header << ": " << error;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.header << ": " << error;
  }
  // A header length beyond the file; every truncation of a good file.
  EXPECT_NE(parseError({0xff, 0, 0, 0, 0, 0, 0, 0, '{', '}'}).find("exceeds the 2 bytes"),
            std::string::npos);
  const std::vector<uint8_t> good = safetensorsFile(goodTensors());
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_NE(parseError(std::vector<uint8_t>(good.begin(), good.begin() + n)), "") << n;
}

// Tests an .npz of stored .npy entries, and its refusals: compressed
// entries, a CRC mismatch, a name without .npy, every truncation.
TEST(Params, Npz) {
  const float half[2] = {0.5f, -0.25f};
  const std::vector<uint8_t> w = tools::encodeNpy(MPTRT_F32, {2, 3}, kW.data(), 24),
                             b = tools::encodeNpy(MPTRT_F32, {2}, half, 8);
  const std::vector<uint8_t> good = zipFile({{"w.npy", w}, {"fc.bias.npy", b}});
  ParamsFile file;
  std::string error;
  ASSERT_TRUE(train::parseNpz(good, "p.npz", &file, &error)) << error;
  ASSERT_EQ(file.tensors.size(), 2u);
  EXPECT_EQ(file.tensors[0].name, "w");
  EXPECT_EQ(file.tensors[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(file.tensors[0].bytes, bytesOf(kW));
  EXPECT_EQ(file.tensors[0].floating, train::ParamsFloat::F32);
  EXPECT_EQ(file.tensors[1].name, "fc.bias");

  EXPECT_NE(parseError(zipFile({{"w.npy", w}}, 8), true)
                .find("entry 'w.npy': compressed (zip method 8, deflate); only stored entries are "
                      "read: write the file with numpy.savez, not numpy.savez_compressed"),
            std::string::npos);
  EXPECT_NE(parseError(zipFile({{"w.txt", w}}), true).find("entry 'w.txt': not a .npy file"),
            std::string::npos);
  EXPECT_NE(parseError(zipFile({{"w.npy", w}, {"w.npy", w}}), true).find("appears twice"),
            std::string::npos);
  std::vector<uint8_t> flipped = good;
  flipped[100] ^= 1; // inside w's data
  EXPECT_NE(parseError(flipped, true).find("entry 'w.npy': corrupt: CRC-32 mismatch"),
            std::string::npos);
  std::vector<uint8_t> badNpy = w;
  badNpy[0] = 'X';
  EXPECT_NE(parseError(zipFile({{"w.npy", badNpy}}), true).find("entry 'w.npy': not a .npy file"),
            std::string::npos);
  for (size_t n = 0; n < good.size(); ++n)
    EXPECT_NE(parseError(std::vector<uint8_t>(good.begin(), good.begin() + n), true), "") << n;
}
