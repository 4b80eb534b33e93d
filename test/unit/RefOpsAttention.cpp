//===- RefOpsAttention.cpp - evaluators of attention and its gradient -----===//
//
// attention and attention_grad in float64, written from their definitions:
// the forward materialises the [..., Tq, Tk] scores and the softmax; the
// gradient differentiates that composition directly (docs/training.md),
// independently of the runtime kernels' recomputation from logsumexp.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

using namespace mlir;

namespace mpt::ref {
namespace {

/// The shapes of one attention: `batch` problems of query [tq, d], key
/// [tk, d] and value [tk, dv], and the mask broadcast to [batch, tq, tk].
struct Problem {
  int64_t batch, tq, tk, d, dv;
  std::vector<double> mask; // empty without a mask
};

FailureOr<Problem> problemOf(Operation *op, const RefTensor &q,
                             const RefTensor &k, const RefTensor &v,
                             const RefTensor *mask) {
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
    return fail(op, "query, key and value must have one rank >= 2");
  const int64_t r = q.rank();
  Problem p{product(ArrayRef(q.shape).drop_back(2)),
            q.shape[r - 2],
            k.shape[r - 2],
            q.shape[r - 1],
            v.shape[r - 1],
            {}};
  if (k.shape[r - 1] != p.d || v.shape[r - 2] != p.tk)
    return fail(op, "mismatched query, key and value");
  if (mask) {
    std::vector<int64_t> scores(q.shape.begin(), q.shape.end() - 2);
    scores.push_back(p.tq);
    scores.push_back(p.tk);
    std::optional<RefTensor> wide = broadcastTo(*mask, scores);
    if (!wide)
      return fail(op, "mask does not broadcast to the scores");
    p.mask = std::move(wide->data);
  }
  return p;
}

/// The scores scale * q k^T + mask, [batch, tq, tk].
std::vector<double> scoresOf(const Problem &p, const RefTensor &q,
                             const RefTensor &k, double scale) {
  std::vector<double> s(p.batch * p.tq * p.tk);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t i = 0; i < p.tq; ++i)
      for (int64_t j = 0; j < p.tk; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < p.d; ++t)
          dot += q.data[(b * p.tq + i) * p.d + t] *
                 k.data[(b * p.tk + j) * p.d + t];
        const int64_t at = (b * p.tq + i) * p.tk + j;
        s[at] = scale * dot + (p.mask.empty() ? 0.0 : p.mask[at]);
      }
  return s;
}

/// Each row's maximum score and log(sum(exp(s - max))), [batch * tq].
void rowStatistics(const Problem &p, const std::vector<double> &s,
                   std::vector<double> &max, std::vector<double> &logSum) {
  max.assign(p.batch * p.tq, -INFINITY);
  logSum.assign(p.batch * p.tq, 0);
  for (int64_t row = 0; row < p.batch * p.tq; ++row) {
    for (int64_t j = 0; j < p.tk; ++j)
      max[row] = std::max(max[row], s[row * p.tk + j]);
    double sum = 0;
    for (int64_t j = 0; j < p.tk; ++j)
      sum += std::exp(s[row * p.tk + j] - max[row]);
    logSum[row] = std::log(sum);
  }
}

/// The probabilities softmax(scores) along the last axis, in place.
void softmaxRows(const Problem &p, std::vector<double> &s) {
  std::vector<double> max, logSum;
  rowStatistics(p, s, max, logSum);
  for (int64_t row = 0; row < p.batch * p.tq; ++row)
    for (int64_t j = 0; j < p.tk; ++j)
      s[row * p.tk + j] = std::exp(s[row * p.tk + j] - max[row] - logSum[row]);
}

LogicalResult attention(Operation *op, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  const RefTensor &q = operands[0], &k = operands[1], &v = operands[2];
  const RefTensor *mask = operands.size() > 3 ? &operands[3] : nullptr;
  FailureOr<Problem> p = problemOf(op, q, k, v, mask);
  if (failed(p))
    return failure();
  std::vector<double> probs = scoresOf(*p, q, k, floatAttr(op, "scale", 1.0));
  std::vector<double> max, logSum;
  rowStatistics(*p, probs, max, logSum);
  softmaxRows(*p, probs);
  RefTensor out(resultShape(op, 0)), lse(resultShape(op, 1));
  for (int64_t b = 0; b < p->batch; ++b)
    for (int64_t i = 0; i < p->tq; ++i) {
      const int64_t row = b * p->tq + i;
      for (int64_t t = 0; t < p->dv; ++t)
        for (int64_t j = 0; j < p->tk; ++j)
          out.data[row * p->dv + t] +=
              probs[row * p->tk + j] * v.data[(b * p->tk + j) * p->dv + t];
      lse.data[row] = max[row] + logSum[row];
    }
  results.push_back(std::move(out));
  results.push_back(std::move(lse));
  return success();
}

/// The gradient of o = P v with P = softmax(S), S = scale q k^T + mask:
/// dv = P^T do, dP = do v^T, dS = P * (dP - rowsum(dP * P)),
/// dq = scale dS k, dk = scale dS^T q. Reads neither output nor logsumexp.
LogicalResult attentionGrad(Operation *op, ArrayRef<RefTensor> operands,
                            std::vector<RefTensor> &results) {
  const RefTensor &q = operands[0], &k = operands[1], &v = operands[2],
                  &dout = operands[5];
  const RefTensor *mask = operands.size() > 6 ? &operands[6] : nullptr;
  FailureOr<Problem> p = problemOf(op, q, k, v, mask);
  if (failed(p))
    return failure();
  const double scale = floatAttr(op, "scale", 1.0);
  std::vector<double> probs = scoresOf(*p, q, k, scale);
  softmaxRows(*p, probs);
  RefTensor dq(q.shape), dk(k.shape), dv(v.shape);
  std::vector<double> dP(p->tk);
  for (int64_t b = 0; b < p->batch; ++b)
    for (int64_t i = 0; i < p->tq; ++i) {
      const int64_t row = b * p->tq + i;
      double rowSum = 0;
      for (int64_t j = 0; j < p->tk; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < p->dv; ++t)
          dot +=
              dout.data[row * p->dv + t] * v.data[(b * p->tk + j) * p->dv + t];
        dP[j] = dot;
        rowSum += dot * probs[row * p->tk + j];
      }
      for (int64_t j = 0; j < p->tk; ++j) {
        const double prob = probs[row * p->tk + j];
        const double dS = prob * (dP[j] - rowSum);
        for (int64_t t = 0; t < p->d; ++t) {
          dq.data[row * p->d + t] +=
              scale * dS * k.data[(b * p->tk + j) * p->d + t];
          dk.data[(b * p->tk + j) * p->d + t] +=
              scale * dS * q.data[row * p->d + t];
        }
        for (int64_t t = 0; t < p->dv; ++t)
          dv.data[(b * p->tk + j) * p->dv + t] +=
              prob * dout.data[row * p->dv + t];
      }
    }
  results.push_back(std::move(dq));
  results.push_back(std::move(dk));
  results.push_back(std::move(dv));
  return success();
}

} // namespace

void addAttentionOps(RefOpTable &table) {
  table["mpt.attention"] = attention;
  table["mpt.attention_grad"] = attentionGrad;
}

} // namespace mpt::ref
