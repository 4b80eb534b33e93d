//===- FiniteCheckTest.cpp - mptrt_run_checked --------------------------===//
//
// A checked run (docs/runtime.md, "Finding the first non-finite kernel")
// names the first kernel whose result holds an inf or a NaN, with the
// origin the plan gives it, and otherwise computes what mptrt_run computes.
//
//===----------------------------------------------------------------------===//
#include "PlanBuilder.h"
#include "mptrt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace mptrt;
using mptrt::test::PlanBuilder;
using plan::DType;

namespace {

/// x -> relu ("act", forward) -> square ("sq", backward) -> relu ("out")
/// -> y, all f32 [4]: the square of a finite x above 2^64 overflows.
std::vector<uint8_t> squarePlan() {
  PlanBuilder b;
  uint32_t x = b.input("x", DType::F32, {4});
  uint32_t a = b.temp(DType::F32, {4});
  uint32_t s = b.temp(DType::F32, {4});
  uint32_t y = b.output("y", DType::F32, {4});
  uint32_t act = b.kernel("relu", {x}, {a});
  uint32_t sq = b.kernel("mul", {a, a}, {s});
  b.kernel("relu", {s}, {y});
  b.entry("main");
  b.plan.kernels[act].origin = "act";
  b.plan.kernels[act].phase = plan::Phase::Forward;
  b.plan.kernels[sq].origin = "sq";
  b.plan.kernels[sq].phase = plan::Phase::Backward;
  return b.bytes();
}

class FiniteCheck : public ::testing::Test {
protected:
  void SetUp() override {
    std::vector<uint8_t> bytes = squarePlan();
    ASSERT_EQ(mptrt_model_load_memory(bytes.data(), bytes.size(), "cpu", &model), MPTRT_OK)
        << mptrt_last_error();
  }
  void TearDown() override { mptrt_model_free(model); }
  void bind(std::vector<float> x) {
    const int64_t shape[1] = {4};
    ASSERT_EQ(mptrt_bind_input(model, "x", MPTRT_F32, shape, 1, x.data(), 16), MPTRT_OK);
  }
  std::vector<float> y() {
    std::vector<float> out(4);
    EXPECT_EQ(mptrt_read_output(model, "y", out.data(), 16), MPTRT_OK);
    return out;
  }
  mptrt_model *model = nullptr;
};

// Tests that the square of 1e30, finite in and inf out, is reported at the
// kernel that made it: its kind, origin, phase, output index and element.
TEST_F(FiniteCheck, NamesTheKernelThatOverflows) {
  bind({1, 2, 1e30f, 1e30f});
  mptrt_nonfinite first;
  ASSERT_EQ(mptrt_run_checked(model, "main", &first), MPTRT_OK) << mptrt_last_error();
  ASSERT_EQ(first.found, 1);
  EXPECT_EQ(first.kernel, 1u);
  EXPECT_EQ(first.position, 1u);
  EXPECT_EQ(first.result, 0u);
  EXPECT_EQ(first.element, 2u);
  EXPECT_STREQ(first.kind, "mul");
  EXPECT_STREQ(first.origin, "sq");
  EXPECT_STREQ(first.phase, "backward");
  // The run went on to the end: y is computed, as mptrt_run computes it.
  std::vector<float> checked = y();
  ASSERT_EQ(mptrt_run(model, "main"), MPTRT_OK);
  EXPECT_EQ(std::memcmp(checked.data(), y().data(), 16), 0);
  EXPECT_TRUE(std::isinf(checked[2]));
}

// Tests a checked run after an observed one (mpt-train --collect-ranges on
// a step that overflows: the observed step, then its checked rerun). The
// observer's host buffer once made the checked run skip its own set-up and
// index an empty per-tensor table (a segmentation fault in mpt-train).
TEST_F(FiniteCheck, AfterAnObservedRun) {
  bind({1, 2, 1e30f, 1e30f});
  int observed = 0;
  auto count = [](const mptrt_result_view *, void *user) { ++*static_cast<int *>(user); };
  ASSERT_EQ(mptrt_run_observed(model, "main", count, &observed), MPTRT_OK) << mptrt_last_error();
  EXPECT_EQ(observed, 3);
  mptrt_nonfinite first;
  ASSERT_EQ(mptrt_run_checked(model, "main", &first), MPTRT_OK) << mptrt_last_error();
  ASSERT_EQ(first.found, 1);
  EXPECT_EQ(first.kernel, 1u);
  EXPECT_EQ(first.element, 2u);
  EXPECT_STREQ(first.origin, "sq");
}

// Tests that a NaN in the input is reported at the first kernel (relu
// passes it on), and that a finite run reports nothing.
TEST_F(FiniteCheck, FirstKernelAndFiniteRun) {
  bind({1, std::numeric_limits<float>::quiet_NaN(), 3, 4});
  mptrt_nonfinite first;
  ASSERT_EQ(mptrt_run_checked(model, "main", &first), MPTRT_OK) << mptrt_last_error();
  ASSERT_EQ(first.found, 1);
  EXPECT_EQ(first.kernel, 0u);
  EXPECT_EQ(first.element, 1u);
  EXPECT_STREQ(first.origin, "act");
  EXPECT_STREQ(first.phase, "forward");

  bind({1, -2, 3, 4});
  ASSERT_EQ(mptrt_run_checked(model, "main", &first), MPTRT_OK) << mptrt_last_error();
  EXPECT_EQ(first.found, 0);
  EXPECT_STREQ(first.kind, "");
  EXPECT_EQ(y(), (std::vector<float>{1, 0, 9, 16}));
}

// Tests that a non-finite constant (an attention mask's -inf) and what is
// computed from it do not count, while an overflow elsewhere does:
// x + [0, 0, 0, -inf] -> relu is not reported, x * x is.
TEST(FiniteCheckConstants, PassedOnValuesDoNotCount) {
  PlanBuilder b;
  const float mask[4] = {0, 0, 0, -std::numeric_limits<float>::infinity()};
  uint32_t x = b.input("x", DType::F32, {4});
  uint32_t c = b.constant(DType::F32, {4}, mask, sizeof(mask));
  uint32_t masked = b.temp(DType::F32, {4});
  uint32_t square = b.temp(DType::F32, {4});
  b.kernel("add", {x, c}, {masked});
  b.kernel("relu", {masked}, {b.output("m", DType::F32, {4})});
  b.kernel("mul", {x, x}, {square});
  b.kernel("relu", {square}, {b.output("s", DType::F32, {4})});
  b.entry("main");
  std::vector<uint8_t> bytes = b.bytes();
  mptrt_model *model = nullptr;
  ASSERT_EQ(mptrt_model_load_memory(bytes.data(), bytes.size(), "cpu", &model), MPTRT_OK)
      << mptrt_last_error();
  const int64_t shape[1] = {4};
  for (float big : {1.0f, 1e30f}) {
    const float x[4] = {1, big, 3, 4};
    ASSERT_EQ(mptrt_bind_input(model, "x", MPTRT_F32, shape, 1, x, 16), MPTRT_OK);
    mptrt_nonfinite first;
    ASSERT_EQ(mptrt_run_checked(model, "main", &first), MPTRT_OK) << mptrt_last_error();
    EXPECT_EQ(first.found, big > 1 ? 1 : 0) << big;
    if (big > 1) {
      EXPECT_EQ(first.kernel, 2u);
      EXPECT_EQ(first.element, 1u);
    }
  }
  mptrt_model_free(model);
}

// Tests the argument checks.
TEST_F(FiniteCheck, Errors) {
  bind({1, 2, 3, 4});
  mptrt_nonfinite first;
  EXPECT_EQ(mptrt_run_checked(model, "main", nullptr), MPTRT_ERROR);
  EXPECT_EQ(mptrt_run_checked(nullptr, "main", &first), MPTRT_ERROR);
  EXPECT_EQ(mptrt_run_checked(model, "nope", &first), MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("nope"), std::string::npos);
}

} // namespace
