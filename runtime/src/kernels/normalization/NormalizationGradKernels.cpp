//===- NormalizationGradKernels.cpp - softmax, layer and batch norm grads -===//
//
// The gradients of NormalizationKernels.cpp's kernels (docs/training.md,
// "Backward kernels"). Operands of any float type are widened to float32;
// every sum accumulates in double (docs/runtime.md, "Accumulation";
// mptrt/Accumulate.h), and so does the arithmetic that combines a sum with
// the elements (the norms' and softmax's dx). Each result is rounded once
// into its dtype.
//
// Every sum is made by one thread, which adds in a fixed order (layer /
// batch norm's sums, softmax's row sums), so results do not depend on the
// thread count.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "cpu/WholeTensor.h"
#include "kernels/normalization/ChannelRows.h"
#include "mptrt/Accumulate.h"
#include "ops/Backward.h"

#include <algorithm>
#include <cmath>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

using numerics::dotAsDouble;
using numerics::sumAsDouble;

//===----------------------------------------------------------------------===//
// softmax_grad along an axis viewed as [outer, dim, inner]; per row
// (stride `inner`):
//   softmax:      dx = y * (dy - sum(dy * y))
//   log-softmax:  dx = dy - exp(y) * sum(dy)
// The sum and dx's arithmetic are in double (exp(y) in float32).
//===----------------------------------------------------------------------===//

/// Per chunk: a row of y, of dy, and its element offsets.
struct SoftmaxGradScratch {
  float *y, *g;
  int64_t *offsets;
};
SoftmaxGradScratch softmaxGradScratch(const SoftmaxParams &p, Scratch &s) {
  const int64_t n = maxChunks() * p.dim;
  return {s.take<float>(n), s.take<float>(n), s.take<int64_t>(n)};
}

