//===- PipelinesTest.cpp - the compile pipelines through the C++ API ------===//
//
// Builds mpt::buildTrainingPipeline / buildInferencePipeline the way an
// embedding program does (options set in C++, or parsed from a string) and
// checks that each option reaches its pass and the defaults are the passes'.
//
//===----------------------------------------------------------------------===//
#include "mpt/Pipelines/Pipelines.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <map>

using namespace mlir;

namespace {

constexpr const char *kModel = R"mlir(
func.func @forward(%x: tensor<2x3xf32> {mpt.input = "x"},
                   %w: tensor<4x3xf32> {mpt.param = "w"})
    -> (tensor<2x4xf32> {mpt.output = "y"}) {
  %y = mpt.gemm %x, %w {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
)mlir";

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registry.insert<mpt::MPTDialect, mpt::rt::MPTRTDialect, func::FuncDialect>();
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

std::string pipelineText(const OpPassManager &pm) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pm.printAsTextualPipeline(os);
  return text;
}

/// `pass`'s options as it prints them, by name: `{a=1 b={x,y}}`.
std::map<std::string, std::string> printedOptions(Pass &pass) {
  std::string text;
  llvm::raw_string_ostream os(text);
  pass.printAsTextualPipeline(os);
  StringRef body = StringRef(text).drop_until([](char c) { return c == '{'; });
  body = body.drop_front().drop_back();
  llvm::SmallVector<StringRef> fields;
  body.split(fields, ' ', -1, /*KeepEmpty=*/false);
  std::map<std::string, std::string> options;
  for (StringRef field : fields) {
    auto [name, value] = field.split('=');
    options[name.str()] = value.str();
  }
  return options;
}

/// The options of the pass `argument` that `pm` runs (at its top level).
std::map<std::string, std::string> printedOptions(OpPassManager &pm,
                                                  StringRef argument) {
  for (Pass &pass : pm.getPasses())
    if (pass.getArgument() == argument)
      return printedOptions(pass);
  ADD_FAILURE() << "no " << argument.str() << " in " << pipelineText(pm);
  return {};
}

/// `pass` with `options` given to it directly, as `--pass=options` does.
std::map<std::string, std::string> printedOptions(std::unique_ptr<Pass> pass,
                                                  StringRef options) {
  EXPECT_TRUE(succeeded(pass->initializeOptions(options, [](const Twine &m) {
    ADD_FAILURE() << m.str();
    return failure();
  })));
  return printedOptions(*pass);
}

TEST(Pipelines, TrainingDefaultsAreThePassDefaults) {
  mpt::TrainingPipelineOptions options;
  mpt::BuildTrainingStepPassOptions pass;
  EXPECT_EQ(options.precision.getValue(), mpt::PrecisionMode::None);
  EXPECT_TRUE(options.fuseEpilogues.getValue());
  EXPECT_EQ(options.optimizer.getValue(), pass.optimizer);
  EXPECT_EQ(options.lr.getValue(), pass.lr);
  EXPECT_EQ(options.weightDecay.getValue(), pass.weightDecay);
  EXPECT_EQ(options.lossScale.getValue(), pass.lossScale);
  EXPECT_EQ(options.growthInterval.getValue(), pass.growthInterval);
  EXPECT_EQ(options.labelInput.getValue(), pass.labelInput);
  EXPECT_EQ(options.evalEntry.getValue(), pass.evalEntry);
  EXPECT_TRUE(options.freeze.empty());
}

TEST(Pipelines, EveryPipelineOptionReachesItsPass) {
  // Every training option, each off its default, and the precision
  // options under their pipeline names.
  const std::string training =
      "loss-kind=mse loss-output=y label-input=t loss=l optimizer=sgd lr=0.5 "
      "momentum=0.5 dampening=0.25 nesterov=true weight-decay=0.125 "
      "beta1=0.5 beta2=0.75 eps=1e-4 loss-scale=dynamic init-scale=8 "
      "growth-factor=4 backoff-factor=0.25 growth-interval=7 clip-norm=2 "
      "lr-schedule=warmup_cosine warmup-steps=3 total-steps=9 min-lr=0.01 "
      "freeze=a*,b* emit-gradients=true eval-entry=ev fp8-scaling=current "
      "fp8-amax-history=5 fp8-amax-algo=most_recent fp8-margin=2 "
      "master-weights=bf16 data-parallel=true bucket-mb=4 "
      "all-reduce-f32=true shard-optimizer-state=3 sync-batch-norm=true "
      "settable-lr=true";
  auto options = mpt::TrainingPipelineOptions::createFromString(
      "precision=fp16 target=sm_80 precision-report=r.json "
      "precision-profile=p.json profile-margin=2 profile-flush-limit=0.5 " +
      training);
  ASSERT_TRUE(options);
  auto context = makeContext();
  PassManager pm(context.get());
  mpt::buildTrainingPipeline(pm, *options);

  // The passes hold what they would hold given the options directly.
  auto step = printedOptions(pm, "build-training-step");
  EXPECT_EQ(step, printedOptions(mpt::createBuildTrainingStepPass(), training));
  EXPECT_EQ(printedOptions(pm, "assign-precision"),
            printedOptions(mpt::createAssignPrecisionPass(),
                           "mode=fp16 target=sm_80 report=r.json "
                           "profile=p.json profile-margin=2 "
                           "profile-flush-limit=0.5"));

  // So every option the pipeline takes was checked: only `entry`, which it
  // does not take, is at its default (an empty list prints nothing).
  auto defaults = printedOptions(mpt::createBuildTrainingStepPass(), "");
  EXPECT_EQ(defaults["lr"], "1.000000e-03");
  EXPECT_EQ(step["freeze"], "{a*,b*}");
  EXPECT_GE(step.size(), 32u);
  for (const auto &[name, value] : step)
    EXPECT_EQ(defaults.count(name) && defaults[name] == value, name == "entry")
        << name << "=" << value;
}

TEST(Pipelines, InferenceWithoutPrecisionOnlyLowers) {
  auto context = makeContext();
  PassManager pm(context.get());
  mpt::buildInferencePipeline(pm, mpt::InferencePipelineOptions());
  std::string text = pipelineText(pm);
  EXPECT_EQ(text.find("assign-precision"), std::string::npos) << text;
  EXPECT_NE(text.find("mpt-convert-to-mptrt"), std::string::npos) << text;
  EXPECT_NE(text.find("mpt-fuse-epilogues"), std::string::npos) << text;
}

TEST(Pipelines, OptionsSetInCxxReachThePasses) {
  auto context = makeContext();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kModel, context.get());
  ASSERT_TRUE(module);

