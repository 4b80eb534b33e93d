//===- PoolingKernels.cu - max, average, global average pool and grads ----===//
//
// The windows of kernels/pooling/PoolingKernels.cpp: for output position o the window
// covers input positions o * stride - padBegin + j * dilation, j in
// [0, kernel), per spatial axis, visited row-major; positions outside the
// input are padding.
//
//   forward  one thread per output element walks its window in the CPU's
//            order: max keeps the first maximum (NaN propagates; an
//            all-padding window gives -inf or the integer minimum); average
//            adds in double and divides by the in-input count (or, with
//            count_include_pad, the count inside [-padBegin, in + padEnd)).
//            Exactly the CPU's arithmetic, so bit for bit its result.
//   grads    gathered, never scattered: one thread per input element finds
//            the output positions whose windows hold it and adds their
//            contributions in increasing output order in double, from 0,
//            which is the order the CPU's scatter adds into that element.
//            max: dy[o] when the element is the window's first maximum (the
//            first NaN if there is one); average: dy[o] / count. Bit for bit
//            the CPU's result, with no atomics.
//
// Channels last (`layout = nhwc`, ChannelsLast.h), the same threads take the
// elements in the activations' storage order, [N, spatial..., C]: each
// does what the channels-first thread of its (n, c, position) does, so the
// bits are the same, and neighbouring threads read neighbouring channels.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "ops/Backward.h"

#include <cmath>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

/// PoolParams in a form a kernel takes by value.
struct DevicePool {
  PoolKind kind;
  bool integer, countIncludePad, channelsLast;
  int rank; // spatial
  int64_t in[kMaxRank], out[kMaxRank], kernel[kMaxRank], strides[kMaxRank], padsBegin[kMaxRank],
      padsEnd[kMaxRank], dilations[kMaxRank];
  int64_t planes, channels, inSize, outSize, kernelCount;
};

DevicePool devicePool(const PoolParams &p) {
  DevicePool d{};
  d.kind = p.kind;
  d.integer = p.integer;
  d.countIncludePad = p.countIncludePad;
  d.channelsLast = p.channelsLast;
  d.rank = p.spatialRank;
  d.kernelCount = 1;
  for (int i = 0; i < p.spatialRank; ++i) {
    d.in[i] = p.in[i];
    d.out[i] = p.out[i];
    d.kernel[i] = p.kernel[i];
    d.strides[i] = p.strides[i];
    d.padsBegin[i] = p.padsBegin[i];
    d.padsEnd[i] = p.padsEnd[i];
    d.dilations[i] = p.dilations[i];
    d.kernelCount *= p.kernel[i];
  }
  d.planes = p.N * p.C;
  d.channels = p.C;
  d.inSize = p.inSize;
  d.outSize = p.outSize;
  return d;
}

/// Element e of a tensor of planes of `size` positions, in storage order:
/// its plane (n * C + c) and its position in the plane.
__device__ inline void planeAndPosition(const DevicePool &p, int64_t e, int64_t size,
                                        int64_t *plane, int64_t *position) {
  if (!p.channelsLast) {
    *plane = e / size;
    *position = e % size;
    return;
  }
  const int64_t c = e % p.channels, rest = e / p.channels;
  *position = rest % size;
  *plane = rest / size * p.channels + c;
}

/// Where position `position` of plane `plane` (planes of `size`) is stored.
__device__ inline int64_t elementOf(const DevicePool &p, int64_t plane, int64_t position,
                                    int64_t size) {
  if (!p.channelsLast)
    return plane * size + position;
  const int64_t n = plane / p.channels, c = plane % p.channels;
  return (n * size + position) * p.channels + c;
}

/// The spatial position of flat index `index` in a row-major `shape`.
__device__ inline void unflatten(int rank, const int64_t *shape, int64_t index, int64_t *pos) {
  for (int d = rank - 1; d >= 0; --d) {
    pos[d] = index % shape[d];
    index /= shape[d];
  }
}

