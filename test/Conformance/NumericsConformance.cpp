//===- NumericsConformance.cpp - run every ONNX backend test end to end ---===//
//
//   mpt-numerics-conformance <node-test-dir> <expected-failures.txt>
//                            [<testing.md>]
//
// For every model of ONNX's backend test suite (Debian's libonnx-testdata:
// the node tests in <node-test-dir> and the pytorch-converted,
// pytorch-operator and simple models beside it): import the model, lower it,
// emit a plan, run it on the CPU runtime with the test's inputs
// (test_data_set_0/input_*.pb) and compare every output with the expected one
// (output_*.pb) at ONNX's default tolerances, rtol 1e-3 and atol 1e-7. Inputs
// that the importer needs as constants (shapes, axes, clip bounds) are bound as
// constants from their .pb file, which is what `mpt-compile --bind-constant`
// does.
//
// MPT_DUMP_PLANS_DIR=DIR also writes every plan it emits into DIR
// (EndToEnd.cpp; scripts/fuzz.sh seeds the plan fuzzer with them).
//
// Prints passed, failed and unsupported counts. Fails when a test the
// importer supports fails anywhere (import, lowering, run or comparison)
// unless expected-failures.txt lists it with a reason, and when a listed
// test passes (so the list stays true).
//
//===----------------------------------------------------------------------===//
#include "EndToEnd.h"
#include "NodeTests.h"

#include "onnx/onnx_pb.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

using namespace mpt;

namespace {

constexpr double kRtol = 1e-3, kAtol = 1e-7; // onnx.backend.test defaults

/// One test: "" when it passed, otherwise why not. Sets `unsupported`.
std::string runTest(const std::string &dir, bool &unsupported) {
  unsupported = false;
  std::string modelPath = dir + "/model.onnx";
  auto buffer = llvm::MemoryBuffer::getFile(modelPath, false, false);
  onnx::ModelProto model;
  if (!buffer || !model.ParseFromArray((*buffer)->getBufferStart(),
                                       (*buffer)->getBufferSize()))
    return "cannot read model.onnx";
  const auto &graph = model.graph();
  std::string data = dir + "/test_data_set_0";
  std::map<std::string, mptrt::tools::FileTensor> inputs;
  std::map<std::string, std::string> inputFiles =
      conformance::inputDataFiles(model, data);

  OnnxImportOptions options;
  conformance::bindConstantInputs(model, data, options);
  for (const auto &binding : options.constantInputFiles)
    inputFiles.erase(binding.first().str());
  std::vector<uint8_t> plan;
  std::string log;
  e2e::Stage stage = e2e::compile(modelPath, options, plan, log);
  if (stage == e2e::Stage::Unsupported) {
    unsupported = true;
    return "unsupported";
  }
  auto firstLine = [](const std::string &text) {
    return text.substr(0, std::min(text.find('\n'), size_t(300)));
  };
  if (stage != e2e::Stage::Ok)
    return std::string(e2e::stageName(stage)) + ": " + firstLine(log);
  for (const auto &[name, file] : inputFiles) {
    std::string error;
    if (!mptrt::tools::readTensorFile(file, &inputs[name], &error))
      return "input '" + name + "': " + error;
  }
  std::map<std::string, e2e::Result> outputs;
  stage = e2e::run(plan, "forward", inputs, outputs, log);
  if (stage != e2e::Stage::Ok)
    return std::string(e2e::stageName(stage)) + ": " + firstLine(log);
  int index = 0;
  for (const auto &out : graph.output()) {
    std::string file = data + "/output_" + std::to_string(index++) + ".pb";
    mptrt::tools::FileTensor want;
    std::string error;
    if (!mptrt::tools::readTensorFile(file, &want, &error))
      return "expected output '" + out.name() + "': " + error;
    auto it = outputs.find(out.name());
    if (it == outputs.end())
      return "no output '" + out.name() + "'";
    std::string mismatch = e2e::compare(it->second, want, kRtol, kAtol);
    if (!mismatch.empty())
      return "output '" + out.name() + "': " + mismatch;
  }
  return "";
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    llvm::errs() << "usage: " << argv[0]
                 << " <node-test-dir> <expected-failures.txt> [<testing.md>]\n";
    return 2;
  }
  std::string root = argv[1];
  // MPT_CONFORMANCE_VERBOSE=1 also lists the unsupported tests.
  const char *env = getenv("MPT_CONFORMANCE_VERBOSE");
  bool verbose = env && *env && *env != '0';
  std::map<std::string, std::string> expected;
  if (!conformance::readExpectedList(argv[2], expected)) {
    llvm::errs() << "cannot read " << argv[2] << "\n";
    return 2;
  }
  std::vector<conformance::SuiteTest> tests = conformance::listSuiteTests(root);
  if (tests.empty()) {
    llvm::errs() << "cannot list node tests under " << root << "\n";
    return 2;
  }

  int passed = 0, failed = 0, expectedFailed = 0, unsupported = 0;
  int problems = 0;
  std::vector<std::string> names;
  for (const auto &suiteTest : tests)
    names.push_back(suiteTest.name);
  std::sort(names.begin(), names.end());
  for (const auto &suiteTest : tests) {
    const std::string &test = suiteTest.name;
    bool isUnsupported;
    std::string why = runTest(suiteTest.dir, isUnsupported);
    if (isUnsupported) {
      ++unsupported;
      if (verbose)
        llvm::outs() << "UNSUPPORTED " << test << "\n";
      continue;
    }
    auto listed = expected.find(test);
    if (why.empty()) {
      ++passed;
      if (listed != expected.end()) {
        ++problems;
        llvm::outs() << "UNEXPECTED PASS " << test
                     << " (listed in expected failures; remove it)\n";
      }
      continue;
    }
    ++failed;
    if (listed != expected.end()) {
      ++expectedFailed;
      continue;
    }
    ++problems;
    llvm::outs() << "FAIL " << test << ": " << why << "\n";
  }
  for (const auto &[name, reason] : expected)
    if (!std::binary_search(names.begin(), names.end(), name)) {
      ++problems;
      llvm::outs() << "STALE " << name << " is listed but not a test\n";
    }
  llvm::outs() << "numerics conformance: " << tests.size() << " models ("
               << conformance::suiteBreakdown(tests) << "): " << passed
               << " passed, " << failed << " failed (" << expectedFailed
               << " listed with a reason), " << unsupported
               << " unsupported by the importer\n";
  // docs/testing.md states these counts; a stale one fails the test.
  if (argc == 4)
    for (const std::string &phrase : conformance::missingPhrases(
             argv[3],
             {"Today: " + std::to_string(tests.size()) + " models, **" +
                  std::to_string(passed) + " pass, " + std::to_string(failed) +
                  " fail and are listed with a reason**",
              std::to_string(unsupported) +
                  " are unsupported by the importer"})) {
      ++problems;
      llvm::outs() << "STALE DOC " << argv[3] << ": it must say \"" << phrase
                   << "\"\n";
    }
  return problems ? 1 : 0;
}
