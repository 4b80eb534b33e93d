//===- Attention.cpp - decoders for attention and attention_grad ----------===//
#include "ops/DecodeUtil.h"
#include "ops/OpParams.h"

namespace mptrt {
namespace rt {

namespace {

/// The shapes shared by both kinds: query, key and value at operands 0-2,
/// the mask (if any) at `maskIndex`.
Status decodeShapes(const KernelView &v, size_t maskIndex, AttentionParams *p) {
  MPTRT_TRY(v.allowOnly({"scale"}));
  MPTRT_TRY(expectAllFloat(v));
  if (!v.has("scale"))
    return v.error("missing attribute 'scale'");
  double scale;
  MPTRT_TRY(v.getFloat("scale", 1.0, &scale));
  p->scale = static_cast<float>(scale);
  const TensorDesc &q = v.operand(0), &k = v.operand(1), &val = v.operand(2);
  const size_t rank = q.shape.size();
  if (rank < 2 || k.shape.size() != rank || val.shape.size() != rank)
    return v.error("query, key and value must have one rank, at least 2");
  for (size_t i = 0; i + 2 < rank; ++i)
    if (k.shape[i] != q.shape[i] || val.shape[i] != q.shape[i])
      return v.error("query, key and value must have the same leading axes");
  p->batch = product(q.shape, 0, rank - 2);
  p->tq = q.shape[rank - 2];
  p->d = q.shape[rank - 1];
  p->tk = k.shape[rank - 2];
  p->dv = val.shape[rank - 1];
  if (k.shape[rank - 1] != p->d)
    return v.error("key " + shapeString(k.shape) + " must have the query's last axis (" +
                   std::to_string(p->d) + ")");
  if (val.shape[rank - 2] != p->tk)
    return v.error("value " + shapeString(val.shape) + " must have as many rows as key (" +
                   std::to_string(p->tk) + ")");
  p->hasMask = v.numOperands() > maskIndex;
  if (!p->hasMask)
    return Status::ok();
  // The mask broadcasts to the scores [batch..., Tq, Tk], numpy rules.
  std::vector<int64_t> scores(q.shape.begin(), q.shape.end() - 2);
  scores.push_back(p->tq);
  scores.push_back(p->tk);
  const TensorDesc &mask = v.operand(maskIndex);
  p->maskNumel = mask.numel;
  if (mask.shape.size() > rank)
    return v.error("mask " + shapeString(mask.shape) + " does not broadcast to the scores " +
                   shapeString(scores));
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = mask.shape.size(); i-- > 0;) {
    const size_t axis = i + rank - mask.shape.size();
    if (mask.shape[i] != 1 && mask.shape[i] != scores[axis])
      return v.error("mask " + shapeString(mask.shape) + " does not broadcast to the scores " +
                     shapeString(scores));
    strides[axis] = mask.shape[i] == 1 ? 0 : stride;
    stride *= mask.shape[i];
  }
  p->maskRowStride = strides[rank - 2];
  p->maskColStride = strides[rank - 1];
  p->batchRank = static_cast<int>(rank - 2);
  for (size_t a = 0; a + 2 < rank; ++a) {
    p->batchShape[a] = scores[a];
    p->maskBatchStrides[a] = strides[a];
  }
  return Status::ok();
}

std::vector<int64_t> rowsShape(const TensorDesc &q) {
  return std::vector<int64_t>(q.shape.begin(), q.shape.end() - 1);
}

} // namespace

Status decodeAttention(const KernelView &v, AttentionParams *p) {
  MPTRT_TRY(v.expectCounts(3, 4, 2, 2));
  MPTRT_TRY(decodeShapes(v, 3, p));
  std::vector<int64_t> out(v.operand(0).shape);
  out.back() = p->dv;
  MPTRT_TRY(expectResultShape(v, 0, out));
  return expectResultShape(v, 1, rowsShape(v.operand(0)));
}

Status decodeAttentionGrad(const KernelView &v, AttentionParams *p) {
  MPTRT_TRY(v.expectCounts(6, 7, 3, 3));
  MPTRT_TRY(decodeShapes(v, 6, p));
  std::vector<int64_t> out(v.operand(0).shape);
  out.back() = p->dv;
  if (v.operand(3).shape != out || v.operand(5).shape != out)
    return v.error("output and grad must have shape " + shapeString(out));
  if (v.operand(4).shape != rowsShape(v.operand(0)))
    return v.error("logsumexp must have shape " + shapeString(rowsShape(v.operand(0))));
  for (size_t i = 0; i < 3; ++i)
    MPTRT_TRY(expectResultShape(v, i, v.operand(i).shape));
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
