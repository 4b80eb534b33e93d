//===- Pooling.cpp - decoders for max, average and global average pool ---===//
#include "ops/DecodeUtil.h"
#include "ops/OpParams.h"

#include <string>
#include <utility>

namespace mptrt {
namespace rt {

Status decodePool(const KernelView &v, PoolParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(expectChannelsFirst(v));
  PoolKind kind;
  if (v.kind() == "max_pool")
    kind = PoolKind::Max;
  else if (v.kind() == "average_pool")
    kind = PoolKind::Average;
  else if (v.kind() == "global_average_pool")
    kind = PoolKind::GlobalAverage;
  else
    return v.error("not a pooling kind");
  const TensorDesc &x = v.operand(0), &y = v.result(0);
  if (x.rank() >= 3) {
    if (isFloat(x) && isFloat(y)) {
      p->integer = false;
    } else if (kind == PoolKind::Max && isInt(x) && x.dtype == y.dtype) {
      p->integer = true;
    } else {
      return v.error("operand and result must both be float" +
                     std::string(kind == PoolKind::Max ? ", or the same integer type" : "") +
                     "; got " + describe(x) + " -> " + describe(y));
    }
  }
  std::vector<int64_t> expected;
  MPTRT_TRY(decodePoolWindow(v, kind, x, operandLabel(v, 0), p, &expected));
  return expectResultShape(v, 0, expected);
}

Status decodePoolWindow(const KernelView &v, PoolKind kind, const TensorDesc &x,
                        const std::string &inputLabel, PoolParams *p,
                        std::vector<int64_t> *outShape) {
  p->kind = kind;
  if (x.rank() < 3)
    return v.error(inputLabel + " must be [N, C, spatial...] with at least one "
                                "spatial axis");
  const int nsp = x.rank() - 2;
  p->spatialRank = nsp;
  p->N = x.shape[0];
  p->C = x.shape[1];
  p->in.assign(x.shape.begin() + 2, x.shape.end());

  if (p->kind == PoolKind::GlobalAverage) {
    MPTRT_TRY(v.allowOnly({"layout"}));
    p->kernel = p->in;
    p->strides.assign(nsp, 1);
    p->padsBegin.assign(nsp, 0);
    p->padsEnd.assign(nsp, 0);
    p->dilations.assign(nsp, 1);
    p->countIncludePad = true;
  } else {
    if (p->kind == PoolKind::Max)
      MPTRT_TRY(
          v.allowOnly({"kernel_shape", "strides", "pads", "dilations", "ceil_mode", "layout"}));
    else
      MPTRT_TRY(v.allowOnly({"kernel_shape", "strides", "pads", "dilations", "ceil_mode",
                             "count_include_pad", "layout"}));
    std::vector<int64_t> pads;
    MPTRT_TRY(v.getRequiredInts("kernel_shape", &p->kernel));
    MPTRT_TRY(v.getInts("strides", std::vector<int64_t>(nsp, 1), &p->strides));
    MPTRT_TRY(v.getInts("dilations", std::vector<int64_t>(nsp, 1), &p->dilations));
    MPTRT_TRY(v.getInts("pads", std::vector<int64_t>(2 * nsp, 0), &pads));
    MPTRT_TRY(v.getBool("count_include_pad", false, &p->countIncludePad));
    if (p->kernel.size() != size_t(nsp) || p->strides.size() != size_t(nsp) ||
        p->dilations.size() != size_t(nsp) || pads.size() != size_t(2 * nsp))
      return v.error("kernel_shape, strides and dilations need " + std::to_string(nsp) +
                     " values and pads " + std::to_string(2 * nsp));
    p->padsBegin.assign(pads.begin(), pads.begin() + nsp);
    p->padsEnd.assign(pads.begin() + nsp, pads.end());
  }
  bool ceilMode = false;
  if (p->kind != PoolKind::GlobalAverage)
    MPTRT_TRY(v.getBool("ceil_mode", false, &ceilMode));

  std::vector<int64_t> expected = {p->N, p->C};
  p->inSize = p->outSize = 1;
  for (int d = 0; d < nsp; ++d) {
    if (p->kernel[d] < 1 || p->strides[d] < 1 || p->dilations[d] < 1 || p->padsBegin[d] < 0 ||
        p->padsEnd[d] < 0)
      return v.error("kernel_shape, strides and dilations must be >= 1 and pads >= 0");
    if (p->kernel[d] >= kMaxWindowAttr || p->strides[d] >= kMaxWindowAttr ||
        p->dilations[d] >= kMaxWindowAttr || p->padsBegin[d] >= kMaxWindowAttr ||
        p->padsEnd[d] >= kMaxWindowAttr)
      return v.error("kernel_shape, strides, dilations and pads must be below 2^31");
    const int64_t span = p->dilations[d] * (p->kernel[d] - 1) + 1;
    const int64_t padded = p->in[d] + p->padsBegin[d] + p->padsEnd[d];
    if (padded < span)
      return v.error("spatial axis " + std::to_string(d) + ": the window (" + std::to_string(span) +
                     ") is larger than the padded input (" + std::to_string(padded) + ")");
    int64_t out = (padded - span) / p->strides[d] + 1;
    if (ceilMode) {
      out = (padded - span + p->strides[d] - 1) / p->strides[d] + 1;
      // A last window that would start in the end padding is dropped.
      if ((out - 1) * p->strides[d] >= p->in[d] + p->padsBegin[d])
        --out;
    }
    if (p->outSize > INT64_MAX / out)
      return v.error("the pooled output would have more than 2^63 elements");
    p->out.push_back(out);
    expected.push_back(out);
    p->inSize *= p->in[d];
    p->outSize *= out;
  }
  *outShape = std::move(expected);
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
