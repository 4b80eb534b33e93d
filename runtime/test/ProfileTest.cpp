//===- ProfileTest.cpp - per-kernel times and their summary --------------===//
//
// mptrt_run_profiled on the CPU (one time per kernel, each >= 0, adding up
// to the run's wall time), its errors, the same run on CUDA after replayed
// graphs (skipped without a GPU), and train::summarizeProfile on made-up
// times (exact sums, shares and order).
//
//===----------------------------------------------------------------------===//
#include "mptrt/train/Profile.h"
#include "KernelTestUtil.h"
#include "MlpPlan.h"
#include "PlanBuilder.h"
#include "mptrt.h"
#include "mptrt.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace mptrt {
namespace test {
namespace {

using DType = plan::DType;

/// Three kernels: a scalar copy, a large add (the slow one) and another
/// scalar copy. `n` sets the add's size.
std::vector<uint8_t> threeKernels(int64_t n) {
  PlanBuilder b;
  const float one = 1;
  const uint32_t s = b.param("s", DType::F32, {}, &one, 4);
  const uint32_t x = b.input("x", DType::F32, {n});
  const uint32_t t = b.temp(DType::F32, {});
  b.kernel("copy", {s}, {t});
  b.kernel("add", {x, x}, {b.output("y", DType::F32, {n})});
  b.kernel("copy", {t}, {b.output("z", DType::F32, {})});
  b.entry("step");
  return b.bytes();
}

// Tests one time per kernel of a CPU run: each >= 0, the large add the
// longest, and their sum the run's wall time less the little the run does
// before the first kernel and after the last (the host clock is read
// between kernels, so nothing between them is lost).
TEST(RunProfiled, CpuTimesAddUpToTheRun) {
  const int64_t n = 1 << 23; // 32 MiB: tens of milliseconds for x + x
  Model model;
  const std::vector<uint8_t> bytes = threeKernels(n);
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  const std::vector<float> x(n, 0.5f);
  ASSERT_TRUE(model.bindInput("x", MPTRT_F32, {n}, x)) << lastError();
  std::vector<mptrt_kernel_info> kernels;
  ASSERT_TRUE(model.entryKernels("step", &kernels)) << lastError();
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_STREQ(kernels[1].kind, "add");
  std::vector<double> ms(3, -1.0);
  ASSERT_TRUE(model.runProfiled("step", &ms)) << lastError(); // warm-up: touches the pages
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(model.runProfiled("step", &ms)) << lastError();
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    for (double t : ms)
      EXPECT_GE(t, 0.0);
    EXPECT_GT(ms[1], ms[0]);
    EXPECT_GT(ms[1], ms[2]);
    const double sum = std::accumulate(ms.begin(), ms.end(), 0.0);
    EXPECT_LE(sum, wall);
    EXPECT_GT(sum, 0.5) << "an add of 8M floats takes longer than half a millisecond";
    if (wall - sum < 0.1 * wall + 1.0)
      break; // close to the wall time; a preempted attempt tries again
    EXPECT_LT(attempt, 2) << "kernels " << sum << " ms, wall " << wall << " ms";
  }
  std::vector<float> y;
  ASSERT_TRUE(model.readOutput("y", &y));
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[n - 1], 1.0f);
}

// Tests the errors: a count other than the entry point's kernels, no such
// entry point, null times, a position past the end.
TEST(RunProfiled, Errors) {
  Model model;
  const std::vector<uint8_t> bytes = threeKernels(4);
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  const std::vector<float> x(4, 1.0f);
  ASSERT_TRUE(model.bindInput("x", MPTRT_F32, {4}, x)) << lastError();
  double ms[4];
  EXPECT_EQ(mptrt_run_profiled(model.handle(), "step", ms, 4), MPTRT_ERROR);
  EXPECT_EQ(lastError(), "entry point 'step' has 3 kernels, room for 4 times was given");
  EXPECT_EQ(mptrt_run_profiled(model.handle(), "nope", ms, 3), MPTRT_ERROR);
  EXPECT_NE(lastError().find("no entry point named 'nope'"), std::string::npos);
  EXPECT_EQ(mptrt_run_profiled(model.handle(), "step", nullptr, 3), MPTRT_ERROR);
  mptrt_kernel_info info;
  EXPECT_EQ(mptrt_entry_kernel(model.handle(), "step", 3, &info), MPTRT_ERROR);
  EXPECT_EQ(mptrt_entry_kernel(model.handle(), "step", 2, &info), MPTRT_OK);
  EXPECT_STREQ(info.kind, "copy");
  EXPECT_EQ(mptrt_run_profiled(model.handle(), "step", ms, 3), MPTRT_OK) << lastError();
}

