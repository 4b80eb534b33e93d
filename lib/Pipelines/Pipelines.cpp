//===- Pipelines.cpp - the inference and training compile pipelines -------===//
#include "mpt/Pipelines/Pipelines.h"
#include "mpt/Transforms/Target.h"
#include "mpt/Transforms/TrainingStepOptions.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

llvm::cl::OptionCategory &mpt::getPipelineOptionsCategory() {
  static llvm::cl::OptionCategory category(
      "Pipeline options (precision and lowering; as in "
      "--mpt-inference-pipeline and --mpt-training-pipeline)");
  return category;
}

llvm::cl::OptionCategory &mpt::getTrainingOptionsCategory() {
  static llvm::cl::OptionCategory category(
      "Training options (with --train; as in --mpt-training-pipeline and "
      "--build-training-step, see docs/training.md)");
  return category;
}

llvm::SmallVector<llvm::StringRef> mpt::InferencePipelineOptions::givenIn(
    llvm::cl::OptionCategory &category) const {
  llvm::SmallVector<llvm::cl::Option *> given;
  for (const auto &entry : OptionsMap)
    if (entry.second->getNumOccurrences() > 0 &&
        llvm::is_contained(entry.second->Categories, &category))
      given.push_back(entry.second);
  llvm::sort(given, [](llvm::cl::Option *a, llvm::cl::Option *b) {
    return std::make_pair(a->getPosition(), a->ArgStr) <
           std::make_pair(b->getPosition(), b->ArgStr);
  });
  llvm::SmallVector<llvm::StringRef> names;
  for (llvm::cl::Option *option : given)
    names.push_back(option->ArgStr);
  return names;
}

std::unique_ptr<mpt::TrainingPipelineOptions>
mpt::TrainingPipelineOptions::createFromString(llvm::StringRef options) {
  auto result = std::make_unique<TrainingPipelineOptions>();
  if (failed(result->parseFromString(options)))
    return nullptr;
  return result;
}

namespace {

/// `--assign-precision` and `--verify-precision`, unless precision is none.
void addPrecisionPasses(OpPassManager &pm,
                        const mpt::InferencePipelineOptions &options) {
  if (options.precision == mpt::PrecisionMode::None)
    return;
  mpt::AssignPrecisionPassOptions assign = options.assignPrecisionPassOptions();
  assign.mode = options.precision;
  pm.addPass(mpt::createAssignPrecisionPass(assign));
  pm.addPass(mpt::createVerifyPrecisionPass());
}

void addLoweringPasses(OpPassManager &pm,
                       const mpt::InferencePipelineOptions &options) {
  mpt::LowerToRuntimeOptions lowering;
  lowering.fuseEpilogues = options.fuseEpilogues;
  lowering.channelsLast =
      mpt::resolveConvLayout(options.convLayout, options.target) ==
      mpt::ConvLayout::NHWC;
  // The layout decisions go into the precision report's file; a report
  // printed to stdout (`-`) has been written by then and goes without them.
  if (options.precision != mpt::PrecisionMode::None &&
      options.precisionReport != "-")
    lowering.layoutReport = options.precisionReport;
  mpt::buildLowerToRuntimePipeline(pm, lowering);
}

} // namespace

void mpt::buildInferencePipeline(OpPassManager &pm,
                                 const InferencePipelineOptions &options) {
  if (options.fuseAttention)
    pm.addPass(mpt::createFuseAttentionPass());
  addPrecisionPasses(pm, options);
  addLoweringPasses(pm, options);
}

std::string mpt::verifyOptions(const InferencePipelineOptions &options) {
  if (options.precision == PrecisionMode::None &&
      (!options.precisionReport.empty() || !options.precisionProfile.empty()))
    return "precision-report and precision-profile need precision";
  std::string error;
  if (!options.target.empty() &&
      failed(mpt::parseTarget(options.target, error)))
    return error;
  return "";
}

std::string mpt::verifyOptions(const TrainingPipelineOptions &options) {
  if (std::string bad =
          verifyOptions(static_cast<const InferencePipelineOptions &>(options));
      !bad.empty())
    return bad;
  return verifyTrainingStepOptions(options.buildTrainingStepPassOptions());
}

void mpt::buildTrainingPipeline(OpPassManager &pm,
                                const TrainingPipelineOptions &options) {
  if (options.fuseAttention)
    pm.addPass(mpt::createFuseAttentionPass());
  addPrecisionPasses(pm, options);
  pm.addPass(
      createBuildTrainingStepPass(options.buildTrainingStepPassOptions()));
  addLoweringPasses(pm, options);
}

namespace {

/// Registers `build` as the pipeline `name`. Unlike PassPipelineRegistration,
/// a malformed option string is reported through the caller's error handler,
/// with the pipeline's name, not only printed to stderr.
template <typename OptionsT>
void registerPipeline(StringRef name, StringRef description,
                      void (*build)(OpPassManager &, const OptionsT &)) {
  registerPassPipeline(
      name, description,
      [name, build](OpPassManager &pm, StringRef text,
                    function_ref<LogicalResult(const Twine &)> errorHandler) {
        OptionsT options;
        std::string message;
        llvm::raw_string_ostream stream(message);
        if (failed(options.parseFromString(text, stream))) {
          // An unknown name comes here; a malformed value was printed by
          // the option's own parser already.
          StringRef reason = StringRef(message).trim();
          reason.consume_front("<Pass-Options-Parser>: ");
          if (reason.empty())
            return errorHandler(name + ": invalid options '" + text + "'");
          return errorHandler(name + ": " + reason +
                              " (--help lists the pipeline's options)");
        }
        if (std::string bad = verifyOptions(options); !bad.empty())
          return errorHandler(name + ": invalid options: " + bad);
        build(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionHandler) {
        optionHandler(OptionsT());
      });
}

} // namespace

void mpt::registerMPTPipelines() {
  registerPipeline<InferencePipelineOptions>(
      "mpt-inference-pipeline",
      "The whole compile pipeline of a forward pass, as mpt-compile runs it: "
      "[assign-precision, verify-precision], lower-to-runtime",
      buildInferencePipeline);
  registerPipeline<TrainingPipelineOptions>(
      "mpt-training-pipeline",
      "The whole compile pipeline of a training step, as mpt-compile --train "
      "runs it: [assign-precision, verify-precision], build-training-step, "
      "lower-to-runtime",
      buildTrainingPipeline);
}
