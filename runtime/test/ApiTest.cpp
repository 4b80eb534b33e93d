//===- ApiTest.cpp - the C API and C++ wrapper end to end ----------------===//
#include "KernelTestUtil.h"
#include "MlpPlan.h"
#include "PlanBuilder.h"
#include "mptrt.h"
#include "mptrt.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

using namespace mptrt;
using namespace mptrt::test;
using plan::DType;

namespace {

std::string tempPath(const std::string &name) { return ::testing::TempDir() + "mptrt_api_" + name; }

// Tests the MLP plan through the C API: load from a file, bind, run, read,
// introspect, and the peak arena size.
TEST(CApi, MlpFromFile) {
  Mlp mlp(5, 4, 8, 3, 1);
  std::vector<uint8_t> bytes = plan::serializePlan(mlp.plan());
  const std::string path = tempPath("mlp.mptp");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  mptrt_model *m = nullptr;
  ASSERT_EQ(mptrt_model_load_file(path.c_str(), "cpu", &m), MPTRT_OK) << mptrt_last_error();
  EXPECT_STREQ(mptrt_model_backend(m), "cpu");
  ASSERT_EQ(mptrt_entry_count(m), 1u);
  EXPECT_STREQ(mptrt_entry_name(m, 0), "forward");

  size_t n = 0;
  const char *name = nullptr;
  ASSERT_EQ(mptrt_entry_binding_count(m, "forward", MPTRT_PARAMETER, &n), MPTRT_OK);
  EXPECT_EQ(n, 4u);
  ASSERT_EQ(mptrt_entry_binding_count(m, "forward", MPTRT_OUTPUT, &n), MPTRT_OK);
  ASSERT_EQ(n, 1u);
  ASSERT_EQ(mptrt_entry_binding_name(m, "forward", MPTRT_OUTPUT, 0, &name), MPTRT_OK);
  EXPECT_STREQ(name, "y");
  EXPECT_EQ(mptrt_entry_binding_name(m, "forward", MPTRT_OUTPUT, 1, &name), MPTRT_ERROR);

  mptrt_dtype dtype;
  size_t rank;
  int64_t shape[MPTRT_MAX_RANK];
  ASSERT_EQ(mptrt_tensor_info(m, MPTRT_INPUT, "x", &dtype, &rank, shape), MPTRT_OK);
  EXPECT_EQ(dtype, MPTRT_F32);
  ASSERT_EQ(rank, 2u);
  EXPECT_EQ(shape[0], 5);
  EXPECT_EQ(shape[1], 4);

  EXPECT_EQ(mptrt_peak_arena_bytes(m), 0u);
  std::vector<float> x = randomFloats(5 * 4, 2);
  const int64_t xShape[2] = {5, 4};
  ASSERT_EQ(mptrt_bind_input(m, "x", MPTRT_F32, xShape, 2, x.data(), x.size() * 4), MPTRT_OK)
      << mptrt_last_error();
  ASSERT_EQ(mptrt_run(m, "forward"), MPTRT_OK) << mptrt_last_error();
  std::vector<float> y(5 * 3);
  ASSERT_EQ(mptrt_read_output(m, "y", y.data(), y.size() * 4), MPTRT_OK) << mptrt_last_error();
  HostTensor got(DType::F32, {5, 3});
  std::memcpy(got.bytes.data(), y.data(), y.size() * 4);
  EXPECT_TRUE(closeTo(got, mlp.reference(x), 1e-5, 1e-5));

  uint64_t arena = 0;
  ASSERT_EQ(mptrt_entry_arena_bytes(m, "forward", &arena), MPTRT_OK);
  EXPECT_EQ(arena, 2u * 192); // two 5x8 f32 temporaries, each padded to 192
  EXPECT_EQ(mptrt_peak_arena_bytes(m), arena);
  mptrt_model_free(m);
  std::remove(path.c_str());
}

// Tests mptrt_bind_input_device and mptrt_read_output_device on the CPU,
// whose device memory is the host's: the same bits as the host calls, and
// the same checks (a wrong shape, an output not computed yet).
TEST(CApi, DeviceBindingOnTheCpu) {
  Mlp mlp(5, 4, 8, 3, 1);
  std::vector<uint8_t> bytes = plan::serializePlan(mlp.plan());
  mptrt_model *host = nullptr, *device = nullptr;
  ASSERT_EQ(mptrt_model_load_memory(bytes.data(), bytes.size(), "cpu", &host), MPTRT_OK);
  ASSERT_EQ(mptrt_model_load_memory(bytes.data(), bytes.size(), "cpu", &device), MPTRT_OK);
  std::vector<float> y(5 * 3), yDevice(5 * 3, -1.0f);
  EXPECT_EQ(mptrt_read_output_device(device, "y", yDevice.data(), yDevice.size() * 4), MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("not been computed"), std::string::npos)
      << mptrt_last_error();
  const std::vector<float> x = randomFloats(5 * 4, 3);
  const int64_t xShape[2] = {5, 4}, wrongShape[2] = {4, 5};
  EXPECT_EQ(mptrt_bind_input_device(device, "x", MPTRT_F32, wrongShape, 2, x.data(), 80),
            MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("has type"), std::string::npos)
      << mptrt_last_error();
  ASSERT_EQ(mptrt_bind_input(host, "x", MPTRT_F32, xShape, 2, x.data(), 80), MPTRT_OK);
  ASSERT_EQ(mptrt_bind_input_device(device, "x", MPTRT_F32, xShape, 2, x.data(), 80), MPTRT_OK)
      << mptrt_last_error();
  ASSERT_EQ(mptrt_run(host, "forward"), MPTRT_OK) << mptrt_last_error();
  ASSERT_EQ(mptrt_run(device, "forward"), MPTRT_OK) << mptrt_last_error();
  ASSERT_EQ(mptrt_read_output(host, "y", y.data(), y.size() * 4), MPTRT_OK);
  ASSERT_EQ(mptrt_read_output_device(device, "y", yDevice.data(), yDevice.size() * 4), MPTRT_OK)
      << mptrt_last_error();
  EXPECT_EQ(std::memcmp(y.data(), yDevice.data(), y.size() * 4), 0);
  mptrt_model_free(host);
  mptrt_model_free(device);
}

// Tests mptrt_run_observed: every floating-point kernel result reaches the
// observer once per run, in kernel order, widened to float32, with the
// kernel's kind; the last one is the output, bit for bit; the run leaves
// the same output as mptrt_run.
TEST(CApi, ObservedRunSeesEveryResult) {
  Mlp mlp(5, 4, 8, 3, 11);
  std::vector<uint8_t> bytes = plan::serializePlan(mlp.plan());
  Model model;
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  std::vector<float> x = randomFloats(5 * 4, 4);
  ASSERT_TRUE(model.bindInput("x", MPTRT_F32, {5, 4}, x)) << lastError();
  struct Seen {
    std::vector<uint32_t> positions;
    std::vector<std::string> kinds;
    std::vector<float> last;
  } seen;
  auto observer = [](const mptrt_result_view *v, void *user) {
    auto *s = static_cast<Seen *>(user);
    s->positions.push_back(v->position);
    s->kinds.push_back(v->kind);
    s->last.assign(v->values, v->values + v->count);
  };
  ASSERT_TRUE(model.runObserved("forward", observer, &seen)) << lastError();
  const size_t kernels = mlp.plan().entries[0].kernels.size();
  ASSERT_EQ(seen.positions.size(), kernels);
  for (size_t i = 0; i < kernels; ++i)
    EXPECT_EQ(seen.positions[i], i);
  std::vector<float> y;
  ASSERT_TRUE(model.readOutput("y", &y)) << lastError();
  EXPECT_EQ(seen.last, y);
  ASSERT_TRUE(model.run("forward")) << lastError();
  std::vector<float> again;
  ASSERT_TRUE(model.readOutput("y", &again));
  EXPECT_EQ(again, y);
  EXPECT_EQ(mptrt_run_observed(model.handle(), "forward", nullptr, nullptr), MPTRT_ERROR);
  EXPECT_NE(lastError().find("null observer"), std::string::npos) << lastError();
}

// Tests the C++ wrapper on the same plan, and overriding a parameter.
TEST(CppApi, MlpAndParameterOverride) {
  Mlp mlp(3, 4, 6, 2, 7);
  std::vector<uint8_t> bytes = plan::serializePlan(mlp.plan());
  Model model;
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  EXPECT_EQ(model.entryPoints(), std::vector<std::string>{"forward"});
  std::vector<std::string> inputs;
  ASSERT_TRUE(model.entryBindings("forward", MPTRT_INPUT, &inputs));
  EXPECT_EQ(inputs, std::vector<std::string>{"x"});
  std::vector<float> x = randomFloats(12, 3);
  ASSERT_TRUE(model.bindInput("x", MPTRT_F32, {3, 4}, x)) << lastError();
  ASSERT_TRUE(model.run("forward")) << lastError();
  std::vector<float> y;
  ASSERT_TRUE(model.readOutput("y", &y)) << lastError();
  HostTensor got(DType::F32, {3, 2});
  std::memcpy(got.bytes.data(), y.data(), y.size() * 4);
  EXPECT_TRUE(closeTo(got, mlp.reference(x), 1e-5, 1e-5));

  // W2 = 0 leaves y = b2 in every row.
  std::vector<float> zeros(6 * 2, 0.0f);
  ASSERT_TRUE(model.bindParameter("w2", MPTRT_F32, {6, 2}, zeros)) << lastError();
  ASSERT_TRUE(model.run("forward"));
  ASSERT_TRUE(model.readOutput("y", &y));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c)
      EXPECT_EQ(y[r * 2 + c], mlp.b2[c]);
  std::vector<uint8_t> w2;
  ASSERT_TRUE(model.readParameter("w2", &w2));
  EXPECT_EQ(w2, std::vector<uint8_t>(6 * 2 * 4, 0));
}

