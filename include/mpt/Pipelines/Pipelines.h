//===- Pipelines.h - the whole compile pipeline, from one options struct --===//
//
// The passes `mpt-compile` runs between the importer and the plan emitter,
// as functions that embedding users, `mpt-opt` and `mpt-compile` all call:
//
//   [assign-precision, verify-precision]   when `precision` is not `none`
//   [build-training-step]                  the training pipeline only
//   lower-to-runtime                       canonicalize ... plan the arena
//
// Each option is declared once, here. The pass pipelines registered by
// `registerMPTPipelines` parse them from a string
// (`--mpt-training-pipeline="precision=bf16 optimizer=adamw lr=3e-4"`), and
// `mpt-compile` makes the same options its own flags (`--precision=bf16`).
// Defaults are read from the passes' generated option structs, so they are
// stated once too, in Passes.td.
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

/// The precision a pipeline compiles in: `None` keeps the model's own types
/// (no `--assign-precision`); the others are `--assign-precision` modes.
enum class PipelinePrecision { None, FP32, BF16, FP16, FP8, Auto };

/// The help categories the pipeline options are listed under in a tool that
/// makes them its flags (mpt-compile's `--help`).
llvm::cl::OptionCategory &getPipelineOptionsCategory();
llvm::cl::OptionCategory &getTrainingOptionsCategory();

/// Options of the inference pipeline: the precision and the lowering.
struct InferencePipelineOptions
    : public mlir::PassPipelineOptions<InferencePipelineOptions> {
  Option<PipelinePrecision> precision{
      *this,
      "precision",
      llvm::cl::desc("Run --assign-precision (then --verify-precision) in "
                     "this mode before the lowering"),
      llvm::cl::init(PipelinePrecision::None),
      llvm::cl::values(
          clEnumValN(PipelinePrecision::None, "none",
                     "The model's own types (no --assign-precision)"),
          clEnumValN(PipelinePrecision::FP32, "fp32", "Everything FP32"),
          clEnumValN(PipelinePrecision::BF16, "bf16", "BF16 mixed precision"),
          clEnumValN(PipelinePrecision::FP16, "fp16", "FP16 mixed precision"),
          clEnumValN(PipelinePrecision::FP8, "fp8",
                     "FP8 (E4M3) contraction inputs, otherwise BF16"),
          clEnumValN(PipelinePrecision::Auto, "auto", "Chosen from --target")),
      llvm::cl::cat(getPipelineOptionsCategory())};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("The target --precision=auto picks for: cpu, sm_70, "
                     "sm_80, ..."),
      llvm::cl::value_desc("target"),
      llvm::cl::cat(getPipelineOptionsCategory())};
  Option<std::string> precisionReport{
      *this, "precision-report",
      llvm::cl::desc("Write --assign-precision's decision report (JSON) here "
                     "('-' for stdout)"),
      llvm::cl::value_desc("file"),
      llvm::cl::cat(getPipelineOptionsCategory())};
  Option<std::string> precisionProfile{
      *this, "precision-profile",
      llvm::cl::desc("Ranges measured by mpt-train --collect-ranges: with "
                     "--precision=fp16, ops whose values reach the FP16 "
                     "range (or flush to zero in it) stay FP32"),
      llvm::cl::value_desc("file"),
      llvm::cl::cat(getPipelineOptionsCategory())};
  Option<double> profileMargin{
      *this, "profile-margin",
      llvm::cl::desc("Doublings below FP16's largest value a profiled max "
                     "|x| must stay (default 1)"),
      llvm::cl::init(AssignPrecisionPassOptions().profileMargin),
      llvm::cl::cat(getPipelineOptionsCategory())};
  Option<double> profileFlushLimit{
      *this, "profile-flush-limit",
      llvm::cl::desc("The largest fraction of a profiled node's values FP16 "
                     "may flush to zero before it stays FP32 (default 0.01)"),
      llvm::cl::init(AssignPrecisionPassOptions().profileFlushLimit),
      llvm::cl::cat(getPipelineOptionsCategory())};
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("Fold bias adds and activations into gemm kernels"),
      llvm::cl::init(LowerToRuntimeOptions().fuseEpilogues.getValue()),
      llvm::cl::cat(getPipelineOptionsCategory())};
};

