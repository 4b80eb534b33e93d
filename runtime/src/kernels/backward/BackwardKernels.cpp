//===- BackwardKernels.cpp - gradients of the elementwise, softmax, norm,
//                           loss, gather, slice and pooling kernels -----===//
//
// The training step's backward kinds (docs/training.md, "Backward
// kernels"), except the conv gradients (ConvGradKernels.cpp). Operands of
// any float type are widened to float32 and elementwise arithmetic is in
// float32; every sum accumulates in double (docs/runtime.md,
// "Accumulation"; mptrt/Accumulate.h), and so does the arithmetic that
// combines a sum with the elements (the norms' and softmax's dx). Each
// result is rounded once into its dtype.
//
// Every kernel that sums gives each output element to one thread, which
// adds into it in a fixed order (layer / batch norm's sums, softmax's row
// sums, gather_grad's scatter-add, the pooling gradients' overlapping
// windows), so results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/LossInputs.h"
#include "cpu/Parallel.h"
#include "kernels/elementwise/UnaryMath.h"
#include "mptrt/Accumulate.h"
#include "ops/Backward.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

using numerics::dotAsDouble;
using numerics::sumAsDouble;

/// A whole tensor widened to float32 into `dst` (numel floats).
const float *widen(const TensorArg &t, float *dst) {
  loadF32(t.desc->dtype, t.data, t.desc->numel, dst);
  return dst;
}

/// Zero bytes are +0.0 in every float format.
void zeroFill(const TensorArg &t) {
  if (t.desc->bytes)
    std::memset(t.data, 0, t.desc->bytes);
}

//===----------------------------------------------------------------------===//
// unary_grad: dx = f'(x) * dy, with kernels/elementwise/UnaryMath.h's rules.
//===----------------------------------------------------------------------===//

/// dy[i] = f'(x[i]) * dy[i].
void unaryGradF32(const UnaryGradParams &p, const math::UnaryConsts &c, const float *x, float *dy,
                  int64_t n) {
  switch (p.op) {
#define MPTRT_UNARY_FUNCTION(Name, ...)                                                            \
  case UnaryOp::Name:                                                                              \
    for (int64_t i = 0; i < n; ++i)                                                                \
      dy[i] = math::Name<math::HostLibm>::grad(x[i], dy[i], c);                                    \
    return;
#include "mptrt/generated/UnaryKinds.def"
  }
}

/// Whether f' costs like a transcendental function.
bool transcendentalGrad(UnaryOp op) {
  switch (op) {
#define MPTRT_UNARY_FUNCTION(Name, kind, kernel, attrs, floating, integer, transcendental, grad,   \
                             positive)                                                             \
  case UnaryOp::Name:                                                                              \
    return transcendental;
#include "mptrt/generated/UnaryKinds.def"
  }
  return true;
}

Status runUnaryGrad(const UnaryGradParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &dy = args.operands[1], &dx = args.results[0];
  const DType xt = x.desc->dtype, dyt = dy.desc->dtype, dxt = dx.desc->dtype;
  const bool cheap = !transcendentalGrad(p.op);
  const math::UnaryConsts c = math::unaryConstsOf(p);
  // An element: two loads, f' (a transcendental function is ~8) and a store.
  parallelFor(p.numel, grainForCost(cheap ? 2 : 10), [&](int64_t begin, int64_t end) {
    float xs[kBlock], gs[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      loadF32(xt, elementPtr(x.data, xt, i), m, xs);
      loadF32(dyt, elementPtr(dy.data, dyt, i), m, gs);
      unaryGradF32(p, c, xs, gs, m);
      storeF32(gs, m, dxt, elementPtr(dx.data, dxt, i));
    }
  });
  return Status::ok();
}

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

//===----------------------------------------------------------------------===//
// gather_grad: ddata[o, a, n] = sum of dy[o, i, n] over the positions i with
// idx[i] == a, in increasing i, in double, rounded once (0 where a is never
// indexed). The positions are first grouped by row (a counting sort that
// keeps their order); then each ddata row (o, a) is one unit of work, so
// every element is summed by one thread in index order and the result does
// not depend on the thread count.
//===----------------------------------------------------------------------===//

/// The indices, the counting sort's arrays, and per chunk a row and its
/// double sums.
struct GatherGradScratch {
  int64_t *idx, *first, *uses, *next;
  float *row;
  double *acc;
};
GatherGradScratch gatherGradScratch(const GatherGradParams &p, Scratch &s) {
  const int64_t row = maxChunks() * p.inner;
  return {s.take<int64_t>(p.numIndices),
          s.take<int64_t>(p.axisDim + 1),
          s.take<int64_t>(p.numIndices),
          s.take<int64_t>(p.axisDim),
          s.take<float>(row),
          s.take<double>(row)};
}

