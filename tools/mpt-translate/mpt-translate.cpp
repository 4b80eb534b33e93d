//===- mpt-translate.cpp - translations into and out of MPT ---------------===//
//
//   mpt-translate --import-onnx model.onnx [--input-shape x=8,16] -o out.mlir
//   mpt-translate --mlir-to-plan lowered.mlir -o model.mptp
//
// `.onnxtext` inputs are parsed as the ONNX text syntax. A build without
// the importer (MPT_ENABLE_ONNX=OFF) has --mlir-to-plan only. The exit code is
// 0 on success, 1 when the model is broken, and 2 when it only uses features
// MPT does not support (every one of them is reported).
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Target/Plan/PlanEmitter.h"
#ifdef MPT_ENABLE_ONNX
#include "ImportFlags.h"
#include "mpt/Import/ONNX/Importer.h"
#endif

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdlib>

using namespace mlir;

/// Set when the import failed only for unsupported features; main() turns
/// it into exit code 2 so scripts can tell "unsupported" from "broken".
static bool sawUnsupported = false;

#ifdef MPT_ENABLE_ONNX
static void registerOnnxImport() {
  TranslateToMLIRRegistration importOnnx(
      "import-onnx", "Import an ONNX model (.onnx or .onnxtext) into mpt",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        mpt::OnnxImportOptions options;
        if (std::string error = mpt::tools::importOptionsFromFlags(options);
            !error.empty()) {
          emitError(UnknownLoc::get(context)) << error;
          return nullptr;
        }
        const llvm::MemoryBuffer *buffer =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        StringRef path = buffer->getBufferIdentifier();
        // Reading the file again (rather than the SourceMgr's copy) keeps
        // the external-data directory next to the model.
        mpt::OnnxImportResult result =
            path == "<stdin>"
                ? mpt::importOnnxBuffer(buffer->getBuffer(), false, path, ".",
                                        *context, options)
                : mpt::importOnnxFile(path, *context, options);
        if (result.status == mpt::OnnxImportStatus::Unsupported)
          sawUnsupported = true;
        if (!result.module)
          return nullptr;
        return OwningOpRef<Operation *>(result.module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<mpt::MPTDialect, func::FuncDialect>();
      });
}

#endif

int main(int argc, char **argv) {
#ifdef MPT_ENABLE_ONNX
  mpt::tools::registerImportFlags();
  registerOnnxImport();
#endif
  mpt::registerToPlanTranslation();
  LogicalResult result = mlirTranslateMain(argc, argv, "MPT translation tool");
  if (succeeded(result))
    return EXIT_SUCCESS;
  return sawUnsupported ? 2 : EXIT_FAILURE;
}