// Tests a profiled run on CUDA between replayed graphs: it computes what
// the plain runs compute, bit for bit, gives one time >= 0 per kernel whose
// sum is at most the wall time around it, and plain runs replay after it.
TEST(RunProfiled, CudaBetweenReplays) {
  const std::string why = cudaUnusableReason();
  if (!why.empty())
    GTEST_SKIP() << why;
  Mlp mlp(16, 32, 64, 8, 5);
  const std::vector<uint8_t> bytes = plan::serializePlan(mlp.plan());
  Model model;
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cuda")) << lastError();
  const std::vector<float> x = randomFloats(16 * 32, 3);
  ASSERT_TRUE(model.bindInput("x", MPTRT_F32, {16, 32}, x)) << lastError();
  std::vector<float> plain, profiled, after;
  for (int run = 0; run < 3; ++run) // enqueued, recorded, replayed
    ASSERT_TRUE(model.run("forward")) << lastError();
  ASSERT_TRUE(model.readOutput("y", &plain));
  std::vector<mptrt_kernel_info> kernels;
  ASSERT_TRUE(model.entryKernels("forward", &kernels)) << lastError();
  std::vector<double> ms(kernels.size(), -1.0);
  for (int run = 0; run < 2; ++run) { // events created, then reused
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(model.runProfiled("forward", &ms)) << lastError();
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    for (double t : ms)
      EXPECT_GE(t, 0.0);
    const double sum = std::accumulate(ms.begin(), ms.end(), 0.0);
    EXPECT_GT(sum, 0.0);
    EXPECT_LE(sum, wall + 0.01); // event resolution is about half a microsecond
  }
  ASSERT_TRUE(model.readOutput("y", &profiled));
  ASSERT_TRUE(model.run("forward")) << lastError();
  ASSERT_TRUE(model.readOutput("y", &after));
  EXPECT_EQ(profiled, plain);
  EXPECT_EQ(after, plain);
}

train::ProfiledKernel k(const char *kind, const char *node, const char *phase) {
  return {0, kind, node, phase};
}

// Tests the summary on made-up times (multiples of 1/4: exact sums):
// kinds and (node, phase) pairs each add their kernels, shares are of the
// total, rows sort by ms with ties by name, a node lists its kinds sorted.
TEST(SummarizeProfile, SumsSharesAndOrder) {
  const std::vector<train::ProfiledKernel> kernels = {
      k("matmul", "fc1", "forward"),  k("add", "fc1", "forward"),     k("relu", "act", "forward"),
      k("matmul", "fc1", "backward"), k("matmul", "fc1", "backward"), k("copy", "", "unknown"),
      k("add", "bias", "forward")};
  const std::vector<double> ms = {2.0, 0.5, 0.25, 3.0, 1.75, 0.25, 0.25};
  const train::ProfileSummary s = train::summarizeProfile(kernels, ms);
  EXPECT_EQ(s.kernelMs, 8.0);

  ASSERT_EQ(s.byKind.size(), 4u);
  const char *kindOrder[] = {"matmul", "add", "copy", "relu"}; // copy, relu tie at 0.25
  const double kindMs[] = {6.75, 0.75, 0.25, 0.25};
  const uint64_t kindCount[] = {3, 2, 1, 1};
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(kindOrder[i]);
    EXPECT_EQ(s.byKind[i].kind, kindOrder[i]);
    EXPECT_EQ(s.byKind[i].ms, kindMs[i]);
    EXPECT_EQ(s.byKind[i].kernels, kindCount[i]);
    EXPECT_EQ(s.byKind[i].share, kindMs[i] / 8.0);
  }

  ASSERT_EQ(s.byNode.size(), 5u);
  // ("", unknown), (act, forward), (bias, forward) tie at 0.25: by node name.
  const char *nodeOrder[][2] = {{"fc1", "backward"},
                                {"fc1", "forward"},
                                {"", "unknown"},
                                {"act", "forward"},
                                {"bias", "forward"}};
  const double nodeMs[] = {4.75, 2.5, 0.25, 0.25, 0.25};
  const uint64_t nodeCount[] = {2, 2, 1, 1, 1};
  for (size_t i = 0; i < 5; ++i) {
    SCOPED_TRACE(std::string(nodeOrder[i][0]) + "/" + nodeOrder[i][1]);
    EXPECT_EQ(s.byNode[i].node, nodeOrder[i][0]);
    EXPECT_EQ(s.byNode[i].phase, nodeOrder[i][1]);
    EXPECT_EQ(s.byNode[i].ms, nodeMs[i]);
    EXPECT_EQ(s.byNode[i].kernels, nodeCount[i]);
    EXPECT_EQ(s.byNode[i].share, nodeMs[i] / 8.0);
  }
  EXPECT_EQ(s.byNode[1].kinds, (std::vector<std::string>{"add", "matmul"}));
  EXPECT_EQ(s.byNode[0].kinds, (std::vector<std::string>{"matmul"}));
}

// Tests that all-zero times give zero shares, not NaN.
TEST(SummarizeProfile, ZeroTimes) {
  const train::ProfileSummary s =
      train::summarizeProfile({k("add", "a", "forward"), k("mul", "a", "forward")}, {0.0, 0.0});
  ASSERT_EQ(s.byKind.size(), 2u);
  EXPECT_EQ(s.byKind[0].kind, "add");
  EXPECT_EQ(s.byKind[0].share, 0.0);
  ASSERT_EQ(s.byNode.size(), 1u);
  EXPECT_EQ(s.byNode[0].kernels, 2u);
  EXPECT_EQ(s.byNode[0].share, 0.0);
}

} // namespace
} // namespace test
} // namespace mptrt
