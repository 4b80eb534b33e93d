//===- CompileTest.cpp - the compiler's C API (mpt-c/Compile.h) -----------===//
//
// mpt_compile_onnx_file on a committed model (its plan loads and trains in
// the runtime) and on broken inputs and options (a status and a message
// that names the file, the node or the option; never a crash).
//
//===----------------------------------------------------------------------===//
#include "mpt-c/Compile.h"
#include "mptrt.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

const std::string kMlp =
    std::string(MPT_SOURCE_DIR) + "/test/fixtures/parity/mlp_dynamo/model.onnx";
const char kTrainOptions[] =
    "precision=bf16 optimizer=adamw lr=0.01 loss-kind=cross_entropy "
    "loss-output=logits label-input=labels";

/// One call's outcome, its buffers freed.
struct Result {
  int status = -1;
  std::vector<unsigned char> plan;
  std::string error;
  bool nullError = true;
};

Result compile(const std::string &path, int train, const char *options,
               const char *shapes = nullptr) {
  Result r;
  void *plan = reinterpret_cast<void *>(1);
  size_t size = 1;
  char *error = nullptr;
  r.status = mpt_compile_onnx_file(path.c_str(), train, options, shapes, &plan,
                                   &size, &error);
  if (plan)
    r.plan.assign(static_cast<unsigned char *>(plan),
                  static_cast<unsigned char *>(plan) + size);
  r.nullError = error == nullptr;
  if (error)
    r.error = error;
  mpt_compile_free(plan);
  mpt_compile_free(error);
  return r;
}

std::string writeTemp(const char *name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  FILE *f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

// Tests that a training plan comes back, loads, and trains: its first
// loss is PyTorch's bf16 autocast loss on the fixture's batch (meta.json).
TEST(CompileCAPI, TrainingPlanLoadsAndTrains) {
  Result r = compile(kMlp, 1, kTrainOptions);
  ASSERT_EQ(r.status, MPT_COMPILE_OK) << r.error;
  EXPECT_TRUE(r.nullError);
  ASSERT_FALSE(r.plan.empty());

  mptrt_model *model = nullptr;
  ASSERT_EQ(
      mptrt_model_load_memory(r.plan.data(), r.plan.size(), "cpu", &model),
      MPTRT_OK)
      << mptrt_last_error();
  ASSERT_EQ(mptrt_entry_count(model), 2u);
  EXPECT_STREQ(mptrt_entry_name(model, 0), "train_step");
  EXPECT_STREQ(mptrt_entry_name(model, 1), "eval_step");
  std::vector<float> x(8 * 16);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.37f * static_cast<float>(i));
  std::vector<int64_t> labels = {0, 1, 2, 3, 4, 5, 6, 7};
  int64_t xShape[] = {8, 16}, labelShape[] = {8};
  ASSERT_EQ(mptrt_bind_input(model, "x", MPTRT_F32, xShape, 2, x.data(),
                             x.size() * 4),
            MPTRT_OK);
  ASSERT_EQ(mptrt_bind_input(model, "labels", MPTRT_I64, labelShape, 1,
                             labels.data(), labels.size() * 8),
            MPTRT_OK);
  float losses[3];
  for (float &loss : losses) {
    ASSERT_EQ(mptrt_run(model, "train_step"), MPTRT_OK) << mptrt_last_error();
    ASSERT_EQ(mptrt_read_output(model, "loss", &loss, sizeof loss), MPTRT_OK);
  }
  EXPECT_TRUE(std::isfinite(losses[0]));
  EXPECT_LT(losses[1], losses[0]);
  EXPECT_LT(losses[2], losses[1]);
  mptrt_model_free(model);
}

// Tests that an inference compile has the model's function only.
TEST(CompileCAPI, InferencePlan) {
  Result r = compile(kMlp, 0, "precision=fp32");
  ASSERT_EQ(r.status, MPT_COMPILE_OK) << r.error;
  mptrt_model *model = nullptr;
  ASSERT_EQ(
      mptrt_model_load_memory(r.plan.data(), r.plan.size(), "cpu", &model),
      MPTRT_OK);
  ASSERT_EQ(mptrt_entry_count(model), 1u);
  EXPECT_STREQ(mptrt_entry_name(model, 0), "forward");
  mptrt_model_free(model);
}

