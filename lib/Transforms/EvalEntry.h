//===- EvalEntry.h - the eval_step entry beside train_step ------*- C++ -*-===//
#ifndef MPT_LIB_TRANSFORMS_EVALENTRY_H
#define MPT_LIB_TRANSFORMS_EVALENTRY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mpt {

/// Clones the forward function `func` (after prepareLoss, before any
/// gradient or state is added) into a public function `name`, inserted just
/// after `func`: the forward pass and `loss` (cast to f32) at the precision
/// already assigned, with every batch_norm_train turned into an inference
/// batch_norm on its running statistics and every training-mode dropout
/// turned off. It returns `loss` as the output of role loss (named as the
/// ABI names it), then the function's other outputs under their names (but
/// one whose name an earlier output has), and no `mpt.updates`: it writes
/// no parameter.
/// Parameters and inputs keep their names, so the plan emitter binds them to
/// train_step's. Errors (a symbol already named `name`) are emitted on func.
mlir::FailureOr<mlir::func::FuncOp>
buildEvalEntry(mlir::func::FuncOp func, mlir::Value loss, mlir::StringRef name);

} // namespace mpt

#endif // MPT_LIB_TRANSFORMS_EVALENTRY_H
