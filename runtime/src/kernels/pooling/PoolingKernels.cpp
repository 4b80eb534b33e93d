//===- PoolingKernels.cpp - max, average, global average pool and grads ---===//
//
// One (n, c) plane at a time, planes split over the cores. For each output
// position o the window covers input positions
//   o * stride - padBegin + j * dilation,   j in [0, kernel)
// per spatial axis; positions outside the input are padding. Max ignores
// padding (an all-padding window gives -inf, or the integer minimum);
// average divides by the in-input count, or with count_include_pad by the
// count inside the explicitly padded extent [-padBegin, in + padEnd)
// (positions that ceil_mode adds beyond it never count). The gradients
// (max_pool_grad, average_pool_grad) come last and walk the same windows.
// 2-D planes, the common case, take a walk of their own (poolPlane2d,
// poolGradPlane2d) without the N-D walk's per-axis loop and offsets: the
// same positions in the same order, so the same bits
// (PoolKernels.TwoDimensionalPathMatchesGenericBitForBit).
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "kernels/pooling/Window2d.h"
#include "ops/Backward.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// Pools one plane of floats (or int64s for integer max pool).
template <typename T> void poolPlane(const PoolParams &p, const T *in, T *out) {
  const int nsp = p.spatialRank;
  int64_t kernelCount = 1;
  for (int d = 0; d < nsp; ++d)
    kernelCount *= p.kernel[d];
  int64_t o[kMaxRank] = {}; // output position, stepped row-major
  for (int64_t i = 0; i < p.outSize; ++i) {
    double sum = 0;
    T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                  : std::numeric_limits<T>::lowest();
    int64_t valid = 0, padded = 0;
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
        const T v = in[offset];
        sum += static_cast<double>(v);
        if (v > best || v != v) // NaN propagates
          best = v;
      }
      for (int d = nsp - 1; d >= 0; --d) {
        if (++j[d] < p.kernel[d])
          break;
        j[d] = 0;
      }
    }
    if (p.kind == PoolKind::Max) {
      out[i] = best;
    } else {
      const int64_t count = p.countIncludePad ? padded : valid;
      out[i] = static_cast<T>(count ? sum / static_cast<double>(count) : NAN);
    }
    for (int d = nsp - 1; d >= 0; --d) {
      if (++o[d] < p.out[d])
        break;
      o[d] = 0;
    }
  }
}

/// The 2-D planes of poolPlane, with the same results bit for bit (the same
/// comparisons and additions in the same order); max skips the sum and
/// average the maximum.
template <typename T> void poolPlane2d(const PoolParams &p, const T *in, T *out) {
  const int64_t H = p.in[0], W = p.in[1], OW = p.out[1];
  const int64_t KH = p.kernel[0], KW = p.kernel[1], DH = p.dilations[0], DW = p.dilations[1];
  const int64_t padH = p.padsBegin[0], padW = p.padsBegin[1];
  const int64_t endH = H + p.padsEnd[0], endW = W + p.padsEnd[1];
  const bool isMax = p.kind == PoolKind::Max;
  for (int64_t oh = 0; oh < p.out[0]; ++oh) {
    const int64_t h0 = oh * p.strides[0] - padH;
    for (int64_t ow = 0; ow < OW; ++ow) {
      const int64_t w0 = ow * p.strides[1] - padW;
      double sum = 0;
      T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                    : std::numeric_limits<T>::lowest();
      int64_t valid = 0, padded = 0;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t h = h0 + kh * DH;
        const bool hIn = h >= 0 && h < H, hPadded = h >= -padH && h < endH;
        const T *row = in + h * W;
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t w = w0 + kw * DW;
          padded += hPadded && w >= -padW && w < endW;
          if (!hIn || w < 0 || w >= W)
            continue;
          ++valid;
          const T v = row[w];
          if (isMax) {
            if (v > best || v != v) // NaN propagates
              best = v;
          } else {
            sum += static_cast<double>(v);
          }
        }
      }
      T &o = out[oh * OW + ow];
      if (isMax) {
        o = best;
      } else {
        const int64_t count = p.countIncludePad ? padded : valid;
        o = static_cast<T>(count ? sum / static_cast<double>(count) : NAN);
      }
    }
  }
}

/// poolPlane, through poolPlane2d for 2-D planes.
template <typename T> void poolAnyPlane(const PoolParams &p, const T *in, T *out) {
  if (p.spatialRank == 2)
    poolPlane2d<T>(p, in, out);
  else
    poolPlane<T>(p, in, out);
}

