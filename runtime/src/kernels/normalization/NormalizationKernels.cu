//===- NormalizationKernels.cu - softmax, layer norm, batch norm ----------===//
//
// The CPU's formulas (kernels/normalization/NormalizationKernels.cpp), one block per row
// (softmax, layer norm) or per channel (batch norm), the statistics folded
// in double by BlockReduce.cuh's fixed tree and rounded once. Elementwise
// arithmetic is float32, as on the CPU, with no FMA contraction.
//
//===----------------------------------------------------------------------===//
#include "cuda/BlockReduce.cuh"
#include "cuda/CpuMath.cuh"
#include "cuda/CudaKernels.h"
#include "kernels/normalization/BatchNormStats.cuh"

#include <cmath>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

static_assert((kThreads & (kThreads - 1)) == 0, "the block tree needs a power of two");

//===----------------------------------------------------------------------===//
// softmax / log_softmax over [outer, dim, inner]: row r = (o, i) has its
// dim elements at (o * dim + d) * inner + i. Per row
//   max   = the row's maximum (float; std::max's rule)
//   sum   = sum of exp(x - max) (CpuMath.cuh), in double
//   y     = exp(x - max) * float(1 / sum)  or  x - max - float(log(sum)).
//===----------------------------------------------------------------------===//

__global__ void softmaxKernel(SoftmaxParams p, DType xt, const void *x, DType yt, void *y) {
  __shared__ double shared[kThreads];
  const int64_t rows = p.outer * p.inner;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t o = r / p.inner, i = r % p.inner;
    const int64_t base = o * p.dim * p.inner + i; // element d at base + d * inner
    const Share sh = shareOf(p.dim);
    float localMax = -INFINITY;
    for (int64_t d = sh.begin; d < sh.end; ++d) {
      const float v = loadF32(xt, x, base + d * p.inner);
      localMax = localMax < v ? v : localMax;
    }
    const float max = static_cast<float>(blockReduce<double>(localMax, shared, MaxKeepFirst{}));
    double localSum = 0;
    for (int64_t d = sh.begin; d < sh.end; ++d)
      localSum += expAsCpu(loadF32(xt, x, base + d * p.inner) - max);
    const double sum = blockReduce<double>(localSum, shared, AddOp{});
    const float logSum = static_cast<float>(log(sum));
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t d = sh.begin; d < sh.end; ++d) {
      const int64_t at = base + d * p.inner;
      const float v = loadF32(xt, x, at);
      storeF32(yt, y, at, p.log ? v - max - logSum : expAsCpu(v - max) * inv);
    }
  }
}

Status runSoftmax(const Context &c, const SoftmaxParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const int64_t rows = p.outer * p.inner;
  if (rows == 0 || p.dim == 0)
    return Status::ok();
  softmaxKernel<<<rowBlocks(rows), kThreads, 0, streamOf(c)>>>(p, x.desc->dtype, x.data,
                                                               y.desc->dtype, y.data);
  return launched("softmax kernel");
}

//===----------------------------------------------------------------------===//
// layer_norm over `outer` rows of `inner` elements: per row, in double,
//   mean = sum(x) / inner,  var = sum((x - mean)^2) / inner,
//   m = float(mean),  inv_std = float(1 / sqrt(var + epsilon));
// then y = (x - m) * inv_std * scale + bias in float.
//===----------------------------------------------------------------------===//

struct LayerNormTensors {
  DType xt, st, bt, yt, mt, it;
  const void *x, *scale, *bias;
  void *y, *mean, *invStd;
};

__global__ void layerNormKernel(LayerNormParams p, LayerNormTensors t) {
  __shared__ double shared[kThreads];
  for (int64_t r = blockIdx.x; r < p.outer; r += gridDim.x) {
    const int64_t base = r * p.inner;
    const Share sh = shareOf(p.inner);
    double localSum = 0;
    for (int64_t i = sh.begin; i < sh.end; ++i)
      localSum += loadF32(t.xt, t.x, base + i);
    const double sum = blockReduce<double>(localSum, shared, AddOp{});
    const double mean = p.inner ? sum / static_cast<double>(p.inner) : 0.0;
    double localSq = 0;
    for (int64_t i = sh.begin; i < sh.end; ++i) {
      const double dev = loadF32(t.xt, t.x, base + i) - mean;
      localSq += dev * dev;
    }
    const double sq = blockReduce<double>(localSq, shared, AddOp{});
    const double var = p.inner ? sq / static_cast<double>(p.inner) : 0.0;
    const float m = static_cast<float>(mean);
    const float invStd = static_cast<float>(1.0 / sqrt(var + p.epsilon));
    for (int64_t i = sh.begin; i < sh.end; ++i) {
      const float s = loadF32(t.st, t.scale, p.scaleIsScalar ? 0 : i);
      const float b = p.hasBias ? loadF32(t.bt, t.bias, p.biasIsScalar ? 0 : i) : 0.0f;
      storeF32(t.yt, t.y, base + i, (loadF32(t.xt, t.x, base + i) - m) * invStd * s + b);
    }
    if (p.hasStats && threadIdx.x == 0) {
      storeF32(t.mt, t.mean, r, m);
      storeF32(t.it, t.invStd, r, invStd);
    }
  }
}

