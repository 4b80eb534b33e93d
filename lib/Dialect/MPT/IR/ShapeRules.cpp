//===- ShapeRules.cpp - broadcasting, reductions, binary folding ----------===//
#include "mpt/Dialect/MPT/IR/ShapeRules.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace mpt {

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

LogicalResult inferBroadcastResult(std::optional<Location> loc,
                                   ValueRange operands, Type elementType,
                                   SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    auto type = cast<RankedTensorType>(v.getType());
    auto merged = broadcastShapes(shape, type.getShape());
    if (!merged)
      return emitOptionalError(
          loc, "operand shapes are not broadcastable: ", operands.getTypes());
    shape = *merged;
  }
  if (!elementType) {
    Value source = operands.size() == 3 ? operands[1] : operands[0];
    elementType = cast<RankedTensorType>(source.getType()).getElementType();
  }
  types.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

LogicalResult inferReduceResult(std::optional<Location> loc, Type input,
                                ArrayRef<int64_t> axes, bool keepdims,
                                SmallVectorImpl<Type> &types) {
  auto type = cast<RankedTensorType>(input);
  int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return emitOptionalError(loc, "reduction axis ", axis,
                               " is out of range for rank ", rank);
    if (reduced[axis])
      return emitOptionalError(loc, "reduction axis ", axis, " is repeated");
    reduced[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      shape.push_back(type.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

/// Largest constant the folders will materialise; shape arithmetic is tiny.
static constexpr int64_t kFoldLimit = 1 << 16;

/// Returns the values of an integer or bool constant, sign-extended.
static std::optional<SmallVector<int64_t>> intValues(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kFoldLimit)
    return std::nullopt;
  bool isBool = dense.getElementType().isInteger(1);
  SmallVector<int64_t> values;
  values.reserve(dense.getNumElements());
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(isBool ? static_cast<int64_t>(v.getZExtValue())
                            : v.getSExtValue());
  return values;
}

/// Index into a broadcast operand of shape `shape` for the flat result
/// position whose multi-index is `index` (right-aligned).
static int64_t broadcastIndex(ArrayRef<int64_t> shape,
                              ArrayRef<int64_t> index) {
  int64_t flat = 0;
  size_t offset = index.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + (shape[i] == 1 ? 0 : index[offset + i]);
  return flat;
}

OpFoldResult foldBinaryOp(Operation *op, Attribute lhsAttr, Attribute rhsAttr) {
  auto lhs = intValues(lhsAttr), rhs = intValues(rhsAttr);
  if (!lhs || !rhs)
    return {};
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType.getElementType().isIntOrIndex() ||
      resultType.getNumElements() > kFoldLimit)
    return {};
  auto lhsShape = cast<ShapedType>(op->getOperand(0).getType()).getShape();
  auto rhsShape = cast<ShapedType>(op->getOperand(1).getType()).getShape();
  auto apply = [&](int64_t a, int64_t b) -> std::optional<int64_t> {
    if (isa<AddOp>(op))
      return a + b;
    if (isa<SubOp>(op))
      return a - b;
    if (isa<MulOp>(op))
      return a * b;
    if (isa<DivOp>(op))
      return b == 0 ? std::nullopt : std::optional(a / b);
    if (isa<MaxOp>(op))
      return std::max(a, b);
    if (isa<MinOp>(op))
      return std::min(a, b);
    if (isa<EqualOp>(op))
      return int64_t(a == b);
    if (isa<LessOp>(op))
      return int64_t(a < b);
    if (isa<GreaterOp>(op))
      return int64_t(a > b);
    return std::nullopt;
  };
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<int64_t> index(shape.size(), 0);
  SmallVector<APInt> out;
  unsigned width = resultType.getElementTypeBitWidth();
  for (int64_t n = 0, e = resultType.getNumElements(); n < e; ++n) {
    auto v = apply((*lhs)[broadcastIndex(lhsShape, index)],
                   (*rhs)[broadcastIndex(rhsShape, index)]);
    if (!v)
      return {};
    out.push_back(APInt(width, static_cast<uint64_t>(*v), /*isSigned=*/true,
                        /*implicitTrunc=*/true));
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, out);
}

OpFoldResult foldWhereOp(Operation *op, Attribute conditionAttr,
                         Attribute xAttr, Attribute yAttr) {
  auto condition = intValues(conditionAttr);
  auto x = dyn_cast_or_null<DenseElementsAttr>(xAttr);
  auto y = dyn_cast_or_null<DenseElementsAttr>(yAttr);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!condition || !x || !y || !resultType.hasStaticShape() ||
      resultType.getNumElements() > kFoldLimit ||
      x.getNumElements() > kFoldLimit || y.getNumElements() > kFoldLimit ||
      x.getElementType() != resultType.getElementType() ||
      y.getElementType() != resultType.getElementType())
    return {};
  auto shapeOf = [&](unsigned i) {
    return cast<ShapedType>(op->getOperand(i).getType()).getShape();
  };
  ArrayRef<int64_t> conditionShape = shapeOf(0), xShape = shapeOf(1),
                    yShape = shapeOf(2);
  auto xs = llvm::to_vector(x.getValues<Attribute>());
  auto ys = llvm::to_vector(y.getValues<Attribute>());
  ArrayRef<int64_t> shape = resultType.getShape();
  SmallVector<int64_t> index(shape.size(), 0);
  SmallVector<Attribute> out;
  out.reserve(resultType.getNumElements());
  for (int64_t n = 0, e = resultType.getNumElements(); n < e; ++n) {
    bool pick = (*condition)[broadcastIndex(conditionShape, index)] != 0;
    out.push_back(pick ? xs[x.isSplat() ? 0 : broadcastIndex(xShape, index)]
                       : ys[y.isSplat() ? 0 : broadcastIndex(yShape, index)]);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(resultType, out);
}

} // namespace mpt
