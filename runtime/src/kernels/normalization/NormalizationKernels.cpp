//===- NormalizationKernels.cpp - batch norm, layer norm, softmax --------===//
//
// Statistics (means, variances, softmax denominators) accumulate in double;
// everything else computes in float32. Work is split over channels (batch
// norm) or rows (layer norm, softmax).
//
// Every buffer comes from the kernel's workspace, sized at prepare (a layout
// function per kernel, CpuKernels.h's Scratch): run allocates nothing.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "cpu/WholeTensor.h"
#include "kernels/normalization/ChannelRows.h"

#include <algorithm>
#include <cmath>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

//===----------------------------------------------------------------------===//
// batch_norm (running statistics) and batch_norm_train (batch statistics):
//   y[n, c, i] = (x[n, c, i] - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c]
// and the fused epilogue (mpt-fuse-batch-norm) in the order the unfused
// kernels have it, so the bits are theirs: y rounded to the output's dtype,
// + residual in float32 and rounded again, then relu (x < 0 ? 0 : x).
// Training normalises with the batch's mean and biased variance over (n, i)
// and returns, as PyTorch's BatchNorm updates its buffers,
//   running_mean * momentum + mean * (1 - momentum)
//   running_var * momentum + var * count / (count - 1) * (1 - momentum)
// with count = N * inner: the running variance takes the *unbiased* batch
// variance (for count == 1, where it is undefined, the biased one, 0).
//===----------------------------------------------------------------------===//

/// The per-channel parameters and statistics (C floats each) and a row
/// per chunk.
struct BatchNormScratch {
  float *scale, *bias, *runningMean, *runningVar, *mean, *var, *unbiasedVar, *newMean, *newVar;
  float *invStd;          // channels last: per channel
  double *sums, *squares; // channels last: the statistics' sums per channel
  float *rows, *residualRows;
};
BatchNormScratch batchNormScratch(const BatchNormParams &p, Scratch &s) {
  BatchNormScratch w;
  for (float **f : {&w.scale, &w.bias, &w.runningMean, &w.runningVar, &w.mean, &w.var,
                    &w.unbiasedVar, &w.newMean, &w.newVar})
    *f = s.take<float>(p.C);
  // A row: `inner` elements of one channel, or channels last a tile of
  // rows (ChannelRows.h).
  const int64_t row = p.channelsLast ? channelRowsBuffer(p.C) : p.inner;
  w.invStd = s.take<float>(p.channelsLast ? p.C : 0);
  w.sums = s.take<double>(p.channelsLast && p.training ? p.C : 0);
  w.squares = s.take<double>(p.channelsLast && p.training ? p.C : 0);
  w.rows = s.take<float>(maxChunks() * row);
  w.residualRows = s.take<float>(p.residual ? maxChunks() * row : 0);
  return w;
}

/// The fused epilogue on `len` elements of y (normalised, in float32),
/// stored at `dst`: the rounding, residual add and relu of the unfused
/// kernels.
void batchNormEpilogue(const BatchNormParams &p, float *row, int64_t len, float *residualRow,
                       const TensorArg *residual, int64_t at, DType yt, void *dst) {
  if (p.residual || p.relu) {
    storeF32(row, len, yt, dst); // batch_norm's rounding ...
    loadF32(yt, dst, len, row);
  }
  if (p.residual) {
    const DType rt = residual->desc->dtype;
    loadF32(rt, elementPtr(residual->data, rt, at), len, residualRow);
    for (int64_t i = 0; i < len; ++i)
      row[i] = row[i] + residualRow[i];
    storeF32(row, len, yt, dst); // ... add's ...
    loadF32(yt, dst, len, row);
  }
  if (p.relu)
    for (int64_t i = 0; i < len; ++i)
      row[i] = row[i] < 0.0f ? 0.0f : row[i]; // ... and relu's, exact
  storeF32(row, len, yt, dst);
}

/// A batch norm run's workspace, and its scale, bias and running
/// statistics as float32 (widened into the workspace when stored lower).
struct BatchNormInputs {
  BatchNormInputs(const BatchNormParams &p, const KernelArgs &args)
      : scratch(args.workspace), ws(batchNormScratch(p, scratch)),
        scale(widen(args.operands[1], ws.scale)), bias(widen(args.operands[2], ws.bias)),
        runningMean(widen(args.operands[3], ws.runningMean)),
        runningVar(widen(args.operands[4], ws.runningVar)) {}
  Scratch scratch;
  BatchNormScratch ws;
  const float *scale, *bias, *runningMean, *runningVar;
};

