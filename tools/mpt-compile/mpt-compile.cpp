//===- mpt-compile.cpp - ONNX (or mpt IR) to a runtime plan, in one step --===//
//
//   mpt-compile model.onnx -o model.mptp [--input-shape x=8,16] ...
//
// Runs the importer (for .onnx / .onnxtext; .mlir is parsed as is), then
// mpt::buildInferencePipeline (mpt::buildTrainingPipeline with --train),
// whose options are this tool's flags, then the plan emitter. The exit code
// is 0 on success, 1 when the input is broken or cannot be lowered, and 2
// when the model only uses features MPT does not support (all of them are
// reported).
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"
#include "mpt/Driver/Compile.h"
#include "mpt/Driver/OutOfMemory.h"
#include "mpt/Driver/OutputFile.h"
#include "mpt/Driver/PipelineFlags.h"
#include "mpt/Target/Plan/PlanEmitter.h"
#ifdef MPT_ENABLE_ONNX
#include "mpt/Driver/ImportFlags.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mptrt/OutputPaths.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;
namespace driver = mpt::driver;

static cl::OptionCategory category("mpt-compile options");

static cl::opt<std::string>
    inputPath(cl::Positional, cl::Required,
              cl::desc("<model.onnx | .onnxtext | .mlir>"), cl::cat(category));
static cl::opt<std::string>
    outputPath("o",
               cl::desc("Plan file to write (default: the input's name "
                        "with .mptp; '-' for stdout)"),
               cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> emitMlir(
    "emit-mlir",
    cl::desc("Write the lowered mpt IR instead of the plan (for inspection)"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> memoryReport(
    "memory-report",
    cl::desc("Write the plan's memory by role and dtype (JSON; '-' for "
             "stdout): parameters, masters, gradients, optimizer state, "
             "saved activations, cast buffers, workspace, and each entry "
             "point's arena peak; a summary goes to stderr"),
    cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("Print nothing on success"),
                           cl::init(false), cl::cat(category));

static cl::opt<bool> train(
    "train",
    cl::desc("Compile a training step (entry point 'train_step': forward, "
             "gradients, loss scaling, optimizer) instead of the forward pass"),
    cl::init(false), cl::cat(mpt::getTrainingOptionsCategory()));

namespace {

enum ExitCode { kOk = 0, kBroken = 1 };

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
  driver::exitCleanlyOnOutOfMemory("mpt-compile");
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // The pipeline's options are this tool's flags (--precision, --lr, ...).
  mpt::driver::PipelineFlags<mpt::TrainingPipelineOptions> pipeline;
#ifdef MPT_ENABLE_ONNX
  driver::registerImportFlags(&category);
#endif
  cl::HideUnrelatedOptions({&category, &mpt::getPipelineOptionsCategory(),
                            &mpt::getTrainingOptionsCategory()});
  // MLIR's own flags stay out of --help but are listed by --help-hidden.
  for (auto &[name, option] : cl::getRegisteredOptions())
    if (name.starts_with("mlir-"))
      option->setHiddenFlag(cl::Hidden);
  cl::ParseCommandLineOptions(
      argc, argv,
      "MPT compiler: import an ONNX model, lower it to the runtime and write "
      "a plan for mpt-run\n\nMLIR's pass-manager and printing flags "
      "(--mlir-timing,\n--mlir-print-ir-after-all, ...) are accepted too; "
      "--help-hidden lists them.\n");
  auto start = std::chrono::steady_clock::now();

  driver::CompileRequest request;
  request.inputPath = inputPath;
  request.train = train;
  request.options = &pipeline;
  request.analyzeMemory = !memoryReport.empty();
#ifdef MPT_ENABLE_ONNX
  if (std::string error = driver::importOptionsFromFlags(request.import);
      !error.empty()) {
    llvm::errs() << "mpt-compile: " << error << "\n";
    return kBroken;
  }
  request.importBindings = driver::inputBindingsGiven();
#endif
  if (std::string bad = driver::verify(request); !bad.empty()) {
    llvm::errs() << "mpt-compile: invalid options: " << bad << "\n";
    return kBroken;
  }
  // No output may overwrite the model, the profile, or another output.
  std::string output =
      outputPath.empty() ? defaultOutput(inputPath) : outputPath.getValue();
  std::vector<mptrt::PathUse> reads = {{"the model", inputPath}};
  if (!pipeline.precisionProfile.empty())
    reads.push_back({"--precision-profile", pipeline.precisionProfile});
  std::vector<mptrt::PathUse> writes = {{"-o", output}};
  if (!memoryReport.empty())
    writes.push_back({"--memory-report", memoryReport});
  if (!pipeline.precisionReport.empty())
    writes.push_back({"--precision-report", pipeline.precisionReport});
  if (std::string conflict = mptrt::findOutputConflict(reads, writes);
      !conflict.empty()) {
    llvm::errs() << "mpt-compile: " << conflict << "\n";
    return kBroken;
  }

  // Nor the model's external data, known once it is parsed: checked before
  // the pipeline, which writes the precision report.
  request.checkExternalData = [&](const std::vector<std::string> &files) {
    std::vector<mptrt::PathUse> external;
    for (const std::string &file : files)
      external.push_back({"the model's external data", file});
    return mptrt::findOutputConflict(external, writes);
  };

  std::unique_ptr<MLIRContext> context = driver::createContext();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, context.get());
  PassManager pm(context.get());
  if (failed(applyPassManagerCLOptions(pm)))
    return kBroken;
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  driver::CompileResult compiled = driver::compile(request, pm, sourceMgr);
  if (compiled.status != driver::Status::Ok) {
    llvm::errs() << "mpt-compile: " << compiled.error << "\n";
    return static_cast<int>(compiled.status);
  }
  ModuleOp module = *compiled.module;

  // Each output replaces what was there only once it is complete
  // (driver::OutputFile).
  std::string error;
  auto file = driver::OutputFile::open(output, &error);
  if (!file) {
    llvm::errs() << "mpt-compile: " << error << "\n";
    return kBroken;
  }
  mpt::PlanSummary summary;
  if (emitMlir) {
    module.print(file->os());
  } else {
    if (failed(mpt::writePlan(module, file->os(), &summary))) {
      llvm::errs() << "mpt-compile: cannot write a plan for " << inputPath
                   << "\n";
      return kBroken;
    }
  }
  if (!file->commit(&error)) {
    llvm::errs() << "mpt-compile: " << error << "\n";
    return kBroken;
  }
  if (compiled.memory) {
    auto reportFile = driver::OutputFile::open(memoryReport, &error);
    if (!reportFile) {
      llvm::errs() << "mpt-compile: " << error << "\n";
      return kBroken;
    }
    std::optional<uint64_t> planBytes;
    if (!emitMlir)
      planBytes = summary.parameterBytes;
    mpt::writeMemoryReportJSON(*compiled.memory, reportFile->os(), planBytes);
    if (!reportFile->commit(&error)) {
      llvm::errs() << "mpt-compile: " << error << "\n";
      return kBroken;
    }
    if (!quiet)
      mpt::printMemorySummary(*compiled.memory, llvm::errs());
  }
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
  for (auto func : module.getOps<func::FuncOp>())
    for (auto arena : func.getOps<mpt::rt::ArenaOp>())
      llvm::outs() << "  entry point '" << func.getSymName() << "': arena peak "
                   << humanBytes(arena.getSize()) << " (" << arena.getSize()
                   << " bytes)\n";
  return kOk;
}
