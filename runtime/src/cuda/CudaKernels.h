//===- CudaKernels.h - the CUDA backend's kernel families ---------*- C++ -*-===//
//
// As for the CPU backend (cpu/CpuKernels.h): one prepare function per kernel
// family decodes the plan kernel with the shared decoder (ops/OpParams.h),
// so a plan is checked the same way on every device, and returns a
// PreparedKernel whose run() enqueues device work on the context's stream.
// run() allocates nothing and never waits for the device.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_CUDAKERNELS_H
#define MPTRT_SRC_CUDA_CUDAKERNELS_H

#include "Backend.h"
#include "cuda/CudaContext.h"
#include "ops/OpParams.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

namespace mptrt {
namespace rt {
namespace cuda {

using PrepareFn = Status (*)(const Context &, const KernelView &,
                             std::unique_ptr<PreparedKernel> *);

/// A prepared kernel that calls `run(context, params, args)`.
template <typename Params> class ParamsKernel final : public PreparedKernel {
public:
  using RunFn = Status (*)(const Context &, const Params &, const KernelArgs &);
  ParamsKernel(const Context &context, Params params, RunFn fn, uint64_t workspace = 0)
      : context(context), params(std::move(params)), fn(fn), bytes(workspace) {}
  uint64_t workspaceBytes() const override { return bytes; }
  Status run(const KernelArgs &args) override { return fn(context, params, args); }

private:
  const Context &context;
  Params params;
  RunFn fn;
  uint64_t bytes;
};

/// A kernel's workspace pieces, 256-byte aligned, handed out in order at
/// prepare; `used` is the kernel's workspaceBytes().
struct Carve {
  uint64_t used = 0;
  uint64_t take(uint64_t bytes) {
    used = (used + 255) / 256 * 256;
    const uint64_t at = used;
    used += bytes;
    return at;
  }
};

/// Decodes with `decode` and wraps `run`: the body of most prepare functions.
template <typename Params>
Status prepareWith(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out,
                   Status (*decode)(const KernelView &, Params *),
                   Status (*run)(const Context &, const Params &, const KernelArgs &)) {
  Params p;
  MPTRT_TRY(decode(v, &p));
  *out = std::make_unique<ParamsKernel<Params>>(c, std::move(p), run);
  return Status::ok();
}

/// Whether MPTRT_CUDA_GENERIC_KERNELS is set (to anything but "0") when a
/// kernel is prepared: the prepare functions then choose the generic
/// kernels (dtypes read per element, 64-bit indices, one element per
/// access), the reference the kernels specialised at prepare are tested
/// against (CudaSpecialisedKernelTest.cpp; docs/runtime.md, "CUDA kernels
/// specialised at prepare").
inline bool genericKernelsForced() {
  const char *env = std::getenv("MPTRT_CUDA_GENERIC_KERNELS");
  return env && *env && std::strcmp(env, "0") != 0;
}

/// Decoded parameters and whether prepare chose the fast kernels (false
/// under MPTRT_CUDA_GENERIC_KERNELS), for the families whose fast paths
/// depend on sizes and addresses checked when run() launches.
template <typename Params> struct Chosen {
  Params p;
  bool fast = true;
};

/// prepareWith for a run function of Chosen<Params>.
template <typename Params>
Status prepareChosen(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out,
                     Status (*decode)(const KernelView &, Params *),
                     Status (*run)(const Context &, const Chosen<Params> &, const KernelArgs &)) {
  Chosen<Params> chosen;
  MPTRT_TRY(decode(v, &chosen.p));
  chosen.fast = !genericKernelsForced();
  *out = std::make_unique<ParamsKernel<Chosen<Params>>>(c, std::move(chosen), run);
  return Status::ok();
}

// Attention and its gradient (AttentionKernels.cu).
Status prepareAttention(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareAttentionGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
// Elementwise and unary_grad (ElementwiseKernels.cu).
Status prepareUnary(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareBinary(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareWhere(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareCast(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareQuantize(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareUnaryGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);

// Contractions through cuBLASLt (ContractionKernels.cu).
Status prepareMatMul(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareGemm(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
/// Not implemented on CUDA yet (cuBLASLt FP8): prepare fails with a message.
Status prepareScaledMatMul(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareScaledGemm(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
// conv, conv_grad_input, conv_grad_weight (ConvKernels.cu): through cuDNN
// where it takes them, else as direct kernels (MPTRT_CUDA_CONV, Cudnn.h).
Status prepareConv(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareConvGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
/// A conv kind through cuDNN (CudnnConv.cpp); false, with why not, where
/// cuDNN does not take it or is absent. With `channelsLast`, the view is a
/// channels-last kernel's channels-first form (ChannelsLast.h) and the
/// activations are read and written channels last, as stored.
bool prepareCudnnConv(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *,
                      std::string *whyNot, bool channelsLast = false);
/// `n` elements of a `dtype` tensor widened exactly into float32 `out`
/// (ContractionKernels.cu; the contractions' and cuDNN's f32 fallbacks).
Status widenToF32(const Context &, DType dtype, const void *in, float *out, int64_t n);
/// For CudnnConv.cpp (ConvKernels.cu): out[e] = acc[e] + bias[(e / inner) % channels] (no bias:
/// null), in f32, rounded once into `outType`, then with `relu` conv's fused relu on the rounded
/// value; `acc` may be `out` when that is f32.
Status launchConvFinish(const Context &, const float *acc, DType biasType, const void *bias,
                        int64_t channels, int64_t inner, int64_t n, bool relu, DType outType,
                        void *out);

// Data movement, dropout, gather_grad and slice_grad (DataMovementKernels.cu).
Status prepareCopy(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareTranspose(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareConcat(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareSplit(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareSlice(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareGather(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareExpand(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareTrilu(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareFill(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareDropout(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareGatherGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareSliceGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);

// Loss scaling, norms, optimizers, counters, FP8 scales (TrainingKernels.cu).
Status prepareScaleLoss(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareUnscale(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareAllFinite(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareAllReduce(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareReduceScatter(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareAllGather(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareShard(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareGlobalNorm(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareClipByNorm(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareSgdUpdate(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareAdamWUpdate(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareUpdateLossScale(const Context &, const KernelView &,
                              std::unique_ptr<PreparedKernel> *);
Status prepareLrSchedule(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareAdvanceStep(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareAmax(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareUpdateFp8Scale(const Context &, const KernelView &,
                             std::unique_ptr<PreparedKernel> *);

// Normalisation and softmax (NormalizationKernels.cu).
Status prepareSoftmax(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareLayerNorm(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareBatchNorm(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
/// batch_norm / batch_norm_train on channels-last activations, decoded from
/// the kernel's channels-first form (ChannelsLast.h): the channels-first
/// kernel's sums in its order, so its bits (BatchNormStats.cuh).
Status prepareBatchNormChannelsLast(const Context &, const KernelView &first,
                                    std::unique_ptr<PreparedKernel> *);
// Their gradients (NormalizationGradKernels.cu).
Status prepareSoftmaxGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareLayerNormGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareBatchNormGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
/// batch_norm_grad on channels-last activations, as above.
Status prepareBatchNormGradChannelsLast(const Context &, const KernelView &first,
                                        std::unique_ptr<PreparedKernel> *);

// Reductions, losses and the loss gradients (ReductionKernels.cu).
Status prepareReduce(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareLoss(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status prepareLossGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);

// Pooling and its gradients (PoolingKernels.cu).
Status preparePool(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
Status preparePoolGrad(const Context &, const KernelView &, std::unique_ptr<PreparedKernel> *);
/// The same on channels-last activations, decoded from the kernel's
/// channels-first form (ChannelsLast.h): each thread computes what its
/// channels-first twin does, so the same bits.
Status preparePoolChannelsLast(const Context &, const KernelView &first,
                               std::unique_ptr<PreparedKernel> *);
Status preparePoolGradChannelsLast(const Context &, const KernelView &first,
                                   std::unique_ptr<PreparedKernel> *);

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_CUDAKERNELS_H
