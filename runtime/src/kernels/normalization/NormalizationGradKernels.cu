//===- NormalizationGradKernels.cu - softmax, layer and batch norm grads --===//
//
// The CPU's formulas (kernels/normalization/NormalizationGradKernels.cpp).
// Every sum, and the arithmetic that combines a sum with the elements, is
// double, as on the CPU; each result is rounded once. Row sums use
// BlockReduce.cuh's fixed tree. The per-column sums of layer_norm_grad
// (dscale, dbias) give each column to one thread that adds the rows in
// order, exactly the CPU's sum.
//
//===----------------------------------------------------------------------===//
#include "cuda/BlockReduce.cuh"
#include "cuda/CpuMath.cuh"
#include "cuda/CudaKernels.h"
#include "kernels/normalization/BatchNormStats.cuh"
#include "ops/Backward.h"

#include <cmath>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

//===----------------------------------------------------------------------===//
// softmax_grad over [outer, dim, inner], one block per row, in double:
//   softmax:      dx = y * (dy - sum(dy * y))
//   log-softmax:  dx = dy - exp(y) * sum(dy)      (exp(y) rounded to float)
//===----------------------------------------------------------------------===//

__global__ void softmaxGradKernel(SoftmaxParams p, DType yt, const void *y, DType gt,
                                  const void *dy, DType ot, void *dx) {
  __shared__ double shared[kThreads];
  const int64_t rows = p.outer * p.inner;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t o = r / p.inner, i = r % p.inner;
    const int64_t base = o * p.dim * p.inner + i; // element d at base + d * inner
    const Share sh = shareOf(p.dim);
    double local = 0;
    for (int64_t d = sh.begin; d < sh.end; ++d) {
      const int64_t at = base + d * p.inner;
      const double g = loadF32(gt, dy, at);
      local += p.log ? g : g * loadF32(yt, y, at); // a float product is exact in double
    }
    const double sum = blockReduce<double>(local, shared, AddOp{});
    for (int64_t d = sh.begin; d < sh.end; ++d) {
      const int64_t at = base + d * p.inner;
      const float yv = loadF32(yt, y, at), g = loadF32(gt, dy, at);
      const double v =
          p.log ? g - static_cast<double>(expAsCpu(yv)) * sum : static_cast<double>(yv) * (g - sum);
      storeF32(ot, dx, at, static_cast<float>(v));
    }
  }
}

Status runSoftmaxGrad(const Context &c, const SoftmaxParams &p, const KernelArgs &args) {
  const TensorArg &y = args.operands[0], &dy = args.operands[1], &dx = args.results[0];
  const int64_t rows = p.outer * p.inner;
  if (rows == 0 || p.dim == 0)
    return Status::ok();
  softmaxGradKernel<<<rowBlocks(rows), kThreads, 0, streamOf(c)>>>(
      p, y.desc->dtype, y.data, dy.desc->dtype, dy.data, dx.desc->dtype, dx.data);
  return launched("softmax_grad kernel");
}

//===----------------------------------------------------------------------===//
// layer_norm_grad over `outer` rows of `inner` elements, in double, with
// xhat = (x - mean) * rstd and g = dy * scale:
//   dx = rstd * (g - avg(g) - xhat * avg(g * xhat))     one block per row
//   dscale = sum over rows of dy * xhat,  dbias = sum over rows of dy
//                                                       one thread per column
// With one scale for the row (scaleIsScalar) the column sums go to the
// workspace and one thread adds them in column order.
//===----------------------------------------------------------------------===//

struct LayerNormGradTensors {
  DType xt, st, mt, rt, gt, ot;
  const void *x, *scale, *mean, *rstd, *dy;
  void *dx;
  float *dscale, *dbias;            // f32 (decoder)
  double *columnScale, *columnBias; // workspace, scaleIsScalar only
};

