//===- TensorFileTest.cpp - .npy and TensorProto readers -----------------===//
#include "TensorFile.h"
#include "TensorFileTest.h"
#include "mptrt/ReadFile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mptrt::tools;
using mptrt::test::ProtoWriter;

namespace {

std::vector<uint8_t> npyWithHeader(int major, const std::string &dict,
                                   const std::vector<uint8_t> &data) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  const size_t n = header.size();
  out.push_back(n & 0xFF);
  out.push_back((n >> 8) & 0xFF);
  if (major != 1) {
    out.push_back((n >> 16) & 0xFF);
    out.push_back((n >> 24) & 0xFF);
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// Tests encode -> parse for every dtype and a scalar, 1-D and 3-D shape.
TEST(Npy, RoundTrip) {
  const mptrt_dtype types[] = {MPTRT_F32,    MPTRT_F16, MPTRT_BF16, MPTRT_F8E4M3FN,
                               MPTRT_F8E5M2, MPTRT_I64, MPTRT_I32,  MPTRT_I1};
  for (mptrt_dtype t : types)
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{}, std::vector<int64_t>{5}, std::vector<int64_t>{2, 3, 4}}) {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      std::vector<uint8_t> data(n * mptrt_dtype_size(t));
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = t == MPTRT_I1 ? i % 2 : static_cast<uint8_t>(i * 7);
      std::vector<uint8_t> file = encodeNpy(t, shape, data.data(), data.size());
      // The data starts at a multiple of 64, as numpy writes it.
      EXPECT_EQ((file.size() - data.size()) % 64, 0u);
      FileTensor back;
      std::string error;
      ASSERT_TRUE(parseNpy(file, &back, &error)) << error;
      EXPECT_EQ(back.shape, shape);
      EXPECT_EQ(back.bytes, data);
      bool compatible = false;
      for (mptrt_dtype c : back.compatible)
        compatible = compatible || c == t;
      EXPECT_TRUE(compatible) << mptrt_dtype_name(t);
    }
}

// Tests version 2 and 3 headers, double quotes, Python 2 longs, '=' order.
TEST(Npy, HeaderVariants) {
  const std::vector<uint8_t> data(24, 1);
  FileTensor t;
  std::string error;
  ASSERT_TRUE(parseNpy(
      npyWithHeader(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data), &t,
      &error))
      << error;
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_TRUE(parseNpy(
      npyWithHeader(3, "{\"descr\": \"=i8\", \"fortran_order\": False, \"shape\": (3L,)}", data),
      &t, &error))
      << error;
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(t.compatible, (std::vector<mptrt_dtype>{MPTRT_I64}));
  ASSERT_TRUE(
      parseNpy(npyWithHeader(1, "{'shape': (12,), 'fortran_order': False, 'descr': '<V2'}", data),
               &t, &error))
      << error;
  EXPECT_EQ(t.compatible, (std::vector<mptrt_dtype>{MPTRT_BF16, MPTRT_F16}));
}

