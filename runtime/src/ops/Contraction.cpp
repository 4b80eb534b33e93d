//===- Contraction.cpp - decoders for matmul, gemm and conv --------------===//
#include "ops/DecodeUtil.h"
#include "ops/OpParams.h"

#include <algorithm>
#include <string>
#include <utility>

namespace mptrt {
namespace rt {

namespace {

bool isFP8(const TensorDesc &d) { return d.dtype == DType::F8E4M3FN || d.dtype == DType::F8E5M2; }

/// The checks of a scaled contraction: FP8 operands A and B (operands 0 and
/// 1), f32 0-d scales at `scale0` and `scale0 + 1`, a float result that is
/// not FP8 (a D scale for FP8 outputs is not implemented), and any C float.
Status expectScaledContraction(const KernelView &v, size_t scale0) {
  for (size_t i : {size_t(0), size_t(1)})
    if (!isFP8(v.operand(i)))
      return v.error(operandLabel(v, i) + " must be f8E4M3FN or f8E5M2");
  for (size_t i : {scale0, scale0 + 1}) {
    const TensorDesc &s = v.operand(i);
    if (s.dtype != DType::F32 || s.rank() != 0)
      return v.error(operandLabel(v, i) + " (a scale) must be a 0-d f32");
  }
  for (size_t i = 2; i < scale0; ++i)
    MPTRT_TRY(expectFloatOperand(v, i));
  MPTRT_TRY(expectFloatResult(v, 0));
  if (isFP8(v.result(0)))
    return v.error(resultLabel(v, 0) + " must not be FP8 (no D scale yet)");
  return Status::ok();
}

Status decodeMatMulShapes(const KernelView &v, MatMulParams *p);
Status decodeGemmShapes(const KernelView &v, bool hasC, GemmParams *p);

Status decodeGemmScalars(const KernelView &v, GemmParams *p) {
  double alpha, beta;
  MPTRT_TRY(v.getFloat("alpha", 1.0, &alpha));
  MPTRT_TRY(v.getFloat("beta", 1.0, &beta));
  p->alpha = static_cast<float>(alpha);
  p->beta = static_cast<float>(beta);
  MPTRT_TRY(v.getBool("trans_a", false, &p->transA));
  MPTRT_TRY(v.getBool("trans_b", false, &p->transB));
  return Status::ok();
}

} // namespace

Status decodeMatMul(const KernelView &v, MatMulParams *p) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  MPTRT_TRY(expectAllFloat(v));
  return decodeMatMulShapes(v, p);
}

Status decodeScaledMatMul(const KernelView &v, MatMulParams *p) {
  MPTRT_TRY(v.expectCounts(4, 4, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  MPTRT_TRY(expectScaledContraction(v, 2));
  p->scaled = true;
  return decodeMatMulShapes(v, p);
}

Status decodeScaledGemm(const KernelView &v, GemmParams *p) {
  MPTRT_TRY(v.expectCounts(4, 5, 1, 1));
  MPTRT_TRY(v.allowOnly({"alpha", "beta", "trans_a", "trans_b"}));
  const bool hasC = v.numOperands() == 5;
  MPTRT_TRY(expectScaledContraction(v, hasC ? 3 : 2));
  MPTRT_TRY(decodeGemmScalars(v, p));
  p->activation = Activation::None;
  p->scaled = true;
  p->scaleOperand = hasC ? 3 : 2;
  return decodeGemmShapes(v, hasC, p);
}

namespace {

Status decodeMatMulShapes(const KernelView &v, MatMulParams *p) {
  const TensorDesc &a = v.operand(0), &b = v.operand(1);
  if (a.rank() < 1 || b.rank() < 1)
    return v.error("operands must have rank >= 1");
  const int ar = a.rank(), br = b.rank();
  p->M = ar == 1 ? 1 : a.shape[ar - 2];
  p->K = a.shape[ar - 1];
  const int64_t kB = br == 1 ? b.shape[0] : b.shape[br - 2];
  p->N = br == 1 ? 1 : b.shape[br - 1];
  if (kB != p->K)
    return v.error("contraction sizes differ: " + operandLabel(v, 0) + " and " +
                   operandLabel(v, 1));
  // Batch axes: numpy broadcast of a[:-2] and b[:-2], right-aligned.
  std::vector<int64_t> aBatch(a.shape.begin(), a.shape.end() - std::min(ar, 2));
  std::vector<int64_t> bBatch(b.shape.begin(), b.shape.end() - std::min(br, 2));
  const size_t rank = std::max(aBatch.size(), bBatch.size());
  std::vector<int64_t> batch(rank, 1), aStride(rank, 0), bStride(rank, 0);
  int64_t aS = 1, bS = 1;
  for (size_t i = 0; i < rank; ++i) {
    const size_t d = rank - 1 - i; // output batch axis, from the innermost
    int64_t ad = i < aBatch.size() ? aBatch[aBatch.size() - 1 - i] : 1;
    int64_t bd = i < bBatch.size() ? bBatch[bBatch.size() - 1 - i] : 1;
    if (ad != bd && ad != 1 && bd != 1)
      return v.error("batch dimensions of " + operandLabel(v, 0) + " and " + operandLabel(v, 1) +
                     " do not broadcast");
    batch[d] = ad == 1 ? bd : ad;
    aStride[d] = ad == 1 ? 0 : aS;
    bStride[d] = bd == 1 ? 0 : bS;
    aS *= ad;
    bS *= bd;
  }
  std::vector<int64_t> expected = batch;
  if (ar > 1)
    expected.push_back(p->M);
  if (br > 1)
    expected.push_back(p->N);
  MPTRT_TRY(expectResultShape(v, 0, expected));
  p->batch = product(batch, 0, batch.size());
  p->aOffset.resize(p->batch);
  p->bOffset.resize(p->batch);
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < p->batch; ++n) {
    int64_t ao = 0, bo = 0;
    for (size_t d = 0; d < rank; ++d) {
      ao += index[d] * aStride[d];
      bo += index[d] * bStride[d];
    }
    p->aOffset[n] = ao * p->M * p->K;
    p->bOffset[n] = bo * p->K * p->N;
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < batch[d])
        break;
      index[d] = 0;
    }
  }
  return Status::ok();
}

} // namespace