__global__ void layerNormGradDxKernel(LayerNormGradParams p, LayerNormGradTensors t) {
  __shared__ double shared[kThreads];
  const double invN = p.inner ? 1.0 / static_cast<double>(p.inner) : 0.0;
  for (int64_t r = blockIdx.x; r < p.outer; r += gridDim.x) {
    const int64_t base = r * p.inner;
    const double m = loadF32(t.mt, t.mean, r), s = loadF32(t.rt, t.rstd, r);
    const Share sh = shareOf(p.inner);
    double localG = 0, localGX = 0;
    for (int64_t i = sh.begin; i < sh.end; ++i) {
      const double g = static_cast<double>(loadF32(t.gt, t.dy, base + i)) *
                       loadF32(t.st, t.scale, p.scaleIsScalar ? 0 : i);
      localG += g;
      localGX += g * ((loadF32(t.xt, t.x, base + i) - m) * s);
    }
    const double meanG = blockReduce<double>(localG, shared, AddOp{}) * invN;
    const double meanGX = blockReduce<double>(localGX, shared, AddOp{}) * invN;
    for (int64_t i = sh.begin; i < sh.end; ++i) {
      const double g = static_cast<double>(loadF32(t.gt, t.dy, base + i)) *
                       loadF32(t.st, t.scale, p.scaleIsScalar ? 0 : i);
      const double xm = loadF32(t.xt, t.x, base + i) - m;
      storeF32(t.ot, t.dx, base + i, static_cast<float>(s * (g - meanG - xm * s * meanGX)));
    }
  }
}

__global__ void layerNormGradColumnsKernel(LayerNormGradParams p, LayerNormGradTensors t) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < p.inner;
       i += int64_t(gridDim.x) * blockDim.x) {
    double dscale = 0, dbias = 0;
    for (int64_t r = 0; r < p.outer; ++r) {
      const double m = loadF32(t.mt, t.mean, r), s = loadF32(t.rt, t.rstd, r);
      const float g = loadF32(t.gt, t.dy, r * p.inner + i);
      dscale += g * ((loadF32(t.xt, t.x, r * p.inner + i) - m) * s);
      dbias += g;
    }
    if (p.scaleIsScalar) {
      t.columnScale[i] = dscale;
      t.columnBias[i] = dbias;
    } else {
      t.dscale[i] = static_cast<float>(dscale);
      t.dbias[i] = static_cast<float>(dbias);
    }
  }
}

/// One thread: the column sums added in column order (scaleIsScalar).
__global__ void layerNormGradScalarKernel(LayerNormGradParams p, LayerNormGradTensors t) {
  double s = 0, b = 0;
  for (int64_t i = 0; i < p.inner; ++i) {
    s += t.columnScale[i];
    b += t.columnBias[i];
  }
  t.dscale[0] = static_cast<float>(s);
  t.dbias[0] = static_cast<float>(b);
}

uint64_t layerNormGradWorkspace(const LayerNormGradParams &p) {
  return p.scaleIsScalar ? 2 * static_cast<uint64_t>(p.inner) * sizeof(double) : 0;
}