// Tests the rejected files, each with its message.
TEST(Npy, Rejections) {
  const std::vector<uint8_t> data(24, 0);
  struct {
    std::vector<uint8_t> file;
    const char *message;
  } cases[] = {
      {{1, 2, 3}, "bad magic"},
      {npyWithHeader(4, "{}", {}), "version 4"},
      {npyWithHeader(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", data),
       "unsupported .npy dtype '>f4'"},
      {npyWithHeader(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", data),
       "unsupported .npy dtype '<f8'"},
      {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", data),
       "Fortran-order"},
      {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", data),
       "need 28"},
      {npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", data),
       "need 20"},
      {npyWithHeader(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", data),
       "structured"},
      {npyWithHeader(1, "{'descr': '<f4', 'shape': (6,), }", data), "needs 'descr'"},
      {npyWithHeader(1, "['descr']", data), "not a dict"},
  };
  for (auto &c : cases) {
    FileTensor t;
    std::string error;
    EXPECT_FALSE(parseNpy(c.file, &t, &error));
    EXPECT_NE(error.find(c.message), std::string::npos) << error;
  }
}

// Tests that every truncation of a valid .npy is rejected cleanly.
TEST(Npy, TruncatedAtEveryLength) {
  std::vector<uint8_t> data(40, 3);
  std::vector<uint8_t> file = encodeNpy(MPTRT_F32, {2, 5}, data.data(), data.size());
  for (size_t n = 0; n < file.size(); ++n) {
    FileTensor t;
    std::string error;
    std::vector<uint8_t> prefix(file.begin(), file.begin() + n);
    EXPECT_FALSE(parseNpy(prefix, &t, &error)) << n;
    EXPECT_FALSE(error.empty());
  }
}

//===----------------------------------------------------------------------===//
// TensorProto.
//===----------------------------------------------------------------------===//

// Tests raw_data, packed and unpacked float_data, int64_data, int32_data
// holding f16 bit patterns and bools, and the name.
TEST(TensorProto, Fields) {
  std::string error;
  {
    ProtoWriter w;
    w.packedInts(1, {2, 2});
    w.intField(2, 1);
    w.stringField(8, "weight");
    const float v[4] = {1, -2, 3.5f, 0};
    w.bytesField(9, v, sizeof(v));
    FileTensor t;
    ASSERT_TRUE(parseTensorProto(w.out, &t, &error)) << error;
    EXPECT_EQ(t.name, "weight");
    EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(t.compatible, (std::vector<mptrt_dtype>{MPTRT_F32}));
    EXPECT_EQ(0, std::memcmp(t.bytes.data(), v, sizeof(v)));
  }
  {
    ProtoWriter w; // unpacked dims, packed floats, then one unpacked float
    w.intField(1, 3);
    w.intField(2, 1);
    w.packedFloats(4, {1.5f, 2.5f});
    w.unpackedFloat(4, -4);
    FileTensor t;
    ASSERT_TRUE(parseTensorProto(w.out, &t, &error)) << error;
    float got[3];
    std::memcpy(got, t.bytes.data(), 12);
    EXPECT_EQ(got[0], 1.5f);
    EXPECT_EQ(got[2], -4.0f);
  }
  {
    ProtoWriter w; // int64 with negative values
    w.packedInts(1, {3});
    w.intField(2, 7);
    w.packedInts(7, {-1, 0, int64_t{1} << 40});
    FileTensor t;
    ASSERT_TRUE(parseTensorProto(w.out, &t, &error)) << error;
    int64_t got[3];
    std::memcpy(got, t.bytes.data(), 24);
    EXPECT_EQ(got[0], -1);
    EXPECT_EQ(got[2], int64_t{1} << 40);
  }
  {
    ProtoWriter w; // f16 in int32_data, and a scalar (no dims)
    w.intField(2, 10);
    w.packedInts(5, {0x3C00});
    FileTensor t;
    ASSERT_TRUE(parseTensorProto(w.out, &t, &error)) << error;
    EXPECT_TRUE(t.shape.empty());
    EXPECT_EQ(t.bytes, (std::vector<uint8_t>{0x00, 0x3C}));
  }
  {
    ProtoWriter w; // UINT16 (how ONNX 1.12's test data stores bfloat16)
    w.packedInts(1, {2});
    w.intField(2, 4);
    w.packedInts(5, {0x3F80, 0xC000});
    FileTensor t;
    ASSERT_TRUE(parseTensorProto(w.out, &t, &error)) << error;
    EXPECT_EQ(t.compatible, (std::vector<mptrt_dtype>{MPTRT_BF16, MPTRT_F16}));
    EXPECT_EQ(t.bytes, (std::vector<uint8_t>{0x80, 0x3F, 0x00, 0xC0}));
  }
  {
    ProtoWriter w; // bool and an int32 with a negative value; unknown fields skipped
    w.packedInts(1, {2});
    w.intField(2, 9);
    w.stringField(12, "doc string");
    w.packedInts(5, {1, 0});
    FileTensor t;
    ASSERT_TRUE(parseTensorProto(w.out, &t, &error)) << error;
    EXPECT_EQ(t.bytes, (std::vector<uint8_t>{1, 0}));
    ProtoWriter v;
    v.packedInts(1, {1});
    v.intField(2, 6);
    v.packedInts(5, {-5});
    ASSERT_TRUE(parseTensorProto(v.out, &t, &error)) << error;
    int32_t got;
    std::memcpy(&got, t.bytes.data(), 4);
    EXPECT_EQ(got, -5);
  }
}

TEST(TensorProto, Rejections) {
  auto expectRejected = [](const ProtoWriter &w, const char *message) {
    FileTensor t;
    std::string error;
    EXPECT_FALSE(parseTensorProto(w.out, &t, &error));
    EXPECT_NE(error.find(message), std::string::npos) << error;
  };
  ProtoWriter a;
  a.packedInts(1, {2});
  a.intField(2, 11); // DOUBLE
  expectRejected(a, "unsupported TensorProto data_type 11");
  ProtoWriter b;
  b.packedInts(1, {3});
  b.intField(2, 1);
  b.packedFloats(4, {1, 2});
  expectRejected(b, "float_data holds 2 values, its dims need 3");
  ProtoWriter c;
  c.packedInts(1, {2});
  c.intField(2, 1);
  c.bytesField(9, "abc", 3);
  expectRejected(c, "raw_data has 3 bytes");
  ProtoWriter d;
  d.intField(2, 1);
  d.intField(14, 1);
  expectRejected(d, "external data");
  ProtoWriter e;
  e.packedInts(1, {-2});
  e.intField(2, 1);
  expectRejected(e, "negative dimension");
  ProtoWriter f;
  f.key(8, 0); // name with the wrong wire type
  f.varint(3);
  expectRejected(f, "field 8");
}

// Tests every truncation of a valid TensorProto: rejected or (where the cut
// falls between fields) parsed, never a crash.
TEST(TensorProto, TruncatedAtEveryLength) {
  ProtoWriter w;
  w.packedInts(1, {2, 3});
  w.intField(2, 1);
  w.stringField(8, "x");
  std::vector<float> v(6, 1.0f);
  w.bytesField(9, v.data(), 24);
  for (size_t n = 0; n < w.out.size(); ++n) {
    FileTensor t;
    std::string error;
    std::vector<uint8_t> prefix(w.out.begin(), w.out.begin() + n);
    if (!parseTensorProto(prefix, &t, &error)) {
      EXPECT_FALSE(error.empty());
    }
  }
}

} // namespace

// Tests the bounded reader of data and checkpoint files (issue 29, finding
// 4: `/dev/zero` as data was read until std::bad_alloc or the OOM killer,
// and a file was read into a doubling buffer): only regular files, no
// larger than the limit (the machine's memory), read to their exact size.
TEST(ReadRegularFile, RefusesDevicesAndOversizedFiles) {
  std::vector<uint8_t> bytes;
  std::string error;
  EXPECT_FALSE(mptrt::readRegularFile("/dev/zero", &bytes, &error));
  EXPECT_EQ(error, "'/dev/zero' is not a regular file");
  const std::string path = ::testing::TempDir() + "/eleven.bin";
  {
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite("hello world", 1, 11, f);
    std::fclose(f);
  }
  EXPECT_FALSE(mptrt::readRegularFile(path, &bytes, &error, /*limit=*/10));
  EXPECT_EQ(error,
            "'" + path + "' has 11 bytes, more than the 10 bytes of memory this process can use");
  ASSERT_TRUE(mptrt::readRegularFile(path, &bytes, &error, /*limit=*/11)) << error;
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "hello world");
  EXPECT_EQ(bytes.capacity(), 11u);
  FileTensor t;
  EXPECT_FALSE(readTensorFile("/dev/zero", &t, &error));
  EXPECT_EQ(error, "'/dev/zero' is not a regular file");
}

namespace {

/// Writes `head` and extends the file, sparsely, to `size` bytes.
void writeSparse(const std::string &path, const std::vector<uint8_t> &head, uint64_t size) {
  FILE *f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(head.data(), 1, head.size(), f), head.size());
  std::fclose(f);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(size)), 0);
}