Status runLayerNorm(const Context &c, const LayerNormParams &p, const KernelArgs &args) {
  if (p.outer == 0)
    return Status::ok();
  LayerNormTensors t{};
  t.xt = args.operands[0].desc->dtype;
  t.x = args.operands[0].data;
  t.st = args.operands[1].desc->dtype;
  t.scale = args.operands[1].data;
  if (p.hasBias) {
    t.bt = args.operands[2].desc->dtype;
    t.bias = args.operands[2].data;
  }
  t.yt = args.results[0].desc->dtype;
  t.y = args.results[0].data;
  if (p.hasStats) {
    t.mt = args.results[1].desc->dtype;
    t.mean = args.results[1].data;
    t.it = args.results[2].desc->dtype;
    t.invStd = args.results[2].data;
  }
  layerNormKernel<<<rowBlocks(p.outer), kThreads, 0, streamOf(c)>>>(p, t);
  return launched("layer_norm kernel");
}

//===----------------------------------------------------------------------===//
// batch_norm (running statistics) and batch_norm_train (batch statistics)
// over x [N, C, inner]; the channel sums spread over the device as
// BatchNormStats.cuh says (rows by warps, then channels in n order):
//   training:  mean = sum(x) / count, var = sum((x - mean)^2) / count (double,
//              rounded to float), unbiased = sum(...) / (count - 1) (var for
//              count <= 1); inference: the running mean and variance
//   y = (x - mean) * (1 / sqrtf(var + epsilon)) * scale + bias   (float)
// and with three results, as PyTorch updates its buffers (float):
//   running_mean * momentum + mean * (1 - momentum)
//   running_var * momentum + unbiased * (1 - momentum)
// The results may alias the running statistics (a training step's state
// update): the thread of channel c reads running_*[c] before it writes them.
// The fused epilogue (mpt-fuse-batch-norm) as the CPU's: y rounded to its
// dtype, + residual and rounded again, then relu (x < 0 ? 0 : x).
//===----------------------------------------------------------------------===//

struct BatchNormTensors {
  DType xt, st, bt, mt, vt, yt, nmt, nvt, rt;
  const void *x, *scale, *bias, *runningMean, *runningVar, *residual;
  void *y, *newMean, *newVar;
};

/// Per channel: the float mean and 1 / sqrt(var + epsilon) that y uses, and
/// the running statistics' update. `mean` and `rowSquares` are the row
/// passes' (training only).
__global__ void batchNormChannelKernel(BatchNormParams p, BatchNormTensors t, const double *mean,
                                       const double *rowSquares, float *meanOut, float *invStdOut) {
  const int64_t count = p.N * p.inner;
  MPTRT_FOR_EACH(c, p.C) {
    float m, var, unbiasedVar = 0.0f;
    if (p.training) {
      const double sq = bnstats::channelTotal(rowSquares, p.N, p.C, c);
      m = static_cast<float>(mean[c]);
      var = static_cast<float>(count > 0 ? sq / static_cast<double>(count) : 0.0);
      unbiasedVar = static_cast<float>(count > 1 ? sq / static_cast<double>(count - 1)
                                                 : static_cast<double>(var));
    } else {
      m = loadF32(t.mt, t.runningMean, c);
      var = loadF32(t.vt, t.runningVar, c);
    }
    meanOut[c] = m;
    invStdOut[c] = 1.0f / sqrtf(var + p.epsilon);
    if (p.updateRunningStats) {
      const float rm = loadF32(t.mt, t.runningMean, c), rv = loadF32(t.vt, t.runningVar, c);
      storeF32(t.nmt, t.newMean, c, rm * p.momentum + m * (1.0f - p.momentum));
      storeF32(t.nvt, t.newVar, c, rv * p.momentum + unbiasedVar * (1.0f - p.momentum));
    }
  }
}