/// Channel c's float statistics in the scratch: with batch statistics
/// (training) from the channel's double mean `m` and sum of squared
/// deviations `sq` over `count` elements, else the running ones; returns
/// the 1 / sqrt(var + epsilon) that y uses.
float channelStats(const BatchNormParams &p, const BatchNormInputs &in, int64_t c, double m,
                   double sq, double count) {
  const BatchNormScratch &ws = in.ws;
  if (p.training) {
    ws.mean[c] = static_cast<float>(m);
    ws.var[c] = static_cast<float>(count > 0 ? sq / count : 0.0);
    ws.unbiasedVar[c] = static_cast<float>(count > 1 ? sq / (count - 1) : ws.var[c]);
  } else {
    ws.mean[c] = in.runningMean[c];
    ws.var[c] = in.runningVar[c];
  }
  return 1.0f / std::sqrt(ws.var[c] + p.epsilon);
}

/// The running statistics' update (every operand has been read, so the
/// results may overwrite the running statistics in place: a training
/// step's state update).
void updateRunningStats(const BatchNormParams &p, const KernelArgs &args,
                        const BatchNormInputs &in) {
  const BatchNormScratch &ws = in.ws;
  for (int64_t c = 0; c < p.C; ++c) {
    ws.newMean[c] = in.runningMean[c] * p.momentum + ws.mean[c] * (1.0f - p.momentum);
    ws.newVar[c] = in.runningVar[c] * p.momentum + ws.unbiasedVar[c] * (1.0f - p.momentum);
  }
  storeF32(ws.newMean, p.C, args.results[1].desc->dtype, args.results[1].data);
  storeF32(ws.newVar, p.C, args.results[2].desc->dtype, args.results[2].data);
}

Status runBatchNorm(const BatchNormParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const DType xt = x.desc->dtype, yt = y.desc->dtype;
  const BatchNormInputs in(p, args);
  const BatchNormScratch &ws = in.ws;
  const float *scale = in.scale, *bias = in.bias, *mean = ws.mean;
  const double count = static_cast<double>(p.N * p.inner);
  // A channel: load, normalise, store its N * inner elements (and, when
  // training, a statistics pass over them first).
  const int64_t channelCost = p.N * p.inner * (p.training ? 6 : 3);
  parallelForChunks(
      p.C, grainForCost(channelCost), [&](int64_t chunk, int64_t cBegin, int64_t cEnd) {
        float *row = ws.rows + chunk * p.inner;
        float *residualRow = p.residual ? ws.residualRows + chunk * p.inner : nullptr;
        for (int64_t c = cBegin; c < cEnd; ++c) {
          double m = 0, sq = 0;
          if (p.training) {
            // Two passes over channel c: mean, then biased variance.
            double sum = 0;
            for (int64_t n = 0; n < p.N; ++n) {
              loadF32(xt, elementPtr(x.data, xt, (n * p.C + c) * p.inner), p.inner, row);
              for (int64_t i = 0; i < p.inner; ++i)
                sum += row[i];
            }
            m = count > 0 ? sum / count : 0.0;
            for (int64_t n = 0; n < p.N; ++n) {
              loadF32(xt, elementPtr(x.data, xt, (n * p.C + c) * p.inner), p.inner, row);
              for (int64_t i = 0; i < p.inner; ++i)
                sq += (row[i] - m) * (row[i] - m);
            }
          }
          const float invStd = channelStats(p, in, c, m, sq, count);
          for (int64_t n = 0; n < p.N; ++n) {
            const int64_t at = (n * p.C + c) * p.inner;
            loadF32(xt, elementPtr(x.data, xt, at), p.inner, row);
            for (int64_t i = 0; i < p.inner; ++i)
              row[i] = (row[i] - mean[c]) * invStd * scale[c] + bias[c];
            batchNormEpilogue(p, row, p.inner, residualRow,
                              p.residual ? &args.operands[5] : nullptr, at, yt,
                              elementPtr(y.data, yt, at));
          }
        }
      });
  if (p.updateRunningStats)
    updateRunningStats(p, args, in);
  return Status::ok();
}