/// Runs `body` in a child and returns its exit status (or 100 + the signal
/// that killed it); `*peakMiB` is the child's peak resident memory.
int inChild(const std::function<int()> &body, long *peakMiB) {
  const pid_t pid = ::fork();
  if (pid == 0)
    ::_exit(body());
  int status = 0;
  struct rusage usage = {};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid)
    return -1;
  *peakMiB = usage.ru_maxrss / 1024;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

} // namespace

// Issue 29, finding 4: a .npy file is read header first. A 1 GiB file
// whose header declares 24 bytes of data is refused for the mismatch before
// anything is allocated for the data; so is a well-formed 1 GiB file that
// the caller's check refuses from its header (mpt-run's check against the
// plan). The files are sparse; the reader's peak memory shows that their
// data were never read: reading the file whole first, as the reader did,
// took a GiB.
TEST(Npy, HeaderIsCheckedBeforeTheDataAreRead) {
  const std::string liar = ::testing::TempDir() + "/liar.npy";
  const std::vector<uint8_t> head =
      npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", {});
  writeSparse(liar, head, 1ull << 30);
  long peakMiB = 0;
  const int lied = inChild(
      [&] {
        FileTensor t;
        std::string error;
        if (readTensorFile(liar, &t, &error))
          return 1;
        const std::string expected = liar + ": .npy data has " +
                                     std::to_string((1ull << 30) - head.size()) +
                                     " bytes, the header's shape and dtype need 24";
        return error == expected ? 0 : 2;
      },
      &peakMiB);
  EXPECT_EQ(lied, 0) << "1: read, 2: another message";
  EXPECT_LT(peakMiB, 256) << "the lying file's data were read";

  const std::string big = ::testing::TempDir() + "/big.npy";
  const std::vector<uint8_t> bigHead =
      npyWithHeader(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (268435456,), }", {});
  writeSparse(big, bigHead, bigHead.size() + (1ull << 30));
  const int refused = inChild(
      [&] {
        FileTensor t;
        std::string error;
        auto fits = [](const FileTensor &header, std::string *why) {
          if (header.shape == std::vector<int64_t>{2, 3})
            return true;
          *why = "not [2, 3]";
          return false;
        };
        if (readTensorFile(big, &t, &error, fits))
          return 1;
        return error == big + ": not [2, 3]" && t.bytes.empty() ? 0 : 2;
      },
      &peakMiB);
  EXPECT_EQ(refused, 0) << "1: read, 2: another message";
  EXPECT_LT(peakMiB, 256) << "the refused file's data were read";
  std::remove(liar.c_str());
  std::remove(big.c_str());
}