// Tests every binding and run error the API reports.
// Tests the kernel-kind query the compiler's coverage check uses.
TEST(CApi, BackendHasKernel) {
  int has = -1;
  ASSERT_EQ(mptrt_backend_has_kernel(nullptr, "gemm", &has), MPTRT_OK);
  EXPECT_EQ(has, 1);
  ASSERT_EQ(mptrt_backend_has_kernel("cpu", "layer_norm", &has), MPTRT_OK);
  EXPECT_EQ(has, 1);
  ASSERT_EQ(mptrt_backend_has_kernel("cpu", "range", &has), MPTRT_OK);
  EXPECT_EQ(has, 0);
  EXPECT_EQ(mptrt_backend_has_kernel("tpu", "gemm", &has), MPTRT_ERROR);
  EXPECT_NE(std::string(mptrt_last_error()).find("tpu"), std::string::npos);
  EXPECT_EQ(mptrt_backend_has_kernel("cpu", nullptr, &has), MPTRT_ERROR);
}

TEST(CApi, Errors) {
  Mlp mlp(2, 3, 4, 2, 5);
  std::vector<uint8_t> bytes = plan::serializePlan(mlp.plan());
  mptrt_model *m = nullptr;
  ASSERT_EQ(mptrt_model_load_memory(bytes.data(), bytes.size(), "cpu", &m), MPTRT_OK);
  std::vector<float> x(6, 1.0f);
  const int64_t good[2] = {2, 3}, bad[2] = {3, 2};

  auto expectError = [](int rc, const std::string &text) {
    EXPECT_EQ(rc, MPTRT_ERROR);
    EXPECT_NE(std::string(mptrt_last_error()).find(text), std::string::npos) << mptrt_last_error();
  };
  expectError(mptrt_run(m, "forward"), "input 'x' is not bound");
  expectError(mptrt_bind_input(m, "x", MPTRT_BF16, good, 2, x.data(), 24),
              "has type 2x3xf32, but 2x3xbf16 was given");
  expectError(mptrt_bind_input(m, "x", MPTRT_F32, bad, 2, x.data(), 24), "but 3x2xf32 was given");
  expectError(mptrt_bind_input(m, "x", MPTRT_F32, good, 2, x.data(), 20), "needs 24 bytes");
  expectError(mptrt_bind_input(m, "x", static_cast<mptrt_dtype>(42), good, 2, x.data(), 24),
              "invalid dtype");
  expectError(mptrt_bind_input(m, "nope", MPTRT_F32, good, 2, x.data(), 24),
              "no input named 'nope' (the plan has: 'x')");
  expectError(mptrt_bind_parameter(m, "x", MPTRT_F32, good, 2, x.data(), 24),
              "no parameter named 'x'");
  expectError(mptrt_bind_input(nullptr, "x", MPTRT_F32, good, 2, x.data(), 24), "null model");
  expectError(mptrt_run(m, "backward"), "no entry point named 'backward'");
  float y[4];
  expectError(mptrt_read_output(m, "y", y, sizeof(y)), "has not been computed");
  ASSERT_EQ(mptrt_bind_input(m, "x", MPTRT_F32, good, 2, x.data(), 24), MPTRT_OK);
  ASSERT_EQ(mptrt_run(m, "forward"), MPTRT_OK);
  expectError(mptrt_read_output(m, "y", y, 8), "has 16 bytes");
  EXPECT_EQ(mptrt_read_output(m, "y", y, sizeof(y)), MPTRT_OK);
  mptrt_model_free(m);

  mptrt_model *none = reinterpret_cast<mptrt_model *>(1);
  expectError(mptrt_model_load_file("/nonexistent/plan.mptp", nullptr, &none), "cannot open");
  EXPECT_EQ(none, nullptr);
  const char garbage[] = "definitely not a plan, but long enough to hold a header .........";
  expectError(mptrt_model_load_memory(garbage, sizeof(garbage), nullptr, &none), "bad magic");
  expectError(mptrt_model_load_memory(bytes.data(), bytes.size(), "tpu", &none),
              "unknown backend 'tpu'");
}

