//===- mpt-translate.cpp - translations into and out of MPT ---------------===//
//
//   mpt-translate --import-onnx model.onnx [--input-shape x=8,16] -o out.mlir
//   mpt-translate --mlir-to-plan lowered.mlir -o model.mptp
//
// `.onnxtext` inputs are parsed as the ONNX text syntax. A build without
// the importer (MPT_ENABLE_ONNX=OFF) has --mlir-to-plan only. The exit code is
// 0 on success, 1 when the model is broken, and 2 when it only uses features
// MPT does not support (every one of them is reported). The translations
// are registered by mpt/Driver/Translations.h (lib/Driver/Translations.cpp).
//
//===----------------------------------------------------------------------===//
#include "mpt/Driver/Translations.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

#include <cstdlib>

int main(int argc, char **argv) {
  mpt::registerAllTranslations();
  mlir::LogicalResult result =
      mlir::mlirTranslateMain(argc, argv, "MPT translation tool");
  if (mlir::succeeded(result))
    return EXIT_SUCCESS;
  return mpt::importSawOnlyUnsupported() ? 2 : EXIT_FAILURE;
}
