//===- Translations.cpp - mpt-translate's translations --------------------===//
//
//   --import-onnx   an ONNX model (.onnx, .onnxtext, or stdin) into mpt IR,
//                   with the importer's flags (ImportFlags.h)
//   --mlir-to-plan  lowered mptrt IR into a plan file (PlanEmitter.cpp)
//
//===----------------------------------------------------------------------===//
#include "mpt/Driver/Translations.h"
#include "mpt/InitAll.h"

#include "mpt/Target/Plan/PlanEmitter.h"
#ifdef MPT_ENABLE_ONNX
#include "mpt/Driver/ImportFlags.h"
#include "mpt/Import/ONNX/Importer.h"
#endif

#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {

/// Set when an import failed only for unsupported features.
bool sawUnsupported = false;

#ifdef MPT_ENABLE_ONNX
void registerOnnxImport() {
  mpt::driver::registerImportFlags();
  TranslateToMLIRRegistration importOnnx(
      "import-onnx", "Import an ONNX model (.onnx or .onnxtext) into mpt",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        mpt::OnnxImportOptions options;
        if (std::string error = mpt::driver::importOptionsFromFlags(options);
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
      [](DialectRegistry &registry) { mpt::registerAllDialects(registry); });
}
#endif

void registerToPlan() {
  TranslateFromMLIRRegistration toPlan(
      "mlir-to-plan",
      "Serialize mptrt IR (after --lower-to-runtime) to a plan file",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("expected a builtin.module");
        return mpt::writePlan(module, os);
      },
      [](DialectRegistry &registry) { mpt::registerAllDialects(registry); });
}

} // namespace

void mpt::registerAllTranslations() {
#ifdef MPT_ENABLE_ONNX
  registerOnnxImport();
#endif
  registerToPlan();
}

bool mpt::importSawOnlyUnsupported() { return sawUnsupported; }
