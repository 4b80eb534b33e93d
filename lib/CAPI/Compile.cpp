//===- Compile.cpp - the compiler's C API (mpt-c/Compile.h) --------------===//
//
// mpt_compile_onnx_file is a front end of the driver (mpt/Driver/Compile.h),
// as mpt-compile is: it parses the options string and the input shapes into
// a CompileRequest, and emits the plan the driver's compile lowered. Every
// diagnostic of the call is caught by a handler on its own context and
// returned as one message; nothing is printed but warnings of a successful
// compile (on stderr, as mpt-compile prints them).
//
//===----------------------------------------------------------------------===//
#include "mpt-c/Compile.h"

#include "mpt/Driver/Compile.h"
#include "mpt/Driver/OutOfMemory.h"
#include "mpt/Target/Plan/PlanEmitter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <string>

using namespace mlir;

namespace {

/// A malloc'ed copy of `text`, for the caller to mpt_compile_free.
char *copyString(const std::string &text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (copy)
    std::memcpy(copy, text.c_str(), text.size() + 1);
  return copy;
}

const char *severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

/// `loc` as a reader wants it: "file: node 'name'" for the importer's
/// locations (a name over the file), "file:line:col" for others.
void printLocation(Location loc, llvm::raw_ostream &os) {
  if (auto named = dyn_cast<NameLoc>(loc)) {
    if (!isa<UnknownLoc>(named.getChildLoc())) {
      printLocation(named.getChildLoc(), os);
      os << ": ";
    }
    os << "node '" << named.getName().getValue() << "'";
    return;
  }
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue();
    if (file.getLine() != 0)
      os << ":" << file.getLine() << ":" << file.getColumn();
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (!fused.getLocations().empty()) {
      printLocation(fused.getLocations().front(), os);
      return;
    }
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc)) {
    printLocation(callSite.getCallee(), os);
    return;
  }
  os << loc;
}

/// Collects the context's diagnostics as "location: severity: message"
/// lines (notes indented under theirs).
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          append(diag, "");
          for (Diagnostic &note : diag.getNotes())
            append(note, "  ");
          return success();
        }) {}

  std::string text;
  std::string warnings;

private:
  void append(Diagnostic &diag, const char *indent) {
    std::string line;
    llvm::raw_string_ostream os(line);
    os << indent;
    if (!isa<UnknownLoc>(diag.getLocation())) {
      printLocation(diag.getLocation(), os);
      os << ": ";
    }
    os << severityName(diag.getSeverity()) << ": " << diag.str() << "\n";
    text += line;
    if (diag.getSeverity() == DiagnosticSeverity::Warning)
      warnings += line;
  }

  ScopedDiagnosticHandler handler;
};

int fail(char **error, int code, const std::string &message) {
  if (error)
    *error = copyString(message.empty() ? "mpt: compile failed" : message);
  return code;
}

/// Parses the pipeline options into `options`; returns an error message or
/// "". Which options go together is the driver's to check.
std::string parseOptions(mpt::TrainingPipelineOptions &options,
                         const char *text) {
  std::string message;
  llvm::raw_string_ostream os(message);
  // A typed option's bad value ("for the --optimizer option: must be sgd,
  // ...") is reported here, not on stderr.
  mpt::OptionErrorCapture typedErrors;
  if (succeeded(options.parseFromString(text ? text : "", os)))
    return "";
  message += typedErrors.text();
  // llvm::cl names the parser; the reader needs the option alone.
  llvm::StringRef parserName = "<Pass-Options-Parser>: ";
  if (llvm::StringRef(message).starts_with(parserName))
    message = message.substr(parserName.size());
  std::string result = "invalid pipeline options '" +
                       std::string(text ? text : "") + "': " + message;
  while (!result.empty() && (result.back() == '\n' || result.back() == ' ' ||
                             result.back() == ':'))
    result.pop_back();
  // An untyped option's bad value (lr=fast) is reported by llvm::cl on
  // stderr, not in `message`.
  if (message.empty())
    result += ": an option has a value it does not take (stderr says "
              "which; docs/pipelines.md lists the values)";
  return result;
}

} // namespace

