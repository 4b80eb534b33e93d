//===- PrecisionPolicyOpInterface.cpp - per-op precision policy -----------===//
#include "mpt/Interfaces/PrecisionPolicyOpInterface.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

#include "mpt/Interfaces/PrecisionPolicyEnums.cpp.inc"
#include "mpt/Interfaces/PrecisionPolicyOpInterface.cpp.inc"

namespace mpt {

Type detail::accumulationTypeOf(Operation *op, AccumulationRule rule) {
  switch (rule) {
  case AccumulationRule::None:
    return {};
  case AccumulationRule::F32:
    return Float32Type::get(op->getContext());
  case AccumulationRule::Result:
    return op->getNumResults() ? elementTypeOf(op->getResult(0).getType())
                               : Type();
  }
  return {};
}

Type elementTypeOf(Type type) {
  // Ranked tensors first: a type-ID compare, cheaper than the interface.
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    return ranked.getElementType();
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.getElementType();
  return type;
}

bool isFloatLike(Type type) { return isa<FloatType>(elementTypeOf(type)); }

bool isBelowF32(Type type) {
  auto element = dyn_cast<FloatType>(elementTypeOf(type));
  return element && element.getWidth() < 32;
}

Type withElementType(Type type, Type element) {
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    return ranked.clone(element);
  return element;
}

} // namespace mpt
