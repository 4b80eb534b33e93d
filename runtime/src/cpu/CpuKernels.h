//===- CpuKernels.h - the CPU backend's kernel families ----------*- C++ -*-===//
//
// One prepare function per kernel family: it decodes the plan kernel with
// the shared decoder (ops/OpParams.h) and returns a PreparedKernel that runs
// the family's CPU loop over the decoded parameters.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_CPUKERNELS_H
#define MPTRT_SRC_CPU_CPUKERNELS_H

#include "Backend.h"
#include "ops/OpParams.h"

#include <memory>
#include <utility>

namespace mptrt {
namespace rt {
namespace cpu {

using PrepareFn = Status (*)(const KernelView &, std::unique_ptr<PreparedKernel> *);

/// A prepared kernel that calls `run(params, args)`.
template <typename Params>
class ParamsKernel final : public PreparedKernel {
public:
  using RunFn = Status (*)(const Params &, const KernelArgs &);
  ParamsKernel(Params params, RunFn fn) : params(std::move(params)), fn(fn) {}
  Status run(const KernelArgs &args) override { return fn(params, args); }

private:
  Params params;
  RunFn fn;
};

/// Decodes with `decode` and wraps `run`; the body of most prepare functions.
template <typename Params>
Status prepareWith(const KernelView &v, std::unique_ptr<PreparedKernel> *out,
                   Status (*decode)(const KernelView &, Params *),
                   Status (*run)(const Params &, const KernelArgs &)) {
  Params params;
  MPTRT_TRY(decode(v, &params));
  *out = std::make_unique<ParamsKernel<Params>>(std::move(params), run);
  return Status::ok();
}

// ElementwiseKernels.cpp
Status prepareUnary(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareBinary(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareWhere(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareCast(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// QuantizeKernels.cpp
Status prepareQuantize(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// ContractionKernels.cpp
Status prepareMatMul(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareGemm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareConv(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// PoolingKernels.cpp
Status preparePool(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// NormalizationKernels.cpp
Status prepareBatchNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLayerNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSoftmax(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// ReductionKernels.cpp
Status prepareReduce(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLoss(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// DataMovementKernels.cpp
Status prepareCopy(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareTranspose(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareConcat(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSplit(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSlice(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareGather(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareExpand(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareTrilu(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareFill(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// DropoutKernels.cpp
Status prepareDropout(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// BackwardKernels.cpp
Status prepareUnaryGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSoftmaxGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLayerNormGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLossGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareGatherGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSliceGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status preparePoolGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareBatchNormGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// ConvGradKernels.cpp
Status prepareConvGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// TrainingKernels.cpp (loss scaling, norms, counters, FP8 scales)
Status prepareScaleLoss(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareUnscale(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAllFinite(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareGlobalNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareClipByNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareUpdateLossScale(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLrSchedule(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAdvanceStep(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAmax(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareUpdateFp8Scale(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// OptimizerKernels.cpp
Status prepareSgdUpdate(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAdamWUpdate(const KernelView &v, std::unique_ptr<PreparedKernel> *out);

/// Fills offsets[k][0, m) with input k's element offsets for the output
/// elements [start, start + m) of a broadcast (row-major walk).
void broadcastOffsets(const BroadcastIndex &bc, int64_t start, int64_t m,
                      int64_t *const *offsets);

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_CPUKERNELS_H