Status runLayerNormGrad(const Context &c, const LayerNormGradParams &p, const KernelArgs &args) {
  LayerNormGradTensors t{};
  const TensorArg &x = args.operands[0], &scale = args.operands[1], &mean = args.operands[2],
                  &rstd = args.operands[3], &dy = args.operands[4];
  t.xt = x.desc->dtype;
  t.x = x.data;
  t.st = scale.desc->dtype;
  t.scale = scale.data;
  t.mt = mean.desc->dtype;
  t.mean = mean.data;
  t.rt = rstd.desc->dtype;
  t.rstd = rstd.data;
  t.gt = dy.desc->dtype;
  t.dy = dy.data;
  t.ot = args.results[0].desc->dtype;
  t.dx = args.results[0].data;
  t.dscale = static_cast<float *>(args.results[1].data);
  t.dbias = static_cast<float *>(args.results[2].data);
  if (p.scaleIsScalar) {
    t.columnScale = static_cast<double *>(args.workspace);
    t.columnBias = t.columnScale + p.inner;
  }
  cudaStream_t stream = streamOf(c);
  if (p.outer > 0 && p.inner > 0) {
    layerNormGradDxKernel<<<rowBlocks(p.outer), kThreads, 0, stream>>>(p, t);
    MPTRT_TRY(launched("layer_norm_grad kernel"));
  }
  if (p.inner > 0) {
    layerNormGradColumnsKernel<<<blocksFor(c, p.inner), kThreads, 0, stream>>>(p, t);
    MPTRT_TRY(launched("layer_norm_grad columns kernel"));
  }
  if (p.scaleIsScalar) {
    layerNormGradScalarKernel<<<1, 1, 0, stream>>>(p, t);
    MPTRT_TRY(launched("layer_norm_grad scalar kernel"));
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// batch_norm_grad (training mode) over x [N, C, inner], its channel sums
// spread over the device as BatchNormStats.cuh says: the batch statistics
// recomputed as batch_norm_train does, then, all in double, with
// xhat = (x - mean) * rstd,
//   dbias = sum(dy),  dscale = sum(dy * xhat),
//   dx = scale * rstd * (dy - dbias / count - xhat * dscale / count).
// With a fused relu, dy is first masked by the forward output y: dy where
// y > 0, else 0 (relu's unary_grad).
//===----------------------------------------------------------------------===//

struct BatchNormGradTensors {
  DType xt, st, gt, ot, dst, dbt;
  const void *x, *scale;
  void *dx, *dscale, *dbias;
  bnstats::GradInput grad;
};

/// rstd[c] = 1 / sqrt(var + epsilon) from the channel's row sums of squares.
__global__ void batchNormRstdKernel(BatchNormGradParams p, const double *rowSquares, double *rstd) {
  const int64_t count = p.N * p.inner;
  MPTRT_FOR_EACH(c, p.C) {
    const double sq = bnstats::channelTotal(rowSquares, p.N, p.C, c);
    const double var = count > 0 ? sq / static_cast<double>(count) : 0.0;
    rstd[c] = 1.0 / sqrt(var + static_cast<double>(p.epsilon));
  }
}

/// Per channel: dscale and dbias, and the terms dx needs.
__global__ void batchNormGradChannelKernel(BatchNormGradParams p, BatchNormGradTensors t,
                                           const double *rowG, const double *rowGX,
                                           const double *rstd, double *meanG, double *meanGX,
                                           double *k) {
  const int64_t count = p.N * p.inner;
  MPTRT_FOR_EACH(c, p.C) {
    const double sumG = bnstats::channelTotal(rowG, p.N, p.C, c);
    const double sumGX = bnstats::channelTotal(rowGX, p.N, p.C, c);
    storeF32(t.dst, t.dscale, c, static_cast<float>(sumGX));
    storeF32(t.dbt, t.dbias, c, static_cast<float>(sumG));
    const double invCount = count > 0 ? 1.0 / static_cast<double>(count) : 0.0;
    meanG[c] = sumG * invCount;
    meanGX[c] = sumGX * invCount;
    k[c] = loadF32(t.st, t.scale, c) * rstd[c];
  }
}

/// dx for every element, consecutive threads on consecutive elements.
__global__ void batchNormGradApplyKernel(BatchNormGradParams p, BatchNormGradTensors t,
                                         const double *mean, const double *rstd,
                                         const double *meanG, const double *meanGX,
                                         const double *k) {
  const int64_t total = p.N * p.C * p.inner;
  MPTRT_FOR_EACH(e, total) {
    const int64_t c = bnstats::channelOf(e, p.C, p.inner, p.channelsLast);
    const float g = bnstats::gradAt(t.grad, e);
    const double xm = loadF32(t.xt, t.x, e) - mean[c];
    storeF32(t.ot, t.dx, e, static_cast<float>(k[c] * (g - meanG[c] - xm * rstd[c] * meanGX[c])));
  }
}

Status runBatchNormGrad(const Context &c, const BatchNormGradParams &p, const KernelArgs &args) {
  if (p.C == 0)
    return Status::ok();
  BatchNormGradTensors t{};
  t.xt = args.operands[0].desc->dtype;
  t.x = args.operands[0].data;
  t.st = args.operands[1].desc->dtype;
  t.scale = args.operands[1].data;
  t.grad.gt = args.operands[2].desc->dtype;
  t.grad.g = args.operands[2].data;
  if (p.relu) {
    t.grad.yt = args.operands[3].desc->dtype;
    t.grad.y = args.operands[3].data;
  }
  t.ot = args.results[0].desc->dtype;
  t.dx = args.results[0].data;
  t.dst = args.results[1].desc->dtype;
  t.dscale = args.results[1].data;
  t.dbt = args.results[2].desc->dtype;
  t.dbias = args.results[2].data;
  const bnstats::Workspace w = bnstats::workspaceAt(args.workspace, p.N, p.C);
  double *mean = w.channel[0], *rstd = w.channel[1], *meanG = w.channel[2], *meanGX = w.channel[3],
         *k = w.channel[4];
  const bnstats::Rows rows{p.N, p.C, p.inner, t.xt, t.x, p.channelsLast};
  using bnstats::RowSum;
  MPTRT_TRY(bnstats::launchRowSums(c, rows, RowSum::X, {}, nullptr, nullptr, w.rowA));
  MPTRT_TRY(bnstats::launchChannelMean(c, w.rowA, p.N, p.C, p.N * p.inner, mean));
  MPTRT_TRY(bnstats::launchRowSums(c, rows, RowSum::Squares, {}, mean, nullptr, w.rowA));
  batchNormRstdKernel<<<blocksFor(c, p.C), kThreads, 0, streamOf(c)>>>(p, w.rowA, rstd);
  MPTRT_TRY(launched("batch_norm_grad rstd kernel"));
  MPTRT_TRY(bnstats::launchRowSums(c, rows, RowSum::Grad, t.grad, mean, rstd, w.rowA, w.rowB));
  batchNormGradChannelKernel<<<blocksFor(c, p.C), kThreads, 0, streamOf(c)>>>(
      p, t, w.rowA, w.rowB, rstd, meanG, meanGX, k);
  MPTRT_TRY(launched("batch_norm_grad channel kernel"));
  const int64_t total = p.N * p.C * p.inner;
  if (total == 0)
    return Status::ok();
  batchNormGradApplyKernel<<<blocksFor(c, total), kThreads, 0, streamOf(c)>>>(p, t, mean, rstd,
                                                                              meanG, meanGX, k);
  return launched("batch_norm_grad kernel");
}

} // namespace

Status prepareSoftmaxGrad(const Context &c, const KernelView &v,
                          std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SoftmaxParams>(c, v, out, decodeSoftmaxGrad, runSoftmaxGrad);
}
Status prepareLayerNormGrad(const Context &c, const KernelView &v,
                            std::unique_ptr<PreparedKernel> *out) {
  LayerNormGradParams p;
  MPTRT_TRY(decodeLayerNormGrad(v, &p));
  const uint64_t bytes = layerNormGradWorkspace(p);
  *out = std::make_unique<ParamsKernel<LayerNormGradParams>>(c, p, runLayerNormGrad, bytes);
  return Status::ok();
}
/// batch_norm_grad, or with `channelsLast` its channels-last kernel from
/// the channels-first form `v`.
static Status prepareBatchNormGradAs(const Context &c, const KernelView &v, bool channelsLast,
                                     std::unique_ptr<PreparedKernel> *out) {
  BatchNormGradParams p;
  MPTRT_TRY(decodeBatchNormGrad(v, &p));
  p.channelsLast = channelsLast;
  const uint64_t workspace = bnstats::workspaceBytes(p.N, p.C);
  *out = std::make_unique<ParamsKernel<BatchNormGradParams>>(c, p, runBatchNormGrad, workspace);
  return Status::ok();
}
Status prepareBatchNormGrad(const Context &c, const KernelView &v,
                            std::unique_ptr<PreparedKernel> *out) {
  return prepareBatchNormGradAs(c, v, false, out);
}
Status prepareBatchNormGradChannelsLast(const Context &c, const KernelView &first,
                                        std::unique_ptr<PreparedKernel> *out) {
  return prepareBatchNormGradAs(c, first, true, out);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
