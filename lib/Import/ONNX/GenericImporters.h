//===- GenericImporters.h - importers shared by many ops --------*- C++ -*-===//
//
// The function templates that import an ONNX node as one mpt op, named by
// the ops' records (MPT_OnnxRow's `importer`, include/mpt/Dialect/MPT/IR/
// MPTBase.td) and instantiated by RecordImporters.cpp; foldInputs also
// serves the family files.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_LIB_IMPORT_ONNX_GENERICIMPORTERS_H
#define MPT_LIB_IMPORT_ONNX_GENERICIMPORTERS_H

#include "NodeImporter.h"

namespace mpt::onnx_import {

/// A unary function of MPTUnaryFunctions.td; the node's attributes that
/// are the op's float parameters (alpha, beta, gamma) are read, the others
/// take the record's defaults.
template <typename OpTy> mlir::LogicalResult importUnary(NodeContext &c) {
  llvm::SmallVector<mlir::NamedAttribute> params;
  for (llvm::StringRef name : OpTy::getAttributeNames())
    if (c.hasAttr(name))
      params.push_back(
          c.named(name, c.b.getF32FloatAttr(c.getFloat(name, 0.0f))));
  return c.produce<OpTy>({c.input(0)}, params);
}

template <typename OpTy> mlir::LogicalResult importBinary(NodeContext &c) {
  return c.produce<OpTy>({c.input(0), c.input(1)});
}

/// The inputs combined left to right with OpTy (broadcasting).
template <typename OpTy>
mlir::FailureOr<mlir::Value> foldInputs(NodeContext &c) {
  mlir::Value acc = c.input(0);
  for (unsigned i = 1; i < c.numInputs(); ++i) {
    auto v = c.create1<OpTy>({acc, c.input(i)});
    if (mlir::failed(v))
      return mlir::failure();
    acc = *v;
  }
  return acc;
}

/// ONNX Max, Min and Sum take any number of inputs.
template <typename OpTy> mlir::LogicalResult importVariadic(NodeContext &c) {
  auto acc = foldInputs<OpTy>(c);
  if (mlir::failed(acc))
    return mlir::failure();
  c.setResults(*acc);
  return mlir::success();
}

template <typename OpTy> mlir::LogicalResult importSoftmax(NodeContext &c) {
  auto axis = c.axis(c.getInt("axis", -1), c.inputType(0).getRank());
  if (mlir::failed(axis))
    return mlir::failure();
  return c.produce<OpTy>({c.input(0)},
                         {c.named("axis", c.b.getI64IntegerAttr(*axis))});
}

template <typename OpTy> mlir::LogicalResult importLoss(NodeContext &c) {
  std::string reduction = c.getString("reduction", "mean");
  std::optional<Reduction> r = symbolizeReduction(reduction);
  if (!r)
    return c.emitError() << "reduction must be 'mean', 'sum' or 'none', got '"
                         << reduction << "'";
  llvm::SmallVector<mlir::NamedAttribute> attrs = {
      c.named("reduction", ReductionAttr::get(c.b.getContext(), *r))};
  if (c.hasAttr("ignore_index"))
    attrs.push_back(c.named(
        "ignore_index", c.b.getI64IntegerAttr(c.getInt("ignore_index", 0))));
  llvm::SmallVector<mlir::Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return c.produce<OpTy>(operands, attrs);
}

} // namespace mpt::onnx_import

#endif // MPT_LIB_IMPORT_ONNX_GENERICIMPORTERS_H
