//===- GradientUtils.cpp - building blocks of gradient rules --------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"

#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include <numeric>

using namespace mlir;

namespace mpt {
namespace grad {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value castTo(OpBuilder &b, Location loc, Value v, Type elementType) {
  RankedTensorType type = tensorType(v);
  if (type.getElementType() == elementType)
    return v;
  auto op = CastOp::create(b, loc, type.clone(elementType), v);
  op.setInserted(true);
  return op.getResult();
}

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Type elementType = type.getElementType();
  Attribute element;
  if (auto f = dyn_cast<FloatType>(elementType))
    element = b.getFloatAttr(f, value);
  else if (elementType.isInteger(1))
    element = b.getIntegerAttr(elementType, value != 0);
  else
    element = b.getIntegerAttr(elementType, static_cast<int64_t>(value));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, element))
      .getResult();
}

Value scalar(OpBuilder &b, Location loc, double value, Type elementType) {
  return splat(b, loc, RankedTensorType::get({}, elementType), value);
}

Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  return splat(b, loc, type, 0.0);
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(v);
  if (type.getShape() == shape)
    return v;
  return ReshapeOp::create(b, loc,
                           RankedTensorType::get(shape, type.getElementType()),
                           v, Value())
      .getResult();
}

Value sumF32(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> axes) {
  Value wide = castTo(b, loc, v, b.getF32Type());
  if (axes.empty())
    return wide;
  return ReduceSumOp::create(b, loc, wide, axes, /*keepdims=*/false)
      .getResult();
}

Value sumToShape(OpBuilder &b, Location loc, Value grad,
                 RankedTensorType target) {
  ArrayRef<int64_t> from = tensorType(grad).getShape(), to = target.getShape();
  int64_t lead =
      static_cast<int64_t>(from.size()) - static_cast<int64_t>(to.size());
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < static_cast<int64_t>(from.size()); ++i)
    if (i < lead || (to[i - lead] == 1 && from[i] != 1))
      axes.push_back(i);
  if (axes.empty())
    return reshape(b, loc, grad, to);
  return reshape(b, loc, sumF32(b, loc, grad, axes), to);
}

Value broadcastTo(OpBuilder &b, Location loc, Value v,
                  ArrayRef<int64_t> shape) {
  RankedTensorType type = tensorType(v);
  if (type.getShape() == shape)
    return v;
  return ExpandOp::create(b, loc,
                          RankedTensorType::get(shape, type.getElementType()),
                          v, Value())
      .getResult();
}

SmallVector<int64_t> keptShape(ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> axes) {
  SmallVector<int64_t> kept(shape);
  for (size_t i = 0; i < kept.size(); ++i)
    if (axes.empty() || llvm::is_contained(axes, static_cast<int64_t>(i)))
      kept[i] = 1;
  return kept;
}

Value transposeLastTwo(OpBuilder &b, Location loc, Value v) {
  int64_t rank = tensorType(v).getRank();
  SmallVector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return TransposeOp::create(b, loc, v, perm).getResult();
}

} // namespace grad
} // namespace mpt
