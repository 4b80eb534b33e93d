//===- ReductionKernels.cpp - reduce_*, the losses and their grads --------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/LossInputs.h"
#include "cpu/Parallel.h"
#include "cpu/WholeTensor.h"
#include "ops/Backward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

//===----------------------------------------------------------------------===//
// reduce_sum / reduce_mean / reduce_max / reduce_l2.
//
// Float reductions accumulate in double: sum, sum / count, max (NaN wins),
// sqrt(sum of squares). Integer sum and max accumulate in int64 (wrapping).
// When the reduced axes are the trailing ones, output element o reduces
// the contiguous input range [o * count, (o + 1) * count) and outputs are
// split over the cores; otherwise one pass walks the input in order and
// adds each element into its output slot.
//===----------------------------------------------------------------------===//

struct Accumulator {
  ReduceOp op;
  double init() const { return op == ReduceOp::Max ? -INFINITY : 0.0; }
  void add(double &acc, double v) const {
    switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      acc += v;
      return;
    case ReduceOp::Max:
      if (v > acc || v != v)
        acc = v;
      return;
    case ReduceOp::L2:
      acc += v * v;
      return;
    }
  }
  double finish(double acc, int64_t count) const {
    switch (op) {
    case ReduceOp::Mean:
      return acc / static_cast<double>(count); // 0 / 0 is NaN
    case ReduceOp::L2:
      return std::sqrt(acc);
    default:
      return acc;
    }
  }
};

/// True if the reduced axes (stride 0 in the output) are exactly the
/// trailing ones, ignoring axes of size 1.
bool reducesTrailingAxes(const ReduceParams &p) {
  bool seenReduced = false;
  for (int d = 0; d < p.rank; ++d) {
    if (p.inShape[d] == 1)
      continue;
    if (p.outStride[d] == 0)
      seenReduced = true;
    else if (seenReduced)
      return false;
  }
  return true;
}

/// The float results before rounding, and the sums of the strided walk
/// (int64 for the integer reductions, in the same 8-byte slots).
struct ReduceScratch {
  float *out;
  double *sums;
};
ReduceScratch reduceScratch(const ReduceParams &p, Scratch &s) {
  return {s.take<float>(p.outNumel), s.take<double>(p.outNumel)};
}

Status runReduceFloat(const ReduceParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const DType xt = x.desc->dtype, yt = y.desc->dtype;
  const Accumulator acc{p.op};
  Scratch scratch(args.workspace);
  const ReduceScratch ws = reduceScratch(p, scratch);
  float *out = ws.out;
  if (reducesTrailingAxes(p)) {
    const int64_t count = p.reducedCount;
    // Each output reduces its own `count` inputs, in order, on one thread.
    parallelFor(p.outNumel, grainForCost(2 * count), [&](int64_t begin, int64_t end) {
      float buf[kBlock];
      for (int64_t o = begin; o < end; ++o) {
        double a = acc.init();
        for (int64_t i = 0; i < count; i += kBlock) {
          const int64_t m = std::min(kBlock, count - i);
          loadF32(xt, elementPtr(x.data, xt, o * count + i), m, buf);
          for (int64_t j = 0; j < m; ++j)
            acc.add(a, buf[j]);
        }
        out[o] = static_cast<float>(acc.finish(a, count));
      }
    });
  } else {
    double *sums = ws.sums;
    std::fill(sums, sums + p.outNumel, acc.init());
    int64_t index[kMaxRank] = {};
    int64_t o = 0; // output slot of the current input element
    float buf[kBlock];
    const int64_t n = x.desc->numel;
    for (int64_t i = 0; i < n; i += kBlock) {
      const int64_t m = std::min(kBlock, n - i);
      loadF32(xt, elementPtr(x.data, xt, i), m, buf);
      for (int64_t j = 0; j < m; ++j) {
        acc.add(sums[o], buf[j]);
        for (int d = p.rank - 1; d >= 0; --d) {
          o += p.outStride[d];
          if (++index[d] < p.inShape[d])
            break;
          o -= p.outStride[d] * p.inShape[d];
          index[d] = 0;
        }
      }
    }
    for (int64_t k = 0; k < p.outNumel; ++k)
      out[k] = static_cast<float>(acc.finish(sums[k], p.reducedCount));
  }
  storeF32(out, p.outNumel, yt, y.data);
  return Status::ok();
}

Status runReduceInt(const ReduceParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const bool isMax = p.op == ReduceOp::Max;
  Scratch scratch(args.workspace);
  int64_t *acc = reinterpret_cast<int64_t *>(reduceScratch(p, scratch).sums);
  std::fill(acc, acc + p.outNumel, isMax ? std::numeric_limits<int64_t>::min() : int64_t{0});
  int64_t index[kMaxRank] = {};
  int64_t o = 0;
  int64_t buf[kBlock];
  const int64_t n = x.desc->numel;
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = std::min(kBlock, n - i);
    loadI64(x.desc->dtype, elementPtr(x.data, x.desc->dtype, i), m, buf);
    for (int64_t j = 0; j < m; ++j) {
      if (isMax)
        acc[o] = std::max(acc[o], buf[j]);
      else
        acc[o] =
            static_cast<int64_t>(static_cast<uint64_t>(acc[o]) + static_cast<uint64_t>(buf[j]));
      for (int d = p.rank - 1; d >= 0; --d) {
        o += p.outStride[d];
        if (++index[d] < p.inShape[d])
          break;
        o -= p.outStride[d] * p.inShape[d];
        index[d] = 0;
      }
    }
  }
  storeI64(acc, p.outNumel, y.desc->dtype, y.data);
  return Status::ok();
}

