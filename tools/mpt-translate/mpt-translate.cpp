//===- mpt-translate.cpp - translations into and out of MPT ---------------===//
//
//   mpt-translate --import-onnx model.onnx [--input-shape x=8,16] -o out.mlir
//   mpt-translate --mlir-to-plan lowered.mlir -o model.mptp
//
// `.onnxtext` inputs are parsed as the ONNX text syntax. The exit code is 0
// on success, 1 when the model is broken, and 2 when it only uses features
// MPT does not support (every one of them is reported).
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Import/ONNX/Importer.h"
#include "mpt/Target/Plan/PlanEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

#include <cstdlib>

using namespace mlir;

static llvm::cl::list<std::string> inputShapes(
    "input-shape",
    llvm::cl::desc("Bind the shape of a graph input: name=d0,d1,... "
                   "(repeatable; required for dynamic dimensions)"));

static llvm::cl::list<std::string> constantBindings(
    "bind-constant",
    llvm::cl::desc("Import a graph input as a constant read from an ONNX "
                   "TensorProto file: name=file.pb (repeatable)"));

static llvm::cl::opt<bool> embedWeights(
    "embed-weights",
    llvm::cl::desc("Attach each parameter's initializer to its argument as "
                   "mpt.initial_value (a dense_resource blob), so the IR "
                   "lowers to a runnable plan (default: true)"),
    llvm::cl::init(true));

static llvm::cl::opt<bool> untieInitializers(
    "untie-initializers",
    llvm::cl::desc("Give each parameter that the exporter stored once and "
                   "copied through an Identity node its own argument, as "
                   "PyTorch trains them (default: true; false keeps them "
                   "tied)"),
    llvm::cl::init(true));

static llvm::cl::opt<bool> trainScalarInitializers(
    "train-scalar-initializers",
    llvm::cl::desc("Import 0-d float initializers as trainable parameters "
                   "(default: false, they are constants, as the dynamo "
                   "exporter's GELU and attention scalars are)"),
    llvm::cl::init(false));

static llvm::cl::opt<std::string>
    entryName("entry-name", llvm::cl::desc("Name of the imported function"),
              llvm::cl::init("forward"));

/// Set when the import failed only for unsupported features; main() turns
/// it into exit code 2 so scripts can tell "unsupported" from "broken".
static bool sawUnsupported = false;

static void registerOnnxImport() {
  TranslateToMLIRRegistration importOnnx(
      "import-onnx", "Import an ONNX model (.onnx or .onnxtext) into mpt",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        mpt::OnnxImportOptions options;
        options.entryName = entryName;
        options.embedWeights = embedWeights;
        options.untieDeduplicatedInitializers = untieInitializers;
        options.trainScalarInitializers = trainScalarInitializers;
        for (const std::string &binding : inputShapes) {
          std::string error = mpt::parseInputShapeBinding(binding, options);
          if (!error.empty()) {
            emitError(UnknownLoc::get(context)) << "--input-shape: " << error;
            return nullptr;
          }
        }
        for (const std::string &binding : constantBindings) {
          std::string error = mpt::parseConstantBinding(binding, options);
          if (!error.empty()) {
            emitError(UnknownLoc::get(context)) << "--bind-constant: " << error;
            return nullptr;
          }
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

int main(int argc, char **argv) {
  registerOnnxImport();
  mpt::registerToPlanTranslation();
  LogicalResult result = mlirTranslateMain(argc, argv, "MPT translation tool");
  if (succeeded(result))
    return EXIT_SUCCESS;
  return sawUnsupported ? 2 : EXIT_FAILURE;
}