/// Per-chunk plane buffers: maxChunks() slots of inSize and outSize
/// elements (int64-sized, so they also hold the float planes).
struct PoolScratch {
  int64_t *in, *out;
};
PoolScratch poolScratch(const PoolParams &p, Scratch &s) {
  return {s.take<int64_t>(maxChunks() * p.inSize), s.take<int64_t>(maxChunks() * p.outSize)};
}

Status runPool(const PoolParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const DType xt = x.desc->dtype, yt = y.desc->dtype;
  const int64_t planes = p.N * p.C;
  Scratch scratch(args.workspace);
  const PoolScratch ws = poolScratch(p, scratch);
  // A plane costs its load plus ~5 operations per window position (the
  // bounds checks and offsets of poolPlane).
  int64_t kernelCount = 1;
  for (int d = 0; d < p.spatialRank; ++d)
    kernelCount *= p.kernel[d];
  parallelForChunks(
      planes, grainForCost(p.inSize + 5 * p.outSize * kernelCount),
      [&](int64_t chunk, int64_t begin, int64_t end) {
        int64_t *inSlot = ws.in + chunk * p.inSize, *outSlot = ws.out + chunk * p.outSize;
        if (p.integer) {
          for (int64_t plane = begin; plane < end; ++plane) {
            loadI64(xt, elementPtr(x.data, xt, plane * p.inSize), p.inSize, inSlot);
            poolAnyPlane<int64_t>(p, inSlot, outSlot);
            storeI64(outSlot, p.outSize, yt, elementPtr(y.data, yt, plane * p.outSize));
          }
          return;
        }
        float *in = reinterpret_cast<float *>(inSlot), *out = reinterpret_cast<float *>(outSlot);
        for (int64_t plane = begin; plane < end; ++plane) {
          loadF32(xt, elementPtr(x.data, xt, plane * p.inSize), p.inSize, in);
          poolAnyPlane<float>(p, in, out);
          storeF32(out, p.outSize, yt, elementPtr(y.data, yt, plane * p.outSize));
        }
      });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// max_pool_grad and average_pool_grad, one (n, c) plane at a time, planes
// split over the cores. The windows are the forward's (above); output
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

/// The 2-D planes of poolGradPlane, with the same sums bit for bit: the same
/// first maximum (row-major window order) and the same additions into dx in
/// the same order.
void poolGradPlane2d(const PoolParams &p, const float *x, const float *dy, double *dx) {
  const Window2d window(p);
  const int64_t OW = p.out[1];
  const bool isMax = p.kind == PoolKind::Max;
  std::fill(dx, dx + p.inSize, 0.0);
  for (int64_t oh = 0; oh < p.out[0]; ++oh) {
    for (int64_t ow = 0; ow < OW; ++ow) {
      const double g = dy[oh * OW + ow];
      if (isMax) {
        int64_t argmax = -1;
        float best = 0.0f;
        window.forInside(oh, ow, [&](int64_t offset) {
          const float v = x[offset];
          if (argmax < 0 || v > best || (v != v && best == best)) {
            argmax = offset;
            best = v;
          }
        });
        if (argmax >= 0)
          dx[argmax] += g;
        continue;
      }
      int64_t valid, padded;
      window.count(oh, ow, &valid, &padded);
      if (!valid)
        continue;
      const double share = g / static_cast<double>(p.countIncludePad ? padded : valid);
      window.forInside(oh, ow, [&](int64_t offset) { dx[offset] += share; });
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
                        if (p.spatialRank == 2)
                          poolGradPlane2d(p, x, g, acc);
                        else
                          poolGradPlane(p, x, g, acc);
                        for (int64_t i = 0; i < p.inSize; ++i)
                          out[i] = static_cast<float>(acc[i]);
                        storeF32(out, p.inSize, dxt, elementPtr(dx.data, dxt, plane * p.inSize));
                      }
                    });
  return Status::ok();
}

} // namespace

Status preparePool(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<PoolParams>(v, out, decodePool, runPool,
                                 scratchBytes<PoolParams, PoolScratch, poolScratch>);
}
Status preparePoolGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<PoolParams>(v, out, decodePoolGrad, runPoolGrad,
                                 scratchBytes<PoolParams, PoolGradScratch, poolGradScratch>);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
