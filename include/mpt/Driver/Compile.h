//===- Compile.h - the whole compile, for every front end -------*- C++ -*-===//
//
// The steps between a model file and a lowered module, written once:
//
//   verify the options -> import (.onnx, .onnxtext) or parse (.mlir)
//     -> [extra passes] -> the inference or training pipeline
//     -> the memory analysis
//
// mpt-compile (its flags), the C API (an option string, which the Python
// package passes) and any embedder fill a CompileRequest and call
// mpt::driver::compile; they only print or return what it gives back, and
// write the plan with mpt::writePlan / mpt::emitPlan. Which options go
// together is decided by mpt::driver::verify alone, so every front end
// rejects the same option sets with the same message
// (test/Pipelines/option-checks.mlir).
//
//===----------------------------------------------------------------------===//
#ifndef MPT_DRIVER_COMPILE_H
#define MPT_DRIVER_COMPILE_H

#include "mpt/Conversion/MemoryReport.h"
#include "mpt/Import/ONNX/Importer.h"
#include "mpt/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mpt::driver {

/// How a compile ended: the tools' exit codes and the C API's statuses.
enum class Status {
  Ok = 0,
  /// The input is broken, the options are invalid, or lowering failed.
  Broken = 1,
  /// The model only uses features MPT does not support (all reported).
  Unsupported = 2,
};

/// What one compile is asked to do.
struct CompileRequest {
  /// `.onnx` or `.onnxtext` (imported) or `.mlir` (mpt IR, parsed as is).
  std::string inputPath;
  /// Import the input as ONNX whatever its extension (the C API's
  /// mpt_compile_onnx_file).
  bool alwaysOnnx = false;
  /// Compile the training step (the training pipeline) rather than the
  /// forward pass (the inference pipeline, which reads the options' base).
  bool train = false;
  /// The pipeline's options (required).
  const TrainingPipelineOptions *options = nullptr;
  /// The importer's options, for an ONNX input.
  OnnxImportOptions import;
  /// Whether input shapes or constants are bound; they apply to ONNX
  /// inputs only.
  bool importBindings = false;
  /// Analyse the lowered module's memory (mpt-compile --memory-report).
  bool analyzeMemory = false;
  /// Passes to run on the imported module before the pipeline, as a textual
  /// pass pipeline of registered passes
  /// (`assign-precision{mode=fp16 force-low=softmax}`; empty: none): what
  /// the pipelines' options do not expose, for the conformance tests that
  /// compile with it (test/Conformance/EndToEnd.cpp).
  std::string extraPasses;
  /// Called with the external data files an ONNX model names, after the
  /// import and before the pipeline runs (which may write the precision
  /// report); a message stops the compile with it (a front end refuses an
  /// output that would overwrite one of them).
  std::function<std::string(const std::vector<std::string> &)>
      checkExternalData;
};

/// "" when the request's options hold together, else why not, naming the
/// options by their pipeline names ("lr needs train", "target,
/// precision-report and precision-profile need precision", ...). compile()
/// calls it first; a front end may call it before it reads anything else.
std::string verify(const CompileRequest &request);

/// A context for compiling: every dialect of InitAll.h loaded, and
/// diagnostics that name the op's location without printing the op.
std::unique_ptr<mlir::MLIRContext> createContext();

struct CompileResult {
  Status status = Status::Broken;
  /// Whether the input was imported or parsed: a failure after that is the
  /// pipeline's (or the memory analysis').
  bool imported = false;
  /// Why the compile failed, in one line ("cannot import model.onnx",
  /// "invalid options: ..."); the details went to the context's diagnostic
  /// handlers.
  std::string error;
  /// The lowered module, on success.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// With `analyzeMemory`, the lowered module's memory.
  std::optional<MemoryReport> memory;
};

/// Verifies, imports or parses, runs the extra passes and the pipeline on
/// `pm`'s context (with
/// `pm`'s instrumentation: timing, IR printing, crash reproducers) and
/// analyses the memory. `sourceMgr` holds a parsed `.mlir` input, for the
/// diagnostics that point into it.
CompileResult compile(const CompileRequest &request, mlir::PassManager &pm,
                      llvm::SourceMgr &sourceMgr);

} // namespace mpt::driver

#endif // MPT_DRIVER_COMPILE_H
