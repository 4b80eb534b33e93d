//===- RefOpsSupport.cpp - helpers shared by the evaluators ---------------===//
//
// Diagnostics, attribute readers with fallbacks, operand groups and index
// arithmetic for the reference interpreter's evaluators.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

#include "mpt/IR/MPTEnums.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace mpt::ref {

RefTensor::RefTensor(std::vector<int64_t> shape) : shape(std::move(shape)) {
  data.assign(product(this->shape), 0.0);
}

LogicalResult fail(Operation *op, const Twine &message) {
  return op->emitError() << "reference interpreter: " << op->getName() << ": "
                         << message;
}

std::vector<int64_t> resultShape(Operation *op, unsigned index) {
  auto shape = cast<ShapedType>(op->getResult(index).getType()).getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}

Type resultElementType(Operation *op, unsigned index) {
  return cast<ShapedType>(op->getResult(index).getType()).getElementType();
}

std::optional<int64_t> optionalIntAttr(Operation *op, StringRef name) {
  Attribute attr = op->getAttr(name);
  if (!attr)
    return std::nullopt;
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue() ? 1 : 0;
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getValue().getSExtValue();
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    double v = f.getValueAsDouble();
    if (v == std::trunc(v))
      return static_cast<int64_t>(v);
  }
  if (isa<UnitAttr>(attr))
    return 1;
  return std::nullopt;
}

int64_t intAttr(Operation *op, StringRef name, int64_t fallback) {
  return optionalIntAttr(op, name).value_or(fallback);
}

std::optional<double> optionalFloatAttr(Operation *op, StringRef name) {
  Attribute attr = op->getAttr(name);
  if (!attr)
    return std::nullopt;
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return static_cast<double>(i.getValue().getSExtValue());
  return std::nullopt;
}

double floatAttr(Operation *op, StringRef name, double fallback) {
  return optionalFloatAttr(op, name).value_or(fallback);
}

bool boolAttr(Operation *op, StringRef name, bool fallback) {
  std::optional<int64_t> v = optionalIntAttr(op, name);
  return v ? *v != 0 : fallback;
}

std::string stringAttr(Operation *op, StringRef name, StringRef fallback) {
  if (auto s = dyn_cast_or_null<StringAttr>(op->getAttr(name)))
    return s.getValue().str();
  if (auto e = dyn_cast_or_null<mpt::EnumAttrInterface>(op->getAttr(name)))
    return e.getEnumString().str();
  return fallback.str();
}

std::optional<std::vector<int64_t>> optionalIntListAttr(Operation *op,
                                                        StringRef name) {
  Attribute attr = op->getAttr(name);
  if (auto dense = dyn_cast_or_null<DenseI64ArrayAttr>(attr))
    return std::vector<int64_t>(dense.asArrayRef().begin(),
                                dense.asArrayRef().end());
  if (auto array = dyn_cast_or_null<ArrayAttr>(attr)) {
    std::vector<int64_t> values;
    for (Attribute element : array) {
      auto i = dyn_cast<IntegerAttr>(element);
      if (!i)
        return std::nullopt;
      values.push_back(i.getValue().getSExtValue());
    }
    return values;
  }
  return std::nullopt;
}

std::vector<ArrayRef<RefTensor>> operandGroups(Operation *op,
                                               ArrayRef<RefTensor> operands) {
  std::vector<ArrayRef<RefTensor>> groups;
  auto sizes =
      dyn_cast_or_null<DenseI32ArrayAttr>(op->getAttr("operandSegmentSizes"));
  if (!sizes) {
    for (size_t i = 0; i < operands.size(); ++i)
      groups.push_back(operands.slice(i, 1));
    return groups;
  }
  size_t start = 0;
  for (int32_t size : sizes.asArrayRef()) {
    groups.push_back(operands.slice(start, size));
    start += size;
  }
  return groups;
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::vector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

void forEachIndex(ArrayRef<int64_t> shape,
                  function_ref<void(ArrayRef<int64_t>)> fn) {
  if (product(shape) == 0)
    return;
  std::vector<int64_t> index(shape.size(), 0);
  while (true) {
    fn(index);
    int64_t axis = static_cast<int64_t>(shape.size()) - 1;
    for (; axis >= 0; --axis) {
      if (++index[axis] < shape[axis])
        break;
      index[axis] = 0;
    }
    if (axis < 0)
      return;
  }
}

std::optional<RefTensor> broadcastTo(const RefTensor &value,
                                     ArrayRef<int64_t> shape) {
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t offset = rank - value.rank();
  if (offset < 0)
    return std::nullopt;
  std::vector<int64_t> strides = stridesOf(value.shape);
  // The stride of each result axis in `value`, 0 where it is stretched.
  std::vector<int64_t> step(rank, 0);
  for (int64_t axis = offset; axis < rank; ++axis) {
    int64_t dim = value.shape[axis - offset];
    if (dim != shape[axis] && dim != 1)
      return std::nullopt;
    step[axis] = dim == 1 ? 0 : strides[axis - offset];
  }
  RefTensor out(std::vector<int64_t>(shape.begin(), shape.end()));
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t source = 0;
    for (int64_t axis = 0; axis < rank; ++axis)
      source += index[axis] * step[axis];
    out.data[flat++] = value.data[source];
  });
  return out;
}

AxisSplit splitAtAxis(ArrayRef<int64_t> shape, int64_t axis) {
  return {product(shape.take_front(axis)), shape[axis],
          product(shape.drop_front(axis + 1))};
}

} // namespace mpt::ref