Status runGatherGrad(const GatherGradParams &p, const KernelArgs &args) {
  const TensorArg &indices = args.operands[0], &dy = args.operands[1], &dd = args.results[0];
  const DType dyt = dy.desc->dtype, ddt = dd.desc->dtype;
  Scratch scratch(args.workspace);
  const GatherGradScratch ws = gatherGradScratch(p, scratch);
  int64_t *idx = ws.idx;
  loadI64(indices.desc->dtype, indices.data, p.numIndices, idx);
  for (int64_t i = 0; i < p.numIndices; ++i) {
    if (idx[i] < -p.axisDim || idx[i] >= p.axisDim)
      return Status::error("index " + std::to_string(idx[i]) + " at position " + std::to_string(i) +
                           " is outside [-" + std::to_string(p.axisDim) + ", " +
                           std::to_string(p.axisDim) + ")");
    if (idx[i] < 0)
      idx[i] += p.axisDim;
  }
  // uses[first[a] .. first[a + 1]) are the positions i with idx[i] == a,
  // in increasing order.
  int64_t *first = ws.first, *uses = ws.uses, *next = ws.next;
  std::fill(first, first + p.axisDim + 1, int64_t{0});
  for (int64_t i = 0; i < p.numIndices; ++i)
    ++first[idx[i] + 1];
  for (int64_t a = 0; a < p.axisDim; ++a)
    first[a + 1] += first[a];
  std::copy(first, first + p.axisDim, next);
  for (int64_t i = 0; i < p.numIndices; ++i)
    uses[next[idx[i]]++] = i;

  const int64_t elementSize = dd.desc->elementSize();
  auto zeroRow = [&](int64_t unit) { // zero bytes are +0.0 in every float format
    std::memset(static_cast<uint8_t *>(dd.data) + unit * p.inner * elementSize, 0,
                static_cast<size_t>(p.inner * elementSize));
  };
  // A row: a load and an add per use and column, a rounding and a store
  // per column.
  const int64_t usesPerRow = p.axisDim ? p.numIndices / p.axisDim : 0;
  parallelForChunks(p.outer * p.axisDim, grainForCost((2 * usesPerRow + 2) * p.inner),
                    [&](int64_t chunk, int64_t begin, int64_t end) {
                      float *row = ws.row + chunk * p.inner;
                      double *acc = ws.acc + chunk * p.inner;
                      for (int64_t unit = begin; unit < end; ++unit) {
                        const int64_t o = unit / p.axisDim, a = unit % p.axisDim;
                        if (first[a] == first[a + 1]) { // never indexed
                          zeroRow(unit);
                          continue;
                        }
                        std::fill(acc, acc + p.inner, 0.0);
                        for (int64_t u = first[a]; u < first[a + 1]; ++u) {
                          loadF32(dyt,
                                  elementPtr(dy.data, dyt, (o * p.numIndices + uses[u]) * p.inner),
                                  p.inner, row);
                          for (int64_t c = 0; c < p.inner; ++c)
                            acc[c] += row[c];
                        }
                        for (int64_t c = 0; c < p.inner; ++c)
                          row[c] = static_cast<float>(acc[c]);
                        storeF32(row, p.inner, ddt, elementPtr(dd.data, ddt, unit * p.inner));
                      }
                    });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// slice_grad: dx = 0, then dy's element at output index o goes to dx at
// start + o * step per axis (the element the forward slice read).
//===----------------------------------------------------------------------===//

Status runSliceGrad(const SliceParams &p, const KernelArgs &args) {
  const TensorArg &dy = args.operands[0], &dx = args.results[0];
  const DType dyt = dy.desc->dtype, dxt = dx.desc->dtype;
  zeroFill(dx);
  int64_t base = 0; // dx offset of dy's element 0
  for (int d = 0; d < p.rank; ++d)
    base += p.start[d] * p.inStride[d];
  const int64_t size = dy.desc->elementSize();
  const uint8_t *src = static_cast<const uint8_t *>(dy.data);
  uint8_t *dst = static_cast<uint8_t *>(dx.data);
  parallelFor(p.numel, grainForCost(2), [&](int64_t begin, int64_t end) {
    int64_t index[kMaxRank];
    int64_t offset = base, rest = begin;
    for (int d = p.rank - 1; d >= 0; --d) {
      index[d] = rest % p.outShape[d];
      rest /= p.outShape[d];
      offset += index[d] * p.step[d] * p.inStride[d];
    }
    for (int64_t i = begin; i < end; ++i) {
      if (dyt == dxt) {
        std::memcpy(dst + offset * size, src + i * size, size);
      } else {
        const float v = loadOneF32(dyt, dy.data, i);
        storeF32(&v, 1, dxt, elementPtr(dx.data, dxt, offset));
      }
      for (int d = p.rank - 1; d >= 0; --d) {
        offset += p.step[d] * p.inStride[d];
        if (++index[d] < p.outShape[d])
          break;
        offset -= p.step[d] * p.inStride[d] * p.outShape[d];
        index[d] = 0;
      }
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// max_pool_grad and average_pool_grad, one (n, c) plane at a time, planes
// split over the cores. The windows are those of PoolingKernels.cpp; output
// positions are visited in row-major order and each adds into dx:
//   max:      all of dy[o] to the first maximum of the window (row-major
//             window order; the first NaN if there is one); an all-padding
//             window passes nothing on
//   average:  dy[o] / count to every window position inside the input,
//             count as in the forward (in-input, or with count_include_pad
//             inside [-padBegin, in + padEnd))
// The plane's sums (and dy / count) are in double, rounded once.
//===----------------------------------------------------------------------===//

void poolGradPlane(const PoolParams &p, const float *x, const float *dy, double *dx) {
  const int nsp = p.spatialRank;
  int64_t kernelCount = 1;
  for (int d = 0; d < nsp; ++d)
    kernelCount *= p.kernel[d];
  std::fill(dx, dx + p.inSize, 0.0);
  int64_t o[kMaxRank] = {}; // output position, stepped row-major
  for (int64_t i = 0; i < p.outSize; ++i) {
    // Pass 1: the divisor (average) or the first maximum (max).
    int64_t valid = 0, padded = 0, argmax = -1;
    float best = 0.0f;
    int64_t j[kMaxRank] = {}; // window position
    for (int64_t w = 0; w < kernelCount; ++w) {
      int64_t offset = 0;
      bool inside = true, inPadded = true;
      for (int d = 0; d < nsp; ++d) {
        const int64_t pos = o[d] * p.strides[d] - p.padsBegin[d] + j[d] * p.dilations[d];
        inside = inside && pos >= 0 && pos < p.in[d];
        inPadded = inPadded && pos >= -p.padsBegin[d] && pos < p.in[d] + p.padsEnd[d];
        offset = offset * p.in[d] + pos;
      }
      padded += inPadded;
      if (inside) {
        ++valid;
        if (p.kind == PoolKind::Max) {
          const float v = x[offset];
          if (argmax < 0 || v > best || (v != v && best == best)) {
            argmax = offset;
            best = v;
          }
        }
      }
      for (int d = nsp - 1; d >= 0; --d) {
        if (++j[d] < p.kernel[d])
          break;
        j[d] = 0;
      }
    }
    if (p.kind == PoolKind::Max) {
      if (argmax >= 0)
        dx[argmax] += dy[i];
    } else if (valid) {
      // Pass 2: spread dy over the in-input positions.
      const int64_t count = p.countIncludePad ? padded : valid;
      const double share = dy[i] / static_cast<double>(count);
      std::fill(j, j + nsp, 0);
      for (int64_t w = 0; w < kernelCount; ++w) {
        int64_t offset = 0;
        bool inside = true;
        for (int d = 0; d < nsp; ++d) {
          const int64_t pos = o[d] * p.strides[d] - p.padsBegin[d] + j[d] * p.dilations[d];
          inside = inside && pos >= 0 && pos < p.in[d];
          offset = offset * p.in[d] + pos;
        }
        if (inside)
          dx[offset] += share;
        for (int d = nsp - 1; d >= 0; --d) {
          if (++j[d] < p.kernel[d])
            break;
          j[d] = 0;
        }
      }
    }
    for (int d = nsp - 1; d >= 0; --d) {
      if (++o[d] < p.out[d])
        break;
      o[d] = 0;
    }
  }
}

/// Per chunk: a plane of x (max only), of dy, of dx and its double sums.
struct PoolGradScratch {
  float *x, *g, *out;
  double *acc;
};
PoolGradScratch poolGradScratch(const PoolParams &p, Scratch &s) {
  const int64_t k = maxChunks();
  return {s.take<float>(p.kind == PoolKind::Max ? k * p.inSize : 0), s.take<float>(k * p.outSize),
          s.take<float>(k * p.inSize), s.take<double>(k * p.inSize)};
}

Status runPoolGrad(const PoolParams &p, const KernelArgs &args) {
  const bool isMax = p.kind == PoolKind::Max;
  const TensorArg &dy = args.operands[isMax ? 1 : 0], &dx = args.results[0];
  const DType dyt = dy.desc->dtype, dxt = dx.desc->dtype;
  const DType xt = isMax ? args.operands[0].desc->dtype : DType::F32;
  const int64_t planes = p.N * p.C;
  int64_t kernelCount = 1;
  for (int d = 0; d < p.spatialRank; ++d)
    kernelCount *= p.kernel[d];
  // A plane: its loads and store plus ~10 operations per window position
  // (average pooling walks each window twice).
  Scratch scratch(args.workspace);
  const PoolGradScratch ws = poolGradScratch(p, scratch);
  parallelForChunks(planes, grainForCost(2 * p.inSize + p.outSize + 10 * p.outSize * kernelCount),
                    [&](int64_t chunk, int64_t begin, int64_t end) {
                      float *x = isMax ? ws.x + chunk * p.inSize : nullptr,
                            *g = ws.g + chunk * p.outSize, *out = ws.out + chunk * p.inSize;
                      double *acc = ws.acc + chunk * p.inSize;
                      for (int64_t plane = begin; plane < end; ++plane) {
                        if (isMax)
                          loadF32(xt, elementPtr(args.operands[0].data, xt, plane * p.inSize),
                                  p.inSize, x);
                        loadF32(dyt, elementPtr(dy.data, dyt, plane * p.outSize), p.outSize, g);
                        poolGradPlane(p, x, g, acc);
                        for (int64_t i = 0; i < p.inSize; ++i)
                          out[i] = static_cast<float>(acc[i]);
                        storeF32(out, p.inSize, dxt, elementPtr(dx.data, dxt, plane * p.inSize));
                      }
                    });
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

/// scale widened, the per-channel sums, and per chunk a row of x and dy.
struct BatchNormGradScratch {
  float *scale, *dscale, *dbias, *x, *g;
};
BatchNormGradScratch batchNormGradScratch(const BatchNormGradParams &p, Scratch &s) {
  const int64_t row = maxChunks() * p.inner;
  return {s.take<float>(p.C), s.take<float>(p.C), s.take<float>(p.C), s.take<float>(row),
          s.take<float>(row)};
}

Status runBatchNormGrad(const BatchNormGradParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &dy = args.operands[2], &dx = args.results[0];
  const DType xt = x.desc->dtype, dyt = dy.desc->dtype, dxt = dx.desc->dtype;
  Scratch scratch(args.workspace);
  const BatchNormGradScratch ws = batchNormGradScratch(p, scratch);
  const float *scale = widen(args.operands[1], ws.scale);
  float *dscale = ws.dscale, *dbias = ws.dbias;
  const int64_t count = p.N * p.inner;
  parallelForChunks(
      p.C, grainForCost(12 * count), [&](int64_t chunk, int64_t cBegin, int64_t cEnd) {
        float *xr = ws.x + chunk * p.inner, *gr = ws.g + chunk * p.inner;
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
            loadF32(dyt, elementPtr(dy.data, dyt, at), p.inner, gr);
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
            loadF32(dyt, elementPtr(dy.data, dyt, at), p.inner, gr);
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

} // namespace

Status prepareUnaryGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<UnaryGradParams>(v, out, decodeUnaryGrad, runUnaryGrad);
}
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
Status prepareLossGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LossGradParams>(
      v, out, decodeLossGrad, runLossGrad,
      scratchBytes<LossGradParams, LossGradScratch, lossGradScratch>);
}
Status prepareGatherGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<GatherGradParams>(
      v, out, decodeGatherGrad, runGatherGrad,
      scratchBytes<GatherGradParams, GatherGradScratch, gatherGradScratch>);
}
Status prepareSliceGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SliceParams>(v, out, decodeSliceGrad, runSliceGrad);
}
Status preparePoolGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<PoolParams>(v, out, decodePoolGrad, runPoolGrad,
                                 scratchBytes<PoolParams, PoolGradScratch, poolGradScratch>);
}
Status prepareBatchNormGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<BatchNormGradParams>(
      v, out, decodeBatchNormGrad, runBatchNormGrad,
      scratchBytes<BatchNormGradParams, BatchNormGradScratch, batchNormGradScratch>);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