/// y for every element, consecutive threads on consecutive elements.
__global__ void batchNormApplyKernel(BatchNormParams p, BatchNormTensors t, const float *mean,
                                     const float *invStd) {
  const int64_t total = p.N * p.C * p.inner;
  MPTRT_FOR_EACH(e, total) {
    const int64_t c = bnstats::channelOf(e, p.C, p.inner, p.channelsLast);
    float y = (loadF32(t.xt, t.x, e) - mean[c]) * invStd[c] * loadF32(t.st, t.scale, c) +
              loadF32(t.bt, t.bias, c);
    if (p.residual)
      y = roundedTo(t.yt, roundedTo(t.yt, y) + loadF32(t.rt, t.residual, e));
    if (p.relu)
      y = reluRounded(t.yt, y);
    storeF32(t.yt, t.y, e, y);
  }
}

Status runBatchNorm(const Context &c, const BatchNormParams &p, const KernelArgs &args) {
  if (p.C == 0)
    return Status::ok();
  BatchNormTensors t{};
  t.xt = args.operands[0].desc->dtype;
  t.x = args.operands[0].data;
  t.st = args.operands[1].desc->dtype;
  t.scale = args.operands[1].data;
  t.bt = args.operands[2].desc->dtype;
  t.bias = args.operands[2].data;
  t.mt = args.operands[3].desc->dtype;
  t.runningMean = args.operands[3].data;
  t.vt = args.operands[4].desc->dtype;
  t.runningVar = args.operands[4].data;
  t.yt = args.results[0].desc->dtype;
  t.y = args.results[0].data;
  if (p.residual) {
    t.rt = args.operands[5].desc->dtype;
    t.residual = args.operands[5].data;
  }
  if (p.updateRunningStats) {
    t.nmt = args.results[1].desc->dtype;
    t.newMean = args.results[1].data;
    t.nvt = args.results[2].desc->dtype;
    t.newVar = args.results[2].data;
  }
  const bnstats::Workspace w = bnstats::workspaceAt(args.workspace, p.N, p.C);
  double *mean = w.channel[0];
  if (p.training) {
    const bnstats::Rows rows{p.N, p.C, p.inner, t.xt, t.x, p.channelsLast};
    MPTRT_TRY(bnstats::launchRowSums(c, rows, bnstats::RowSum::X, {}, nullptr, nullptr, w.rowA));
    MPTRT_TRY(bnstats::launchChannelMean(c, w.rowA, p.N, p.C, p.N * p.inner, mean));
    MPTRT_TRY(bnstats::launchRowSums(c, rows, bnstats::RowSum::Squares, {}, mean, nullptr, w.rowA));
  }
  auto *meanF = reinterpret_cast<float *>(w.channel[1]);
  auto *invStd = reinterpret_cast<float *>(w.channel[2]);
  batchNormChannelKernel<<<blocksFor(c, p.C), kThreads, 0, streamOf(c)>>>(p, t, mean, w.rowA, meanF,
                                                                          invStd);
  MPTRT_TRY(launched("batch_norm channel kernel"));
  const int64_t total = p.N * p.C * p.inner;
  if (total == 0)
    return Status::ok();
  batchNormApplyKernel<<<blocksFor(c, total), kThreads, 0, streamOf(c)>>>(p, t, meanF, invStd);
  return launched("batch_norm kernel");
}

} // namespace

Status prepareSoftmax(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SoftmaxParams>(c, v, out, decodeSoftmax, runSoftmax);
}
/// batch_norm, or with `channelsLast` its channels-last kernel from the
/// channels-first form `v`.
static Status prepareBatchNormAs(const Context &c, const KernelView &v, bool channelsLast,
                                 std::unique_ptr<PreparedKernel> *out) {
  BatchNormParams p;
  MPTRT_TRY(decodeBatchNorm(v, &p));
  p.channelsLast = channelsLast;
  const uint64_t workspace = bnstats::workspaceBytes(p.N, p.C);
  *out = std::make_unique<ParamsKernel<BatchNormParams>>(c, p, runBatchNorm, workspace);
  return Status::ok();
}
Status prepareBatchNorm(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareBatchNormAs(c, v, false, out);
}
Status prepareBatchNormChannelsLast(const Context &c, const KernelView &first,
                                    std::unique_ptr<PreparedKernel> *out) {
  return prepareBatchNormAs(c, first, true, out);
}
Status prepareLayerNorm(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LayerNormParams>(c, v, out, decodeLayerNorm, runLayerNorm);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
