//===- Reduction.cpp - decoders for reductions and losses ----------------===//
#include "ops/DecodeUtil.h"
#include "ops/OpParams.h"

#include <algorithm>

namespace mptrt {
namespace rt {

Status decodeReduce(const KernelView &v, ReduceParams *p) {
  if (v.kind() == "reduce_sum")
    p->op = ReduceOp::Sum;
  else if (v.kind() == "reduce_mean")
    p->op = ReduceOp::Mean;
  else if (v.kind() == "reduce_max")
    p->op = ReduceOp::Max;
  else if (v.kind() == "reduce_l2")
    p->op = ReduceOp::L2;
  else
    return v.error("not a reduction kind");
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"axes", "keepdims"}));
  const TensorDesc &x = v.operand(0), &y = v.result(0);
  const bool intOk = p->op == ReduceOp::Sum || p->op == ReduceOp::Max;
  if (isFloat(x) && isFloat(y))
    p->integer = false;
  else if (intOk && isInt(x) && x.dtype == y.dtype)
    p->integer = true;
  else
    return v.error(std::string("operand and result must both be float") +
                   (intOk ? ", or the same integer type" : "") + "; got " + describe(x) + " -> " +
                   describe(y));
  std::vector<int64_t> axes;
  bool keepdims;
  MPTRT_TRY(v.getInts("axes", {}, &axes));
  MPTRT_TRY(v.getBool("keepdims", true, &keepdims));
  const int rank = x.rank();
  bool reduced[kMaxRank] = {};
  for (int64_t a : axes) {
    int64_t axis = 0;
    MPTRT_TRY(normalizeAxis(v, a, rank, &axis));
    if (reduced[axis])
      return v.error("axis " + std::to_string(a) + " listed twice in 'axes'");
    reduced[axis] = true;
  }
  if (axes.empty())
    for (int d = 0; d < rank; ++d)
      reduced[d] = true;
  std::vector<int64_t> expected;
  p->rank = rank;
  p->reducedCount = 1;
  for (int d = 0; d < rank; ++d) {
    p->inShape[d] = x.shape[d];
    if (reduced[d]) {
      p->reducedCount *= x.shape[d];
      if (keepdims)
        expected.push_back(1);
    } else {
      expected.push_back(x.shape[d]);
    }
  }
  MPTRT_TRY(expectResultShape(v, 0, expected));
  // Row-major strides of the kept axes in the output.
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    p->outStride[d] = reduced[d] ? 0 : stride;
    if (!reduced[d])
      stride *= x.shape[d];
  }
  p->outNumel = y.numel;
  return Status::ok();
}

Status decodeLossAttributes(const KernelView &v, LossCommon *p) {
  MPTRT_TRY(v.allowOnly({"reduction", "ignore_index"}));
  std::string reduction;
  MPTRT_TRY(v.getString("reduction", "mean", &reduction));
  if (reduction == "none")
    p->reduction = Reduction::None;
  else if (reduction == "sum")
    p->reduction = Reduction::Sum;
  else if (reduction == "mean")
    p->reduction = Reduction::Mean;
  else
    return v.error("attribute 'reduction' must be \"none\", \"sum\" or \"mean\", not \"" +
                   reduction + "\"");
  p->hasIgnoreIndex = v.has("ignore_index");
  MPTRT_TRY(v.getInt("ignore_index", 0, &p->ignoreIndex));
  return Status::ok();
}

Status decodeLoss(const KernelView &v, LossParams *p) {
  p->fromLogits = v.kind() == "softmax_cross_entropy_loss";
  MPTRT_TRY(v.expectCounts(2, 3, 1, p->fromLogits ? 2 : 1));
  MPTRT_TRY(decodeLossAttributes(v, p));
  const TensorDesc &scores = v.operand(0), &labels = v.operand(1);
  MPTRT_TRY(expectFloatOperand(v, 0));
  MPTRT_TRY(expectIndexOperand(v, 1));
  if (scores.rank() < 2)
    return v.error(operandLabel(v, 0) + " must be [N, C, d...]");
  p->N = scores.shape[0];
  p->C = scores.shape[1];
  p->D = product(scores.shape, 2, scores.shape.size());
  std::vector<int64_t> labelShape = {p->N};
  labelShape.insert(labelShape.end(), scores.shape.begin() + 2, scores.shape.end());
  if (labels.shape != labelShape)
    return v.error(operandLabel(v, 1) + " must have shape " + shapeString(labelShape));
  p->hasWeights = v.numOperands() == 3;
  if (p->hasWeights) {
    MPTRT_TRY(expectFloatOperand(v, 2));
    if (v.operand(2).shape != std::vector<int64_t>{p->C})
      return v.error(operandLabel(v, 2) + " (weights) must have shape [" + std::to_string(p->C) +
                     "]");
  }
  MPTRT_TRY(expectFloatResult(v, 0));
  if (p->reduction == Reduction::None)
    MPTRT_TRY(expectResultShape(v, 0, labelShape));
  else if (v.result(0).numel != 1)
    return v.error(resultLabel(v, 0) + " must be a scalar for reduction \"" +
                   (p->reduction == Reduction::Sum ? "sum" : "mean") + "\"");
  p->hasLogProb = v.numResults() == 2;
  if (p->hasLogProb) {
    MPTRT_TRY(expectFloatResult(v, 1));
    MPTRT_TRY(expectResultShape(v, 1, scores.shape));
  }
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
