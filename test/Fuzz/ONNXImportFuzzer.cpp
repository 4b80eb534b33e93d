//===- ONNXImportFuzzer.cpp - libFuzzer target: ONNX bytes to mpt IR -----===//
//
// Hands arbitrary bytes to the ONNX importer (importOnnxBuffer) in a fresh
// single-threaded context, then checks what the importer promises: an
// Imported module verifies, and prints. Bytes whose first non-blank byte
// is '<' or '#' are parsed as the ONNX text syntax (the .onnxtext fixtures
// start so), anything else as a binary ModelProto. External data is looked
// up in a directory that does not exist, so no input reads a file.
//
// Built as a libFuzzer binary with MPT_ENABLE_FUZZERS (scripts/fuzz.sh), and
// always as mpt-onnx-import-fuzz-replay, which runs saved inputs through this
// same function in the normal test suite.
//
//===----------------------------------------------------------------------===//
#include "mpt/Import/ONNX/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

bool looksLikeText(const uint8_t *data, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r')
      continue;
    return data[i] == '<' || data[i] == '#';
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  // Diagnostics are the expected outcome for most inputs: drop them.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mpt::OnnxImportResult result =
      mpt::importOnnxBuffer(bytes, looksLikeText(data, size), "fuzz-input",
                            "/nonexistent/mpt-onnx-import-fuzzer", context);
  if (result.status != mpt::OnnxImportStatus::Imported)
    return 0;
  if (!result.module || mlir::failed(mlir::verify(*result.module))) {
    std::fprintf(stderr,
                 "ONNXImportFuzzer: an imported module does not verify\n");
    std::abort();
  }
  result.module->print(llvm::nulls());
  return 0;
}
