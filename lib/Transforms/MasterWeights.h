//===- MasterWeights.h - bf16 master weights of the training step -*- C++
//-*-===//
//
// `--build-training-step="master-weights=..."` (mpt::MasterWeights,
// MPTEnums.td; docs/training.md, "Master weights"): the persistent copy of
// each trainable parameter that the optimizer updates is FP32 (the
// default), or bf16. A bf16 master is the parameter argument itself,
// retyped to bf16 with its initial value rounded to nearest even; the
// forward and backward graphs read it through one inserted `cast` to f32 at
// the top of the function (which canonicalization folds into the bf16
// copies that --assign-precision made), so gradients stay FP32 and the
// optimizer update takes the bf16 weight and an FP32 gradient and moments.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_LIB_TRANSFORMS_MASTERWEIGHTS_H
#define MPT_LIB_TRANSFORMS_MASTERWEIGHTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mpt {

/// Makes the parameter argument `param` (an f32 `mpt.param` of `func`'s
/// entry block) a bf16 master: its type becomes bf16, its initial value (if
/// any) is rounded to nearest even, and every use reads one inserted
/// `mpt.cast` to f32 at the top of the block instead. (The optimizer update
/// built afterwards takes the bf16 argument itself.)
mlir::LogicalResult makeBf16Master(mlir::func::FuncOp func,
                                   mlir::BlockArgument param);

/// The argument of `func` that is the parameter named `name`, or null.
mlir::BlockArgument findParam(mlir::func::FuncOp func, llvm::StringRef name);

} // namespace mpt

#endif // MPT_LIB_TRANSFORMS_MASTERWEIGHTS_H
