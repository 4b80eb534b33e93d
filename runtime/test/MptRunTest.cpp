//===- MptRunTest.cpp - the mpt-run tool end to end ----------------------===//
//
// Writes plans and tensor files, runs the real mpt-run binary and checks
// its exit status, its messages and the .npy files it writes.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "MlpPlan.h"
#include "PlanBuilder.h"
#include "TensorFile.h"
#include "TensorFileTest.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

using namespace mptrt;
using namespace mptrt::test;
namespace fs = std::filesystem;

namespace {

class MptRunTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir =
        fs::path(::testing::TempDir()) /
        ("mpt_run_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
         "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string &name) const { return (dir / name).string(); }

  void writeFile(const std::string &name, const std::vector<uint8_t> &bytes) const {
    std::ofstream(path(name), std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  }

  /// Runs mpt-run with `args`; returns its exit status, output in `log`.
  int run(const std::string &args) {
    const std::string logPath = path("log.txt");
    const std::string cmd = std::string(MPT_RUN_PATH) + " " + args + " > " + logPath + " 2>&1";
    const int status = std::system(cmd.c_str());
    std::ifstream in(logPath);
    std::stringstream ss;
    ss << in.rdbuf();
    log = ss.str();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  tools::FileTensor readNpy(const std::string &name) {
    tools::FileTensor t;
    std::string error;
    EXPECT_TRUE(tools::readTensorFile(path(name), &t, &error)) << error;
    return t;
  }

  fs::path dir;
  std::string log;
};

// Tests the MLP plan with an .npy input: the output file matches float64.
TEST_F(MptRunTest, MlpWithNpyInput) {
  Mlp mlp(4, 6, 10, 3, 21);
  writeFile("mlp.mptp", plan::serializePlan(mlp.plan()));
  std::vector<float> x(24);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(float(i)) * 2;
  writeFile("x.npy", tools::encodeNpy(MPTRT_F32, {4, 6}, x.data(), x.size() * 4));
  ASSERT_EQ(run(path("mlp.mptp") + " --entry forward --input x=" + path("x.npy") +
                " --output-dir " + path("out")),
            0)
      << log;
  EXPECT_NE(log.find("entry point 'forward': wall time"), std::string::npos) << log;
  EXPECT_NE(log.find("peak arena 384 bytes"), std::string::npos) << log;
  tools::FileTensor y = readNpy("out/y.npy");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{4, 3}));
  HostTensor got(DType::F32, {4, 3});
  got.bytes = y.bytes;
  EXPECT_TRUE(closeTo(got, mlp.reference(x), 1e-5, 1e-5));
}

// Tests --list: every binding with its type, the arena size, and no run.
TEST_F(MptRunTest, List) {
  Mlp mlp(4, 6, 10, 3, 21);
  writeFile("mlp.mptp", plan::serializePlan(mlp.plan()));
  ASSERT_EQ(run(path("mlp.mptp") + " --list"), 0) << log;
  EXPECT_EQ(log, "entry point 'forward': arena 384 bytes\n"
                 "  input  x: f32 [4, 6]\n"
                 "  param  w1: f32 [6, 10]\n"
                 "  param  b1: f32 [10]\n"
                 "  param  w2: f32 [10, 3]\n"
                 "  param  b2: f32 [3]\n"
                 "  output y: f32 [4, 3]\n");
}

// Tests --list-devices: one line per backend of the build, the CPU backend
// available with its kernel count, the one auto picks, and no plan needed.
TEST_F(MptRunTest, ListDevices) {
  ASSERT_EQ(run("--list-devices"), 0) << log;
  size_t kinds = 0;
  ASSERT_EQ(mptrt_backend_kind_count("cpu", &kinds), MPTRT_OK);
  EXPECT_NE(log.find("cpu  available  host CPU, "), std::string::npos) << log;
  EXPECT_NE(log.find("(" + std::to_string(kinds) + " kernel kinds)\n"), std::string::npos) << log;
  // auto picks the CUDA backend where it can run, else the CPU backend.
  int cuda = 0;
  const char *detail = nullptr;
  const bool hasCuda = mptrt_backend_probe("cuda", &cuda, &detail) == MPTRT_OK && cuda;
  EXPECT_NE(log.find(hasCuda ? "auto -> cuda\n" : "auto -> cpu\n"), std::string::npos) << log;
}

// Tests --device: auto and cpu run the plan; an unknown backend is an error
// (exit 1) that lists the build's backends.
TEST_F(MptRunTest, DeviceChoice) {
  Mlp mlp(4, 6, 10, 3, 21);
  writeFile("mlp.mptp", plan::serializePlan(mlp.plan()));
  std::vector<float> x(24, 0.5f);
  writeFile("x.npy", tools::encodeNpy(MPTRT_F32, {4, 6}, x.data(), x.size() * 4));
  const std::string args =
      path("mlp.mptp") + " --input x=" + path("x.npy") + " --output-dir " + path("out");
  EXPECT_EQ(run(args + " --device auto"), 0) << log;
  EXPECT_EQ(run(args + " --device cpu"), 0) << log;
  EXPECT_EQ(run(args + " --device tpu"), 1) << log;
  std::string names; // the backends of this build, as the message lists them
  for (size_t i = 0; i < mptrt_backend_count(); ++i)
    names += (i ? ", " : "") + std::string(mptrt_backend_name(i));
  EXPECT_NE(log.find("unknown backend 'tpu' (this build has: " + names + "; or auto)"),
            std::string::npos)
      << log;
}

// Tests a .pb input, a --param override, and --entry defaulting to the
// plan's only entry point.
TEST_F(MptRunTest, TensorProtoInputAndParamOverride) {
  Mlp mlp(2, 3, 5, 2, 22);
  writeFile("mlp.mptp", plan::serializePlan(mlp.plan()));
  ProtoWriter pb;
  pb.packedInts(1, {2, 3});
  pb.intField(2, 1);
  pb.stringField(8, "x");
  pb.packedFloats(4, {1, 2, 3, -1, -2, -3});
  writeFile("x.pb", pb.out);
  std::vector<float> zeros(10, 0.0f);
  writeFile("w2.npy", tools::encodeNpy(MPTRT_F32, {5, 2}, zeros.data(), 40));
  ASSERT_EQ(run(path("mlp.mptp") + " --input x=" + path("x.pb") + " --param w2=" + path("w2.npy") +
                " --output-dir " + path("out")),
            0)
      << log;
  tools::FileTensor y = readNpy("out/y.npy");
  const float *v = reinterpret_cast<const float *>(y.bytes.data());
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(v[i], mlp.b2[i % 2]);
}

// Tests bf16 input and output through '<V2' files, and the file name of
// an output whose name has path characters.
TEST_F(MptRunTest, Bf16FilesAndOutputNames) {
  PlanBuilder b;
  uint32_t x = b.input("x", DType::BF16, {3});
  b.kernel("neg", {x}, {b.output("model/out:0", DType::BF16, {3})});
  b.entry("main");
  writeFile("neg.mptp", b.bytes());
  const uint16_t bits[3] = {0x3F80, 0xC000, 0x0000}; // 1, -2, 0
  writeFile("x.npy", tools::encodeNpy(MPTRT_BF16, {3}, bits, 6));
  ASSERT_EQ(run(path("neg.mptp") + " --input x=" + path("x.npy") + " --output-dir " + path("o")), 0)
      << log;
  tools::FileTensor y = readNpy("o/model_out_0.npy");
  EXPECT_EQ(y.typeName, "'<V2'");
  const uint16_t *v = reinterpret_cast<const uint16_t *>(y.bytes.data());
  EXPECT_EQ(v[0], 0xBF80);
  EXPECT_EQ(v[1], 0x4000);
  EXPECT_EQ(v[2], 0x8000);
}

// Tests --warmup and --repeat on a plan that counts its runs (c += 1 in
// place, y = c): the outputs are the last run's, after warmup + repeat runs,
// and --repeat > 1 prints the min / median / mean line.
TEST_F(MptRunTest, WarmupAndRepeat) {
  PlanBuilder b;
  const float zero = 0.0f;
  uint32_t c = b.param("c", DType::F32, {1}, &zero, sizeof(zero));
  uint32_t one = b.input("one", DType::F32, {1});
  b.kernel("add", {c, one}, {c});
  b.kernel("mul", {c, one}, {b.output("y", DType::F32, {1})});
  b.entry("count");
  writeFile("count.mptp", b.bytes());
  const float onev = 1.0f;
  writeFile("one.npy", tools::encodeNpy(MPTRT_F32, {1}, &onev, 4));
  const std::string args =
      path("count.mptp") + " --input one=" + path("one.npy") + " --output-dir " + path("out");
  auto count = [&] {
    tools::FileTensor y = readNpy("out/y.npy");
    return y.bytes.size() == 4 ? *reinterpret_cast<const float *>(y.bytes.data()) : -1.0f;
  };

  ASSERT_EQ(run(args), 0) << log;
  EXPECT_EQ(count(), 1.0f);
  EXPECT_NE(log.find("entry point 'count': wall time "), std::string::npos) << log;
  EXPECT_EQ(log.find("median"), std::string::npos) << log;

  // One timed run after warmup: still the single-run line.
  ASSERT_EQ(run(args + " --warmup 3 --repeat 1"), 0) << log;
  EXPECT_EQ(count(), 4.0f);
  EXPECT_EQ(log.find("median"), std::string::npos) << log;

  ASSERT_EQ(run(args + " --repeat 5 --warmup 2"), 0) << log;
  EXPECT_EQ(count(), 7.0f);
  const std::string prefix = "entry point 'count': wall time min ";
  const size_t at = log.find(prefix);
  ASSERT_NE(at, std::string::npos) << log;
  double mn = -1, med = -1, mean = -1;
  int runs = -1, warm = -1;
  unsigned long long peak = 1;
  ASSERT_EQ(std::sscanf(log.c_str() + at + prefix.size(),
                        "%lf ms, median %lf ms, mean %lf ms over %d runs (%d warmup), "
                        "peak arena %llu bytes",
                        &mn, &med, &mean, &runs, &warm, &peak),
            6)
      << log;
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(warm, 2);
  EXPECT_EQ(peak, 0u);
  EXPECT_GE(mn, 0.0);
  EXPECT_LE(mn, med);
  EXPECT_LE(mn, mean);

  // An even count, no warmup.
  ASSERT_EQ(run(args + " --repeat 2"), 0) << log;
  EXPECT_EQ(count(), 2.0f);
  EXPECT_NE(log.find("over 2 runs (0 warmup)"), std::string::npos) << log;
}

// Tests the failures: each exits non-zero with a clear message.
TEST_F(MptRunTest, Errors) {
  Mlp mlp(2, 3, 4, 2, 23);
  writeFile("mlp.mptp", plan::serializePlan(mlp.plan()));
  std::vector<float> x(6, 1.0f);
  writeFile("x.npy", tools::encodeNpy(MPTRT_F32, {2, 3}, x.data(), 24));
  writeFile("x_t.npy", tools::encodeNpy(MPTRT_F32, {3, 2}, x.data(), 24));
  std::vector<int32_t> xi(6, 1);
  writeFile("x_i.npy", tools::encodeNpy(MPTRT_I32, {2, 3}, xi.data(), 24));
  writeFile("junk.npy", {1, 2, 3, 4});
  std::vector<uint8_t> corrupt = plan::serializePlan(mlp.plan());
  corrupt.resize(corrupt.size() - 1);
  writeFile("corrupt.mptp", corrupt);
  const std::string plan = path("mlp.mptp") + " --output-dir " + path("out");
  struct {
    std::string args;
    int status;
    const char *message;
  } cases[] = {
      {plan, 1, "needs --input x=FILE (f32 [2, 3])"},
      {plan + " --input y=" + path("x.npy"), 1, "has no input named 'y' (its inputs: 'x')"},
      {plan + " --input x=" + path("x_t.npy"), 1,
       "holds '<f4' [3, 2], the plan expects f32 [2, 3]"},
      {plan + " --input x=" + path("x_i.npy"), 1,
       "holds '<i4' [2, 3], the plan expects f32 [2, 3]"},
      {plan + " --input x=" + path("junk.npy"), 1, "bad magic"},
      {plan + " --input x=" + path("missing.npy"), 1, "cannot open"},
      {plan + " --param w9=" + path("x.npy"), 1, "has no parameter named 'w9'"},
      {plan + " --entry backward", 1, "no entry point named 'backward'"},
      {path("corrupt.mptp"), 1, "truncated or padded file"},
      {path("nothing.mptp"), 1, "cannot open"},
      {"", 2, "no plan given"},
      {plan + " --frobnicate", 2, "unknown option '--frobnicate'"},
      {plan + " --input x", 2, "needs NAME=FILE"},
      {plan + " --repeat 0", 2,
       "option '--repeat' needs a whole number from 1 to 1000000000, not '0'"},
      {plan + " --repeat -2", 2, "option '--repeat' needs a whole number from 1"},
      {plan + " --repeat 3x", 2, "option '--repeat' needs a whole number from 1"},
      {plan + " --repeat 1e3", 2, "option '--repeat' needs a whole number from 1"},
      {plan + " --repeat 99999999999", 2, "option '--repeat' needs a whole number from 1"},
      {plan + " --repeat ''", 2, "option '--repeat' needs a whole number from 1"},
      {plan + " --warmup -1", 2,
       "option '--warmup' needs a whole number from 0 to 1000000000, not '-1'"},
      {plan + " --warmup many", 2, "option '--warmup' needs a whole number from 0"},
      {plan + " --repeat", 2, "option '--repeat' needs a value"},
      {plan + " --warmup", 2, "option '--warmup' needs a value"},
  };
  for (auto &c : cases) {
    EXPECT_EQ(run(c.args), c.status) << c.args << "\n" << log;
    EXPECT_NE(log.find(c.message), std::string::npos) << c.args << "\n" << log;
  }
}

// Tests plans that are broken or absurd: mpt-run exits 1 with one message
// that names the file and the tensor, kernel or entry point at fault.
TEST_F(MptRunTest, BadPlans) {
  using plan::DType;
  /// y = relu(relu(x)) through a temporary; x, t and y are f32 [2, 3].
  auto base = [] {
    PlanBuilder b;
    const uint32_t x = b.input("x", DType::F32, {2, 3});
    const uint32_t t = b.temp(DType::F32, {2, 3});
    b.kernel("relu", {x}, {t});
    b.kernel("relu", {t}, {b.output("y", DType::F32, {2, 3})});
    b.entry("main");
    return b.plan;
  };
  const std::vector<uint8_t> good = plan::serializePlan(base());
  writeFile("png.mptp", {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
  std::vector<uint8_t> wrongMagic = good;
  wrongMagic[3] = 'X';
  writeFile("magic.mptp", wrongMagic);
  writeFile("short.mptp", std::vector<uint8_t>(good.begin(), good.begin() + 40));
  writeFile("cut.mptp", std::vector<uint8_t>(good.begin(), good.end() - 10));
  struct {
    std::string file;
    std::function<void(plan::Plan &)> damage;
  } damaged[] = {
      {"overflow.mptp", [](plan::Plan &p) { p.tensors[0].shape = {INT64_MAX, INT64_MAX}; }},
      {"overflow2.mptp",
       [](plan::Plan &p) { p.tensors[0].shape = {int64_t(1) << 32, int64_t(1) << 32, 4}; }},
      {"negative.mptp", [](plan::Plan &p) { p.tensors[1].shape = {2, -3}; }},
      {"arena.mptp", [](plan::Plan &p) { p.tensors[1].offset = 64; }},
      // 2^47 bytes for each tensor: a well-formed plan no machine here can
      // load.
      {"absurd.mptp",
       [](plan::Plan &p) {
         for (int id : {0, 1, 2})
           p.tensors[id].shape = {2, int64_t(1) << 44};
         p.entries[0].arenaBytes = uint64_t(1) << 47;
       }},
      // A 2^47-byte arena alone: it was allocated at the first run, after
      // the load had allocated everything else; now the load refuses it.
      {"arena-only.mptp", [](plan::Plan &p) { p.entries[0].arenaBytes = uint64_t(1) << 47; }},
  };
  for (auto &d : damaged) {
    plan::Plan p = base();
    d.damage(p);
    writeFile(d.file, plan::serializePlan(p));
  }
  // A temporary whose bytes overlap, but are not, the operand its kernel
  // reads: u [64, 192) against t [0, 128).
  {
    PlanBuilder b;
    const uint32_t x = b.input("x", DType::F32, {4, 8});
    const uint32_t t = b.temp(DType::F32, {4, 8});
    b.kernel("relu", {x}, {t});
    const uint32_t u = b.temp(DType::F32, {4, 8});
    b.plan.tensors[u].offset = 64;
    b.kernel("add", {t, t}, {u});
    b.kernel("relu", {u}, {b.output("y", DType::F32, {4, 8})});
    b.entry("main");
    writeFile("overlap.mptp", plan::serializePlan(b.plan));
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"png.mptp", "plan: 8 bytes is shorter than the 64-byte header"},
      {"magic.mptp", "plan: bad magic (not an MPT plan file)"},
      {"short.mptp", "plan: 40 bytes is shorter than the 64-byte header"},
      {"cut.mptp", "(truncated or padded file)"},
      {"overflow.mptp", "plan: tensor 0 'x': byte size overflows 2^48"},
      {"overflow2.mptp", "plan: tensor 0 'x': byte size overflows 2^48"},
      {"negative.mptp", "plan: tensor 1: negative dimension -3"},
      {"arena.mptp", "plan: entry point 0 'main', kernel 0 (relu), tensor 1: bytes [64, 88) "
                     "exceed the arena of 64 bytes"},
      {"absurd.mptp", "plan: needs 422212465065984 bytes of cpu memory (named tensors "
                      "281474976710656, arenas 140737488355328, constants 0, workspace 0), "
                      "more than the "},
      {"arena-only.mptp", "arenas 140737488355328, constants 0, workspace 0), more than the "},
      {"overlap.mptp", "plan: kernel 1 (add): result tensor 2 overlaps operand tensor 1 "
                       "without being the same bytes of the same type"},
  };
  for (const auto &[file, message] : cases) {
    EXPECT_EQ(run(path(file) + " --input x=" + path("x.npy")), 1) << file << "\n" << log;
    EXPECT_NE(log.find("mpt-run: error: " + path(file) + ": "), std::string::npos) << file << "\n"
                                                                                   << log;
    EXPECT_NE(log.find(message), std::string::npos) << file << "\n" << log;
  }
}

} // namespace