  mpt::TrainingPipelineOptions options;
  options.precision = mpt::PrecisionMode::BF16;
  options.optimizer = mpt::Optimizer::SGD;
  options.lr = 0.25;
  options.lossKind = mpt::LossKind::MSE;
  options.evalEntry = "";
  PassManager pm(context.get());
  mpt::buildTrainingPipeline(pm, options);
  std::string text = pipelineText(pm);
  EXPECT_NE(text.find("mode=bf16"), std::string::npos) << text;
  EXPECT_NE(text.find("optimizer=sgd"), std::string::npos) << text;
  ASSERT_TRUE(succeeded(pm.run(*module)));

  auto step = module->lookupSymbol<func::FuncOp>("train_step");
  ASSERT_TRUE(step);
  EXPECT_FALSE(module->lookupSymbol<func::FuncOp>("eval_step"));
  int sgdUpdates = 0, bf16Gemms = 0;
  step.walk([&](Operation *op) {
    if (isa<mpt::rt::SGDUpdateOp>(op))
      ++sgdUpdates;
    if (auto gemm = dyn_cast<mpt::rt::GemmOp>(op)) {
      if (cast<RankedTensorType>(gemm->getOperand(0).getType())
              .getElementType()
              .isBF16())
        ++bf16Gemms;
    }
    if (auto schedule = dyn_cast<mpt::rt::LRScheduleOp>(op)) {
      EXPECT_EQ(schedule.getLr().convertToDouble(), 0.25);
    }
  });
  EXPECT_EQ(sgdUpdates, 1);
  EXPECT_GE(bf16Gemms, 1);
}

TEST(Pipelines, OptionsParseFromAString) {
  auto options = mpt::TrainingPipelineOptions::createFromString(
      "precision=fp16 lr=3e-4 freeze=a*,b* fuse-epilogues=false");
  ASSERT_TRUE(options);
  EXPECT_EQ(options->precision.getValue(), mpt::PrecisionMode::FP16);
  EXPECT_DOUBLE_EQ(options->lr.getValue(), 3e-4);
  ASSERT_EQ(options->freeze.size(), 2u);
  EXPECT_EQ(options->freeze[1], "b*");
  EXPECT_FALSE(options->fuseEpilogues.getValue());

  std::string errors;
  llvm::raw_string_ostream stream(errors);
  mpt::TrainingPipelineOptions unknown;
  EXPECT_TRUE(failed(unknown.parseFromString("learning-rate=1", stream)));
  EXPECT_NE(errors.find("learning-rate"), std::string::npos) << errors;
}

} // namespace