// Tests that a missing file is an error naming it.
TEST(CompileCAPI, MissingFile) {
  Result r = compile("/nonexistent/model.onnx", 1, "");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_TRUE(r.plan.empty());
  EXPECT_NE(r.error.find("/nonexistent/model.onnx"), std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("cannot read"), std::string::npos) << r.error;
}

// Tests that unknown options, and training options without train, are named.
TEST(CompileCAPI, BadOptions) {
  Result r = compile(kMlp, 1, "precision=bf16 bogus=1");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_NE(r.error.find("no such option bogus"), std::string::npos) << r.error;

  r = compile(kMlp, 0, "lr=0.1");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_EQ(r.error, "invalid options: lr needs train");

  r = compile(kMlp, 1, "precision=bf17");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_NE(r.error.find("for the --precision option: must be none, bf16, "
                         "fp16, fp8, fp32 or auto; got 'bf17'"),
            std::string::npos)
      << r.error;

  r = compile(kMlp, 1, "target=sm80");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_NE(r.error.find("unknown target 'sm80'"), std::string::npos)
      << r.error;
}

// Tests that mpt_check_pipeline_options refuses what a compile refuses,
// with the same message, and accepts what it accepts, without a model.
TEST(CompileCAPI, CheckOptionsWithoutAModel) {
  for (const auto &[train, options] :
       std::vector<std::pair<int, const char *>>{{1, "precision=bf16 bogus=1"},
                                                 {0, "lr=0.1"},
                                                 {1, "precision=bf17"},
                                                 {1, "loss-kind=hinge"},
                                                 {1, "target=sm_8"}}) {
    char *error = nullptr;
    EXPECT_EQ(mpt_check_pipeline_options(train, options, &error),
              MPT_COMPILE_ERROR)
        << options;
    Result r = compile(kMlp, train, options);
    EXPECT_EQ(r.status, MPT_COMPILE_ERROR) << options;
    EXPECT_EQ(error ? std::string(error) : "", r.error) << options;
    mpt_compile_free(error);
  }
  char *error = nullptr;
  EXPECT_EQ(mpt_check_pipeline_options(1, "precision=bf16 loss-kind=mse lr=0.1",
                                       &error),
            MPT_COMPILE_OK);
  EXPECT_EQ(error, nullptr);
  EXPECT_EQ(mpt_check_pipeline_options(0, nullptr, nullptr), MPT_COMPILE_OK);
}

// Tests that errors of the pipeline and of input shapes name the file and node.
TEST(CompileCAPI, ErrorsNameTheNode) {
  Result r = compile(
      kMlp, 1, "loss-kind=cross_entropy loss-output=nope label-input=labels");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_NE(
      r.error.find(
          "model.onnx: node 'main_graph': error: no float output named 'nope'"),
      std::string::npos)
      << r.error;

  r = compile(kMlp, 0, "", "x=8");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_NE(r.error.find("node 'x'"), std::string::npos) << r.error;

  r = compile(kMlp, 0, "", "x");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_NE(r.error.find("invalid input shape 'x'"), std::string::npos)
      << r.error;
}

// Tests that a model with an unsupported op reports the op and the node.
TEST(CompileCAPI, Unsupported) {
  std::string path =
      writeTemp("capi-unsupported.onnxtext",
                "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                "g (float[2] X) => (float[2] Y) {\n  Y = Det(X)\n}\n");
  Result r = compile(path, 0, "");
  EXPECT_EQ(r.status, MPT_COMPILE_UNSUPPORTED);
  EXPECT_NE(r.error.find("unsupported op Det"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("Det_0"), std::string::npos) << r.error;
}

// Tests that a broken file and NULL arguments are errors, not crashes.
TEST(CompileCAPI, BrokenInputs) {
  std::string path = writeTemp("capi-garbage.onnx", "this is not a protobuf");
  Result r = compile(path, 1, "");
  EXPECT_EQ(r.status, MPT_COMPILE_ERROR);
  EXPECT_FALSE(r.error.empty());

  char *error = nullptr;
  EXPECT_EQ(mpt_compile_onnx_file(nullptr, 1, nullptr, nullptr, nullptr,
                                  nullptr, &error),
            MPT_COMPILE_ERROR);
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("must not be NULL"), std::string::npos);
  mpt_compile_free(error);
}

} // namespace
