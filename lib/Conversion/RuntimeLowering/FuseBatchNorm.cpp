//===- FuseBatchNorm.cpp - relu and residual adds into batch norm kernels -===//
//
// Gives the batch norm kernels their fused epilogue, forward and backward,
// on mptrt IR. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

namespace mpt {
#define GEN_PASS_DEF_MPTFUSEBATCHNORM
#include "mpt/Conversion/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;
namespace rtir = mpt::rt;

namespace {

/// A kernel's activation (absent: none).
template <typename Op> Activation activationOf(Op op) {
  return op.getActivation().value_or(Activation::none);
}

/// A batch norm kernel (inference or training) without an epilogue yet,
/// whose output is `v`.
Operation *plainBatchNorm(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto bn = dyn_cast_or_null<rtir::BatchNormOp>(def))
    return !bn.getResidual() && activationOf(bn) == Activation::none ? def
                                                                     : nullptr;
  if (auto bn = dyn_cast_or_null<rtir::BatchNormTrainOp>(def))
    return !bn.getResidual() && activationOf(bn) == Activation::none &&
                   def->getResult(0) == v
               ? def
               : nullptr;
  return nullptr;
}

/// Sets the epilogue of batch norm `bn` (either kind).
void setEpilogue(Operation *bn, Value residual) {
  auto relu = Activation::relu;
  if (auto op = dyn_cast<rtir::BatchNormOp>(bn)) {
    op.setActivation(relu);
    if (residual)
      op.getResidualMutable().assign(residual);
    return;
  }
  auto op = cast<rtir::BatchNormTrainOp>(bn);
  op.setActivation(relu);
  if (residual)
    op.getResidualMutable().assign(residual);
}

/// relu(batch_norm(x)) -> batch_norm{relu}(x).
bool fuseRelu(rtir::ReluOp relu) {
  return foldRelu(relu, [&](Operation *) {
    Operation *bn = plainBatchNorm(relu.getOperand());
    if (!bn)
      return false;
    setEpilogue(bn, Value());
    return true;
  });
}

/// relu(add(batch_norm(x), s)) -> batch_norm{residual = s, relu}(x).
bool fuseResidualRelu(rtir::ReluOp relu) {
  auto add = relu.getOperand().getDefiningOp<rtir::AddOp>();
  if (!add || soleRelu(add.getResult()) != relu)
    return false;
  Type type = add.getResult().getType();
  for (unsigned i = 0; i < 2; ++i) {
    Value y = add->getOperand(i), skip = add->getOperand(1 - i);
    Operation *bn = plainBatchNorm(y);
    if (!bn || y.getType() != type || skip.getType() != type ||
        !y.hasOneUse() || y == skip)
      continue;
    // The skip must be ready where the batch norm runs.
    if (Operation *def = skip.getDefiningOp())
      if (def->getBlock() != bn->getBlock() || !def->isBeforeInBlock(bn))
        continue;
    setEpilogue(bn, skip);
    // The add's relu unary_grads now read the relu'd output: same mask.
    add.getResult().replaceAllUsesWith(y);
    relu.getResult().replaceAllUsesWith(y);
    relu.erase();
    add.erase();
    return true;
  }
  return false;
}

/// batch_norm_grad(x, s, unary_grad<relu>(y, dy)) -> batch_norm_grad{relu}(x,
/// s, dy, y).
bool fuseReluGrad(rtir::BatchNormGradOp grad) {
  if (grad.getOutput() || activationOf(grad) != Activation::none)
    return false;
  auto relu = grad.getGrad().getDefiningOp<rtir::UnaryGradOp>();
  if (!relu || relu.getKind() != UnaryGradKind::relu ||
      !relu.getResult().hasOneUse() ||
      relu.getGrad().getType() != relu.getResult().getType())
    return false;
  grad.getGradMutable().assign(relu.getGrad());
  grad.getOutputMutable().assign(relu.getInput());
  grad.setActivation(Activation::relu);
  relu.erase();
  return true;
}

struct FuseBatchNormPass
    : public mpt::impl::MPTFuseBatchNormBase<FuseBatchNormPass> {
  void runOnOperation() override {
    bool broken;
    Block *body = loweringBody(getOperation(), broken);
    if (!body)
      return broken ? signalPassFailure() : void();
    // Forward first (the residual form before the plain one, which would
    // otherwise take a batch norm whose add has a relu), then backward.
    SmallVector<rtir::ReluOp> relus(body->getOps<rtir::ReluOp>());
    for (rtir::ReluOp relu : relus)
      if (!fuseResidualRelu(relu))
        fuseRelu(relu);
    SmallVector<rtir::BatchNormGradOp> grads(
        body->getOps<rtir::BatchNormGradOp>());
    for (rtir::BatchNormGradOp grad : grads)
      fuseReluGrad(grad);
  }
};

} // namespace
