//===- AttentionKernels.cpp - attention and its gradient on the CPU -------===//
//
// The reference kernels of mpt.attention: for each of `batch` problems and
// each query row i,
//   s_j = scale * (q_i . k_j) + mask_ij,  m = max_j s_j,
//   l = sum_j exp(s_j - m)  (in double, as softmax sums),
//   o_i = sum_j (exp(s_j - m) / l) v_j,  logsumexp_i = m + log(l).
// Dot products over D accumulate in float32 in index order; the sums over
// the keys (the output) and over the rows (the gradients) in double, and
// every result is rounded once into its type. The scores are one row at a
// time: nothing of size [Tq, Tk] is kept.
//
// The gradient recomputes each probability from logsumexp:
//   p_ij = exp(s_ij - logsumexp_i),  D_i = grad_i . o_i,
//   ds_ij = p_ij ((grad_i . v_j) - D_i),
//   query_grad_i = scale sum_j ds_ij k_j,  key_grad_j = scale sum_i ds_ij q_i,
//   value_grad_j = sum_i p_ij grad_i,
// one problem per task, rows in order, in double, so the sums have a fixed
// order.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "cpu/WholeTensor.h"

#include <algorithm>
#include <cmath>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

float dot(const float *a, const float *b, int64_t n) {
  float sum = 0.0f;
  for (int64_t t = 0; t < n; ++t)
    sum += a[t] * b[t];
  return sum;
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

/// The operands widened to float32, and per chunk a row of scores, of
/// output sums (double) and of output (float32).
struct AttentionScratch {
  float *q, *k, *v, *mask, *scores, *outRow;
  double *acc;
};
AttentionScratch attentionScratch(const AttentionParams &p, Scratch &s) {
  AttentionScratch w;
  w.q = s.take<float>(p.batch * p.tq * p.d);
  w.k = s.take<float>(p.batch * p.tk * p.d);
  w.v = s.take<float>(p.batch * p.tk * p.dv);
  w.mask = s.take<float>(p.hasMask ? p.maskNumel : 0);
  w.scores = s.take<float>(maxChunks() * p.tk);
  w.acc = s.take<double>(maxChunks() * p.dv);
  w.outRow = s.take<float>(maxChunks() * p.dv);
  return w;
}

Status runAttention(const AttentionParams &p, const KernelArgs &args) {
  Scratch scratch(args.workspace);
  const AttentionScratch ws = attentionScratch(p, scratch);
  const float *q = widen(args.operands[0], ws.q);
  const float *k = widen(args.operands[1], ws.k);
  const float *v = widen(args.operands[2], ws.v);
  const float *mask = p.hasMask ? widen(args.operands[3], ws.mask) : nullptr;
  const TensorArg &out = args.results[0], &lse = args.results[1];
  const DType ot = out.desc->dtype, lt = lse.desc->dtype;
  parallelForChunks(p.batch * p.tq, grainForCost(p.tk * (2 * p.d + 2 * p.dv + 12)),
                    [&](int64_t chunk, int64_t begin, int64_t end) {
                      float *scores = ws.scores + chunk * p.tk;
                      double *acc = ws.acc + chunk * p.dv;
                      float *outRow = ws.outRow + chunk * p.dv;
                      for (int64_t r = begin; r < end; ++r) {
                        const int64_t b = r / p.tq, i = r % p.tq;
                        const float *qi = q + r * p.d;
                        const float *kb = k + b * p.tk * p.d, *vb = v + b * p.tk * p.dv;
                        const float *maskRow =
                            mask ? mask + p.maskOffset(b) + i * p.maskRowStride : nullptr;
                        float max = -INFINITY;
                        for (int64_t j = 0; j < p.tk; ++j) {
                          float s = p.scale * dot(qi, kb + j * p.d, p.d);
                          if (maskRow)
                            s += maskRow[j * p.maskColStride];
                          scores[j] = s;
                          max = std::max(max, s);
                        }
                        double sum = 0;
                        for (int64_t j = 0; j < p.tk; ++j)
                          sum += std::exp(scores[j] - max);
                        const float inv = static_cast<float>(1.0 / sum);
                        std::fill(acc, acc + p.dv, 0.0);
                        for (int64_t j = 0; j < p.tk; ++j) {
                          const float prob = std::exp(scores[j] - max) * inv;
                          const float *vj = vb + j * p.dv;
                          for (int64_t t = 0; t < p.dv; ++t)
                            acc[t] += static_cast<double>(prob) * vj[t];
                        }
                        for (int64_t t = 0; t < p.dv; ++t)
                          outRow[t] = static_cast<float>(acc[t]);
                        storeF32(outRow, p.dv, ot, elementPtr(out.data, ot, r * p.dv));
                        const float logSum = max + static_cast<float>(std::log(sum));
                        storeF32(&logSum, 1, lt, elementPtr(lse.data, lt, r));
                      }
                    });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// attention_grad
//===----------------------------------------------------------------------===//

/// Every operand widened to float32, the three gradients accumulated in
/// double, and one of them at a time rounded to float32 for the store.
struct AttentionGradScratch {
  float *q, *k, *v, *o, *lse, *grad, *mask, *rounded;
  double *dq, *dk, *dv;
};
AttentionGradScratch attentionGradScratch(const AttentionParams &p, Scratch &s) {
  AttentionGradScratch w;
  const int64_t qn = p.batch * p.tq * p.d, kn = p.batch * p.tk * p.d;
  const int64_t vn = p.batch * p.tk * p.dv, on = p.batch * p.tq * p.dv;
  w.q = s.take<float>(qn);
  w.k = s.take<float>(kn);
  w.v = s.take<float>(vn);
  w.o = s.take<float>(on);
  w.lse = s.take<float>(p.batch * p.tq);
  w.grad = s.take<float>(on);
  w.mask = s.take<float>(p.hasMask ? p.maskNumel : 0);
  w.dq = s.take<double>(qn);
  w.dk = s.take<double>(kn);
  w.dv = s.take<double>(vn);
  w.rounded = s.take<float>(std::max({qn, kn, vn}));
  return w;
}

Status runAttentionGrad(const AttentionParams &p, const KernelArgs &args) {
  Scratch scratch(args.workspace);
  const AttentionGradScratch ws = attentionGradScratch(p, scratch);
  const float *q = widen(args.operands[0], ws.q);
  const float *k = widen(args.operands[1], ws.k);
  const float *v = widen(args.operands[2], ws.v);
  const float *o = widen(args.operands[3], ws.o);
  const float *lse = widen(args.operands[4], ws.lse);
  const float *grad = widen(args.operands[5], ws.grad);
  const float *mask = p.hasMask ? widen(args.operands[6], ws.mask) : nullptr;
  parallelForChunks(p.batch, grainForCost(p.tq * p.tk * (4 * p.d + 3 * p.dv + 12)),
                    [&](int64_t, int64_t begin, int64_t end) {
                      for (int64_t b = begin; b < end; ++b) {
                        const float *qb = q + b * p.tq * p.d, *kb = k + b * p.tk * p.d;
                        const float *vb = v + b * p.tk * p.dv;
                        double *dq = ws.dq + b * p.tq * p.d, *dk = ws.dk + b * p.tk * p.d;
                        double *dv = ws.dv + b * p.tk * p.dv;
                        std::fill(dq, dq + p.tq * p.d, 0.0);
                        std::fill(dk, dk + p.tk * p.d, 0.0);
                        std::fill(dv, dv + p.tk * p.dv, 0.0);
                        for (int64_t i = 0; i < p.tq; ++i) {
                          const int64_t r = b * p.tq + i;
                          const float *qi = qb + i * p.d, *gi = grad + r * p.dv;
                          const float di = dot(gi, o + r * p.dv, p.dv);
                          const float *maskRow =
                              mask ? mask + p.maskOffset(b) + i * p.maskRowStride : nullptr;
                          double *dqi = dq + i * p.d;
                          for (int64_t j = 0; j < p.tk; ++j) {
                            const float *kj = kb + j * p.d, *vj = vb + j * p.dv;
                            float s = p.scale * dot(qi, kj, p.d);
                            if (maskRow)
                              s += maskRow[j * p.maskColStride];
                            const float prob = std::exp(s - lse[r]);
                            const float ds = prob * (dot(gi, vj, p.dv) - di);
                            double *dkj = dk + j * p.d, *dvj = dv + j * p.dv;
                            for (int64_t t = 0; t < p.d; ++t) {
                              dqi[t] += static_cast<double>(ds) * kj[t];
                              dkj[t] += static_cast<double>(ds) * qi[t];
                            }
                            for (int64_t t = 0; t < p.dv; ++t)
                              dvj[t] += static_cast<double>(prob) * gi[t];
                          }
                          for (int64_t t = 0; t < p.d; ++t)
                            dqi[t] *= p.scale;
                        }
                        for (int64_t t = 0; t < p.tk * p.d; ++t)
                          dk[t] *= p.scale;
                      }
                    });
  const double *sources[3] = {ws.dq, ws.dk, ws.dv};
  for (size_t i = 0; i < 3; ++i) {
    const TensorArg &r = args.results[i];
    for (int64_t e = 0; e < r.desc->numel; ++e)
      ws.rounded[e] = static_cast<float>(sources[i][e]);
    storeF32(ws.rounded, r.desc->numel, r.desc->dtype, r.data);
  }
  return Status::ok();
}

} // namespace

Status prepareAttention(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<AttentionParams>(
      v, out, decodeAttention, runAttention,
      scratchBytes<AttentionParams, AttentionScratch, attentionScratch>);
}
Status prepareAttentionGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<AttentionParams>(
      v, out, decodeAttentionGrad, runAttentionGrad,
      scratchBytes<AttentionParams, AttentionGradScratch, attentionGradScratch>);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