Status decodeGemm(const KernelView &v, GemmParams *p) {
  MPTRT_TRY(v.expectCounts(2, 3, 1, 1));
  MPTRT_TRY(v.allowOnly({"alpha", "beta", "trans_a", "trans_b", "activation"}));
  MPTRT_TRY(expectAllFloat(v));
  MPTRT_TRY(decodeGemmScalars(v, p));
  std::string activation;
  MPTRT_TRY(v.getString("activation", "none", &activation));
  if (activation == "none")
    p->activation = Activation::None;
  else if (activation == "relu")
    p->activation = Activation::Relu;
  else if (activation == "gelu")
    p->activation = Activation::Gelu;
  else if (activation == "gelu_tanh")
    p->activation = Activation::GeluTanh;
  else
    return v.error("attribute 'activation' must be \"none\", \"relu\", \"gelu\" or "
                   "\"gelu_tanh\", not \"" +
                   activation + "\"");
  return decodeGemmShapes(v, v.numOperands() == 3, p);
}

namespace {

Status decodeGemmShapes(const KernelView &v, bool hasC, GemmParams *p) {
  const TensorDesc &a = v.operand(0), &b = v.operand(1);
  if (a.rank() != 2 || b.rank() != 2)
    return v.error("A and B must have rank 2; got " + describe(a) + ", " + describe(b));
  p->M = p->transA ? a.shape[1] : a.shape[0];
  p->K = p->transA ? a.shape[0] : a.shape[1];
  const int64_t kB = p->transB ? b.shape[1] : b.shape[0];
  p->N = p->transB ? b.shape[0] : b.shape[1];
  if (kB != p->K)
    return v.error("contraction sizes differ: op(A) is " + std::to_string(p->M) + "x" +
                   std::to_string(p->K) + ", op(B) is " + std::to_string(kB) + "x" +
                   std::to_string(p->N));
  MPTRT_TRY(expectResultShape(v, 0, {p->M, p->N}));
  p->hasC = hasC;
  if (p->hasC) {
    // C broadcasts one way to [M, N]: shapes [], [N], [1], [M, N], [1, N],
    // [M, 1], [1, 1].
    const TensorDesc &c = v.operand(2);
    if (c.rank() > 2)
      return v.error(operandLabel(v, 2) + " (C) must have rank <= 2");
    const int64_t cm = c.rank() == 2 ? c.shape[0] : 1;
    const int64_t cn = c.rank() >= 1 ? c.shape[c.rank() - 1] : 1;
    if ((cm != 1 && cm != p->M) || (cn != 1 && cn != p->N))
      return v.error(operandLabel(v, 2) + " (C) does not broadcast to [" + std::to_string(p->M) +
                     ", " + std::to_string(p->N) + "]");
    p->cColStride = cn == 1 ? 0 : 1;
    p->cRowStride = cm == 1 ? 0 : cn;
  }
  return Status::ok();
}

} // namespace

