//===- CudaReplayTest.cpp - CUDA graphs: replayed runs compute the same ---===//
//
// The CUDA backend records an entry point's second plain run into a CUDA
// graph and replays it from then on (docs/runtime.md, "Replaying a step").
// A replay must read what was bound since (new inputs) and what earlier
// runs left (parameters updated in place), exactly as a run that enqueues
// every kernel does. Each test runs a plan five times (run 1 enqueues, run
// 2 is recorded and replayed, runs 3-5 are replays) on CUDA with graphs,
// on CUDA without (MPTRT_CUDA_GRAPHS=0) and on the CPU, and compares.
//
// Needs a GPU: skipped, saying why, without one.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "MlpPlan.h"
#include "PlanBuilder.h"
#include "mptrt.h"
#include "mptrt.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace mptrt {
namespace test {
namespace {

/// Loads `bytes` on `backend`, with CUDA graphs on or off.
bool load(Model &model, const std::vector<uint8_t> &bytes, const char *backend, bool graphs) {
  ::setenv("MPTRT_CUDA_GRAPHS", graphs ? "1" : "0", 1);
  const bool ok = model.loadMemory(bytes.data(), bytes.size(), backend);
  ::unsetenv("MPTRT_CUDA_GRAPHS");
  return ok;
}

// Tests a forward plan whose input is rebound before every run: each
// replay must see the new input. Graphs and no graphs agree bit for bit
// (the same kernels, the same cuBLASLt algorithms); both agree with the
// CPU to the matmul tolerance.
TEST(CudaReplay, NewInputsEveryRun) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  Mlp mlp(16, 32, 64, 8, 5);
  const std::vector<uint8_t> bytes = plan::serializePlan(mlp.plan());
  Model graphs, plain, cpu;
  ASSERT_TRUE(load(graphs, bytes, "cuda", true)) << lastError();
  ASSERT_TRUE(load(plain, bytes, "cuda", false)) << lastError();
  ASSERT_TRUE(load(cpu, bytes, "cpu", false)) << lastError();
  for (unsigned run = 0; run < 5; ++run) {
    SCOPED_TRACE("run " + std::to_string(run + 1));
    const std::vector<float> x = randomFloats(16 * 32, 100 + run);
    std::vector<float> y[3];
    Model *models[3] = {&graphs, &plain, &cpu};
    for (int m = 0; m < 3; ++m) {
      ASSERT_TRUE(models[m]->bindInput("x", MPTRT_F32, {16, 32}, x)) << lastError();
      ASSERT_TRUE(models[m]->run("forward")) << lastError();
      ASSERT_TRUE(models[m]->readOutput("y", &y[m])) << lastError();
    }
    EXPECT_EQ(y[0], y[1]);
    HostTensor got(DType::F32, {16, 8});
    std::memcpy(got.bytes.data(), y[0].data(), y[0].size() * 4);
    EXPECT_TRUE(closeTo(got, mlp.reference(x), 1e-5, 1e-5));
  }
}

// Tests a plan that updates its parameter in place (w -= lr * g): each
// replay must start from what the previous run left, so after five runs w
// has moved five times, bit for bit as on the CPU (mul and sub are exact).
TEST(CudaReplay, ParametersUpdatedInPlace) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  PlanBuilder b;
  const std::vector<float> w0 = randomFloats(1000, 7);
  const float lr = 0.125f;
  const uint32_t w = b.param("w", DType::F32, {1000}, w0.data(), w0.size() * 4);
  const uint32_t l = b.param("lr", DType::F32, {}, &lr, sizeof(lr));
  const uint32_t g = b.input("g", DType::F32, {1000});
  const uint32_t s = b.temp(DType::F32, {1000});
  b.kernel("mul", {g, l}, {s});
  b.kernel("sub", {w, s}, {w});
  b.entry("sgd");
  const std::vector<uint8_t> bytes = b.bytes();
  Model graphs, cpu;
  ASSERT_TRUE(load(graphs, bytes, "cuda", true)) << lastError();
  ASSERT_TRUE(load(cpu, bytes, "cpu", false)) << lastError();
  for (unsigned run = 0; run < 5; ++run) {
    const std::vector<float> grad = randomFloats(1000, 200 + run);
    for (Model *m : {&graphs, &cpu}) {
      ASSERT_TRUE(m->bindInput("g", MPTRT_F32, {1000}, grad)) << lastError();
      ASSERT_TRUE(m->run("sgd")) << lastError();
    }
  }
  std::vector<uint8_t> got, want;
  ASSERT_TRUE(graphs.readParameter("w", &got));
  ASSERT_TRUE(cpu.readParameter("w", &want));
  EXPECT_EQ(got, want);
  EXPECT_NE(want, std::vector<uint8_t>(reinterpret_cast<const uint8_t *>(w0.data()),
                                       reinterpret_cast<const uint8_t *>(w0.data()) + 4000));
}

// Tests a data-dependent error in a replay: a gather index out of range at
// run 4 fails that run with the index, its position and the bound; run 5,
// with good indices, replays again and succeeds.
TEST(CudaReplay, ErrorInAReplay) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  PlanBuilder b;
  const uint32_t data = b.input("data", DType::F32, {3, 2});
  const uint32_t idx = b.input("idx", DType::I64, {2});
  b.kernel("gather", {data, idx}, {b.output("y", DType::F32, {2, 2})});
  b.entry("main");
  const std::vector<uint8_t> bytes = b.bytes();
  Model model;
  ASSERT_TRUE(load(model, bytes, "cuda", true)) << lastError();
  const std::vector<float> d = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(model.bindInput("data", MPTRT_F32, {3, 2}, d));
  const std::vector<int64_t> good = {2, 0}, bad = {1, 7};
  for (int run = 1; run <= 5; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    ASSERT_TRUE(model.bindInput("idx", MPTRT_I64, {2}, run == 4 ? bad : good));
    if (run == 4) {
      EXPECT_FALSE(model.run("main"));
      EXPECT_NE(lastError().find("index 7 at position 1 is outside [-3, 3)"), std::string::npos)
          << lastError();
      continue;
    }
    ASSERT_TRUE(model.run("main")) << lastError();
    std::vector<float> y;
    ASSERT_TRUE(model.readOutput("y", &y));
    EXPECT_EQ(y, (std::vector<float>{5, 6, 1, 2}));
  }
}

} // namespace
} // namespace test
} // namespace mptrt
