//===- LoweringUtils.h - shared by the runtime lowering passes --*- C++ -*-===//
#ifndef MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H
#define MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

namespace mpt {

/// The function body a runtime lowering pass works on: null for a
/// declaration; an error (and `failed` set) for more than one block.
inline mlir::Block *loweringBody(mlir::func::FuncOp func, bool &failed) {
  failed = false;
  if (func.isExternal())
    return nullptr;
  if (!func.getBody().hasOneBlock()) {
    func.emitError("the runtime lowering expects a single-block function");
    failed = true;
    return nullptr;
  }
  return &func.getBody().front();
}

/// Whether `op` is a relu unary_grad (mptrt) taking `v` as its forward
/// input.
inline bool isReluGradOf(mlir::Operation *op, mlir::Value v) {
  auto grad = mlir::dyn_cast<rt::UnaryGradOp>(op);
  return grad && grad.getKind() == UnaryGradKind::relu &&
         grad.getInput() == v && grad.getGrad() != v;
}

/// The single relu of `v` when every other use of `v` is that relu's
/// backward (relu unary_grads of v); else null. Folding the relu into the
/// kernel that makes `v` then leaves those unary_grads reading the relu'd
/// value, which gives the same mask (y > 0 where x > 0).
inline rt::ReluOp soleRelu(mlir::Value v) {
  rt::ReluOp relu;
  for (mlir::Operation *user : v.getUsers()) {
    if (auto r = mlir::dyn_cast<rt::ReluOp>(user)) {
      if (relu || r.getResult().getType() != v.getType())
        return nullptr;
      relu = r;
    } else if (!isReluGradOf(user, v)) {
      return nullptr;
    }
  }
  return relu;
}

/// Folds `relu` into the kernel that makes its operand, when it is that
/// value's sole relu (soleRelu) and `take` accepts the kernel (and gives it
/// its relu epilogue): the relu's uses then read the operand.
inline bool foldRelu(rt::ReluOp relu,
                     llvm::function_ref<bool(mlir::Operation *)> take) {
  mlir::Value y = relu.getOperand();
  mlir::Operation *def = y.getDefiningOp();
  if (!def || soleRelu(y) != relu || !take(def))
    return false;
  relu.getResult().replaceAllUsesWith(y);
  relu.erase();
  return true;
}

} // namespace mpt

#endif // MPT_LIB_CONVERSION_RUNTIMELOWERING_LOWERINGUTILS_H