/// One thread's channels [cBegin, cEnd) of runBatchNormChannelsLast: their
/// statistics (training), then y, a tile of rows (ChannelRows.h) at a time.
void batchNormChannelsLastChunk(const BatchNormParams &p, const KernelArgs &args,
                                const BatchNormInputs &in, int64_t chunk, int64_t cBegin,
                                int64_t cEnd) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const DType xt = x.desc->dtype, yt = y.desc->dtype;
  const BatchNormScratch &ws = in.ws;
  const ChannelRows rows(p.C, cBegin, cEnd);
  const int64_t len = rows.len, positions = p.N * p.inner;
  const double count = static_cast<double>(positions);
  float *tile = ws.rows + chunk * channelRowsBuffer(p.C);
  float *residualTile = p.residual ? ws.residualRows + chunk * channelRowsBuffer(p.C) : nullptr;
  auto load = [&](int64_t pos, int64_t n) {
    loadF32(xt, elementPtr(x.data, xt, rows.offset(pos)), n * len, tile);
  };
  // Per channel j of the range: the mean (sum[j], in double) and the sum of
  // squared deviations, as runBatchNorm adds them.
  double *sum = p.training ? ws.sums + cBegin : nullptr;
  double *sq = p.training ? ws.squares + cBegin : nullptr;
  if (p.training) {
    std::fill(sum, sum + len, 0.0);
    std::fill(sq, sq + len, 0.0);
    rows.forTiles(0, positions, [&](int64_t pos, int64_t n) {
      load(pos, n);
      for (int64_t t = 0; t < n; ++t)
        for (int64_t j = 0; j < len; ++j)
          sum[j] += tile[t * len + j];
    });
    for (int64_t j = 0; j < len; ++j)
      sum[j] = count > 0 ? sum[j] / count : 0.0;
    rows.forTiles(0, positions, [&](int64_t pos, int64_t n) {
      load(pos, n);
      for (int64_t t = 0; t < n; ++t)
        for (int64_t j = 0; j < len; ++j) {
          const float v = tile[t * len + j];
          sq[j] += (v - sum[j]) * (v - sum[j]);
        }
    });
  }
  for (int64_t j = 0; j < len; ++j)
    ws.invStd[cBegin + j] =
        channelStats(p, in, cBegin + j, p.training ? sum[j] : 0.0, p.training ? sq[j] : 0.0, count);
  const TensorArg *residual = p.residual ? &args.operands[5] : nullptr;
  rows.forTiles(0, positions, [&](int64_t pos, int64_t n) {
    load(pos, n);
    for (int64_t t = 0; t < n; ++t)
      for (int64_t j = 0; j < len; ++j) {
        const int64_t c = cBegin + j;
        float &v = tile[t * len + j];
        v = (v - ws.mean[c]) * ws.invStd[c] * in.scale[c] + in.bias[c];
      }
    const int64_t at = rows.offset(pos);
    batchNormEpilogue(p, tile, n * len, residualTile, residual, at, yt, elementPtr(y.data, yt, at));
  });
}