/// Options of the training pipeline: the inference pipeline's, and those of
/// `--build-training-step` (docs/training.md).
struct TrainingPipelineOptions : public InferencePipelineOptions {
  /// Hides the base's factory, which would build the inference options.
  static std::unique_ptr<TrainingPipelineOptions>
  createFromString(llvm::StringRef options);

  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd, momentum or adamw"),
                                llvm::cl::init(defaults().optimizer),
                                llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> lr{*this, "lr", llvm::cl::desc("Learning rate"),
                    llvm::cl::init(defaults().lr),
                    llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> momentum{*this, "momentum",
                          llvm::cl::desc("Momentum of --optimizer=momentum"),
                          llvm::cl::init(defaults().momentum),
                          llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> dampening{*this, "dampening",
                           llvm::cl::desc("Dampening of --optimizer=momentum"),
                           llvm::cl::init(defaults().dampening),
                           llvm::cl::cat(getTrainingOptionsCategory())};
  Option<bool> nesterov{*this, "nesterov", llvm::cl::desc("Nesterov momentum"),
                        llvm::cl::init(defaults().nesterov),
                        llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("Weight decay (default, below 0: 0 for SGD, 0.01 for "
                     "AdamW)"),
      llvm::cl::init(defaults().weightDecay),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> beta1{*this, "beta1", llvm::cl::desc("AdamW beta1"),
                       llvm::cl::init(defaults().beta1),
                       llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> beta2{*this, "beta2", llvm::cl::desc("AdamW beta2"),
                       llvm::cl::init(defaults().beta2),
                       llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> eps{*this, "eps", llvm::cl::desc("AdamW epsilon"),
                     llvm::cl::init(defaults().eps),
                     llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("none, dynamic, static:S or auto (dynamic when the graph "
                     "has f16, else none)"),
      llvm::cl::init(defaults().lossScale),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> initScale{*this, "init-scale",
                           llvm::cl::desc("Initial dynamic loss scale"),
                           llvm::cl::init(defaults().initScale),
                           llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> growthFactor{*this, "growth-factor",
                              llvm::cl::desc("Dynamic scale growth factor"),
                              llvm::cl::init(defaults().growthFactor),
                              llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> backoffFactor{*this, "backoff-factor",
                               llvm::cl::desc("Dynamic scale backoff factor"),
                               llvm::cl::init(defaults().backoffFactor),
                               llvm::cl::cat(getTrainingOptionsCategory())};
  Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("Finite steps before the dynamic scale grows"),
      llvm::cl::init(defaults().growthInterval),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> clipNorm{
      *this, "clip-norm",
      llvm::cl::desc("Clip gradients to this global L2 norm (0: off)"),
      llvm::cl::init(defaults().clipNorm),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> schedule{*this, "lr-schedule",
                               llvm::cl::desc("constant or warmup_cosine"),
                               llvm::cl::init(defaults().schedule),
                               llvm::cl::cat(getTrainingOptionsCategory())};
  Option<int64_t> warmupSteps{
      *this, "warmup-steps",
      llvm::cl::desc("Linear warmup steps of warmup_cosine"),
      llvm::cl::init(defaults().warmupSteps),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<int64_t> totalSteps{
      *this, "total-steps",
      llvm::cl::desc("Steps over which warmup_cosine decays"),
      llvm::cl::init(defaults().totalSteps),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<double> minLr{*this, "min-lr",
                       llvm::cl::desc("Final learning rate of warmup_cosine"),
                       llvm::cl::init(defaults().minLr),
                       llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> lossKind{
      *this, "loss-kind",
      llvm::cl::desc("Add a loss: cross_entropy, mse or nll (default: the "
                     "model's scalar output)"),
      llvm::cl::init(defaults().lossKind),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> lossOutput{
      *this, "loss-output",
      llvm::cl::desc("The output an added loss applies to"),
      llvm::cl::init(defaults().lossOutput),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> labelInput{
      *this, "label-input",
      llvm::cl::desc("Name of the added loss's label input"),
      llvm::cl::init(defaults().labelInput),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> lossName{
      *this, "loss",
      llvm::cl::desc(
          "The scalar output that is the loss, when there are several"),
      llvm::cl::init(defaults().lossName),
      llvm::cl::cat(getTrainingOptionsCategory())};
  ListOption<std::string> freeze{
      *this, "freeze",
      llvm::cl::desc("Comma-separated parameter-name globs to keep frozen"),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<bool> emitGradients{
      *this, "emit-gradients",
      llvm::cl::desc("Also output each parameter's unscaled gradient as "
                     "grad.<name>"),
      llvm::cl::init(defaults().emitGradients),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> evalEntry{
      *this, "eval-entry",
      llvm::cl::desc("Name of the evaluation entry point added beside "
                     "train_step (empty: none)"),
      llvm::cl::init(defaults().evalEntry),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> fp8Scaling{
      *this, "fp8-scaling",
      llvm::cl::desc("FP8 scales (precision=fp8): delayed, current, or none "
                     "(every scale 1; for comparison only)"),
      llvm::cl::init(defaults().fp8Scaling),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<int64_t> fp8AmaxHistory{
      *this, "fp8-amax-history",
      llvm::cl::desc(
          "Length of each FP8 tensor's amax history (delayed scaling)"),
      llvm::cl::init(defaults().fp8AmaxHistory),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> fp8AmaxAlgo{
      *this, "fp8-amax-algo",
      llvm::cl::desc(
          "The amax a delayed scale comes from: max (of the history) "
          "or most_recent"),
      llvm::cl::init(defaults().fp8AmaxAlgo),
      llvm::cl::cat(getTrainingOptionsCategory())};
  Option<int64_t> fp8Margin{*this, "fp8-margin",
                            llvm::cl::desc("scale = fp8_max / amax / 2^margin"),
                            llvm::cl::init(defaults().fp8Margin),
                            llvm::cl::cat(getTrainingOptionsCategory())};
  Option<std::string> masterWeights{
      *this, "master-weights",
      llvm::cl::desc("The trainable parameters' master weights: fp32, bf16 "
                     "(updates rounded to nearest even; small ones stall) or "
                     "bf16-sr (stochastic rounding); AdamW, moments stay fp32"),
      llvm::cl::init(defaults().masterWeights),
      llvm::cl::cat(getTrainingOptionsCategory())};

private:
  /// The defaults of `--build-training-step`, from Passes.td.
  static const BuildTrainingStepPassOptions &defaults();
};

/// The one check of which options go together, for every front end
/// (mpt-compile, the C API and Python, the registered pipelines): a message
/// naming the options by their pipeline names, or "" when they hold
/// together. Options of a single value are checked by their own parsers.
std::string verifyOptions(const InferencePipelineOptions &options);

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
