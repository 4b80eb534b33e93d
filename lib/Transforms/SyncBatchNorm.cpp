//===- SyncBatchNorm.cpp - batch statistics over the ranks ----------------===//
//
// y = (x - mean) / sqrt(var + eps) * scale + bias, per channel (axis 1),
// with, in FP32:
//
//   mean = all_reduce(reduce_mean(x))               over every rank's rows
//   var  = all_reduce(reduce_mean((x - mean)^2))    biased, as the forward
//   running_mean' = running_mean * momentum + mean * (1 - momentum)
//   running_var'  = running_var * momentum + var * n / (n - 1) * (1 - momentum)
//
// n is the global count per channel: the rank's (rows x spatial size) times
// the world size, an all_reduce with `sum` of 1. The ranks hold equal
// batches (mpt-train's slices), so the mean of their means is the global
// mean. A world of one gives batch_norm_train's values up to the order of
// f32 sums.
//
//===----------------------------------------------------------------------===//
#include "SyncBatchNorm.h"

#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;

namespace mpt {

namespace {

/// The mean over the ranks (or the sum, with `sum`) of `v`.
Value overRanks(OpBuilder &b, Location loc, Value v, bool sum = false) {
  return AllReduceOp::create(b, loc, TypeRange{v.getType()}, ValueRange{v},
                             b.getBoolAttr(false), b.getBoolAttr(sum))
      .getResult(0);
}

LogicalResult synchronize(BatchNormTrainOp op,
                          llvm::DenseMap<Value, Value> &replaced) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  if (!inType.hasStaticShape() || inType.getRank() < 2)
    return op.emitOpError("sync-batch-norm needs a static input of rank 2 "
                          "or more; got ")
           << inType;
  const int64_t rank = inType.getRank(), channels = inType.getDimSize(1);
  SmallVector<int64_t> axes = {0};
  int64_t count = inType.getDimSize(0);
  for (int64_t a = 2; a < rank; ++a) {
    axes.push_back(a);
    count *= inType.getDimSize(a);
  }
  // [1, C, 1, ...]: a per-channel value broadcast against the input.
  SmallVector<int64_t> statShape(rank, 1);
  statShape[1] = channels;
  auto perChannel = [&](Value v) {
    return grad::reshape(b, loc, grad::castTo(b, loc, v, f32), statShape);
  };

  Value x = grad::castTo(b, loc, op.getInput(), f32);
  Value mean = overRanks(
      b, loc, ReduceMeanOp::create(b, loc, x, axes, true).getResult());
  Value centred = SubOp::create(b, loc, x, mean).getResult();
  Value squares = MulOp::create(b, loc, centred, centred).getResult();
  Value var = overRanks(
      b, loc, ReduceMeanOp::create(b, loc, squares, axes, true).getResult());
  double eps = op.getEpsilon().convertToDouble();
  Value std =
      SqrtOp::create(b, loc,
                     AddOp::create(b, loc, var, grad::scalar(b, loc, eps, f32))
                         .getResult())
          .getResult();
  Value normed = DivOp::create(b, loc, centred, std).getResult();
  Value scaled =
      MulOp::create(b, loc, normed, perChannel(op.getScale())).getResult();
  Value y = AddOp::create(b, loc, scaled, perChannel(op.getBias())).getResult();
  y = grad::castTo(
      b, loc, y,
      cast<RankedTensorType>(op.getOutput().getType()).getElementType());

  // The running statistics, with the global count's unbiased variance.
  double momentum = op.getMomentum().convertToDouble();
  Value ranks = overRanks(b, loc, grad::scalar(b, loc, 1.0, f32), /*sum=*/true);
  Value n =
      MulOp::create(b, loc, ranks, grad::scalar(b, loc, double(count), f32))
          .getResult();
  Value unbias =
      DivOp::create(
          b, loc, n,
          SubOp::create(b, loc, n, grad::scalar(b, loc, 1.0, f32)).getResult())
          .getResult();
  auto running = [&](Value old, Value batch, Value next) {
    auto type = cast<RankedTensorType>(next.getType());
    Value kept = MulOp::create(b, loc, grad::castTo(b, loc, old, f32),
                               grad::scalar(b, loc, momentum, f32))
                     .getResult();
    Value added =
        MulOp::create(b, loc, grad::reshape(b, loc, batch, {channels}),
                      grad::scalar(b, loc, 1.0 - momentum, f32))
            .getResult();
    return grad::castTo(b, loc, AddOp::create(b, loc, kept, added).getResult(),
                        type.getElementType());
  };
  Value newMean = running(op.getRunningMean(), mean, op.getNewRunningMean());
  Value newVar = running(op.getRunningVar(),
                         MulOp::create(b, loc, var, unbias).getResult(),
                         op.getNewRunningVar());

  SmallVector<Value> results = {y, newMean, newVar};
  for (auto [old, now] : llvm::zip(op.getResults(), results)) {
    replaced[old] = now;
    old.replaceAllUsesWith(now);
  }
  op.erase();
  return success();
}

} // namespace

LogicalResult synchronizeBatchNorms(func::FuncOp func,
                                    llvm::DenseMap<Value, Value> &replaced) {
  SmallVector<BatchNormTrainOp> norms;
  func.walk([&](BatchNormTrainOp op) { norms.push_back(op); });
  for (BatchNormTrainOp op : norms)
    if (failed(synchronize(op, replaced)))
      return failure();
  return success();
}

} // namespace mpt
