//===- OutputRole.h - an output's role in the train-step ABI ----*- C++ -*-===//
//
// The IR's output roles (mpt::OutputRole, MPTOutputRole.td) are the
// runtime's (mptrt::abi::OutputRole, mptrt/TrainStepAbi.h), value for
// value: the plan emitter writes one as the other's role byte. The checks
// below keep the two lists the same.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_DIALECT_MPT_IR_OUTPUTROLE_H
#define MPT_DIALECT_MPT_IR_OUTPUTROLE_H

#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mptrt/TrainStepAbi.h"

namespace mpt {

namespace detail {
template <OutputRole ir, mptrt::abi::OutputRole rt>
inline constexpr bool kSameRole =
    static_cast<uint32_t>(ir) == static_cast<uint32_t>(rt);
} // namespace detail

using AbiRole = mptrt::abi::OutputRole;
static_assert(
    detail::kSameRole<OutputRole::None, AbiRole::None> &&
        detail::kSameRole<OutputRole::Loss, AbiRole::Loss> &&
        detail::kSameRole<OutputRole::Skipped, AbiRole::Skipped> &&
        detail::kSameRole<OutputRole::GradNorm, AbiRole::GradNorm> &&
        detail::kSameRole<OutputRole::LossScale, AbiRole::LossScale> &&
        detail::kSameRole<OutputRole::Lr, AbiRole::Lr> &&
        detail::kSameRole<OutputRole::Gradient, AbiRole::Gradient> &&
        getMaxEnumValForOutputRole() == mptrt::abi::kMaxOutputRole,
    "MPTOutputRole.td's cases are mptrt::abi::OutputRole's");

/// The runtime's role of an IR role.
inline AbiRole toAbiRole(OutputRole role) {
  return static_cast<AbiRole>(static_cast<uint32_t>(role));
}

/// The result attributes of an output named `name` with role `role`:
/// `{mpt.output = name, mpt.output_role = #mpt.output_role<role>}`, without
/// the role when it is None.
inline mlir::DictionaryAttr outputAttrs(mlir::MLIRContext *ctx,
                                        llvm::StringRef name, AbiRole role) {
  llvm::SmallVector<mlir::NamedAttribute, 2> attrs = {
      mlir::NamedAttribute(mlir::StringAttr::get(ctx, kOutputAttrName),
                           mlir::StringAttr::get(ctx, name))};
  if (role != AbiRole::None)
    attrs.push_back(mlir::NamedAttribute(
        mlir::StringAttr::get(ctx, kOutputRoleAttrName),
        OutputRoleAttr::get(
            ctx, static_cast<OutputRole>(static_cast<uint32_t>(role)))));
  return mlir::DictionaryAttr::get(ctx, attrs);
}

} // namespace mpt

#endif // MPT_DIALECT_MPT_IR_OUTPUTROLE_H
