//===- Pipelines.h - the whole compile pipeline, from one options struct --===//
//
// The passes `mpt-compile` runs between the importer and the plan emitter,
// as functions that embedding users, `mpt-opt` and `mpt-compile` all call:
//
//   [assign-precision, verify-precision]   when `precision` is not `none`
//   [build-training-step]                  the training pipeline only
//   lower-to-runtime                       canonicalize ... plan the arena
//
// The pass pipelines registered by `registerMPTPipelines` parse the options
// structs below from a string
// (`--mpt-training-pipeline="precision=bf16 optimizer=adamw lr=3e-4"`), and
// `mpt-compile` makes the same options its own flags (`--precision=bf16`).
//
// An option that a pass takes is declared once, by the pass in Passes.td:
// its name, type, default and help text. PipelineOptions.td says which of a
// pass's options a struct takes (under which names), and `mpt-tblgen
// -gen-pipeline-options` writes them into the structs at build time
// (PipelineOptions.h.inc), with the copy into the pass's options. Declared
// here are only `precision` (--assign-precision's `mode`, with `none`),
// `fuse-epilogues` (LowerToRuntimeOptions', whose default it reads) and
// `conv-layout` (auto: chosen from `target`, Target.h; nhwc runs
// lower-to-runtime's `channels-last`).
//
//===----------------------------------------------------------------------===//
#ifndef MPT_PIPELINES_PIPELINES_H
#define MPT_PIPELINES_PIPELINES_H

#include "mpt/Conversion/Passes.h"
#include "mpt/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/CommandLine.h"

namespace mpt {

/// The help categories the pipeline options are listed under in a tool that
/// makes them its flags (mpt-compile's `--help`).
llvm::cl::OptionCategory &getPipelineOptionsCategory();
llvm::cl::OptionCategory &getTrainingOptionsCategory();

/// Options of the inference pipeline: the precision and the lowering.
struct InferencePipelineOptions
    : public mlir::PassPipelineOptions<InferencePipelineOptions> {
  Option<PrecisionMode> precision{
      *this, "precision",
      llvm::cl::desc("Run --assign-precision (then --verify-precision) in "
                     "this mode before the lowering"),
      llvm::cl::init(PrecisionMode::None),
      llvm::cl::cat(getPipelineOptionsCategory())};
  // --assign-precision's target, report (`precision-report`), profile
  // (`precision-profile`), profile-margin and profile-flush-limit, with the
  // pass's help texts and defaults (PipelineOptions.td), and
  // assignPrecisionPassOptions().
#define GEN_PIPELINE_OPTIONS_PrecisionOptions
#include "mpt/Pipelines/PipelineOptions.h.inc"
  Option<bool> fuseAttention{
      *this, "fuse-attention",
      llvm::cl::desc("Run --fuse-attention before precision assignment: "
                     "exported attention subgraphs become mpt.attention"),
      llvm::cl::init(false), llvm::cl::cat(getPipelineOptionsCategory())};
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Fold bias adds and activations into gemm kernels"),
      llvm::cl::init(LowerToRuntimeOptions().fuseEpilogues.getValue()),
      llvm::cl::cat(getPipelineOptionsCategory())};
  Option<ConvLayout> convLayout{
      *this, "conv-layout",
      llvm::cl::desc("How convolution chains store their activations (nhwc: "
                     "mpt-channels-last)"),
      llvm::cl::init(ConvLayout::Auto),
      llvm::cl::cat(getPipelineOptionsCategory())};

  /// The names of the options in `category` that were given, on a command
  /// line or in an option string, the first given first.
  llvm::SmallVector<llvm::StringRef>
  givenIn(llvm::cl::OptionCategory &category) const;
};

/// Options of the training pipeline: the inference pipeline's, and those of
/// `--build-training-step` (docs/training.md).
struct TrainingPipelineOptions : public InferencePipelineOptions {
  /// Hides the base's factory, which would build the inference options.
  static std::unique_ptr<TrainingPipelineOptions>
  createFromString(llvm::StringRef options);

  // Every option of --build-training-step but `entry`, with the pass's
  // names, help texts and defaults (PipelineOptions.td), and
  // buildTrainingStepPassOptions().
#define GEN_PIPELINE_OPTIONS_TrainingStepOptions
#include "mpt/Pipelines/PipelineOptions.h.inc"
};

/// The one check of which options go together, for every front end
/// (mpt-compile, the C API and Python, the registered pipelines): a message
/// naming the options by their pipeline names, or "" when they hold
/// together. Options of a single value are checked by their own parsers.
std::string verifyOptions(const InferencePipelineOptions &options);
/// The same for a training step: the inference options' check, then
/// --build-training-step's own (mpt::verifyTrainingStepOptions), which the
/// pass runs too.
std::string verifyOptions(const TrainingPipelineOptions &options);

/// Adds the inference pipeline to `pm` (anchored on the module):
/// precision, then the lowering to the runtime.
void buildInferencePipeline(mlir::OpPassManager &pm,
                            const InferencePipelineOptions &options);

/// Adds the training pipeline to `pm` (anchored on the module): precision,
/// `--build-training-step` (the entry point `train_step`, and `eval_step`
/// unless `eval-entry` is empty), then the lowering to the runtime.
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// Registers `mpt-inference-pipeline` and `mpt-training-pipeline`.
void registerMPTPipelines();

} // namespace mpt

#endif // MPT_PIPELINES_PIPELINES_H
