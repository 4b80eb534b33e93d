//===- SyncBatchNorm.h - batch statistics over the ranks ---------*- C++
//-*-===//
//
// --build-training-step="sync-batch-norm" (docs/distributed.md): each
// batch_norm_train is rewritten into ops whose per-channel statistics are
// the global batch's, averaged over the ranks by mpt.all_reduce, as PyTorch's
// SyncBatchNorm computes them. The all_reduce's gradient rule (itself) then
// makes the backward pass global too.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_LIB_TRANSFORMS_SYNCBATCHNORM_H
#define MPT_LIB_TRANSFORMS_SYNCBATCHNORM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mpt {

/// Rewrites every batch_norm_train of `func`. `replaced` maps each old
/// result (output, new running mean, new running variance) to its new
/// value, for a caller that kept them.
llvm::LogicalResult
synchronizeBatchNorms(mlir::func::FuncOp func,
                      llvm::DenseMap<mlir::Value, mlir::Value> &replaced);

} // namespace mpt

#endif // MPT_LIB_TRANSFORMS_SYNCBATCHNORM_H
