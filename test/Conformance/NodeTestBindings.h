//===- NodeTestBindings.h - constant inputs of ONNX node tests --*- C++ -*-===//
//
// ONNX node tests feed shapes, axes and clip bounds as graph inputs. MPT
// needs them at compile time, so the conformance walks bind those inputs
// as constants from the test's own data, as a user would with
// --bind-constant. Which positions need a constant comes from the
// importer's op table.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_CONFORMANCE_NODETESTBINDINGS_H
#define MPT_TEST_CONFORMANCE_NODETESTBINDINGS_H

#include "../../lib/Import/ONNX/NodeImporter.h"
#include "mpt/Import/ONNX/Importer.h"

#include <string>

namespace mpt::conformance {

/// The default-domain opset of a model.
inline int64_t defaultOpset(const onnx::ModelProto &model) {
  int64_t opset = 0;
  for (const auto &entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  return opset;
}

/// Binds every graph input that feeds a constant-only operand position as a
/// constant read from `dataDir`/input_<k>.pb (k = its graph input index).
inline void bindConstantInputs(const onnx::ModelProto &model,
                               const std::string &dataDir,
                               OnnxImportOptions &options) {
  const auto &table = onnx_import::OpImporterTable::get();
  int64_t opset = defaultOpset(model);
  const auto &graph = model.graph();
  for (const auto &node : graph.node()) {
    const auto *entry = table.lookup(node.op_type(), opset);
    if (!entry)
      continue;
    for (int i = 0; i < node.input_size(); ++i) {
      if (!(entry->constantInputs & (1u << i)))
        continue;
      for (int g = 0; g < graph.input_size(); ++g)
        if (graph.input(g).name() == node.input(i))
          options.constantInputFiles[node.input(i)] =
              dataDir + "/input_" + std::to_string(g) + ".pb";
    }
  }
}

} // namespace mpt::conformance

#endif // MPT_TEST_CONFORMANCE_NODETESTBINDINGS_H