Status runSoftmaxGrad(const SoftmaxParams &p, const KernelArgs &args) {
  const TensorArg &y = args.operands[0], &dy = args.operands[1], &dx = args.results[0];
  const DType yt = y.desc->dtype, dyt = dy.desc->dtype, dxt = dx.desc->dtype;
  const int64_t rows = p.outer * p.inner;
  Scratch scratch(args.workspace);
  const SoftmaxGradScratch ws = softmaxGradScratch(p, scratch);
  // A row: two gathers, a sum, (an exp,) a store per element.
  parallelForChunks(rows, grainForCost(12 * p.dim), [&](int64_t chunk, int64_t begin, int64_t end) {
    float *yr = ws.y + chunk * p.dim, *gr = ws.g + chunk * p.dim;
    int64_t *offsets = ws.offsets + chunk * p.dim;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / p.inner, i = r % p.inner;
      for (int64_t d = 0; d < p.dim; ++d)
        offsets[d] = (o * p.dim + d) * p.inner + i;
      gatherF32(yt, y.data, offsets, p.dim, yr);
      gatherF32(dyt, dy.data, offsets, p.dim, gr);
      if (p.log) {
        const double sum = sumAsDouble(gr, p.dim);
        for (int64_t d = 0; d < p.dim; ++d)
          gr[d] = static_cast<float>(gr[d] - static_cast<double>(std::exp(yr[d])) * sum);
      } else {
        const double sum = dotAsDouble(gr, yr, p.dim);
        for (int64_t d = 0; d < p.dim; ++d)
          gr[d] = static_cast<float>(yr[d] * (gr[d] - sum));
      }
      if (p.inner == 1) {
        storeF32(gr, p.dim, dxt, elementPtr(dx.data, dxt, r * p.dim));
        continue;
      }
      for (int64_t d = 0; d < p.dim; ++d)
        storeF32(&gr[d], 1, dxt, elementPtr(dx.data, dxt, offsets[d]));
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// layer_norm_grad over `outer` rows of `inner` elements. With
// xhat = (x - mean) * rstd and g = dy * scale, per row
//   dx = rstd * (g - avg(g) - xhat * avg(g * xhat))
// and over all rows, per element of the row
//   dscale = sum(dy * xhat),   dbias = sum(dy).
// xhat, g, the sums and dx's arithmetic are in double. The first loop is
// split over rows, the second over columns, so every sum is made by one
// thread in row order.
//===----------------------------------------------------------------------===//

/// scale, mean and rstd widened; per chunk a row of x and of dy (also the
/// column blocks of the second loop, at most a row wide); the column sums.
struct LayerNormGradScratch {
  float *scale, *mean, *rstd, *x, *g;
  double *dscale, *dbias;
};
LayerNormGradScratch layerNormGradScratch(const LayerNormGradParams &p, Scratch &s) {
  const int64_t row = maxChunks() * p.inner;
  return {s.take<float>(p.scaleIsScalar ? 1 : p.inner),
          s.take<float>(p.outer),
          s.take<float>(p.outer),
          s.take<float>(row),
          s.take<float>(row),
          s.take<double>(p.inner),
          s.take<double>(p.inner)};
}

Status runLayerNormGrad(const LayerNormGradParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &dy = args.operands[4], &dx = args.results[0];
  const DType xt = x.desc->dtype, dyt = dy.desc->dtype, dxt = dx.desc->dtype;
  Scratch scratch(args.workspace);
  const LayerNormGradScratch ws = layerNormGradScratch(p, scratch);
  const float *scale = widen(args.operands[1], ws.scale);
  const float *mean = widen(args.operands[2], ws.mean), *rstd = widen(args.operands[3], ws.rstd);
  const double invN = p.inner ? 1.0 / static_cast<double>(p.inner) : 0.0;

  // dx, one row at a time: two loads, two sums, one store.
  parallelForChunks(p.outer, grainForCost(8 * p.inner),
                    [&](int64_t chunk, int64_t begin, int64_t end) {
                      float *xr = ws.x + chunk * p.inner, *gr = ws.g + chunk * p.inner;
                      for (int64_t r = begin; r < end; ++r) {
                        loadF32(xt, elementPtr(x.data, xt, r * p.inner), p.inner, xr);
                        loadF32(dyt, elementPtr(dy.data, dyt, r * p.inner), p.inner, gr);
                        const double m = mean[r], s = rstd[r];
                        auto g = [&](int64_t i) {
                          return static_cast<double>(gr[i]) * scale[p.scaleIsScalar ? 0 : i];
                        };
                        double sumG = 0, sumGX = 0;
                        for (int64_t i = 0; i < p.inner; ++i) {
                          sumG += g(i);
                          sumGX += g(i) * ((xr[i] - m) * s);
                        }
                        const double meanG = sumG * invN, meanGX = sumGX * invN;
                        for (int64_t i = 0; i < p.inner; ++i)
                          gr[i] = static_cast<float>(s * (g(i) - meanG - (xr[i] - m) * s * meanGX));
                        storeF32(gr, p.inner, dxt, elementPtr(dx.data, dxt, r * p.inner));
                      }
                    });

  // dscale and dbias per column, columns split over the threads.
  double *dscale = ws.dscale, *dbias = ws.dbias;
  std::fill(dscale, dscale + p.inner, 0.0);
  std::fill(dbias, dbias + p.inner, 0.0);
  parallelForChunks(p.inner, grainForCost(4 * p.outer),
                    [&](int64_t chunk, int64_t begin, int64_t end) {
                      const int64_t width = end - begin;
                      float *xr = ws.x + chunk * p.inner, *gr = ws.g + chunk * p.inner;
                      for (int64_t r = 0; r < p.outer; ++r) {
                        loadF32(xt, elementPtr(x.data, xt, r * p.inner + begin), width, xr);
                        loadF32(dyt, elementPtr(dy.data, dyt, r * p.inner + begin), width, gr);
                        const double m = mean[r], s = rstd[r];
                        for (int64_t i = 0; i < width; ++i) {
                          dscale[begin + i] += gr[i] * ((xr[i] - m) * s);
                          dbias[begin + i] += gr[i];
                        }
                      }
                    });
  float *dscaleOut = static_cast<float *>(args.results[1].data); // f32 (decoder)
  float *dbiasOut = static_cast<float *>(args.results[2].data);
  if (p.scaleIsScalar) { // one scale for the whole row: sum the columns
    double s = 0, b = 0;
    for (int64_t i = 0; i < p.inner; ++i) {
      s += dscale[i];
      b += dbias[i];
    }
    dscaleOut[0] = static_cast<float>(s);
    dbiasOut[0] = static_cast<float>(b);
  } else {
    for (int64_t i = 0; i < p.inner; ++i) {
      dscaleOut[i] = static_cast<float>(dscale[i]);
      dbiasOut[i] = static_cast<float>(dbias[i]);
    }
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// batch_norm_grad (training mode): per channel c over its N * inner
// elements, the batch statistics recomputed as batch_norm_train does (mean
// and biased variance), then with xhat = (x - mean) * rstd
//   dbias = sum(dy),  dscale = sum(dy * xhat),
//   dx = scale * rstd * (dy - dbias / count - xhat * dscale / count).
// Everything per channel is in double (the four sums, in (n, i) order, and
// dx's arithmetic), each result rounded once. Work is split over channels.
//===----------------------------------------------------------------------===//

/// scale widened, the per-channel sums, and per chunk a row of x and dy
/// (and of the forward output y, with a fused relu).
struct BatchNormGradScratch {
  float *scale, *dscale, *dbias, *x, *g, *y;
  // Channels last, per channel: the mean, rstd, the four sums, and one
  // image's partial sum (sumAsDouble's, added once per image).
  double *mean, *rstd, *sumG, *sumGX, *sq, *part;
};
BatchNormGradScratch batchNormGradScratch(const BatchNormGradParams &p, Scratch &s) {
  const int64_t row = maxChunks() * (p.channelsLast ? channelRowsBuffer(p.C) : p.inner);
  const int64_t perChannel = p.channelsLast ? p.C : 0;
  BatchNormGradScratch w;
  w.scale = s.take<float>(p.C);
  w.dscale = s.take<float>(p.C);
  w.dbias = s.take<float>(p.C);
  w.x = s.take<float>(row);
  w.g = s.take<float>(row);
  w.y = s.take<float>(p.relu ? row : 0);
  for (double **d : {&w.mean, &w.rstd, &w.sumG, &w.sumGX, &w.sq, &w.part})
    *d = s.take<double>(perChannel);
  return w;
}

/// A batch_norm_grad run's workspace and its scale as float32.
struct BatchNormGradInputs {
  BatchNormGradInputs(const BatchNormGradParams &p, const KernelArgs &args)
      : scratch(args.workspace), ws(batchNormGradScratch(p, scratch)),
        scale(widen(args.operands[1], ws.scale)) {}
  Scratch scratch;
  BatchNormGradScratch ws;
  const float *scale;
};

/// `len` elements of the gradient reaching batch_norm from element `at`:
/// dy, or with a fused relu dy where the forward output y > 0, else 0
/// (relu's unary_grad).
void loadGradRow(const BatchNormGradParams &p, const KernelArgs &args, int64_t at, int64_t len,
                 float *g, float *y) {
  const TensorArg &dy = args.operands[2];
  loadF32(dy.desc->dtype, elementPtr(dy.data, dy.desc->dtype, at), len, g);
  if (!p.relu)
    return;
  const TensorArg &out = args.operands[3];
  loadF32(out.desc->dtype, elementPtr(out.data, out.desc->dtype, at), len, y);
  for (int64_t i = 0; i < len; ++i)
    g[i] = y[i] > 0.0f ? g[i] : 0.0f;
}

Status runBatchNormGrad(const BatchNormGradParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &dx = args.results[0];
  const DType xt = x.desc->dtype, dxt = dx.desc->dtype;
  const BatchNormGradInputs in(p, args);
  const BatchNormGradScratch &ws = in.ws;
  const float *scale = in.scale;
  float *dscale = ws.dscale, *dbias = ws.dbias;
  const int64_t count = p.N * p.inner;
  parallelForChunks(
      p.C, grainForCost(12 * count), [&](int64_t chunk, int64_t cBegin, int64_t cEnd) {
        float *xr = ws.x + chunk * p.inner, *gr = ws.g + chunk * p.inner;
        float *yr = p.relu ? ws.y + chunk * p.inner : nullptr;
        for (int64_t c = cBegin; c < cEnd; ++c) {
          // The statistics, as in batch_norm_train.
          double sum = 0, sq = 0;
          for (int64_t n = 0; n < p.N; ++n) {
            loadF32(xt, elementPtr(x.data, xt, (n * p.C + c) * p.inner), p.inner, xr);
            sum += sumAsDouble(xr, p.inner);
          }
          const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
          for (int64_t n = 0; n < p.N; ++n) {
            loadF32(xt, elementPtr(x.data, xt, (n * p.C + c) * p.inner), p.inner, xr);
            for (int64_t i = 0; i < p.inner; ++i)
              sq += (xr[i] - mean) * (xr[i] - mean);
          }
          const double var = count > 0 ? sq / static_cast<double>(count) : 0.0;
          const double rstd = 1.0 / std::sqrt(var + static_cast<double>(p.epsilon));
          // The two gradient sums.
          double sumG = 0, sumGX = 0;
          for (int64_t n = 0; n < p.N; ++n) {
            const int64_t at = (n * p.C + c) * p.inner;
            loadF32(xt, elementPtr(x.data, xt, at), p.inner, xr);
            loadGradRow(p, args, at, p.inner, gr, yr);
            sumG += sumAsDouble(gr, p.inner);
            for (int64_t i = 0; i < p.inner; ++i)
              sumGX += gr[i] * ((xr[i] - mean) * rstd);
          }
          dbias[c] = static_cast<float>(sumG);
          dscale[c] = static_cast<float>(sumGX);
          const double invCount = count > 0 ? 1.0 / static_cast<double>(count) : 0.0;
          const double meanG = sumG * invCount, meanGX = sumGX * invCount;
          const double k = scale[c] * rstd;
          for (int64_t n = 0; n < p.N; ++n) {
            const int64_t at = (n * p.C + c) * p.inner;
            loadF32(xt, elementPtr(x.data, xt, at), p.inner, xr);
            loadGradRow(p, args, at, p.inner, gr, yr);
            for (int64_t i = 0; i < p.inner; ++i)
              gr[i] = static_cast<float>(k * (gr[i] - meanG - (xr[i] - mean) * rstd * meanGX));
            storeF32(gr, p.inner, dxt, elementPtr(dx.data, dxt, at));
          }
        }
      });
  storeF32(dscale, p.C, args.results[1].desc->dtype, args.results[1].data);
  storeF32(dbias, p.C, args.results[2].desc->dtype, args.results[2].data);
  return Status::ok();
}

/// batch_norm_grad on channels-last activations (x, dy, dx and the fused
/// relu's forward output [N, inner, C]). Each thread takes a range of
/// channels and walks the positions in (n, i) order (ChannelRows.h); every
/// sum adds the terms runBatchNormGrad adds in its order (an image's
/// partial sum, then the image into the total, where it calls sumAsDouble
/// per image), so the results have its bits.
Status runBatchNormGradChannelsLast(const BatchNormGradParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &dx = args.results[0];
  const DType xt = x.desc->dtype, dxt = dx.desc->dtype;
  const BatchNormGradInputs in(p, args);
  const BatchNormGradScratch &ws = in.ws;
  const float *scale = in.scale;
  const int64_t count = p.N * p.inner;
  parallelForChunks(
      p.C, channelRowsGrain(p.C, grainForCost(12 * count)),
      [&](int64_t chunk, int64_t cBegin, int64_t cEnd) {
        const ChannelRows rows(p.C, cBegin, cEnd);
        const int64_t len = rows.len;
        const int64_t buffer = channelRowsBuffer(p.C);
        float *xr = ws.x + chunk * buffer, *gr = ws.g + chunk * buffer;
        float *yr = p.relu ? ws.y + chunk * buffer : nullptr;
        double *mean = ws.mean + cBegin, *rstd = ws.rstd + cBegin, *sq = ws.sq + cBegin;
        double *sumG = ws.sumG + cBegin, *sumGX = ws.sumGX + cBegin, *part = ws.part + cBegin;
        auto loadX = [&](int64_t pos, int64_t n) {
          loadF32(xt, elementPtr(x.data, xt, rows.offset(pos)), n * len, xr);
        };
        // Calls fn(pos, n) for each tile of image `image`'s positions.
        auto image = [&](int64_t image, const auto &fn) {
          rows.forTiles(image * p.inner, (image + 1) * p.inner, fn);
        };
        // The statistics, as in batch_norm_train.
        std::fill(mean, mean + len, 0.0);
        for (int64_t n = 0; n < p.N; ++n) {
          std::fill(part, part + len, 0.0);
          image(n, [&](int64_t pos, int64_t rowsIn) {
            loadX(pos, rowsIn);
            for (int64_t t = 0; t < rowsIn; ++t)
              for (int64_t j = 0; j < len; ++j)
                part[j] += xr[t * len + j];
          });
          for (int64_t j = 0; j < len; ++j)
            mean[j] += part[j];
        }
        for (int64_t j = 0; j < len; ++j)
          mean[j] = count > 0 ? mean[j] / static_cast<double>(count) : 0.0;
        std::fill(sq, sq + len, 0.0);
        rows.forTiles(0, count, [&](int64_t pos, int64_t rowsIn) {
          loadX(pos, rowsIn);
          for (int64_t t = 0; t < rowsIn; ++t)
            for (int64_t j = 0; j < len; ++j) {
              const float v = xr[t * len + j];
              sq[j] += (v - mean[j]) * (v - mean[j]);
            }
        });
        for (int64_t j = 0; j < len; ++j) {
          const double var = count > 0 ? sq[j] / static_cast<double>(count) : 0.0;
          rstd[j] = 1.0 / std::sqrt(var + static_cast<double>(p.epsilon));
        }
        // The two gradient sums.
        std::fill(sumG, sumG + len, 0.0);
        std::fill(sumGX, sumGX + len, 0.0);
        for (int64_t n = 0; n < p.N; ++n) {
          std::fill(part, part + len, 0.0);
          image(n, [&](int64_t pos, int64_t rowsIn) {
            loadX(pos, rowsIn);
            loadGradRow(p, args, rows.offset(pos), rowsIn * len, gr, yr);
            for (int64_t t = 0; t < rowsIn; ++t)
              for (int64_t j = 0; j < len; ++j) {
                const float g = gr[t * len + j], v = xr[t * len + j];
                part[j] += g;
                sumGX[j] += g * ((v - mean[j]) * rstd[j]);
              }
          });
          for (int64_t j = 0; j < len; ++j)
            sumG[j] += part[j];
        }
        const double invCount = count > 0 ? 1.0 / static_cast<double>(count) : 0.0;
        for (int64_t j = 0; j < len; ++j) {
          ws.dbias[cBegin + j] = static_cast<float>(sumG[j]);
          ws.dscale[cBegin + j] = static_cast<float>(sumGX[j]);
          // From here on: the means of the two sums, and k.
          sumG[j] = sumG[j] * invCount;
          sumGX[j] = sumGX[j] * invCount;
          part[j] = scale[cBegin + j] * rstd[j];
        }
        const double *meanG = sumG, *meanGX = sumGX, *k = part;
        rows.forTiles(0, count, [&](int64_t pos, int64_t rowsIn) {
          loadX(pos, rowsIn);
          loadGradRow(p, args, rows.offset(pos), rowsIn * len, gr, yr);
          for (int64_t t = 0; t < rowsIn; ++t)
            for (int64_t j = 0; j < len; ++j) {
              float &g = gr[t * len + j];
              const float v = xr[t * len + j];
              g = static_cast<float>(k[j] * (g - meanG[j] - (v - mean[j]) * rstd[j] * meanGX[j]));
            }
          storeF32(gr, rowsIn * len, dxt, elementPtr(dx.data, dxt, rows.offset(pos)));
        });
      });
  storeF32(ws.dscale, p.C, args.results[1].desc->dtype, args.results[1].data);
  storeF32(ws.dbias, p.C, args.results[2].desc->dtype, args.results[2].data);
  return Status::ok();
}

} // namespace

Status prepareSoftmaxGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SoftmaxParams>(
      v, out, decodeSoftmaxGrad, runSoftmaxGrad,
      scratchBytes<SoftmaxParams, SoftmaxGradScratch, softmaxGradScratch>);
}
Status prepareLayerNormGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LayerNormGradParams>(
      v, out, decodeLayerNormGrad, runLayerNormGrad,
      scratchBytes<LayerNormGradParams, LayerNormGradScratch, layerNormGradScratch>);
}
Status prepareBatchNormGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<BatchNormGradParams>(
      v, out, decodeBatchNormGrad, runBatchNormGrad,
      scratchBytes<BatchNormGradParams, BatchNormGradScratch, batchNormGradScratch>);
}
Status prepareBatchNormGradChannelsLast(const KernelView &first,
                                        std::unique_ptr<PreparedKernel> *out) {
  return prepareChannelsLastWith<BatchNormGradParams>(
      first, out, decodeBatchNormGrad, runBatchNormGradChannelsLast,
      scratchBytes<BatchNormGradParams, BatchNormGradScratch, batchNormGradScratch>);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