// Tests the backend registry through the C API: the CPU backend is listed
// and available, auto resolves to it, unknown names fail with the list,
// and the kinds it lists are exactly those it says it has.
TEST(CApi, BackendRegistry) {
  auto expectError = [](int rc, const std::string &text) {
    EXPECT_EQ(rc, MPTRT_ERROR);
    EXPECT_NE(std::string(mptrt_last_error()).find(text), std::string::npos) << mptrt_last_error();
  };
  ASSERT_GE(mptrt_backend_count(), 1u);
  bool sawCpu = false;
  for (size_t i = 0; i < mptrt_backend_count(); ++i)
    sawCpu = sawCpu || std::string(mptrt_backend_name(i)) == "cpu";
  EXPECT_TRUE(sawCpu);
  EXPECT_EQ(mptrt_backend_name(mptrt_backend_count()), nullptr);

  int available = 0;
  const char *detail = nullptr;
  ASSERT_EQ(mptrt_backend_probe("cpu", &available, &detail), MPTRT_OK);
  EXPECT_EQ(available, 1);
  EXPECT_NE(std::string(detail).find("host CPU"), std::string::npos) << detail;
  expectError(mptrt_backend_probe("tpu", &available, &detail),
              "unknown backend 'tpu' (this build has: cpu");

  // auto: the CUDA backend where this build has it and a GPU is usable.
  int cudaAvailable = 0;
  const char *cudaDetail = nullptr;
  const char *best =
      mptrt_backend_probe("cuda", &cudaAvailable, &cudaDetail) == MPTRT_OK && cudaAvailable ? "cuda"
                                                                                            : "cpu";
  ASSERT_NE(mptrt_backend_resolve("auto"), nullptr);
  EXPECT_STREQ(mptrt_backend_resolve("auto"), best);
  EXPECT_STREQ(mptrt_backend_resolve(nullptr), best);
  EXPECT_EQ(mptrt_backend_resolve("tpu"), nullptr);

  size_t count = 0;
  ASSERT_EQ(mptrt_backend_kind_count("cpu", &count), MPTRT_OK);
  EXPECT_GT(count, 50u);
  for (size_t i = 0; i < count; ++i) {
    const char *kind = nullptr;
    ASSERT_EQ(mptrt_backend_kind_name("cpu", i, &kind), MPTRT_OK);
    int has = 0;
    ASSERT_EQ(mptrt_backend_has_kernel("cpu", kind, &has), MPTRT_OK);
    EXPECT_EQ(has, 1) << kind;
  }
  const char *kind = nullptr;
  expectError(mptrt_backend_kind_name("cpu", count, &kind), "index");
  int has = 1;
  ASSERT_EQ(mptrt_backend_has_kernel("cpu", "no_such_kind", &has), MPTRT_OK);
  EXPECT_EQ(has, 0);
}

