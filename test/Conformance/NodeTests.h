//===- NodeTests.h - walking ONNX backend test suite ------------*- C++ -*-===//
//
// Shared by the conformance walks: listing the tests of ONNX's backend
// suite (the node tests, and the pytorch-converted, pytorch-operator and
// simple models beside them), reading a list of expected outcomes, and
// binding constant inputs.
//
// ONNX node tests feed shapes, axes and clip bounds as graph inputs. MPT
// needs them at compile time, so the conformance walks bind those inputs
// as constants from the test's own data, as a user would with
// --bind-constant. Which positions need a constant comes from the
// importer's op table.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_CONFORMANCE_NODETESTS_H
#define MPT_TEST_CONFORMANCE_NODETESTS_H

#include "../../lib/Import/ONNX/NodeImporter.h"
#include "mpt/Import/ONNX/Importer.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace mpt::conformance {

/// The phrases that `docPath` does not contain, comparing with runs of
/// whitespace collapsed (the doc's words may wrap anywhere); all of them
/// when the file cannot be read. The walks check their counts in the docs.
inline std::vector<std::string>
missingPhrases(const std::string &docPath,
               const std::vector<std::string> &phrases) {
  auto collapse = [](const std::string &s) {
    std::string out;
    for (char ch : s)
      if (!std::isspace(static_cast<unsigned char>(ch)))
        out += ch;
      else if (!out.empty() && out.back() != ' ')
        out += ' ';
    return out;
  };
  std::ifstream in(docPath);
  std::stringstream doc;
  doc << in.rdbuf();
  std::string text = collapse(doc.str());
  std::vector<std::string> missing;
  for (const std::string &phrase : phrases)
    if (!in || text.find(collapse(phrase)) == std::string::npos)
      missing.push_back(phrase);
  return missing;
}

/// Reads "<test name> <reason>" lines ('#' starts a comment line). False if
/// the file cannot be read.
inline bool readExpectedList(const std::string &path,
                             std::map<std::string, std::string> &list) {
  std::ifstream in(path);
  if (!in)
    return false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    std::string name, reason;
    fields >> name;
    std::getline(fields, reason);
    list[name] = reason;
  }
  return true;
}

/// The folders of ONNX's backend test data that hold models with their
/// inputs and expected outputs, beside `node`: together they are the
/// 1,072 models of ONNX 1.12's suite (`real` is left out: its folders
/// hold only the address of a model to download).
inline const std::vector<std::string> &suiteFolders() {
  static const std::vector<std::string> folders = {
      "node", "pytorch-converted", "pytorch-operator", "simple"};
  return folders;
}

/// The tests (folders with a model.onnx) under `root`, sorted.
inline std::vector<std::string> listNodeTests(const std::string &root) {
  std::vector<std::string> tests;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::fs::exists(it->path() + "/model.onnx"))
      tests.push_back(llvm::sys::path::filename(it->path()).str());
  if (ec)
    tests.clear();
  std::sort(tests.begin(), tests.end());
  return tests;
}

/// One model of the suite: `name` is the node test's folder name
/// (`test_abs`), or the folder and the test for the other suites
/// (`pytorch-converted/test_Conv2d`), as the expected-outcome lists
/// name them; `dir` is where it lies.
struct SuiteTest {
  std::string suite;
  std::string name;
  std::string dir;
};

/// Every test of the suite whose `node` folder is `nodeDir`: the node
/// tests, then those of the sibling folders that exist. Empty when
/// `nodeDir` has none.
inline std::vector<SuiteTest> listSuiteTests(const std::string &nodeDir) {
  std::vector<SuiteTest> tests;
  std::string dataDir = llvm::sys::path::parent_path(nodeDir).str();
  for (const std::string &suite : suiteFolders()) {
    std::string dir = suite == "node" ? nodeDir : dataDir + "/" + suite;
    std::vector<std::string> names = listNodeTests(dir);
    if (suite == "node" && names.empty())
      return {};
    for (const std::string &name : names)
      tests.push_back({suite, suite == "node" ? name : suite + "/" + name,
                       dir + "/" + name});
  }
  return tests;
}

/// "932 node, 82 pytorch-converted, ..." for the tests' suites.
inline std::string suiteBreakdown(const std::vector<SuiteTest> &tests) {
  std::string out;
  for (const std::string &suite : suiteFolders()) {
    size_t count =
        std::count_if(tests.begin(), tests.end(),
                      [&](const SuiteTest &t) { return t.suite == suite; });
    if (!count)
      continue;
    if (!out.empty())
      out += ", ";
    out += std::to_string(count) + " " + suite;
  }
  return out;
}

/// The default-domain opset of a model.
inline int64_t defaultOpset(const onnx::ModelProto &model) {
  int64_t opset = 0;
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  return opset;
}

/// The test's data file of every graph input that is not an initializer,
/// by input name: input_<k>.pb is the k-th such input (the older models
/// list their weights among the inputs).
inline std::map<std::string, std::string>
inputDataFiles(const onnx::ModelProto &model, const std::string &dataDir) {
  const auto &graph = model.graph();
  std::set<std::string> initializers;
  for (const auto &init : graph.initializer())
    initializers.insert(init.name());
  std::map<std::string, std::string> files;
  int k = 0;
  for (const auto &in : graph.input())
    if (!initializers.count(in.name()))
      files[in.name()] = dataDir + "/input_" + std::to_string(k++) + ".pb";
  return files;
}

/// Binds every graph input that feeds a constant-only operand position as a
/// constant read from its data file (inputDataFiles), and gives every input
/// with a symbolic or unknown dimension the shape of its test data, as a
/// user would with --input-shape.
inline void bindConstantInputs(const onnx::ModelProto &model,
                               const std::string &dataDir,
                               OnnxImportOptions &options) {
  const auto &table = onnx_import::OpImporterTable::get();
  int64_t opset = defaultOpset(model);
  const auto &graph = model.graph();
  const std::map<std::string, std::string> files =
      inputDataFiles(model, dataDir);
  for (const auto &in : graph.input()) {
    auto file = files.find(in.name());
    if (file == files.end() || !in.type().has_tensor_type() ||
        !in.type().tensor_type().has_shape())
      continue;
    bool dynamic = false;
    for (const auto &dim : in.type().tensor_type().shape().dim())
      dynamic |= !dim.has_dim_value();
    if (!dynamic)
      continue;
    std::ifstream stream(file->second, std::ios::binary);
    onnx::TensorProto data;
    if (stream && data.ParseFromIstream(&stream))
      options.inputShapes[in.name()] =
          llvm::SmallVector<int64_t>(data.dims().begin(), data.dims().end());
  }
  for (const auto &node : graph.node()) {
    const auto *entry = table.lookup(node.op_type(), opset);
    if (!entry)
      continue;
    for (int i = 0; i < node.input_size(); ++i) {
      auto file = files.find(node.input(i));
      if ((entry->constantInputs & (1u << i)) && file != files.end())
        options.constantInputFiles[node.input(i)] = file->second;
    }
  }
}

} // namespace mpt::conformance

#endif // MPT_TEST_CONFORMANCE_NODETESTS_H
