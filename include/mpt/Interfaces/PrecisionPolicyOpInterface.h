//===- PrecisionPolicyOpInterface.h - per-op precision policy ---*- C++ -*-===//
//
// The precision policy every mpt op declares in ODS (see
// PrecisionPolicyOpInterface.td): category, accumulation, operand and result
// roles. `PrecisionPolicyTrait` carries the category and the accumulation
// rule as static members, which the interface's default methods return.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_INTERFACES_PRECISIONPOLICYOPINTERFACE_H
#define MPT_INTERFACES_PRECISIONPOLICYOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Types.h"

#include "mpt/Interfaces/PrecisionPolicyEnums.h.inc"

namespace mpt {

/// Holds an op's precision category and accumulation rule; declared in ODS
/// through `PrecisionPolicy<category, accumulation>`.
template <PrecisionCategory Category, AccumulationRule Accumulation>
struct PrecisionPolicyTrait {
  template <typename ConcreteOp>
  class Impl : public mlir::OpTrait::TraitBase<ConcreteOp, Impl> {
  public:
    static constexpr PrecisionCategory kPrecisionCategory = Category;
    static constexpr AccumulationRule kAccumulationRule = Accumulation;
  };
};

namespace detail {
/// The accumulation type `rule` gives for `op`: null, f32, or the element
/// type of the op's first result.
mlir::Type accumulationTypeOf(mlir::Operation *op, AccumulationRule rule);
} // namespace detail

/// The element type of a shaped type, or the type itself.
mlir::Type elementTypeOf(mlir::Type type);

/// Whether `type` (or its element type) is a float type.
bool isFloatLike(mlir::Type type);

/// Whether `type` (or its element type) is a float type narrower than f32.
bool isBelowF32(mlir::Type type);

/// `type` with its element type replaced (for ranked tensors), or
/// `element` itself for a scalar.
mlir::Type withElementType(mlir::Type type, mlir::Type element);

} // namespace mpt

#include "mpt/Interfaces/PrecisionPolicyOpInterface.h.inc"

#endif // MPT_INTERFACES_PRECISIONPOLICYOPINTERFACE_H
