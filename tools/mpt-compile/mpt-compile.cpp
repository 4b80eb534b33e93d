//===- mpt-compile.cpp - ONNX (or mpt IR) to a runtime plan, in one step --===//
//
//   mpt-compile model.onnx -o model.mptp [--input-shape x=8,16] ...
//
// Runs the importer (for .onnx / .onnxtext; .mlir is parsed as is), with
// --precision `--assign-precision` and `--verify-precision`, then the
// `--lower-to-runtime` pipeline and the plan emitter. The exit code is 0 on
// success, 1 when the input is broken or cannot be lowered, and 2 when the
// model only uses features MPT does not support (all of them are reported).
//
//===----------------------------------------------------------------------===//
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"
#include "mpt/Import/ONNX/Importer.h"
#include "mpt/Target/Plan/PlanEmitter.h"
#include "mpt/Transforms/Passes.h"
#include "ImportFlags.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("mpt-compile options");

static cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                      cl::desc("<model.onnx | .onnxtext | .mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    outputPath("o", cl::desc("Plan file to write (default: the input's name "
                             "with .mptp; '-' for stdout)"),
               cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> fuseEpilogues(
    "fuse-epilogues",
    cl::desc("Fold bias adds and activations into gemm kernels (default: "
             "true; as --lower-to-runtime's fuse-epilogues)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("Run --assign-precision (then --verify-precision) in this mode "
             "before the lowering: fp32, bf16, fp16, fp8 or auto (default: "
             "none, the model's own types)"),
    cl::value_desc("mode"), cl::cat(category));
static cl::opt<std::string> target(
    "target",
    cl::desc("The target --precision=auto picks for: cpu, sm_70, sm_80, ..."),
    cl::value_desc("target"), cl::cat(category));
static cl::opt<std::string> precisionReport(
    "precision-report",
    cl::desc("Write --assign-precision's decision report (JSON) here"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> emitMlir(
    "emit-mlir",
    cl::desc("Write the lowered mpt IR instead of the plan (for inspection)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("Print nothing on success"),
                           cl::init(false), cl::cat(category));

static cl::OptionCategory trainCategory(
    "mpt-compile --train options (passed to --build-training-step; see docs/training.md)");
static cl::opt<bool> train(
    "train",
    cl::desc("Compile a training step (entry point 'train_step': forward, "
             "gradients, loss scaling, optimizer) instead of the forward pass"),
    cl::init(false), cl::cat(trainCategory));

namespace {
/// A --train option, forwarded to the pass's option of the same name.
struct TrainOption {
  const char *name;
  cl::opt<std::string> *opt;
};
#define MPT_TRAIN_OPTION(var, flag, help)                                      \
  static cl::opt<std::string> var(flag, cl::desc(help), cl::value_desc("value"), \
                                  cl::cat(trainCategory));
MPT_TRAIN_OPTION(optOptimizer, "optimizer", "sgd, momentum or adamw (default adamw)")
MPT_TRAIN_OPTION(optLr, "lr", "Learning rate (default 1e-3)")
MPT_TRAIN_OPTION(optMomentum, "momentum", "Momentum of --optimizer=momentum (default 0.9)")
MPT_TRAIN_OPTION(optDampening, "dampening", "Dampening of --optimizer=momentum (default 0)")
MPT_TRAIN_OPTION(optNesterov, "nesterov", "Nesterov momentum: true or false (default false)")
MPT_TRAIN_OPTION(optWeightDecay, "weight-decay", "Weight decay (default: 0 for SGD, 0.01 for AdamW)")
MPT_TRAIN_OPTION(optBeta1, "beta1", "AdamW beta1 (default 0.9)")
MPT_TRAIN_OPTION(optBeta2, "beta2", "AdamW beta2 (default 0.999)")
MPT_TRAIN_OPTION(optEps, "eps", "AdamW epsilon (default 1e-8)")
MPT_TRAIN_OPTION(optLossScale, "loss-scale",
                 "none, dynamic, static:S or auto (default auto: dynamic when the graph has f16)")
MPT_TRAIN_OPTION(optInitScale, "init-scale", "Initial dynamic loss scale (default 65536)")
MPT_TRAIN_OPTION(optGrowthFactor, "growth-factor", "Dynamic scale growth factor (default 2)")
MPT_TRAIN_OPTION(optBackoffFactor, "backoff-factor", "Dynamic scale backoff factor (default 0.5)")
MPT_TRAIN_OPTION(optGrowthInterval, "growth-interval",
                 "Finite steps before the dynamic scale grows (default 2000)")
MPT_TRAIN_OPTION(optClipNorm, "clip-norm", "Clip gradients to this global L2 norm (default 0: off)")
MPT_TRAIN_OPTION(optSchedule, "lr-schedule", "constant or warmup_cosine (default constant)")
MPT_TRAIN_OPTION(optWarmup, "warmup-steps", "Linear warmup steps of warmup_cosine")
MPT_TRAIN_OPTION(optTotal, "total-steps", "Steps over which warmup_cosine decays")
MPT_TRAIN_OPTION(optMinLr, "min-lr", "Final learning rate of warmup_cosine (default 0)")
MPT_TRAIN_OPTION(optLossKind, "loss-kind",
                 "Add a loss: cross_entropy, mse or nll (default: the model's scalar output)")
MPT_TRAIN_OPTION(optLossOutput, "loss-output", "The output an added loss applies to")
MPT_TRAIN_OPTION(optLabelInput, "label-input", "Name of the added loss's label input (default labels)")
MPT_TRAIN_OPTION(optLoss, "loss", "The scalar output that is the loss, when there are several")
MPT_TRAIN_OPTION(optFreeze, "freeze", "Comma-separated parameter-name globs to keep frozen")
MPT_TRAIN_OPTION(optEmitGradients, "emit-gradients",
                 "true: also output each parameter's gradient as grad.<name>")
MPT_TRAIN_OPTION(optEvalEntry, "eval-entry",
                 "Name of the evaluation entry point added beside train_step (default "
                 "eval_step; empty: none)")
MPT_TRAIN_OPTION(optFP8Scaling, "fp8-scaling",
                 "FP8 scales (--precision=fp8): delayed, current or none (all 1; default delayed)")
MPT_TRAIN_OPTION(optFP8AmaxHistory, "fp8-amax-history",
                 "Length of each FP8 tensor's amax history (default 1024)")
MPT_TRAIN_OPTION(optFP8AmaxAlgo, "fp8-amax-algo", "max or most_recent (default max)")
MPT_TRAIN_OPTION(optFP8Margin, "fp8-margin", "scale = fp8_max / amax / 2^margin (default 0)")
#undef MPT_TRAIN_OPTION

const TrainOption trainOptions[] = {
    {"optimizer", &optOptimizer}, {"lr", &optLr}, {"momentum", &optMomentum},
    {"dampening", &optDampening}, {"nesterov", &optNesterov},
    {"weight-decay", &optWeightDecay}, {"beta1", &optBeta1}, {"beta2", &optBeta2},
    {"eps", &optEps}, {"loss-scale", &optLossScale}, {"init-scale", &optInitScale},
    {"growth-factor", &optGrowthFactor}, {"backoff-factor", &optBackoffFactor},
    {"growth-interval", &optGrowthInterval}, {"clip-norm", &optClipNorm},
    {"lr-schedule", &optSchedule}, {"warmup-steps", &optWarmup},
    {"total-steps", &optTotal}, {"min-lr", &optMinLr}, {"loss-kind", &optLossKind},
    {"loss-output", &optLossOutput}, {"label-input", &optLabelInput},
    {"loss", &optLoss}, {"freeze", &optFreeze}, {"emit-gradients", &optEmitGradients},
    {"eval-entry", &optEvalEntry}, {"fp8-scaling", &optFP8Scaling},
    {"fp8-amax-history", &optFP8AmaxHistory}, {"fp8-amax-algo", &optFP8AmaxAlgo},
    {"fp8-margin", &optFP8Margin}};
} // namespace

namespace {

enum ExitCode { kOk = 0, kBroken = 1, kUnsupported = 2 };

bool isOnnx(StringRef path) {
  return path.ends_with(".onnx") || path.ends_with(".onnxtext");
}

std::string defaultOutput(StringRef input) {
  llvm::SmallString<256> path(input);
  llvm::sys::path::replace_extension(path, emitMlir ? ".mlir" : ".mptp");
  return path.str().str();
}

std::string humanBytes(uint64_t bytes) {
  char buffer[32];
  if (bytes >= (1u << 20))
    snprintf(buffer, sizeof(buffer), "%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    snprintf(buffer, sizeof(buffer), "%.1f KiB", bytes / 1024.0);
  else
    snprintf(buffer, sizeof(buffer), "%llu B",
             static_cast<unsigned long long>(bytes));
  return buffer;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  mpt::registerMPTPasses();
  mpt::tools::registerImportFlags(&category);
  cl::HideUnrelatedOptions({&category, &trainCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "MPT compiler: import an ONNX model, lower it to the runtime and write "
      "a plan for mpt-run\n\nMLIR's pass-manager and printing flags (--mlir-timing,\n--mlir-print-ir-after-all, ...) are accepted too; --help-hidden lists them.\n");
  auto start = std::chrono::steady_clock::now();

  DialectRegistry registry;
  registry.insert<mpt::MPTDialect, func::FuncDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics name the ONNX node; the whole module after them is noise.
  context.printOpOnDiagnostic(false);

  OwningOpRef<ModuleOp> module;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  if (isOnnx(inputPath)) {
    mpt::OnnxImportOptions options;
    if (std::string error = mpt::tools::importOptionsFromFlags(options);
        !error.empty()) {
      llvm::errs() << "mpt-compile: " << error << "\n";
      return kBroken;
    }
    mpt::OnnxImportResult result =
        mpt::importOnnxFile(inputPath, context, options);
    if (!result.module) {
      llvm::errs() << "mpt-compile: cannot import " << inputPath << "\n";
      return result.status == mpt::OnnxImportStatus::Unsupported
                 ? kUnsupported
                 : kBroken;
    }
    module = std::move(result.module);
  } else {
    if (mpt::tools::inputBindingsGiven()) {
      llvm::errs() << "mpt-compile: --input-shape and --bind-constant apply "
                      "to ONNX inputs only\n";
      return kBroken;
    }
    module = parseSourceFile<ModuleOp>(inputPath, sourceMgr, &context);
    if (!module) {
      llvm::errs() << "mpt-compile: cannot parse " << inputPath << "\n";
      return kBroken;
    }
  }

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return kBroken;
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  if (!precision.empty()) {
    std::string spec = "assign-precision{mode=" + precision;
    if (!target.empty())
      spec += " target=" + target;
    if (!precisionReport.empty())
      spec += " report=" + precisionReport;
    spec += "},verify-precision";
    std::string error;
    llvm::raw_string_ostream errorStream(error);
    if (failed(parsePassPipeline(spec, pm, errorStream))) {
      llvm::errs() << "mpt-compile: --precision: " << error << "\n";
      return kBroken;
    }
  } else if (!target.empty() || !precisionReport.empty()) {
    llvm::errs() << "mpt-compile: --target and --precision-report need "
                    "--precision\n";
    return kBroken;
  }
  std::string trainSpec;
  for (const TrainOption &o : trainOptions) {
    if (o.opt->getNumOccurrences() == 0)
      continue;
    if (!train) {
      llvm::errs() << "mpt-compile: --" << o.name << " needs --train\n";
      return kBroken;
    }
    trainSpec += (trainSpec.empty() ? "" : " ") + std::string(o.name) + "=" + o.opt->getValue();
  }
  if (train) {
    std::string error;
    llvm::raw_string_ostream errorStream(error);
    if (failed(parsePassPipeline("build-training-step{" + trainSpec + "}", pm, errorStream))) {
      llvm::errs() << "mpt-compile: --train: " << error << "\n";
      return kBroken;
    }
  }
  mpt::LowerToRuntimeOptions lowering;
  lowering.fuseEpilogues = fuseEpilogues;
  mpt::buildLowerToRuntimePipeline(pm, lowering);
  if (failed(pm.run(*module))) {
    llvm::errs() << "mpt-compile: lowering " << inputPath << " failed\n";
    return kBroken;
  }

  std::string output = outputPath.empty() ? defaultOutput(inputPath)
                                          : outputPath.getValue();
  std::string error;
  auto file = openOutputFile(output, &error);
  if (!file) {
    llvm::errs() << "mpt-compile: " << error << "\n";
    return kBroken;
  }
  mpt::PlanSummary summary;
  if (emitMlir) {
    module->print(file->os());
  } else {
    auto bytes = mpt::emitPlan(*module, &summary);
    if (failed(bytes)) {
      llvm::errs() << "mpt-compile: cannot write a plan for " << inputPath
                   << "\n";
      return kBroken;
    }
    file->os().write(reinterpret_cast<const char *>(bytes->data()),
                     bytes->size());
  }
  file->keep();
  if (quiet || emitMlir || output == "-")
    return kOk;

  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  llvm::outs() << "mpt-compile: " << inputPath << " -> " << output << " in "
               << llvm::format("%.0f", ms) << " ms\n"
               << "  " << summary.kernels << " kernels, " << summary.tensors
               << " tensors, " << summary.parameters << " parameters ("
               << humanBytes(summary.parameterBytes) << "), data blob "
               << humanBytes(summary.constantBytes) << "\n";
  for (auto func : module->getOps<func::FuncOp>())
    for (auto arena : func.getOps<mpt::rt::ArenaOp>())
      llvm::outs() << "  entry point '" << func.getSymName()
                   << "': arena peak " << humanBytes(arena.getSize()) << " ("
                   << arena.getSize() << " bytes)\n";
  return kOk;
}