extern "C" int mpt_compile_onnx_file(const char *onnxPath, int train,
                                     const char *pipelineOptions,
                                     const char *inputShapes, void **plan,
                                     size_t *planSize, char **error) {
  if (error)
    *error = nullptr;
  if (plan)
    *plan = nullptr;
  if (planSize)
    *planSize = 0;
  if (!onnxPath || !plan || !planSize)
    return fail(error, MPT_COMPILE_ERROR,
                "mpt_compile_onnx_file: onnx_path, plan and plan_size must "
                "not be NULL");
  // The options first: they fail fast and need no context.
  mpt::TrainingPipelineOptions options;
  if (std::string bad = parseOptions(options, pipelineOptions); !bad.empty())
    return fail(error, MPT_COMPILE_ERROR, bad);
  mpt::driver::CompileRequest request;
  request.inputPath = onnxPath;
  request.alwaysOnnx = true;
  request.train = train != 0;
  request.options = &options;
  if (inputShapes) {
    llvm::SmallVector<llvm::StringRef> bindings;
    llvm::StringRef(inputShapes).split(bindings, ';', -1, false);
    for (llvm::StringRef binding : bindings) {
      std::string bindError =
          mpt::parseInputShapeBinding(binding.trim(), request.import);
      if (!bindError.empty())
        return fail(error, MPT_COMPILE_ERROR,
                    "invalid input shape '" + binding.trim().str() +
                        "': " + bindError);
    }
    request.importBindings = !bindings.empty();
  }
  if (std::string bad = mpt::driver::verify(request); !bad.empty())
    return fail(error, MPT_COMPILE_ERROR, "invalid options: " + bad);

  std::unique_ptr<MLIRContext> context = mpt::driver::createContext();
  DiagnosticCollector diagnostics(*context);
  PassManager pm(context.get());
  llvm::SourceMgr sourceMgr;
  // Out of memory ends the process with a message, not LLVM's abort (the
  // sizes a model asks for are checked first; mpt/Driver/OutOfMemory.h).
  mpt::driver::ScopedOutOfMemoryExit outOfMemory("mpt_compile_onnx_file");
  mpt::driver::CompileResult compiled =
      mpt::driver::compile(request, pm, sourceMgr);
  if (compiled.status != mpt::driver::Status::Ok)
    return fail(error,
                compiled.status == mpt::driver::Status::Unsupported
                    ? MPT_COMPILE_UNSUPPORTED
                    : MPT_COMPILE_ERROR,
                compiled.error + "\n" + diagnostics.text);

  FailureOr<std::vector<uint8_t>> bytes = mpt::emitPlan(*compiled.module);
  if (failed(bytes))
    return fail(error, MPT_COMPILE_ERROR,
                "cannot write a plan for " + std::string(onnxPath) + "\n" +
                    diagnostics.text);
  void *copy = std::malloc(bytes->empty() ? 1 : bytes->size());
  if (!copy)
    return fail(error, MPT_COMPILE_ERROR, "out of memory for the plan");
  std::memcpy(copy, bytes->data(), bytes->size());
  *plan = copy;
  *planSize = bytes->size();
  if (!diagnostics.warnings.empty())
    llvm::errs() << diagnostics.warnings;
  return MPT_COMPILE_OK;
}

extern "C" int mpt_check_pipeline_options(int train,
                                          const char *pipelineOptions,
                                          char **error) {
  if (error)
    *error = nullptr;
  mpt::TrainingPipelineOptions options;
  if (std::string bad = parseOptions(options, pipelineOptions); !bad.empty())
    return fail(error, MPT_COMPILE_ERROR, bad);
  mpt::driver::CompileRequest request;
  request.train = train != 0;
  request.options = &options;
  if (std::string bad = mpt::driver::verify(request); !bad.empty())
    return fail(error, MPT_COMPILE_ERROR, "invalid options: " + bad);
  return MPT_COMPILE_OK;
}

extern "C" void mpt_compile_free(void *p) { std::free(p); }
