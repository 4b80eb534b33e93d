//===- RefOpsConstants.cpp - constants and shape-producing ops ------------===//
//
// constant (dense and dense_resource), constant_of_shape, range and shape.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace mlir;

namespace mpt::ref {
namespace {

double toDouble(APFloat value) {
  bool lost = false;
  value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
  return value.convertToDouble();
}

double toDouble(const APInt &value, Type element) {
  if (element.isInteger(1))
    return value.getBoolValue() ? 1.0 : 0.0;
  if (element.isUnsignedInteger())
    return static_cast<double>(value.getZExtValue());
  return static_cast<double>(value.getSExtValue());
}

/// The elements of a dense or dense_resource attribute.
FailureOr<std::vector<double>> elementValues(Operation *op, Attribute attr) {
  auto elements = dyn_cast<ElementsAttr>(attr);
  if (!elements)
    return fail(op, "`value` is not an elements attribute");
  Type element = elements.getElementType();
  std::vector<double> values;
  values.reserve(elements.getNumElements());

  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (isa<FloatType>(element)) {
      for (const APFloat &v : dense.getValues<APFloat>())
        values.push_back(toDouble(v));
    } else {
      for (const APInt &v : dense.getValues<APInt>())
        values.push_back(toDouble(v, element));
    }
    return values;
  }

  if (auto blob = dyn_cast<DenseResourceElementsAttr>(attr)) {
    // Little-endian elements in their own width, i1 as one byte.
    unsigned width = element.isInteger(1) ? 8 : element.getIntOrFloatBitWidth();
    unsigned bytes = width / 8;
    ArrayRef<char> data = blob.getData();
    if (static_cast<int64_t>(data.size()) != elements.getNumElements() * bytes)
      return fail(op, "resource holds " + Twine(data.size()) +
                          " bytes; expected " +
                          Twine(elements.getNumElements() * bytes));
    for (int64_t i = 0; i < elements.getNumElements(); ++i) {
      uint64_t raw = 0;
      std::memcpy(&raw, data.data() + i * bytes, bytes);
      APInt bits(width, raw);
      if (auto floatType = dyn_cast<FloatType>(element))
        values.push_back(
            toDouble(APFloat(floatType.getFloatSemantics(), bits)));
      else
        values.push_back(toDouble(bits, element));
    }
    return values;
  }
  return fail(op, "unsupported elements attribute kind");
}

LogicalResult constant(Operation *op, ArrayRef<RefTensor>,
                       std::vector<RefTensor> &results) {
  FailureOr<std::vector<double>> values =
      elementValues(op, op->getAttr("value"));
  if (failed(values))
    return failure();
  results.emplace_back(resultShape(op, 0), std::move(*values));
  return success();
}

LogicalResult constantOfShape(Operation *op, ArrayRef<RefTensor>,
                              std::vector<RefTensor> &results) {
  double fill = 0.0;
  Attribute attr = op->getAttr("value");
  if (auto f = dyn_cast_or_null<FloatAttr>(attr)) {
    fill = f.getValueAsDouble();
  } else if (auto i = dyn_cast_or_null<IntegerAttr>(attr)) {
    fill = toDouble(i.getValue(), i.getType());
  } else if (attr) {
    FailureOr<std::vector<double>> values = elementValues(op, attr);
    if (failed(values))
      return failure();
    if (values->size() != 1)
      return fail(op, "`value` must have one element");
    fill = values->front();
  }
  RefTensor out(resultShape(op, 0));
  std::fill(out.data.begin(), out.data.end(), fill);
  results.push_back(std::move(out));
  return success();
}

/// start, start + delta, ...: as many as the result type holds.
LogicalResult range(Operation *op, ArrayRef<RefTensor> operands,
                    std::vector<RefTensor> &results) {
  double start = operands[0].data.at(0), delta = operands[2].data.at(0);
  RefTensor out(resultShape(op, 0));
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.data[i] = start + static_cast<double>(i) * delta;
  results.push_back(std::move(out));
  return success();
}

/// The input's dims [start, end), each bound counted from the end when
/// negative and clamped into [0, rank] (ONNX Shape-15).
LogicalResult shape(Operation *op, ArrayRef<RefTensor> operands,
                    std::vector<RefTensor> &results) {
  int64_t rank = operands[0].rank();
  auto clampBound = [&](int64_t bound) {
    if (bound < 0)
      bound += rank;
    return std::clamp<int64_t>(bound, 0, rank);
  };
  int64_t start = clampBound(intAttr(op, "start", 0));
  int64_t end = clampBound(intAttr(op, "end", rank));
  std::vector<double> dims;
  for (int64_t axis = start; axis < end; ++axis)
    dims.push_back(static_cast<double>(operands[0].shape[axis]));
  results.emplace_back(resultShape(op, 0), std::move(dims));
  return success();
}

} // namespace

void addConstantOps(RefOpTable &table) {
  table["mpt.constant"] = constant;
  table["mpt.constant_of_shape"] = constantOfShape;
  table["mpt.range"] = range;
  table["mpt.shape"] = shape;
}

} // namespace mpt::ref