// Tests that a parameter updated in place persists across runs (SGD).
TEST(CppApi, InPlaceParameterUpdate) {
  PlanBuilder b;
  const float w0[4] = {1, 2, 3, 4};
  const float lr = 0.5f;
  uint32_t w = b.param("w", DType::F32, {4}, w0, sizeof(w0));
  uint32_t l = b.param("lr", DType::F32, {}, &lr, sizeof(lr));
  uint32_t g = b.input("g", DType::F32, {4});
  uint32_t s = b.temp(DType::F32, {4});
  b.kernel("mul", {g, l}, {s});
  b.kernel("sub", {w, s}, {w});
  b.entry("sgd");
  std::vector<uint8_t> bytes = b.bytes();
  Model model;
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  std::vector<float> grad = {1, -1, 2, 0.5f};
  ASSERT_TRUE(model.bindInput("g", MPTRT_F32, {4}, grad));
  ASSERT_TRUE(model.run("sgd")) << lastError();
  ASSERT_TRUE(model.run("sgd")) << lastError();
  std::vector<uint8_t> raw;
  ASSERT_TRUE(model.readParameter("w", &raw));
  const float *after = reinterpret_cast<const float *>(raw.data());
  for (int i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(after[i], w0[i] - 2 * lr * grad[i]);
}

// Tests that the C API and the C++ wrapper give each output the role the
// plan records, whatever its name, and find a one-value role's output.
TEST(CppApi, OutputRoles) {
  PlanBuilder b;
  uint32_t x = b.input("x", DType::F32, {});
  uint32_t cost = b.output("cost", DType::F32, {});
  uint32_t loss = b.output("loss", DType::F32, {});
  uint32_t g = b.output("dx", DType::F32, {});
  b.kernel("relu", {x}, {cost});
  b.kernel("relu", {x}, {loss});
  b.kernel("relu", {x}, {g});
  b.entry("step");
  b.plan.entries[0].outputRoles = {mptrt::abi::OutputRole::Loss, mptrt::abi::OutputRole::None,
                                   mptrt::abi::OutputRole::Gradient};
  std::vector<uint8_t> bytes = b.bytes();
  Model model;
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  mptrt_output_role role;
  ASSERT_EQ(mptrt_entry_output_role(model.handle(), "step", 0, &role), MPTRT_OK);
  EXPECT_EQ(role, MPTRT_ROLE_LOSS);
  ASSERT_EQ(mptrt_entry_output_role(model.handle(), "step", 2, &role), MPTRT_OK);
  EXPECT_EQ(role, MPTRT_ROLE_GRADIENT);
  EXPECT_EQ(mptrt_entry_output_role(model.handle(), "step", 3, &role), MPTRT_ERROR);
  EXPECT_NE(lastError().find("index 3 out of range (3)"), std::string::npos) << lastError();
  std::vector<mptrt::abi::OutputRole> roles;
  ASSERT_TRUE(model.entryOutputRoles("step", &roles));
  EXPECT_EQ(roles, b.plan.entries[0].outputRoles);
  std::string name;
  ASSERT_TRUE(model.outputWithRole("step", mptrt::abi::OutputRole::Loss, &name));
  EXPECT_EQ(name, "cost");
  ASSERT_TRUE(model.outputWithRole("step", mptrt::abi::OutputRole::Lr, &name));
  EXPECT_EQ(name, "");
  const char *found = "x";
  EXPECT_EQ(mptrt_entry_output_with_role(model.handle(), "step", MPTRT_ROLE_GRADIENT, &found),
            MPTRT_ERROR);
  EXPECT_NE(lastError().find("is not one of MPTRT_ROLE_LOSS to MPTRT_ROLE_LR"), std::string::npos)
      << lastError();
  EXPECT_FALSE(model.outputWithRole("nope", mptrt::abi::OutputRole::Loss, &name));
}

/// Loads `plan` and expects failure mentioning `text`.
void expectLoadError(const plan::Plan &plan, const std::string &text) {
  std::vector<uint8_t> bytes = plan::serializePlan(plan);
  Model model;
  EXPECT_FALSE(model.loadMemory(bytes.data(), bytes.size(), "cpu"));
  EXPECT_NE(lastError().find(text), std::string::npos) << lastError();
}

// Tests the load-time kernel checks: kind, attributes, types, aliasing.
TEST(CppApi, KernelChecksAtLoad) {
  {
    PlanBuilder b;
    uint32_t x = b.input("x", DType::F32, {4});
    b.kernel("frobnicate", {x}, {b.output("y", DType::F32, {4})});
    b.entry("main");
    expectLoadError(b.plan, "kernel 0 (frobnicate): unknown kernel kind 'frobnicate'");
  }
  {
    PlanBuilder b;
    uint32_t x = b.input("x", DType::F32, {2, 2});
    b.kernel("gemm", {x, x}, {b.output("y", DType::F32, {2, 2})},
             {plan::Attribute::makeInt("transA", 1)});
    b.entry("main");
    expectLoadError(b.plan, "unknown attribute 'transA'");
  }
  {
    PlanBuilder b;
    uint32_t x = b.input("x", DType::F32, {2, 2});
    b.kernel("gemm", {x, x}, {b.output("y", DType::F32, {2, 2})},
             {plan::Attribute::makeString("alpha", "two")});
    b.entry("main");
    expectLoadError(b.plan, "attribute 'alpha' must be float, not string");
  }
  {
    PlanBuilder b;
    uint32_t x = b.input("x", DType::F32, {2, 3});
    b.kernel("gemm", {x, x}, {b.output("y", DType::F32, {2, 2})});
    b.entry("main");
    expectLoadError(b.plan, "contraction sizes differ");
  }
  {
    PlanBuilder b;
    uint32_t x = b.input("x", DType::F32, {2, 3});
    b.kernel("add", {x, x}, {b.output("y", DType::F32, {3, 2})});
    b.entry("main");
    expectLoadError(b.plan, "does not broadcast to the result");
  }
  {
    // A matmul whose result overlaps its operand in the arena.
    PlanBuilder b;
    uint32_t x = b.input("x", DType::F32, {4, 4});
    uint32_t t = b.temp(DType::F32, {4, 4});
    plan::Tensor alias = b.plan.tensors[t];
    alias.offset += 0;
    b.plan.tensors.push_back(alias);
    uint32_t u = static_cast<uint32_t>(b.plan.tensors.size() - 1);
    b.kernel("copy", {x}, {t});
    b.kernel("matmul", {t, t}, {u});
    b.kernel("copy", {u}, {b.output("y", DType::F32, {4, 4})});
    b.entry("main");
    expectLoadError(b.plan, "kernel 1 (matmul): result tensor");
  }
}

// Tests that a data-dependent failure (a gather index out of range) fails
// the run with a message and leaves the model usable.
TEST(CppApi, RunTimeError) {
  PlanBuilder b;
  uint32_t data = b.input("data", DType::F32, {3, 2});
  uint32_t idx = b.input("idx", DType::I64, {2});
  b.kernel("gather", {data, idx}, {b.output("y", DType::F32, {2, 2})});
  b.entry("main");
  std::vector<uint8_t> bytes = b.bytes();
  Model model;
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  std::vector<float> d = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> bad = {0, 3}, good = {-1, 0};
  ASSERT_TRUE(model.bindInput("data", MPTRT_F32, {3, 2}, d));
  ASSERT_TRUE(model.bindInput("idx", MPTRT_I64, {2}, bad));
  EXPECT_FALSE(model.run("main"));
  EXPECT_NE(lastError().find("kernel 0 (gather): index 3 at position 1 is outside [-3, 3)"),
            std::string::npos)
      << lastError();
  std::vector<float> y;
  EXPECT_FALSE(model.readOutput("y", &y));
  ASSERT_TRUE(model.bindInput("idx", MPTRT_I64, {2}, good));
  ASSERT_TRUE(model.run("main")) << lastError();
  ASSERT_TRUE(model.readOutput("y", &y));
  EXPECT_EQ(y, (std::vector<float>{5, 6, 1, 2}));
}

/// A small CNN classifier touching many kernel families, for byte flips.
plan::Plan kitchenSinkPlan() {
  using plan::Attribute;
  PlanBuilder b;
  std::mt19937 rng(5);
  std::vector<float> w(4 * 2 * 3 * 3), fc(4 * 3), ln(4, 1.0f);
  for (float &v : w)
    v = float(rng() % 7) - 3;
  for (float &v : fc)
    v = float(rng() % 5) - 2;
  uint32_t x = b.input("x", DType::BF16, {2, 2, 6, 6});
  uint32_t labels = b.input("labels", DType::I64, {2});
  uint32_t idx = b.input("idx", DType::I32, {3});
  uint32_t wp = b.param("w", DType::F32, {4, 2, 3, 3}, w.data(), w.size() * 4);
  uint32_t fcp = b.param("fc", DType::F32, {4, 3}, fc.data(), fc.size() * 4);
  uint32_t lnp = b.constant(DType::F32, {4}, ln.data(), ln.size() * 4, "ln_scale");
  uint32_t c = b.temp(DType::BF16, {2, 4, 6, 6});
  uint32_t r = b.temp(DType::BF16, {2, 4, 6, 6});
  uint32_t mp = b.temp(DType::F32, {2, 4, 3, 3});
  uint32_t gp = b.temp(DType::F32, {2, 4, 1, 1});
  uint32_t fl = b.temp(DType::F32, {2, 4});
  uint32_t nl = b.temp(DType::F32, {2, 4});
  uint32_t lg = b.temp(DType::F32, {2, 3});
  uint32_t tr = b.temp(DType::F32, {3, 2});
  uint32_t sl = b.temp(DType::F32, {3, 1});
  uint32_t ga = b.temp(DType::F32, {3, 2});
  uint32_t cat = b.temp(DType::F32, {3, 3});
  b.kernel("conv", {x, wp}, {c},
           {Attribute::makeInts("pads", {1, 1, 1, 1}), Attribute::makeInts("strides", {1, 1}),
            Attribute::makeInts("dilations", {1, 1})});
  b.kernel("relu", {c}, {r});
  b.kernel("max_pool", {r}, {mp},
           {Attribute::makeInts("kernel_shape", {2, 2}), Attribute::makeInts("strides", {2, 2})});
  b.kernel("global_average_pool", {mp}, {gp});
  b.kernel("flatten", {gp}, {fl}, {Attribute::makeInt("axis", 1)});
  b.kernel("layer_norm", {fl, lnp}, {nl}, {Attribute::makeInt("axis", -1)});
  b.kernel("gemm", {nl, fcp}, {lg}, {Attribute::makeString("activation", "gelu")});
  b.kernel("softmax_cross_entropy_loss", {lg, labels}, {b.output("loss", DType::F32, {})});
  b.kernel("softmax", {lg}, {b.output("probs", DType::F16, {2, 3})},
           {Attribute::makeInt("axis", 1)});
  b.kernel("transpose", {lg}, {tr}, {Attribute::makeInts("perm", {1, 0})});
  b.kernel("slice", {tr}, {sl},
           {Attribute::makeInts("starts", {0, 1}), Attribute::makeInts("ends", {3, 2}),
            Attribute::makeInts("steps", {1, 1})});
  b.kernel("gather", {tr, idx}, {ga}, {Attribute::makeInt("axis", 0)});
  b.kernel("concat", {sl, ga}, {cat}, {Attribute::makeInt("axis", 1)});
  b.kernel("reduce_mean", {cat}, {b.output("mean", DType::F32, {1, 1})});
  b.entry("forward");
  return b.plan;
}

// Tests that the kitchen-sink plan loads and runs as built.
TEST(CppApi, KitchenSinkRuns) {
  std::vector<uint8_t> bytes = plan::serializePlan(kitchenSinkPlan());
  Model model;
  ASSERT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  std::vector<uint16_t> x(2 * 2 * 6 * 6, 0x3F80); // bf16 1.0
  std::vector<int64_t> labels = {0, 2};
  std::vector<int32_t> idx = {2, 0, 1};
  ASSERT_TRUE(model.bindInput("x", MPTRT_BF16, {2, 2, 6, 6}, x));
  ASSERT_TRUE(model.bindInput("labels", MPTRT_I64, {2}, labels));
  ASSERT_TRUE(model.bindInput("idx", MPTRT_I32, {3}, idx));
  ASSERT_TRUE(model.run("forward")) << lastError();
  std::vector<float> loss;
  ASSERT_TRUE(model.readOutput("loss", &loss));
  EXPECT_TRUE(std::isfinite(loss[0]));
}

/// Flips every byte of `bytes` with a few masks. With the checksums checked
/// (the default) every flip is rejected. With them skipped, the structural
/// checks alone must hold: whatever still loads is run with zero inputs,
/// and nothing may crash (run under ASan/UBSan too).
void flipEveryByte(const std::vector<uint8_t> &bytes) {
  int loaded = 0, rejected = 0;
  for (size_t at = 0; at < bytes.size(); ++at) {
    for (uint8_t mask : {0x01, 0x04, 0x80, 0xFF}) {
      std::vector<uint8_t> b = bytes;
      b[at] ^= mask;
      mptrt_model *checked = nullptr;
      EXPECT_EQ(mptrt_model_load_memory(b.data(), b.size(), nullptr, &checked), MPTRT_ERROR)
          << "a flip of byte " << at << " loaded despite the checksums";
      mptrt_model_free(checked);
      Model model;
      if (!model.loadMemory(b.data(), b.size(), nullptr, MPTRT_LOAD_SKIP_CHECKSUMS)) {
        EXPECT_FALSE(lastError().empty());
        ++rejected;
        continue;
      }
      ++loaded;
      for (const std::string &entry : model.entryPoints()) {
        std::vector<std::string> inputs;
        ASSERT_TRUE(model.entryBindings(entry, MPTRT_INPUT, &inputs));
        for (const std::string &name : inputs) {
          TensorInfo info;
          ASSERT_TRUE(model.info(MPTRT_INPUT, name, &info));
          std::vector<uint8_t> zeros(info.bytes(), 0);
          ASSERT_TRUE(model.bindInput(name, info.dtype, info.shape, zeros.data(), zeros.size()))
              << lastError();
        }
        (void)model.run(entry);
      }
    }
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 0);
}

// Tests byte flips of a plan with many kernel families through load and run.
TEST(CppApi, KitchenSinkByteFlipsThroughLoaderAndRun) {
  flipEveryByte(plan::serializePlan(kitchenSinkPlan()));
}

// Tests that flipping any byte of a valid plan never crashes the loader or
// a run of whatever still loads (run under ASan/UBSan for full value).
TEST(CppApi, ByteFlipsThroughLoaderAndRun) {
  Mlp mlp(2, 3, 4, 2, 11);
  flipEveryByte(plan::serializePlan(mlp.plan()));
}

} // namespace
