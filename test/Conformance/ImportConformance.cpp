//===- ImportConformance.cpp - import every ONNX backend test model -------===//
//
//   mpt-import-conformance <node-test-dir> <expected-unsupported.txt>
//                          [<doc.md>]
//
// Imports every model of ONNX's backend test suite (Debian's
// libonnx-testdata: the node tests in <node-test-dir> and the
// pytorch-converted, pytorch-operator and simple models beside it) and
// prints how many imported, how many were reported unsupported, and how
// many failed. It fails when a test whose ops are all
// on MPT's supported list does not import, unless expected-unsupported.txt
// lists it with a reason; and when a listed test imports after all (so the
// list stays true). A crash fails it too, since it runs in-process. With a
// doc (docs/importer.md), it also fails unless the doc states the counts it
// printed, so that the doc's "Current counts" cannot go stale.
//
//===----------------------------------------------------------------------===//
#include "NodeTests.h"
#include "UnsupportedReasons.h"
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
  std::vector<mpt::conformance::SuiteTest> tests =
      mpt::conformance::listSuiteTests(root);
  if (tests.empty()) {
    llvm::errs() << "cannot list node tests under " << root << "\n";
    return 2;
  }

  const auto &table = mpt::onnx_import::OpImporterTable::get();
  int imported = 0, unsupported = 0, failed = 0, problems = 0;
  int outOfTypeSet = 0;
  MLIRContext typeContext;
  std::set<std::string> seenExpected;
  std::map<std::string, int> groupCounts;
  std::map<std::string, int> missingOpCounts;
  for (const auto &suiteTest : tests) {
    const std::string &test = suiteTest.name;
    std::string path = suiteTest.dir + "/model.onnx";
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
        model, suiteTest.dir + "/test_data_set_0", options);

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
    std::set<std::string> missingOps;
    ++groupCounts[mpt::conformance::unsupportedGroup(model, missingOps)];
    for (const std::string &op : missingOps)
      ++missingOpCounts[op];
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
                   << ": no such test\n";
    }
  llvm::outs() << "ONNX backend test models: " << tests.size() << " ("
               << mpt::conformance::suiteBreakdown(tests) << "), imported "
               << imported << ", unsupported " << unsupported << ", failed "
               << failed << " (" << outOfTypeSet
               << " use element types outside MPT's set; " << expected.size()
               << " listed as expected-unsupported)\n";
  // Why the others do not import, as docs/importer.md tabulates it.
  std::vector<std::string> groupRows;
  for (const std::string &group : mpt::conformance::unsupportedGroups()) {
    groupRows.push_back("| " + group + " | " +
                        std::to_string(groupCounts[group]) + " |");
    llvm::outs() << "  " << groupRows.back() << "\n";
  }
  std::vector<std::pair<std::string, int>> missing(missingOpCounts.begin(),
                                                   missingOpCounts.end());
  std::stable_sort(
      missing.begin(), missing.end(),
      [](const auto &a, const auto &b) { return a.second > b.second; });
  std::string missingList = "Operators the importer does not have, with "
                            "the number of models that use them:";
  for (size_t i = 0; i < missing.size(); ++i)
    missingList += (i ? ", " : " ") + missing[i].first + " " +
                   std::to_string(missing[i].second);
  missingList += ".";
  llvm::outs() << missingList << "\n";
  if (argc == 4) {
    std::ostringstream want;
    want << "Current counts: " << tests.size() << " models ("
         << mpt::conformance::suiteBreakdown(tests) << "), " << imported
         << " imported, " << unsupported << " reported unsupported, " << failed
         << " failed; " << outOfTypeSet
         << " of the unsupported use element types outside MPT's set";
    std::string listed = std::to_string(expected.size()) + " are listed";
    std::vector<std::string> phrases = {want.str(), listed, missingList};
    phrases.insert(phrases.end(), groupRows.begin(), groupRows.end());
    for (const std::string &phrase :
         mpt::conformance::missingPhrases(argv[3], phrases)) {
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
