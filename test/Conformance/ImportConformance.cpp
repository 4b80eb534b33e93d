//===- ImportConformance.cpp - import every ONNX backend node test --------===//
//
//   mpt-import-conformance <node-test-dir> <expected-unsupported.txt>
//                          [<doc.md>]
//
// Imports the model of every ONNX backend node test (Debian's
// libonnx-testdata) and prints how many imported, how many were reported
// unsupported, and how many failed. It fails when a test whose ops are all
// on MPT's supported list does not import, unless expected-unsupported.txt
// lists it with a reason; and when a listed test imports after all (so the
// list stays true). A crash fails it too, since it runs in-process. With a
// doc (docs/importer.md), it also fails unless the doc states the counts it
// printed, so that the doc's "Current counts" cannot go stale.
//
//===----------------------------------------------------------------------===//
#include "NodeTests.h"
#include "mpt/Import/ONNX/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

using namespace mlir;

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    llvm::errs() << "usage: " << argv[0]
                 << " <node-test-dir> <expected-unsupported.txt> [<doc.md>]\n";
    return 2;
  }
  std::string root = argv[1];
  std::map<std::string, std::string> expected;
  if (!mpt::conformance::readExpectedList(argv[2], expected)) {
    llvm::errs() << "cannot read " << argv[2] << "\n";
    return 2;
  }
  std::vector<std::string> tests = mpt::conformance::listNodeTests(root);
  if (tests.empty()) {
    llvm::errs() << "cannot list node tests under " << root << "\n";
    return 2;
  }

  const auto &table = mpt::onnx_import::OpImporterTable::get();
  int imported = 0, unsupported = 0, failed = 0, problems = 0;
  int outOfTypeSet = 0;
  MLIRContext typeContext;
  std::set<std::string> seenExpected;
  for (const std::string &test : tests) {
    std::string path = root + "/" + test + "/model.onnx";
    auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
    if (!buffer)
      continue;
    onnx::ModelProto model;
    bool allKnown = model.ParseFromArray((*buffer)->getBufferStart(),
                                         (*buffer)->getBufferSize());
    const auto &graph = model.graph();
    for (const auto &node : graph.node())
      allKnown &= (node.domain().empty() || node.domain() == "ai.onnx") &&
                  table.knows(node.op_type());
    // A test whose tensors use element types outside MPT's set (f32, f16,
    // bf16, fp8, i64, i32, i1) is out of scope, whatever its ops.
    bool typesSupported = true;
    auto checkType = [&](const onnx::TypeProto &type) {
      typesSupported &= type.has_tensor_type() &&
                        mpt::onnx_import::convertElementType(
                            type.tensor_type().elem_type(), &typeContext);
    };
    for (const auto &v : graph.input())
      checkType(v.type());
    for (const auto &v : graph.output())
      checkType(v.type());
    if (!typesSupported)
      ++outOfTypeSet;

    mpt::OnnxImportOptions options;
    mpt::conformance::bindConstantInputs(
        model, root + "/" + test + "/test_data_set_0", options);

    MLIRContext context;
    std::string messages;
    ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
      messages += "    " + diag.str() + "\n";
      return success();
    });
    auto result = mpt::importOnnxFile(path, context, options);
    bool listed = expected.count(test);
    if (listed)
      seenExpected.insert(test);
    switch (result.status) {
    case mpt::OnnxImportStatus::Imported:
      ++imported;
      if (listed) {
        ++problems;
        llvm::outs() << "UNEXPECTED IMPORT " << test
                     << " (remove it from the expected-unsupported list)\n";
      }
      continue;
    case mpt::OnnxImportStatus::Unsupported:
      ++unsupported;
      break;
    case mpt::OnnxImportStatus::Failed:
      ++failed;
      if (!allKnown || !typesSupported)
        llvm::outs() << "failed (out of scope) " << test << ":\n" << messages;
      break;
    }
    if (allKnown && typesSupported && !listed) {
      ++problems;
      llvm::outs() << "REGRESSION " << test
                   << ": every op is supported but the import "
                   << (result.status == mpt::OnnxImportStatus::Failed
                           ? "failed"
                           : "reported something unsupported")
                   << ":\n"
                   << messages;
    }
  }
  for (const auto &entry : expected)
    if (!seenExpected.count(entry.first)) {
      ++problems;
      llvm::outs() << "STALE expected-unsupported entry " << entry.first
                   << ": no such node test\n";
    }
  llvm::outs() << "ONNX node tests: " << tests.size() << ", imported "
               << imported << ", unsupported " << unsupported << ", failed "
               << failed << " (" << outOfTypeSet
               << " use element types outside MPT's set; " << expected.size()
               << " listed as expected-unsupported)\n";
  if (argc == 4) {
    std::ostringstream want;
    want << "Current counts: " << tests.size() << " tests, " << imported
         << " imported, " << unsupported << " reported unsupported, " << failed
         << " failed; " << outOfTypeSet
         << " of the unsupported use element types outside MPT's set";
    std::string listed = std::to_string(expected.size()) + " are listed";
    for (const std::string &phrase :
         mpt::conformance::missingPhrases(argv[3], {want.str(), listed})) {
      ++problems;
      llvm::outs() << "STALE DOC " << argv[3] << ": it must say \"" << phrase
                   << "\"\n";
    }
  }
  if (problems) {
    llvm::outs() << problems << " conformance problem(s)\n";
    return 1;
  }
  return 0;
}