/// batch_norm and batch_norm_train on channels-last activations: x, y and
/// the residual [N, inner, C]. Each thread takes a range of channels and
/// walks the positions in (n, i) order (ChannelRows.h), so every channel's
/// sums add the same terms in the same order as runBatchNorm's and every
/// element is computed by the same expressions: the same bits
/// (ChannelsLastTest).
Status runBatchNormChannelsLast(const BatchNormParams &p, const KernelArgs &args) {
  const BatchNormInputs in(p, args);
  const int64_t channelCost = p.N * p.inner * (p.training ? 6 : 3);
  parallelForChunks(p.C, channelRowsGrain(p.C, grainForCost(channelCost)),
                    [&](int64_t chunk, int64_t cBegin, int64_t cEnd) {
                      batchNormChannelsLastChunk(p, args, in, chunk, cBegin, cEnd);
                    });
  if (p.updateRunningStats)
    updateRunningStats(p, args, in);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// layer_norm: for each of `outer` rows of `inner` elements,
//   mean = avg(x), inv_std_dev = 1 / sqrt(avg((x - mean)^2) + epsilon),
//   y = (x - mean) * inv_std_dev * scale + bias.
//===----------------------------------------------------------------------===//

/// scale and bias widened, the per-row statistics, and a row per chunk.
struct LayerNormScratch {
  float *scale, *bias, *means, *invStds, *rows;
};
LayerNormScratch layerNormScratch(const LayerNormParams &p, Scratch &s) {
  LayerNormScratch w;
  w.scale = s.take<float>(p.scaleIsScalar ? 1 : p.inner);
  w.bias = s.take<float>(p.hasBias ? (p.biasIsScalar ? 1 : p.inner) : 0);
  w.means = s.take<float>(p.hasStats ? p.outer : 0);
  w.invStds = s.take<float>(p.hasStats ? p.outer : 0);
  w.rows = s.take<float>(maxChunks() * p.inner);
  return w;
}

Status runLayerNorm(const LayerNormParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const DType xt = x.desc->dtype, yt = y.desc->dtype;
  Scratch scratch(args.workspace);
  const LayerNormScratch ws = layerNormScratch(p, scratch);
  const float *scale = widen(args.operands[1], ws.scale);
  const float *bias = p.hasBias ? widen(args.operands[2], ws.bias) : nullptr;
  float *means = ws.means, *invStds = ws.invStds;
  // A row: load, two statistics passes, normalise and store.
  parallelForChunks(p.outer, grainForCost(6 * p.inner),
                    [&](int64_t chunk, int64_t begin, int64_t end) {
                      float *row = ws.rows + chunk * p.inner;
                      for (int64_t r = begin; r < end; ++r) {
                        loadF32(xt, elementPtr(x.data, xt, r * p.inner), p.inner, row);
                        double sum = 0;
                        for (int64_t i = 0; i < p.inner; ++i)
                          sum += row[i];
                        const double mean = p.inner ? sum / static_cast<double>(p.inner) : 0.0;
                        double sq = 0;
                        for (int64_t i = 0; i < p.inner; ++i)
                          sq += (row[i] - mean) * (row[i] - mean);
                        const double var = p.inner ? sq / static_cast<double>(p.inner) : 0.0;
                        const float m = static_cast<float>(mean);
                        const float invStd = static_cast<float>(1.0 / std::sqrt(var + p.epsilon));
                        for (int64_t i = 0; i < p.inner; ++i) {
                          const float s = scale[p.scaleIsScalar ? 0 : i];
                          const float b = p.hasBias ? bias[p.biasIsScalar ? 0 : i] : 0.0f;
                          row[i] = (row[i] - m) * invStd * s + b;
                        }
                        storeF32(row, p.inner, yt, elementPtr(y.data, yt, r * p.inner));
                        if (p.hasStats) {
                          means[r] = m;
                          invStds[r] = invStd;
                        }
                      }
                    });
  if (p.hasStats) {
    storeF32(means, p.outer, args.results[1].desc->dtype, args.results[1].data);
    storeF32(invStds, p.outer, args.results[2].desc->dtype, args.results[2].data);
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// softmax / log_softmax along an axis viewed as [outer, dim, inner]: each of
// the outer * inner rows (stride `inner`) is shifted by its maximum, then
//   softmax = exp(x - max) / sum,   log_softmax = x - max - log(sum).
//===----------------------------------------------------------------------===//

/// Per chunk: a row and its element offsets.
struct SoftmaxScratch {
  float *rows;
  int64_t *offsets;
};
SoftmaxScratch softmaxScratch(const SoftmaxParams &p, Scratch &s) {
  const int64_t n = maxChunks() * p.dim;
  return {s.take<float>(n), s.take<int64_t>(n)};
}

Status runSoftmax(const SoftmaxParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const DType xt = x.desc->dtype, yt = y.desc->dtype;
  const int64_t rows = p.outer * p.inner;
  Scratch scratch(args.workspace);
  const SoftmaxScratch ws = softmaxScratch(p, scratch);
  // A row: a gather, a maximum, an exp per element, a sum and a store.
  parallelForChunks(rows, grainForCost(12 * p.dim), [&](int64_t chunk, int64_t begin, int64_t end) {
    float *row = ws.rows + chunk * p.dim;
    int64_t *offsets = ws.offsets + chunk * p.dim;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / p.inner, i = r % p.inner;
      for (int64_t d = 0; d < p.dim; ++d)
        offsets[d] = (o * p.dim + d) * p.inner + i;
      gatherF32(xt, x.data, offsets, p.dim, row);
      float max = -INFINITY;
      for (int64_t d = 0; d < p.dim; ++d)
        max = std::max(max, row[d]);
      double sum = 0;
      for (int64_t d = 0; d < p.dim; ++d)
        sum += std::exp(row[d] - max);
      const float logSum = static_cast<float>(std::log(sum));
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t d = 0; d < p.dim; ++d)
        row[d] = p.log ? row[d] - max - logSum : std::exp(row[d] - max) * inv;
      if (p.inner == 1) {
        storeF32(row, p.dim, yt, elementPtr(y.data, yt, r * p.dim));
        continue;
      }
      for (int64_t d = 0; d < p.dim; ++d)
        storeF32(&row[d], 1, yt, elementPtr(y.data, yt, offsets[d]));
    }
  });
  return Status::ok();
}

} // namespace

Status prepareBatchNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<BatchNormParams>(
      v, out, decodeBatchNorm, runBatchNorm,
      scratchBytes<BatchNormParams, BatchNormScratch, batchNormScratch>);
}
Status prepareBatchNormChannelsLast(const KernelView &first, std::unique_ptr<PreparedKernel> *out) {
  return prepareChannelsLastWith<BatchNormParams>(
      first, out, decodeBatchNorm, runBatchNormChannelsLast,
      scratchBytes<BatchNormParams, BatchNormScratch, batchNormScratch>);
}
Status prepareLayerNorm(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LayerNormParams>(
      v, out, decodeLayerNorm, runLayerNorm,
      scratchBytes<LayerNormParams, LayerNormScratch, layerNormScratch>);
}
Status prepareSoftmax(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SoftmaxParams>(v, out, decodeSoftmax, runSoftmax,
                                    scratchBytes<SoftmaxParams, SoftmaxScratch, softmaxScratch>);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
