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

/// Add, Sub, Mul, Div and Pow before opset 7, which broadcast only when
/// asked (`broadcast` = 1), B onto A: B's shape is a run of A's axes from
/// `axis`, or A's last axes without it (numpy's alignment). B gets the
/// trailing unit axes that make numpy's broadcasting do the same.
template <typename OpTy>
mlir::LogicalResult importLegacyBinary(NodeContext &c) {
  mlir::RankedTensorType a = c.inputType(0), b = c.inputType(1);
  mlir::Value rhs = c.input(1);
  if (!c.getInt("broadcast", 0)) {
    if (a.getShape() != b.getShape())
      return c.emitError() << "B " << b << " differs from A " << a
                           << " in shape, and broadcast is 0";
    return c.produce<OpTy>({c.input(0), rhs});
  }
  int64_t from = a.getRank() - b.getRank();
  if (c.hasAttr("axis")) {
    auto axis = c.axis(c.getInt("axis", 0), a.getRank());
    if (mlir::failed(axis))
      return mlir::failure();
    from = *axis;
  }
  if (from < 0 || from + b.getRank() > a.getRank())
    return c.emitError() << "B " << b << " does not fit A " << a
                         << " from axis " << from;
  for (int64_t i = 0; i < b.getRank(); ++i)
    if (b.getDimSize(i) != 1 && b.getDimSize(i) != a.getDimSize(from + i))
      return c.emitError() << "B " << b << " does not match A " << a
                           << " from axis " << from;
  const int64_t trailing = a.getRank() - from - b.getRank();
  if (trailing > 0) {
    llvm::SmallVector<int64_t> shape(b.getShape());
    shape.append(trailing, 1);
    rhs = c.createTyped<ReshapeOp>(b.clone(shape), {rhs})[0];
  }
  return c.produce<OpTy>({c.input(0), rhs});
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

/// Softmax and LogSoftmax before opset 13: the input is read as a matrix
/// whose rows are its axes before `axis` (default 1) and whose columns are
/// the rest, and each row is normalised; a reshape on either side when
/// `axis` is not the last.
template <typename OpTy>
mlir::LogicalResult importSoftmaxCoerced(NodeContext &c) {
  mlir::RankedTensorType type = c.inputType(0);
  auto axis = c.axis(c.getInt("axis", 1), type.getRank());
  if (mlir::failed(axis))
    return mlir::failure();
  const int64_t last = type.getRank() - 1;
  if (*axis == last)
    return c.produce<OpTy>({c.input(0)},
                           {c.named("axis", c.b.getI64IntegerAttr(*axis))});
  int64_t rows = 1, columns = 1;
  for (int64_t i = 0; i <= last; ++i)
    (i < *axis ? rows : columns) *= type.getDimSize(i);
  mlir::Value matrix =
      c.createTyped<ReshapeOp>(type.clone({rows, columns}), {c.input(0)})[0];
  auto normalised =
      c.create1<OpTy>({matrix}, {c.named("axis", c.b.getI64IntegerAttr(1))});
  if (mlir::failed(normalised))
    return mlir::failure();
  c.setResults(c.createTyped<ReshapeOp>(type, {*normalised}));
  return mlir::success();
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
