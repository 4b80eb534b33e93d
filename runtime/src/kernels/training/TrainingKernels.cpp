//===- TrainingKernels.cpp - loss scaling, norms, counters, FP8 scales ---===//
//
// The training kinds around the optimizer update (docs/training.md, "Loss
// scaling and optimizer kernels"); sgd_update and adamw_update are in
// OptimizerKernels.cpp. Where PyTorch defines the operation, the kernels
// follow its order of f32 roundings:
//
//   unscale       grad * f32(1 / f64(scale))      GradScaler.unscale_
//   clip_by_norm  c = min(f32(1 / (norm + f32(1e-6))) * f32(max_norm), 1)
//                 grad * c                         clip_grad_norm_ (the
//                 Python `max_norm / t` is t.reciprocal() * max_norm)
//   update_loss_scale  f32(f64(scale) * factor)    _amp_update_scale_
//
// This file is compiled with -ffp-contract=off: no multiply-add is fused
// unless written as std::fma.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "cpu/Scalars.h"
#include "kernels/training/TrainingMath.h"
#include "ops/Training.h"

#include "mptrt/Communicator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

//===----------------------------------------------------------------------===//
// scale_loss: loss * scale.
//===----------------------------------------------------------------------===//

Status runScaleLoss(const ScaleLossParams &, const KernelArgs &args) {
  writeF32(args.results[0], readF32(args.operands[0]) * readF32(args.operands[1]));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// unscale: grad32[i] = f32(grad[i]) * inv, inv = f32(1 / f64(scale)).
// Each block is loaded before it is stored, so grad32 may be grad's bytes.
//===----------------------------------------------------------------------===//

Status runUnscale(const UnscaleParams &p, const KernelArgs &args) {
  const TensorArg &grad = args.operands[0];
  const DType gt = grad.desc->dtype;
  float *out = static_cast<float *>(args.results[0].data);
  const float inv = static_cast<float>(1.0 / static_cast<double>(readF32(args.operands[1])));
  parallelFor(p.numel, grainForCost(2), [&](int64_t begin, int64_t end) {
    float buf[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      loadF32(gt, elementPtr(grad.data, gt, i), m, buf);
      for (int64_t j = 0; j < m; ++j)
        out[i + j] = buf[j] * inv;
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// all_finite: 1 unless an element of some operand has an all-ones exponent
// (inf or NaN; f8E4M3FN has no inf, its NaN is S.1111.111). Blocks are
// checked in parallel, each into its own flag.
//===----------------------------------------------------------------------===//

template <typename Bits>
bool blockHasNonFinite(const void *base, int64_t begin, int64_t end, Bits mask) {
  const Bits *x = static_cast<const Bits *>(base);
  bool bad = false;
  for (int64_t i = begin; i < end; ++i)
    bad |= (x[i] & mask) == mask;
  return bad;
}

bool hasNonFinite(DType dtype, const void *base, int64_t begin, int64_t end) {
  switch (dtype) {
  case DType::F32:
    return blockHasNonFinite<uint32_t>(base, begin, end, 0x7F800000u);
  case DType::F16:
    return blockHasNonFinite<uint16_t>(base, begin, end, 0x7C00);
  case DType::BF16:
    return blockHasNonFinite<uint16_t>(base, begin, end, 0x7F80);
  case DType::F8E4M3FN:
    return blockHasNonFinite<uint8_t>(base, begin, end, 0x7F);
  case DType::F8E5M2:
    return blockHasNonFinite<uint8_t>(base, begin, end, 0x7C);
  default:
    return false; // the decoder admits float operands only
  }
}

/// One partial result per fixed block: a flag (all_finite), a sum
/// (global_norm) or a max and a NaN flag (amax), in 8-byte slots.
struct BlockScratch {
  double *partial;
  uint8_t *flag;
};
BlockScratch blockScratch(const MultiTensorParams &p, Scratch &s) {
  const int64_t n = static_cast<int64_t>(p.blocks.size());
  return {s.take<double>(n), s.take<uint8_t>(n)};
}
BlockScratch amaxScratch(const AmaxParams &p, Scratch &s) { return blockScratch(p.blocks, s); }

/// *value summed over the ranks of the data-parallel world (over_ranks).
Status sumOverRanks(double *value, const char *kernel) {
  std::string error;
  Communicator *comm = processCommunicator(&error);
  if (!comm || !comm->allReduceSum(value, 1, &error))
    return Status::error(std::string(kernel) + " over the ranks: " + error);
  return Status::ok();
}

Status runAllFinite(const MultiTensorParams &p, const KernelArgs &args) {
  const int64_t n = static_cast<int64_t>(p.blocks.size());
  Scratch scratch(args.workspace);
  uint8_t *bad = blockScratch(p, scratch).flag;
  parallelFor(n, grainForCost(MultiTensorParams::kBlockElements / 4),
              [&](int64_t begin, int64_t end) {
                for (int64_t b = begin; b < end; ++b) {
                  const MultiTensorParams::Block &blk = p.blocks[b];
                  const TensorArg &t = args.operands[blk.operand];
                  bad[b] = hasNonFinite(t.desc->dtype, t.data, blk.begin, blk.end);
                }
              });
  bool finite = std::find(bad, bad + n, 1) == bad + n;
  if (p.overRanks) {
    // Every rank's shards: the count of ranks with a non-finite element.
    double nonFinite = finite ? 0 : 1;
    MPTRT_TRY(sumOverRanks(&nonFinite, "all_finite"));
    finite = nonFinite == 0;
  }
  *static_cast<uint8_t *>(args.results[0].data) = finite ? 1 : 0;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// global_norm: sqrt of the sum of squares of every element, in double. Each
// block's sum is accumulated in element order; the block sums are added in
// block order (operand 0 first), so the result does not depend on the
// thread count.
//===----------------------------------------------------------------------===//

Status runGlobalNorm(const MultiTensorParams &p, const KernelArgs &args) {
  const int64_t n = static_cast<int64_t>(p.blocks.size());
  Scratch scratch(args.workspace);
  double *partial = blockScratch(p, scratch).partial;
  parallelFor(n, grainForCost(2 * MultiTensorParams::kBlockElements),
              [&](int64_t begin, int64_t end) {
                float buf[kBlock];
                for (int64_t b = begin; b < end; ++b) {
                  const MultiTensorParams::Block &blk = p.blocks[b];
                  const TensorArg &t = args.operands[blk.operand];
                  const DType dt = t.desc->dtype;
                  double sum = 0;
                  for (int64_t i = blk.begin; i < blk.end; i += kBlock) {
                    const int64_t m = std::min(kBlock, blk.end - i);
                    loadF32(dt, elementPtr(t.data, dt, i), m, buf);
                    for (int64_t j = 0; j < m; ++j) {
                      const double x = buf[j];
                      sum += x * x;
                    }
                  }
                  partial[b] = sum;
                }
              });
  double total = 0;
  for (int64_t b = 0; b < n; ++b)
    total += partial[b];
  if (p.overRanks)
    MPTRT_TRY(sumOverRanks(&total, "global_norm"));
  writeF32(args.results[0], static_cast<float>(std::sqrt(total)));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// clip_by_norm: clipped = grad * c, c = min(f32(1 / (norm + 1e-6)) *
// max_norm, 1) in f32 (NaN stays NaN). Block-wise load then store, so
// clipped may be grad's bytes.
//===----------------------------------------------------------------------===//

Status runClipByNorm(const ClipByNormParams &p, const KernelArgs &args) {
  const TensorArg &grad = args.operands[0];
  const DType gt = grad.desc->dtype;
  float *out = static_cast<float *>(args.results[0].data);
  const float denom = readF32(args.operands[1]) + 1e-6f;
  const float coef = (1.0f / denom) * static_cast<float>(p.maxNorm);
  const float c = coef > 1.0f ? 1.0f : coef; // torch.clamp(max=1): NaN stays NaN
  parallelFor(p.numel, grainForCost(2), [&](int64_t begin, int64_t end) {
    float buf[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      loadF32(gt, elementPtr(grad.data, gt, i), m, buf);
      for (int64_t j = 0; j < m; ++j)
        out[i + j] = buf[j] * c;
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// update_loss_scale, as PyTorch's _amp_update_scale_
// (kernels/training/TrainingMath.h). Both operands are read before either
// result is written.
//===----------------------------------------------------------------------===//

Status runUpdateLossScale(const LossScaleParams &p, const KernelArgs &args) {
  float scale = readF32(args.operands[0]);
  int64_t tracker = readI64(args.operands[1]);
  math::updateLossScale(p, readI1(args.operands[2]), &scale, &tracker);
  writeF32(args.results[0], scale);
  writeI64(args.results[1], tracker);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// lr_schedule, in double, rounded once to f32 (TrainingMath.h's lrAt).
//===----------------------------------------------------------------------===//

Status runLrSchedule(const LrScheduleParams &p, const KernelArgs &args) {
  const double lr = math::lrAt(p, readI64(args.operands[0]), [](double v) { return std::cos(v); });
  writeF32(args.results[0], static_cast<float>(lr));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// advance_step: count + 1, or count when `finite` is given and 0.
//===----------------------------------------------------------------------===//

Status runAdvanceStep(const AdvanceStepParams &p, const KernelArgs &args) {
  const int64_t count = readI64(args.operands[0]);
  const bool advance = !p.hasFinite || readI1(args.operands[1]);
  // Two's complement wrap instead of signed overflow (never reached in practice).
  writeI64(args.results[0],
           advance ? static_cast<int64_t>(static_cast<uint64_t>(count) + 1) : count);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// amax: max |x| over the fixed blocks (0 for an empty tensor); NaN if any
// element is NaN (the canonical quiet NaN, whatever the element's payload).
//===----------------------------------------------------------------------===//

Status runAmax(const AmaxParams &p, const KernelArgs &args) {
  const std::vector<MultiTensorParams::Block> &blocks = p.blocks.blocks;
  const int64_t n = static_cast<int64_t>(blocks.size());
  Scratch scratch(args.workspace);
  const BlockScratch ws = amaxScratch(p, scratch);
  float *partial = reinterpret_cast<float *>(ws.partial);
  uint8_t *sawNaN = ws.flag;
  const TensorArg &x = args.operands[0];
  const DType dt = x.desc->dtype;
  parallelFor(n, grainForCost(2 * MultiTensorParams::kBlockElements),
              [&](int64_t begin, int64_t end) {
                float buf[kBlock];
                for (int64_t b = begin; b < end; ++b) {
                  float m = 0;
                  bool nan = false;
                  for (int64_t i = blocks[b].begin; i < blocks[b].end; i += kBlock) {
                    const int64_t len = std::min(kBlock, blocks[b].end - i);
                    loadF32(dt, elementPtr(x.data, dt, i), len, buf);
                    for (int64_t j = 0; j < len; ++j) {
                      const float a = std::fabs(buf[j]);
                      nan |= a != a;
                      m = a > m ? a : m;
                    }
                  }
                  partial[b] = m;
                  sawNaN[b] = nan;
                }
              });
  float amax = 0;
  bool nan = false;
  for (int64_t b = 0; b < n; ++b) {
    amax = std::max(amax, partial[b]);
    nan |= sawNaN[b] != 0;
  }
  if (nan)
    amax = std::numeric_limits<float>::quiet_NaN();
  writeF32(args.results[0], amax);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// update_fp8_scale (Transformer Engine's delayed scaling, one tensor):
//   history'[0] = amax, history'[i] = history[i - 1] (the oldest drops out)
//   a = max(history') (NaN if any entry is NaN), or history'[0] with
//       amax_compute_algo = most_recent
//   scale' = f32(fp8_max) / a * 2^-margin, or scale if a is 0 or not
//       finite, or if that quotient overflows (a below fp8_max / FLT_MAX)
// The shift runs from the end (memmove), so history' may be history's bytes.
//===----------------------------------------------------------------------===//

Status runUpdateFp8Scale(const Fp8ScaleParams &p, const KernelArgs &args) {
  const float scale = readF32(args.operands[1]);
  const float amax = readF32(args.operands[2]);
  const float *history = static_cast<const float *>(args.operands[0].data);
  float *out = static_cast<float *>(args.results[0].data);
  std::memmove(out + 1, history, static_cast<size_t>(p.history - 1) * sizeof(float));
  out[0] = amax;
  float a = 0;
  bool nan = false;
  const int64_t window = p.mostRecent ? 1 : p.history;
  for (int64_t i = 0; i < window; ++i) {
    nan |= out[i] != out[i];
    a = out[i] > a ? out[i] : a;
  }
  float next = scale;
  if (!nan && std::isfinite(a) && a != 0) {
    const float candidate =
        std::ldexp(static_cast<float>(p.fp8Max) / a, static_cast<int>(-p.margin));
    if (std::isfinite(candidate) && candidate != 0)
      next = candidate;
  }
  writeF32(args.results[1], next);
  return Status::ok();
}

} // namespace

Status prepareScaleLoss(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ScaleLossParams>(v, out, decodeScaleLoss, runScaleLoss);
}
Status prepareUnscale(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<UnscaleParams>(v, out, decodeUnscale, runUnscale);
}
Status prepareAllFinite(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<MultiTensorParams>(
      v, out, decodeAllFinite, runAllFinite,
      scratchBytes<MultiTensorParams, BlockScratch, blockScratch>);
}
Status prepareGlobalNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<MultiTensorParams>(
      v, out, decodeGlobalNorm, runGlobalNorm,
      scratchBytes<MultiTensorParams, BlockScratch, blockScratch>);
}
Status prepareClipByNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ClipByNormParams>(v, out, decodeClipByNorm, runClipByNorm);
}
Status prepareUpdateLossScale(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LossScaleParams>(v, out, decodeUpdateLossScale, runUpdateLossScale);
}
Status prepareLrSchedule(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LrScheduleParams>(v, out, decodeLrSchedule, runLrSchedule);
}
Status prepareAdvanceStep(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<AdvanceStepParams>(v, out, decodeAdvanceStep, runAdvanceStep);
}
Status prepareAmax(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<AmaxParams>(v, out, decodeAmax, runAmax,
                                 scratchBytes<AmaxParams, BlockScratch, amaxScratch>);
}
Status prepareUpdateFp8Scale(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<Fp8ScaleParams>(v, out, decodeUpdateFp8Scale, runUpdateFp8Scale);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
