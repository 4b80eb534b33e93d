//===- Training.h - loss scaling and optimizer kernels, decoded ---*- C++ -*-===//
//
// The parameter structs and decoders of the training kinds that are not
// gradients: loss scaling, the finiteness check and the global norm, norm
// clipping, the SGD and AdamW updates, the loss-scale and step counters, the
// learning-rate schedule and FP8 delayed scaling. docs/training.md
// ("Loss scaling and optimizer kernels") is the contract; docs/runtime.md
// lists the kinds.
//
// Scalars are 0-d tensors: `step` and counters i64, `lr`, `scale`, `norm`
// and `amax` f32, `finite` i1. Optimizer state (param, momentum buffer,
// moments) is f32 of the parameter's shape, but adamw_update's param may
// also be bf16 (master-weights=bf16); gradients may be any float type.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_OPS_TRAINING_H
#define MPTRT_SRC_OPS_TRAINING_H

#include "Status.h"
#include "ops/KernelView.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace mptrt {
namespace rt {

/// scale_loss: loss, scale -> loss * scale (f32 0-d each).
struct ScaleLossParams {};
Status decodeScaleLoss(const KernelView &v, ScaleLossParams *p);

/// unscale: grad (float), scale (f32 0-d) -> f32(grad) * f32(1 / scale).
struct UnscaleParams {
  int64_t numel = 0;
};
Status decodeUnscale(const KernelView &v, UnscaleParams *p);

/// all_finite and global_norm over any number of float operands: each
/// operand is cut into blocks of kBlockElements (the last may be shorter),
/// the same blocks whatever the thread count, so a reduction over the
/// per-block partial results, in block order, is deterministic.
struct MultiTensorParams {
  static constexpr int64_t kBlockElements = int64_t{1} << 14;
  struct Block {
    uint32_t operand = 0;
    int64_t begin = 0, end = 0;
  };
  std::vector<Block> blocks; // operand order, then element order
  /// The operands are this rank's shards: the result covers every rank's
  /// (the flag or the f64 sum of squares is combined over the ranks).
  bool overRanks = false;
};
Status decodeAllFinite(const KernelView &v, MultiTensorParams *p);
Status decodeGlobalNorm(const KernelView &v, MultiTensorParams *p);

/// all_reduce: operands 0..n-1 (float, n >= 1) -> results of the same
/// types, each the mean over the ranks of its operand, reduced as one flat
/// bucket of `total` elements (docs/distributed.md).
struct AllReduceParams {
  std::vector<int64_t> numel; // per operand
  int64_t total = 0;
  bool reduceInF32 = false;
  bool sum = false; // the sums over the ranks, not the means
};
Status decodeAllReduce(const KernelView &v, AllReduceParams *p);

/// reduce_scatter, all_gather and shard (ZeRO-1, docs/distributed.md): a
/// tensor of E elements over `worldSize` ranks has shards of S = ceil(E /
/// worldSize) elements, rank r's holding elements [r S, r S + S), those past
/// E zero. For each tensor of the bucket (operand of reduce_scatter and
/// shard, result of all_gather): its elements and its shard's.
struct ShardParams {
  int64_t worldSize = 1;
  std::vector<int64_t> numel, shard;
  /// Tensor i's shard starts at offset[i] of a rank's block.
  std::vector<int64_t> offset;
  int64_t shardTotal = 0; // the sum of `shard`: one rank's block
  bool reduceInF32 = false;

  /// The elements [begin, begin + count) of tensor i that rank `rank`'s
  /// shard holds; the shard's other count..shard[i] elements are zero.
  struct Range {
    int64_t begin, count;
  };
  Range range(size_t i, int64_t rank) const {
    const int64_t begin = std::min(numel[i], rank * shard[i]);
    return {begin, std::min(numel[i], begin + shard[i]) - begin};
  }
  /// The workspace of reduce_scatter and all_gather: every rank's block
  /// and this rank's, in f32.
  uint64_t stagingBytes() const {
    return static_cast<uint64_t>(shardTotal) * static_cast<uint64_t>(worldSize + 1) * sizeof(float);
  }
};
Status decodeReduceScatter(const KernelView &v, ShardParams *p);
Status decodeAllGather(const KernelView &v, ShardParams *p);
Status decodeShard(const KernelView &v, ShardParams *p);

/// clip_by_norm: grad (float), norm (f32 0-d) -> grad * min(1, max_norm /
/// (norm + 1e-6)) in f32.
struct ClipByNormParams {
  int64_t numel = 0;
  double maxNorm = 0;
};
Status decodeClipByNorm(const KernelView &v, ClipByNormParams *p);

/// sgd_update: param, grad, [buf], step, lr, finite -> param', [buf'].
struct SgdParams {
  int64_t numel = 0;
  double momentum = 0, dampening = 0, weightDecay = 0;
  bool nesterov = false;
  bool hasBuffer = false; // momentum != 0
};
Status decodeSgdUpdate(const KernelView &v, SgdParams *p);

/// adamw_update: param, grad, exp_avg, exp_avg_sq, step, lr, finite
/// [, seed] -> param', exp_avg', exp_avg_sq'. The param (and param') may be
/// f32 or bf16 (bf16 master weights: the update is computed in f32 from the
/// widened param and rounded once into bf16, to nearest even or, with
/// `stochastic_rounding` and the seed, stochastically with the Philox word
/// of (seed, step, stream, element)).
struct AdamWParams {
  int64_t numel = 0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0.01;
  bool bf16Param = false;
  bool stochasticRounding = false; // then operand 7 is the seed
  uint32_t stream = 0;
  /// `sharded`: the param is this rank's shard (ZeRO-1), and element k
  /// draws as element elementOffset + k of the whole parameter (the
  /// decoder sets it from the process's rank).
  bool sharded = false;
  int64_t elementOffset = 0;
};
Status decodeAdamWUpdate(const KernelView &v, AdamWParams *p);

/// update_loss_scale: scale, growth_tracker, finite -> scale',
/// growth_tracker' (PyTorch GradScaler.update).
struct LossScaleParams {
  double growthFactor = 2.0, backoffFactor = 0.5;
  int64_t growthInterval = 2000;
};
Status decodeUpdateLossScale(const KernelView &v, LossScaleParams *p);

/// lr_schedule: step (i64 0-d) -> lr (f32 0-d).
struct LrScheduleParams {
  bool warmupCosine = false; // else constant
  double lr = 0, minLr = 0;
  int64_t warmupSteps = 0, totalSteps = 0;
};
Status decodeLrSchedule(const KernelView &v, LrScheduleParams *p);

/// advance_step: count, [finite] -> count + 1 (or count when finite is 0).
struct AdvanceStepParams {
  bool hasFinite = false;
};
Status decodeAdvanceStep(const KernelView &v, AdvanceStepParams *p);

/// amax: x (float) -> max |x| (f32 0-d; NaN if any element is NaN).
struct AmaxParams {
  MultiTensorParams blocks;
};
Status decodeAmax(const KernelView &v, AmaxParams *p);

/// update_fp8_scale: amax_history (f32 [H]), scale (f32 0-d), amax (f32 0-d)
/// -> amax_history', scale'.
struct Fp8ScaleParams {
  int64_t history = 1;
  double fp8Max = 448;
  int64_t margin = 0;
  bool mostRecent = false; // amax_compute_algo: "most_recent" (else "max")
};
Status decodeUpdateFp8Scale(const KernelView &v, Fp8ScaleParams *p);

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_OPS_TRAINING_H
