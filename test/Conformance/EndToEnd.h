//===- EndToEnd.h - compile an ONNX model and run it on the CPU runtime ---===//
//
// Shared by the end-to-end checks: the compile driver's compile (import,
// extra passes, the inference pipeline; mpt/Driver/Compile.h), plan
// emission, then load, bind, run and read back through the runtime's C++
// API, and compare with reference tensors.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_CONFORMANCE_ENDTOEND_H
#define MPT_TEST_CONFORMANCE_ENDTOEND_H

#include "TensorFile.h"
#include "mpt/Import/ONNX/Importer.h"

#include <map>
#include <string>
#include <vector>

namespace mpt::e2e {

enum class Stage { Ok, Unsupported, ImportFailed, LoweringFailed, RunFailed };
const char *stageName(Stage stage);

/// Compiles an ONNX file to plan bytes with the inference pipeline at its
/// defaults (no precision: the lowering). `pipeline` (textual, e.g.
/// "assign-precision{mode=bf16}"; empty for none) runs between the import
/// and the lowering (the driver's extra passes). Diagnostics go to `log`.
Stage compile(const std::string &path, const OnnxImportOptions &options,
              std::vector<uint8_t> &plan, std::string &log,
              const std::string &pipeline = "");

/// A tensor read back from the runtime.
struct Result {
  mptrt_dtype dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// Loads `plan`, binds `inputs` by name, runs `entry` once and reads every
/// output the entry point binds.
Stage run(const std::vector<uint8_t> &plan, const std::string &entry,
          const std::map<std::string, mptrt::tools::FileTensor> &inputs,
          std::map<std::string, Result> &outputs, std::string &log);

/// Compares `got` with `want` as numpy.testing.assert_allclose does
/// (|got - want| <= atol + rtol * |want|, NaN matching NaN, infinities
/// matching exactly); integers and booleans must be equal. Returns "" or
/// the first mismatch.
std::string compare(const Result &got, const mptrt::tools::FileTensor &want,
                    double rtol, double atol);

} // namespace mpt::e2e

#endif // MPT_TEST_CONFORMANCE_ENDTOEND_H
