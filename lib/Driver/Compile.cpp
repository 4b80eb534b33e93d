//===- Compile.cpp - the whole compile, for every front end ---------------===//
#include "mpt/Driver/Compile.h"

#include "mpt/InitAll.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mpt;
using namespace mpt::driver;

namespace {

bool isOnnx(const CompileRequest &request) {
  llvm::StringRef path = request.inputPath;
  return request.alwaysOnnx || path.ends_with(".onnx") ||
         path.ends_with(".onnxtext");
}

CompileResult stop(Status status, std::string error, bool imported = false) {
  CompileResult result;
  result.status = status;
  result.imported = imported;
  result.error = std::move(error);
  return result;
}

} // namespace

std::string driver::verify(const CompileRequest &request) {
  const TrainingPipelineOptions &options = *request.options;
  if (!request.train) {
    llvm::SmallVector<llvm::StringRef> given =
        options.givenIn(getTrainingOptionsCategory());
    if (!given.empty())
      return given.front().str() + " needs train";
  }
  if (request.importBindings && !isOnnx(request))
    return "input-shape and bind-constant apply to ONNX inputs only";
  return verifyOptions(options);
}

std::unique_ptr<MLIRContext> driver::createContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  // Diagnostics name the ONNX node; the whole module after them is noise.
  context->printOpOnDiagnostic(false);
  return context;
}

CompileResult driver::compile(const CompileRequest &request, PassManager &pm,
                              llvm::SourceMgr &sourceMgr) {
  assert(request.options && "a compile needs the pipeline's options");
  if (std::string bad = verify(request); !bad.empty())
    return stop(Status::Broken, "invalid options: " + bad);
  MLIRContext *context = pm.getContext();
  const std::string &path = request.inputPath;
  if (!request.extraPasses.empty()) {
    std::string message;
    llvm::raw_string_ostream os(message);
    if (mlir::failed(parsePassPipeline(request.extraPasses, pm, os)))
      return stop(Status::Broken, "invalid pass pipeline '" +
                                      request.extraPasses +
                                      "': " + StringRef(message).trim().str());
  }

  CompileResult result;
  if (isOnnx(request)) {
#ifdef MPT_ENABLE_ONNX
    OnnxImportResult imported = importOnnxFile(path, *context, request.import);
    if (!imported.module)
      return stop(imported.status == OnnxImportStatus::Unsupported
                      ? Status::Unsupported
                      : Status::Broken,
                  "cannot import " + path);
    result.module = std::move(imported.module);
    if (request.checkExternalData)
      if (std::string bad =
              request.checkExternalData(imported.externalDataFiles);
          !bad.empty())
        return stop(Status::Broken, bad);
#else
    return stop(Status::Broken,
                "cannot import " + path +
                    ": this build has no ONNX importer (MPT_ENABLE_ONNX=OFF); "
                    "give mpt IR (.mlir)");
#endif
  } else {
    result.module = parseSourceFile<ModuleOp>(path, sourceMgr, context);
    if (!result.module)
      return stop(Status::Broken, "cannot parse " + path);
  }

  if (request.train)
    buildTrainingPipeline(pm, *request.options);
  else
    buildInferencePipeline(pm, *request.options);
  if (mlir::failed(pm.run(*result.module)))
    return stop(Status::Broken, "lowering " + path + " failed",
                /*imported=*/true);

  if (request.analyzeMemory) {
    FailureOr<MemoryReport> memory = analyzeMemory(*result.module);
    if (mlir::failed(memory))
      return stop(Status::Broken, "cannot report the memory of " + path,
                  /*imported=*/true);
    result.memory = std::move(*memory);
  }
  result.status = Status::Ok;
  result.imported = true;
  return result;
}