Status decodeConv(const KernelView &v, ConvParams *p) {
  MPTRT_TRY(v.expectCounts(2, 3, 1, 1));
  MPTRT_TRY(v.allowOnly(
      {"strides", "pads", "dilations", "group", "kernel_shape", "layout", "activation"}));
  MPTRT_TRY(expectChannelsFirst(v));
  MPTRT_TRY(expectAllFloat(v));
  MPTRT_TRY(decodeNormActivation(v, &p->relu));
  std::vector<int64_t> expected;
  MPTRT_TRY(decodeConvWindow(v, v.operand(0), operandLabel(v, 0), v.operand(1), operandLabel(v, 1),
                             p, &expected));
  MPTRT_TRY(expectResultShape(v, 0, expected));
  p->hasBias = v.numOperands() == 3;
  if (p->hasBias && v.operand(2).shape != std::vector<int64_t>{p->M})
    return v.error(operandLabel(v, 2) + " (bias) must have shape [" + std::to_string(p->M) + "]");
  return Status::ok();
}

Status decodeConvWindow(const KernelView &v, const TensorDesc &x, const std::string &xLabel,
                        const TensorDesc &w, const std::string &wLabel, ConvParams *p,
                        std::vector<int64_t> *outShape) {
  if (x.rank() < 3)
    return v.error(xLabel + " must be [N, C, spatial...] with at least one "
                            "spatial axis");
  if (w.rank() != x.rank())
    return v.error(wLabel + " (weight) must have the input's rank");
  const int nsp = x.rank() - 2;
  p->spatialRank = nsp;
  p->N = x.shape[0];
  p->C = x.shape[1];
  p->M = w.shape[0];
  MPTRT_TRY(v.getInt("group", 1, &p->group));
  std::vector<int64_t> pads;
  MPTRT_TRY(v.getInts("strides", std::vector<int64_t>(nsp, 1), &p->strides));
  MPTRT_TRY(v.getInts("dilations", std::vector<int64_t>(nsp, 1), &p->dilations));
  MPTRT_TRY(v.getInts("pads", std::vector<int64_t>(2 * nsp, 0), &pads));
  if (p->strides.size() != size_t(nsp) || p->dilations.size() != size_t(nsp) ||
      pads.size() != size_t(2 * nsp))
    return v.error("strides and dilations need " + std::to_string(nsp) + " values and pads " +
                   std::to_string(2 * nsp));
  for (int d = 0; d < nsp; ++d) {
    if (p->strides[d] < 1 || p->dilations[d] < 1 || pads[d] < 0 || pads[nsp + d] < 0)
      return v.error("strides and dilations must be >= 1 and pads >= 0");
    if (p->strides[d] >= kMaxWindowAttr || p->dilations[d] >= kMaxWindowAttr ||
        pads[d] >= kMaxWindowAttr || pads[nsp + d] >= kMaxWindowAttr)
      return v.error("strides, dilations and pads must be below 2^31");
  }
  if (p->group < 1 || p->C % p->group != 0 || p->M % p->group != 0)
    return v.error("group " + std::to_string(p->group) + " must divide the " +
                   std::to_string(p->C) + " input and " + std::to_string(p->M) +
                   " output channels");
  if (w.shape[1] != p->C / p->group)
    return v.error(wLabel + " (weight) must have C / group = " + std::to_string(p->C / p->group) +
                   " input channels");
  p->kernel.assign(w.shape.begin() + 2, w.shape.end());
  if (v.has("kernel_shape")) {
    std::vector<int64_t> ks;
    MPTRT_TRY(v.getInts("kernel_shape", {}, &ks));
    if (ks != p->kernel)
      return v.error("attribute 'kernel_shape' disagrees with the weight's shape");
  }
  p->in.assign(x.shape.begin() + 2, x.shape.end());
  p->padsBegin.assign(pads.begin(), pads.begin() + nsp);
  std::vector<int64_t> expected = {p->N, p->M};
  p->inSize = p->outSize = p->kernelSize = 1;
  for (int d = 0; d < nsp; ++d) {
    // The weight's kernel dims are only bounded by the plan's 2^48, so the
    // dilated span is computed with an overflow check.
    const int64_t padded = p->in[d] + pads[d] + pads[nsp + d];
    int64_t span = 0;
    if (p->kernel[d] < 1 || __builtin_mul_overflow(p->dilations[d], p->kernel[d] - 1, &span) ||
        span >= padded)
      return v.error("spatial axis " + std::to_string(d) + ": the kernel (" +
                     std::to_string(p->kernel[d]) + ", dilation " +
                     std::to_string(p->dilations[d]) + ") is larger than the padded input (" +
                     std::to_string(padded) + ")");
    ++span;
    const int64_t out = (padded - span) / p->strides[d] + 1;
    if (p->outSize > INT64_MAX / out)
      return v.error("the convolution's output would have more than 2^63 elements");
    p->out.push_back(out);
    expected.push_back(p->out.back());
    p->inSize *= p->in[d];
    p->outSize *= p->out[d];
    p->kernelSize *= p->kernel[d];
  }
  *outShape = std::move(expected);
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
