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

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

namespace mptrt {
namespace rt {
namespace cpu {

using PrepareFn = Status (*)(const KernelView &, std::unique_ptr<PreparedKernel> *);

/// Typed scratch carved out of a kernel's workspace (KernelArgs::workspace)
/// in a fixed order, each piece 64-byte aligned. A kernel's layout function
/// carves its pieces from a Scratch; at prepare it runs on a null base to
/// measure the bytes (scratchBytes), in run on args.workspace to hand out
/// the pointers, so the two cannot disagree. Per-thread pieces have
/// maxChunks() slots, slot `chunk` for parallelForChunks's chunk.
class Scratch {
public:
  explicit Scratch(void *base) : base_(static_cast<uint8_t *>(base)) {}
  template <typename T> T *take(int64_t count) {
    used_ = (used_ + 63) / 64 * 64;
    T *p = base_ ? reinterpret_cast<T *>(base_ + used_) : nullptr;
    used_ += static_cast<uint64_t>(std::max<int64_t>(count, 0)) * sizeof(T);
    return p;
  }
  uint64_t bytes() const { return used_; }

private:
  uint8_t *base_;
  uint64_t used_ = 0;
};

/// The workspace bytes of a layout function `Layout layout(params, scratch)`.
template <typename Params, typename Layout, Layout (*layout)(const Params &, Scratch &)>
uint64_t scratchBytes(const Params &p) {
  Scratch s(nullptr);
  (void)layout(p, s);
  return s.bytes();
}

/// A prepared kernel that calls `run(params, args)`, with the workspace
/// `workspace(params)` bytes measured at prepare (none if null).
template <typename Params> class ParamsKernel final : public PreparedKernel {
public:
  using RunFn = Status (*)(const Params &, const KernelArgs &);
  using WorkspaceFn = uint64_t (*)(const Params &);
  ParamsKernel(Params params, RunFn fn, WorkspaceFn workspace)
      : params(std::move(params)), fn(fn), bytes(workspace ? workspace(this->params) : 0) {}
  uint64_t workspaceBytes() const override { return bytes; }
  Status run(const KernelArgs &args) override { return fn(params, args); }

private:
  Params params;
  RunFn fn;
  uint64_t bytes;
};

/// Decodes with `decode` and wraps `run` (and its workspace size); the body
/// of most prepare functions.
template <typename Params>
Status prepareWith(const KernelView &v, std::unique_ptr<PreparedKernel> *out,
                   Status (*decode)(const KernelView &, Params *),
                   Status (*run)(const Params &, const KernelArgs &),
                   uint64_t (*workspace)(const Params &) = nullptr) {
  Params params;
  MPTRT_TRY(decode(v, &params));
  *out = std::make_unique<ParamsKernel<Params>>(std::move(params), run, workspace);
  return Status::ok();
}

/// prepareWith for a channels-last kernel: decodes its channels-first form
/// `first` (ChannelsLast.h) and marks the parameters channels last.
template <typename Params>
Status prepareChannelsLastWith(const KernelView &first, std::unique_ptr<PreparedKernel> *out,
                               Status (*decode)(const KernelView &, Params *),
                               Status (*run)(const Params &, const KernelArgs &),
                               uint64_t (*workspace)(const Params &)) {
  Params params;
  MPTRT_TRY(decode(first, &params));
  params.channelsLast = true;
  *out = std::make_unique<ParamsKernel<Params>>(std::move(params), run, workspace);
  return Status::ok();
}

/// A contraction's parameters and, for its operands and first result, the
/// element count when the tensor is not float32 (0 when it is): those are
/// widened into (or computed in) float32 scratch.
template <typename Params> struct WithF32Copies {
  Params p;
  int64_t operand[4] = {0, 0, 0, 0};
  int64_t result = 0;
};

/// Decodes with `decode` and records which tensors need float32 copies.
template <typename Params, Status (*decode)(const KernelView &, Params *)>
Status decodeWithF32Copies(const KernelView &v, WithF32Copies<Params> *out) {
  MPTRT_TRY(decode(v, &out->p));
  for (size_t i = 0; i < v.numOperands() && i < 4; ++i)
    out->operand[i] = v.operand(i).dtype == DType::F32 ? 0 : v.operand(i).numel;
  out->result = v.result(0).dtype == DType::F32 ? 0 : v.result(0).numel;
  return Status::ok();
}

// ElementwiseKernels.cpp (and unary_grad)
Status prepareUnary(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareBinary(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareWhere(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareCast(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareUnaryGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// QuantizeKernels.cpp
Status prepareQuantize(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// ContractionKernels.cpp
Status prepareMatMul(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareGemm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareScaledMatMul(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareScaledGemm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareConv(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// PoolingKernels.cpp (and the pooling gradients)
Status preparePool(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status preparePoolGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// PoolingChannelsLast.cpp: the pooling kinds and their gradients on
// channels-last activations, decoded from the kernel's channels-first form
// (ChannelsLast.h); the same bits. *out is left null for what they do not
// take (1-D and 3-D windows, integer max pooling).
Status preparePoolChannelsLast(const KernelView &first, std::unique_ptr<PreparedKernel> *out);
Status preparePoolGradChannelsLast(const KernelView &first, std::unique_ptr<PreparedKernel> *out);
// AttentionKernels.cpp
Status prepareAttention(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAttentionGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// NormalizationKernels.cpp
Status prepareBatchNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
/// batch_norm / batch_norm_train on channels-last activations, decoded from
/// the kernel's channels-first form (ChannelsLast.h); the same bits.
Status prepareBatchNormChannelsLast(const KernelView &first, std::unique_ptr<PreparedKernel> *out);
Status prepareLayerNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSoftmax(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// NormalizationGradKernels.cpp
Status prepareSoftmaxGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLayerNormGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareBatchNormGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
/// batch_norm_grad on channels-last activations, as above.
Status prepareBatchNormGradChannelsLast(const KernelView &first,
                                        std::unique_ptr<PreparedKernel> *out);
// ReductionKernels.cpp (and the loss gradients)
Status prepareReduce(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLoss(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLossGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// DataMovementKernels.cpp (and gather_grad, slice_grad)
Status prepareCopy(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareTranspose(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareConcat(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSplit(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSlice(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareGather(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareExpand(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareTrilu(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareFill(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareGatherGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareSliceGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// DropoutKernels.cpp
Status prepareDropout(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// ConvGradKernels.cpp
Status prepareConvGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// TrainingKernels.cpp (loss scaling, norms, counters, FP8 scales)
Status prepareScaleLoss(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareUnscale(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAllFinite(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareGlobalNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAllReduce(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareReduceScatter(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAllGather(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareShard(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareClipByNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareUpdateLossScale(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareLrSchedule(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAdvanceStep(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAmax(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareUpdateFp8Scale(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
// OptimizerKernels.cpp
Status prepareSgdUpdate(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
Status prepareAdamWUpdate(const KernelView &v, std::unique_ptr<PreparedKernel> *out);

/// The CPU's numerics modes (docs/runtime.md, "CPU numerics modes"):
/// `reference`, the kernels above (the numerics oracle), or `fast`, which
/// runs convolutions and matmuls through oneDNN where the build has it.
enum class CpuNumerics { Reference, Fast };

/// The mode MPTRT_CPU_NUMERICS asks for: "reference" or "fast"; unset or
/// empty, the default: fast in a build with oneDNN, else reference. An
/// error for any other value.
Status cpuNumericsFromEnvironment(CpuNumerics *out);

/// Whether this build has the oneDNN fast path (MPTRT_ENABLE_DNNL).
bool haveFastNumerics();

/// DnnlKernels.cpp (builds with oneDNN): the fast mode's kernel for `v`, or
/// *out left null when the kind, dtypes or shapes are not ones the oneDNN
/// path takes (the reference kernel then runs it).
Status prepareFast(const KernelView &v, std::unique_ptr<PreparedKernel> *out);
/// The same for a channels-last conv, conv_grad_input or conv_grad_weight,
/// decoded from its channels-first form `first` (ChannelsLast.h): oneDNN
/// reads and writes the activations channels last as they are stored.
Status prepareFastChannelsLast(const KernelView &first, std::unique_ptr<PreparedKernel> *out);

/// Fills offsets[k][0, m) with input k's element offsets for the output
/// elements [start, start + m) of a broadcast (row-major walk).
void broadcastOffsets(const BroadcastIndex &bc, int64_t start, int64_t m, int64_t *const *offsets);

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_CPUKERNELS_H