Status runReduce(const ReduceParams &p, const KernelArgs &args) {
  return p.integer ? runReduceInt(p, args) : runReduceFloat(p, args);
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_loss and nll_loss over scores [N, C, D] (D: the
// trailing axes flattened). For sample (n, d) with label t (not ignored):
//   log_prob[n, :, d] = log_softmax(scores[n, :, d])      (SCE only)
//   loss[n, d] = -w[t] * log_prob[n, t, d]   (nll: -w[t] * input[n, t, d])
// Ignored samples have loss 0 and weight 0. "sum" adds the losses, "mean"
// divides that by the sum of the weights of the non-ignored samples (their
// count without weights; 0 / 0 gives NaN).
//===----------------------------------------------------------------------===//

/// The labels, class weights, per-sample losses and weights, the log
/// probabilities (when a result), and per chunk a row of C scores and its
/// offsets.
struct LossScratch {
  int64_t *label;
  float *weights, *loss, *weightOf, *logProb, *row;
  int64_t *offsets;
};
LossScratch lossScratch(const LossParams &p, Scratch &s) {
  const int64_t samples = p.N * p.D, row = maxChunks() * p.C;
  return {s.take<int64_t>(samples),
          s.take<float>(p.C),
          s.take<float>(samples),
          s.take<float>(samples),
          s.take<float>(p.hasLogProb ? samples * p.C : 0),
          s.take<float>(row),
          s.take<int64_t>(row)};
}

Status runLoss(const LossParams &p, const KernelArgs &args) {
  const TensorArg &scores = args.operands[0], &labels = args.operands[1];
  const DType st = scores.desc->dtype;
  const int64_t samples = p.N * p.D;
  Scratch scratch(args.workspace);
  const LossScratch ws = lossScratch(p, scratch);
  // Labels first: a bad one fails the run before anything is written.
  int64_t *label = ws.label;
  MPTRT_TRY(loadLabels(p, labels, label));
  float *weights = ws.weights;
  loadClassWeights(p, &args.operands[2], weights);

  float *loss = ws.loss, *weightOf = ws.weightOf, *logProb = ws.logProb;
  // A sample: a gather of its C scores, an exp each and a log-sum.
  parallelForChunks(samples, grainForCost(12 * p.C),
                    [&](int64_t chunk, int64_t begin, int64_t end) {
                      float *row = ws.row + chunk * p.C;
                      int64_t *offsets = ws.offsets + chunk * p.C;
                      for (int64_t s = begin; s < end; ++s) {
                        const int64_t n = s / p.D, d = s % p.D;
                        for (int64_t c = 0; c < p.C; ++c)
                          offsets[c] = (n * p.C + c) * p.D + d;
                        gatherF32(st, scores.data, offsets, p.C, row);
                        if (p.fromLogits) {
                          float max = -INFINITY;
                          for (int64_t c = 0; c < p.C; ++c)
                            max = std::max(max, row[c]);
                          double sum = 0;
                          for (int64_t c = 0; c < p.C; ++c)
                            sum += std::exp(row[c] - max);
                          const float logSum = static_cast<float>(std::log(sum));
                          for (int64_t c = 0; c < p.C; ++c)
                            row[c] = row[c] - max - logSum;
                          if (p.hasLogProb)
                            for (int64_t c = 0; c < p.C; ++c)
                              logProb[offsets[c]] = row[c];
                        }
                        const bool ignored = p.hasIgnoreIndex && label[s] == p.ignoreIndex;
                        weightOf[s] = ignored ? 0.0f : weights[label[s]];
                        loss[s] = ignored ? 0.0f : -weightOf[s] * row[label[s]];
                      }
                    });

  const TensorArg &out = args.results[0];
  if (p.reduction == Reduction::None) {
    storeF32(loss, samples, out.desc->dtype, out.data);
  } else {
    double total = 0, weightSum = 0;
    for (int64_t s = 0; s < samples; ++s) {
      total += loss[s];
      weightSum += weightOf[s];
    }
    const float value =
        static_cast<float>(p.reduction == Reduction::Sum ? total : total / weightSum);
    storeF32(&value, 1, out.desc->dtype, out.data);
  }
  if (p.hasLogProb)
    storeF32(logProb, scores.desc->numel, args.results[1].desc->dtype, args.results[1].data);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_loss_grad and nll_loss_grad. Per sample s with
// label t (not ignored), factor = w[t] * g with
//   g = dloss / sum of w[label] over non-ignored samples   (mean)
//       dloss                                              (sum)
//       dloss[s]                                           (none)
// then dscores[s, c] = (exp(log_prob[s, c]) - [c == t]) * factor and
// dinput[s, t] = -factor (0 at the other classes). Ignored samples get 0.
// The mean's denominator accumulates in double, as the forward loss's does.
//===----------------------------------------------------------------------===//

/// The labels, class weights, upstream gradient (one value, or one per
/// sample) and per-sample factors; per chunk a row of C classes and its
/// offsets.
struct LossGradScratch {
  int64_t *label;
  float *weights, *upstream, *factor, *row;
  int64_t *offsets;
};
LossGradScratch lossGradScratch(const LossGradParams &p, Scratch &s) {
  const int64_t samples = p.N * p.D, row = maxChunks() * p.C;
  return {
      s.take<int64_t>(samples), s.take<float>(p.C), s.take<float>(std::max<int64_t>(samples, 1)),
      s.take<float>(samples),   s.take<float>(row), s.take<int64_t>(row)};
}

Status runLossGrad(const LossGradParams &p, const KernelArgs &args) {
  const size_t first = p.fromLogits ? 1 : 0;
  const TensorArg &labels = args.operands[first];
  const TensorArg &dloss = args.operands[args.operands.size() - 1];
  const TensorArg &out = args.results[0];
  const DType ot = out.desc->dtype;
  const int64_t samples = p.N * p.D;
  Scratch scratch(args.workspace);
  const LossGradScratch ws = lossGradScratch(p, scratch);
  // Labels first: a bad one fails the run before anything is written.
  int64_t *label = ws.label;
  MPTRT_TRY(loadLabels(p, labels, label));
  float *weights = ws.weights;
  loadClassWeights(p, &args.operands[first + 1], weights);
  const float *upstream = widen(dloss, ws.upstream);

  // factor[s] = w[t] * g, 0 for ignored samples.
  float *factor = ws.factor;
  std::fill(factor, factor + samples, 0.0f);
  double weightSum = 0;
  for (int64_t s = 0; s < samples; ++s)
    if (!(p.hasIgnoreIndex && label[s] == p.ignoreIndex))
      weightSum += weights[label[s]];
  for (int64_t s = 0; s < samples; ++s) {
    if (p.hasIgnoreIndex && label[s] == p.ignoreIndex)
      continue;
    float g = upstream[0];
    if (p.reduction == Reduction::None)
      g = upstream[s];
    else if (p.reduction == Reduction::Mean)
      g = static_cast<float>(static_cast<double>(upstream[0]) / weightSum);
    factor[s] = weights[label[s]] * g;
  }

  if (!p.fromLogits) { // nll_loss_grad: one non-zero per sample
    zeroFill(out);
    for (int64_t s = 0; s < samples; ++s) {
      if (p.hasIgnoreIndex && label[s] == p.ignoreIndex)
        continue;
      const float v = -factor[s];
      const int64_t n = s / p.D, d = s % p.D;
      storeF32(&v, 1, ot, elementPtr(out.data, ot, (n * p.C + label[s]) * p.D + d));
    }
    return Status::ok();
  }

  const TensorArg &logProb = args.operands[0];
  const DType lt = logProb.desc->dtype;
  // A sample: a gather of its C log-probabilities, an exp each, a store.
  parallelForChunks(samples, grainForCost(12 * p.C),
                    [&](int64_t chunk, int64_t begin, int64_t end) {
                      float *row = ws.row + chunk * p.C;
                      int64_t *offsets = ws.offsets + chunk * p.C;
                      for (int64_t s = begin; s < end; ++s) {
                        const int64_t n = s / p.D, d = s % p.D;
                        for (int64_t c = 0; c < p.C; ++c)
                          offsets[c] = (n * p.C + c) * p.D + d;
                        if (p.hasIgnoreIndex && label[s] == p.ignoreIndex) {
                          std::fill(row, row + p.C, 0.0f);
                        } else {
                          gatherF32(lt, logProb.data, offsets, p.C, row);
                          for (int64_t c = 0; c < p.C; ++c)
                            row[c] = (std::exp(row[c]) - (c == label[s] ? 1.0f : 0.0f)) * factor[s];
                        }
                        if (p.D == 1) {
                          storeF32(row, p.C, ot, elementPtr(out.data, ot, s * p.C));
                          continue;
                        }
                        for (int64_t c = 0; c < p.C; ++c)
                          storeF32(&row[c], 1, ot, elementPtr(out.data, ot, offsets[c]));
                      }
                    });
  return Status::ok();
}

} // namespace

Status prepareReduce(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ReduceParams>(v, out, decodeReduce, runReduce,
                                   scratchBytes<ReduceParams, ReduceScratch, reduceScratch>);
}
Status prepareLoss(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LossParams>(v, out, decodeLoss, runLoss,
                                 scratchBytes<LossParams, LossScratch, lossScratch>);
}
Status prepareLossGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LossGradParams>(
      v, out, decodeLossGrad, runLossGrad,
      scratchBytes<LossGradParams, LossGradScratch, lossGradScratch>);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
