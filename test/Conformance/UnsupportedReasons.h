//===- UnsupportedReasons.h - why a suite model does not import -*- C++ -*-===//
//
// Sorts the models of ONNX's backend test suite that MPT does not import
// into the groups docs/importer.md counts: what lies outside MPT's types
// (strings, sequences, optional values, quantised integers, other element
// types), control flow, other domains, operators the importer does not
// have, and features of operators it has. A model goes to the first group
// that fits, in that order.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_CONFORMANCE_UNSUPPORTEDREASONS_H
#define MPT_TEST_CONFORMANCE_UNSUPPORTEDREASONS_H

#include "../../lib/Import/ONNX/NodeImporter.h"

#include "mlir/IR/MLIRContext.h"
#include "onnx/onnx_pb.h"

#include <set>
#include <string>
#include <vector>

namespace mpt::conformance {

/// The groups, in the order a model is tried against them.
inline const std::vector<std::string> &unsupportedGroups() {
  static const std::vector<std::string> groups = {
      "control flow (If, Loop, Scan)",
      "sequences",
      "optional values",
      "strings",
      "quantised integer types (QuantizeLinear, QLinear*, *Integer)",
      "other element types (double, 8- and 16-bit integers, unsigned)",
      "other domains (ai.onnx.ml, ai.onnx.preview.training)",
      "operators the importer does not have",
      "features of operators it has"};
  return groups;
}

/// The group of a model that did not import, and in `missingOps` the
/// default-domain operators the importer does not have (for the
/// operators' group).
inline std::string unsupportedGroup(const onnx::ModelProto &model,
                                    std::set<std::string> &missingOps) {
  const auto &groups = unsupportedGroups();
  const auto &graph = model.graph();
  const auto &table = onnx_import::OpImporterTable::get();
  auto anyOp = [&](auto predicate) {
    for (const auto &node : graph.node())
      if (predicate(node))
        return true;
    return false;
  };
  auto opIn = [&](std::initializer_list<const char *> names) {
    return anyOp([&](const onnx::NodeProto &node) {
      for (const char *name : names)
        if (node.op_type() == name)
          return true;
      return false;
    });
  };
  auto opContains = [&](const char *part) {
    return anyOp([&](const onnx::NodeProto &node) {
      return node.op_type().find(part) != std::string::npos;
    });
  };
  std::vector<const onnx::TypeProto *> types;
  for (const auto &v : graph.input())
    types.push_back(&v.type());
  for (const auto &v : graph.output())
    types.push_back(&v.type());
  auto anyType = [&](auto predicate) {
    for (const onnx::TypeProto *type : types)
      if (predicate(*type))
        return true;
    return false;
  };
  auto tensorOf = [](const onnx::TypeProto &type, int32_t element) {
    return type.has_tensor_type() && type.tensor_type().elem_type() == element;
  };

  if (opIn({"If", "Loop", "Scan"}))
    return groups[0];
  if (opContains("Sequence") ||
      anyType([](const onnx::TypeProto &t) { return t.has_sequence_type(); }))
    return groups[1];
  if (opContains("Optional") ||
      anyType([](const onnx::TypeProto &t) { return t.has_optional_type(); }))
    return groups[2];
  if (opContains("String") || opIn({"RegexFullMatch"}) ||
      anyType([&](const onnx::TypeProto &t) {
        return tensorOf(t, onnx::TensorProto::STRING);
      }))
    return groups[3];
  if (opContains("Quantize") || opContains("QLinear") || opContains("Integer"))
    return groups[4];
  mlir::MLIRContext context;
  if (anyType([&](const onnx::TypeProto &t) {
        return !t.has_tensor_type() ||
               !onnx_import::convertElementType(t.tensor_type().elem_type(),
                                                &context);
      }))
    return groups[5];
  if (anyOp([](const onnx::NodeProto &node) {
        return !node.domain().empty() && node.domain() != "ai.onnx";
      }))
    return groups[6];
  for (const auto &node : graph.node())
    if (!table.knows(node.op_type()))
      missingOps.insert(node.op_type());
  if (!missingOps.empty())
    return groups[7];
  return groups[8];
}

} // namespace mpt::conformance

#endif // MPT_TEST_CONFORMANCE_UNSUPPORTEDREASONS_H
