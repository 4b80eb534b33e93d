//===- MPTEnums.h - the closed sets both dialects share ---------*- C++ -*-===//
//
// The enums of MPTEnums.td (mpt::Activation, mpt::Reduction, ...), their
// stringify/symbolize functions, and the interface of every dialect's
// attribute over one of them.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_IR_MPTENUMS_H
#define MPT_IR_MPTENUMS_H

#include "mlir/IR/Attributes.h"
#include "mlir/Support/TypeID.h"
// The generated printers stream quoted names (`"bf16-sr"`).
#include "llvm/Support/raw_ostream.h"

#include "mpt/IR/MPTEnums.h.inc"

#include "mpt/IR/MPTEnumAttrInterface.h.inc"

namespace mpt {

/// The attribute of type `AttrT` (a dialect's attribute over one of
/// MPTEnums.td's enums) with the case `value` holds, if `value` is any
/// dialect's attribute over the same enum; else null.
template <typename AttrT> AttrT enumAttrFrom(mlir::Attribute value) {
  using Enum = decltype(std::declval<AttrT>().getValue());
  auto e = llvm::dyn_cast_or_null<EnumAttrInterface>(value);
  if (!e || e.getEnumTypeID() != mlir::TypeID::get<Enum>())
    return {};
  return AttrT::get(value.getContext(), static_cast<Enum>(e.getEnumValue()));
}

} // namespace mpt

#endif // MPT_IR_MPTENUMS_H
