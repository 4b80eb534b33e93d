//===- MPTAttrs.td - mpt attributes ------------------------*- tablegen -*-===//
//
// The `mpt` ops' attributes over the shared closed sets (mpt/IR/MPTEnums.td):
// `#mpt.activation<relu>`, `#mpt.reduction<sum>`, ... The conversion to
// `mptrt` copies each into the kernel's attribute over the same enum.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPT_IR_MPTATTRS_TD
#define MPT_DIALECT_MPT_IR_MPTATTRS_TD

include "mpt/Dialect/MPT/IR/MPTBase.td"
include "mpt/IR/MPTEnums.td"
include "mpt/Dialect/MPT/IR/MPTOutputRole.td"

class MPT_EnumAttr<EnumAttrInfo info, string mnemonic>
    : EnumAttr<MPT_Dialect, info, mnemonic, [MPT_EnumAttrInterface]> {
  let assemblyFormat = "`<` $value `>`";
}

def MPT_GeluApproximateAttr : MPT_EnumAttr<MPT_GeluApproximate, "gelu_approximate">;
def MPT_ActivationAttr : MPT_EnumAttr<MPT_Activation, "activation">;
def MPT_ReductionAttr : MPT_EnumAttr<MPT_Reduction, "reduction">;
def MPT_UnaryGradKindAttr : MPT_EnumAttr<MPT_UnaryGradKind, "unary_grad_kind">;
def MPT_LrScheduleAttr : MPT_EnumAttr<MPT_LrSchedule, "lr_schedule">;
def MPT_AmaxComputeAlgoAttr : MPT_EnumAttr<MPT_AmaxComputeAlgo, "amax_compute_algo">;

#endif // MPT_DIALECT_MPT_IR_MPTATTRS_TD