/// Window position w (row-major over the kernel) of output o: its plane
/// offset, and whether it is inside the input and inside the padded extent.
struct WindowPos {
  int64_t offset;
  bool inside, inPadded;
};
__device__ inline WindowPos windowPos(const DevicePool &p, const int64_t *o, int64_t w) {
  int64_t j[kMaxRank];
  unflatten(p.rank, p.kernel, w, j);
  WindowPos r{0, true, true};
  for (int d = 0; d < p.rank; ++d) {
    const int64_t pos = o[d] * p.strides[d] - p.padsBegin[d] + j[d] * p.dilations[d];
    r.inside = r.inside && pos >= 0 && pos < p.in[d];
    r.inPadded = r.inPadded && pos >= -p.padsBegin[d] && pos < p.in[d] + p.padsEnd[d];
    r.offset = r.offset * p.in[d] + pos;
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Forward.
//===----------------------------------------------------------------------===//

__global__ void poolKernel(DevicePool p, DType xt, const void *x, DType yt, void *y) {
  const int64_t n = p.planes * p.outSize;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t plane, i;
    planeAndPosition(p, e, p.outSize, &plane, &i);
    int64_t o[kMaxRank];
    unflatten(p.rank, p.out, i, o);
    double sum = 0;
    float best = -INFINITY;
    int64_t bestInt = INT64_MIN;
    int64_t valid = 0, padded = 0;
    for (int64_t w = 0; w < p.kernelCount; ++w) {
      const WindowPos at = windowPos(p, o, w);
      padded += at.inPadded;
      if (!at.inside)
        continue;
      ++valid;
      if (p.integer) {
        const int64_t v = loadI64(xt, x, elementOf(p, plane, at.offset, p.inSize));
        if (v > bestInt)
          bestInt = v;
      } else {
        const float v = loadF32(xt, x, elementOf(p, plane, at.offset, p.inSize));
        sum += static_cast<double>(v);
        if (v > best || v != v) // NaN propagates
          best = v;
      }
    }
    if (p.integer) {
      storeI64(yt, y, e, bestInt);
    } else if (p.kind == PoolKind::Max) {
      storeF32(yt, y, e, best);
    } else {
      const int64_t count = p.countIncludePad ? padded : valid;
      storeF32(yt, y, e, static_cast<float>(count ? sum / static_cast<double>(count) : NAN));
    }
  }
}

Status runPool(const Context &c, const PoolParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const int64_t n = p.N * p.C * p.outSize;
  if (n == 0)
    return Status::ok();
  poolKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(devicePool(p), x.desc->dtype, x.data,
                                                            y.desc->dtype, y.data);
  return launched("pool kernel");
}

//===----------------------------------------------------------------------===//
// Gradients, gathered per input element.
//===----------------------------------------------------------------------===//

/// The first maximum of output o's window in plane `plane` (the CPU's rule:
/// the first NaN if there is one), as a plane offset; -1 for an all-padding
/// window.
__device__ inline int64_t windowArgmax(const DevicePool &p, DType xt, const void *x, int64_t plane,
                                       const int64_t *o) {
  int64_t argmax = -1;
  float best = 0.0f;
  for (int64_t w = 0; w < p.kernelCount; ++w) {
    const WindowPos at = windowPos(p, o, w);
    if (!at.inside)
      continue;
    const float v = loadF32(xt, x, elementOf(p, plane, at.offset, p.inSize));
    if (argmax < 0 || v > best || (v != v && best == best)) {
      argmax = at.offset;
      best = v;
    }
  }
  return argmax;
}

/// The average pool's divisor of output o's window.
__device__ inline int64_t windowCount(const DevicePool &p, const int64_t *o) {
  int64_t valid = 0, padded = 0;
  for (int64_t w = 0; w < p.kernelCount; ++w) {
    const WindowPos at = windowPos(p, o, w);
    valid += at.inside;
    padded += at.inPadded;
  }
  return p.countIncludePad ? padded : valid;
}

__global__ void poolGradKernel(DevicePool p, DType xt, const void *x, DType gt, const void *dy,
                               DType ot, void *dx) {
  const int64_t n = p.planes * p.inSize;
  const bool isMax = p.kind == PoolKind::Max;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n;
       e += int64_t(gridDim.x) * blockDim.x) {
    int64_t plane, offset;
    planeAndPosition(p, e, p.inSize, &plane, &offset);
    int64_t pos[kMaxRank];
    unflatten(p.rank, p.in, offset, pos);
    // Per axis, the outputs whose window can reach pos: o * stride in
    // [pos + padBegin - (kernel - 1) * dilation, pos + padBegin].
    int64_t lo[kMaxRank], hi[kMaxRank];
    bool any = true;
    for (int d = 0; d < p.rank; ++d) {
      const int64_t top = pos[d] + p.padsBegin[d]; // >= 0
      const int64_t bottom = top - (p.kernel[d] - 1) * p.dilations[d];
      lo[d] = bottom <= 0 ? 0 : (bottom + p.strides[d] - 1) / p.strides[d];
      hi[d] = top / p.strides[d];
      if (hi[d] > p.out[d] - 1)
        hi[d] = p.out[d] - 1;
      any = any && lo[d] <= hi[d];
    }
    double acc = 0;
    if (any) {
      int64_t o[kMaxRank];
      for (int d = 0; d < p.rank; ++d)
        o[d] = lo[d];
      // Row-major over the candidate box: increasing output index.
      while (true) {
        bool hits = true; // pos is on the window's dilation grid on every axis
        int64_t oi = 0;
        for (int d = 0; d < p.rank; ++d) {
          hits = hits && (pos[d] + p.padsBegin[d] - o[d] * p.strides[d]) % p.dilations[d] == 0;
          oi = oi * p.out[d] + o[d];
        }
        if (hits) {
          const float g = loadF32(gt, dy, elementOf(p, plane, oi, p.outSize));
          if (isMax) {
            if (windowArgmax(p, xt, x, plane, o) == offset)
              acc += g;
          } else {
            acc += g / static_cast<double>(windowCount(p, o));
          }
        }
        int d = p.rank - 1;
        for (; d >= 0; --d) {
          if (++o[d] <= hi[d])
            break;
          o[d] = lo[d];
        }
        if (d < 0)
          break;
      }
    }
    storeF32(ot, dx, e, static_cast<float>(acc));
  }
}

