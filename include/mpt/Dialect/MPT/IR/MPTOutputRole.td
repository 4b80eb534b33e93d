//===- MPTOutputRole.td - what an entry point's output is --*- tablegen -*-===//
//
// The role of an entry point's output in the train-step ABI, as a result
// attribute of the function (`mpt.output_role = #mpt.output_role<Loss>`):
// --build-training-step sets it on train_step's and eval_step's outputs, and
// the plan emitter writes it as the output's role byte. The cases and their
// values are mptrt::abi::OutputRole's (runtime/include/mptrt/TrainStepAbi.h),
// which the plan stores; the emitter checks that the two agree.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_DIALECT_MPT_IR_MPTOUTPUTROLE_TD
#define MPT_DIALECT_MPT_IR_MPTOUTPUTROLE_TD

include "mlir/IR/EnumAttr.td"
include "mpt/Dialect/MPT/IR/MPTBase.td"

def MPT_OutputRole : I32EnumAttr<"OutputRole", "an entry point output's role", [
    I32EnumAttrCase<"None", 0>,      // no role in the ABI (a model output)
    I32EnumAttrCase<"Loss", 1>,      // the loss, unscaled
    I32EnumAttrCase<"Skipped", 2>,   // the update was skipped
    I32EnumAttrCase<"GradNorm", 3>,  // the gradients' global L2 norm
    I32EnumAttrCase<"LossScale", 4>, // the loss scale the step used
    I32EnumAttrCase<"Lr", 5>,        // the learning rate the step used
    I32EnumAttrCase<"Gradient", 6>,  // a parameter's gradient (emit-gradients)
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mpt";
}

def MPT_OutputRoleAttr : EnumAttr<MPT_Dialect, MPT_OutputRole, "output_role"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // MPT_DIALECT_MPT_IR_MPTOUTPUTROLE_TD