Status runPoolGrad(const Context &c, const PoolParams &p, const KernelArgs &args) {
  const bool isMax = p.kind == PoolKind::Max;
  const TensorArg &dy = args.operands[isMax ? 1 : 0], &dx = args.results[0];
  const int64_t n = p.N * p.C * p.inSize;
  if (n == 0)
    return Status::ok();
  const DType xt = isMax ? args.operands[0].desc->dtype : DType::F32;
  const void *x = isMax ? args.operands[0].data : nullptr;
  poolGradKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
      devicePool(p), xt, x, dy.desc->dtype, dy.data, dx.desc->dtype, dx.data);
  return launched("pool grad kernel");
}

} // namespace

Status preparePool(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<PoolParams>(c, v, out, decodePool, runPool);
}
Status preparePoolGrad(const Context &c, const KernelView &v,
                       std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<PoolParams>(c, v, out, decodePoolGrad, runPoolGrad);
}

Status preparePoolChannelsLast(const Context &c, const KernelView &first,
                               std::unique_ptr<PreparedKernel> *out) {
  PoolParams p;
  MPTRT_TRY(decodePool(first, &p));
  p.channelsLast = true;
  *out = std::make_unique<ParamsKernel<PoolParams>>(c, std::move(p), runPool);
  return Status::ok();
}
Status preparePoolGradChannelsLast(const Context &c, const KernelView &first,
                                   std::unique_ptr<PreparedKernel> *out) {
  PoolParams p;
  MPTRT_TRY(decodePoolGrad(first, &p));
  p.channelsLast = true;
  *out = std::make_unique<ParamsKernel<PoolParams>>(c, std::move(p), runPoolGrad);
  return Status::ok();
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
