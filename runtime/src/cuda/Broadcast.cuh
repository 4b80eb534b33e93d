//===- Broadcast.cuh - where broadcast operands' elements come from ------===//
//
// ops/OpParams.h's BroadcastIndex gives each input of an elementwise kernel
// (binary, where) a stride per output axis, 0 along a broadcast one. The
// element of input k for output index i is
//
//   sum_d index_d(i) * strides[k][d],  index_d(i) the row-major index of i.
//
// This file evaluates that three ways:
//
//   - DeviceBroadcast / offsetsOf: int64 divisions per axis, for any size
//     (the generic kernels);
//   - Broadcast32 / offsetsOf32: 32-bit indices with each axis's division
//     by FastDivmod (FastDivmod.h), for fewer than 2^31 elements;
//   - rowLength: the shapes whose offset is simply i % R (R = 1: a scalar;
//     R = numel: the output's own shape; otherwise a row, as a bias [N]
//     against [M, N], or [H, W] against [B, H, W]), which need no per-axis
//     loop at all (Vectorized.cuh's and the binary kernels' fast paths).
//
// Only nvcc includes this file.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_BROADCAST_CUH
#define MPTRT_SRC_CUDA_BROADCAST_CUH

#include "cuda/Device.cuh"
#include "cuda/FastDivmod.h"
#include "cuda/Vectorized.cuh"
#include "ops/OpParams.h"

#include <cstdint>
#include <utility>

namespace mptrt {
namespace rt {
namespace cuda {

/// BroadcastIndex in a form a kernel takes by value.
struct DeviceBroadcast {
  int rank;
  int64_t outShape[kMaxRank];
  int64_t strides[3][kMaxRank];
};

inline DeviceBroadcast deviceBroadcast(const BroadcastIndex &bc) {
  DeviceBroadcast d{};
  d.rank = bc.rank;
  for (int i = 0; i < bc.rank; ++i) {
    d.outShape[i] = bc.outShape[i];
    for (int k = 0; k < 3; ++k)
      d.strides[k][i] = bc.strides[k][i];
  }
  return d;
}

__device__ inline void offsetsOf(const DeviceBroadcast &bc, int64_t index, int inputs,
                                 int64_t *off) {
  for (int k = 0; k < inputs; ++k)
    off[k] = 0;
  for (int d = bc.rank - 1; d >= 0; --d) {
    const int64_t i = index % bc.outShape[d];
    index /= bc.outShape[d];
    for (int k = 0; k < inputs; ++k)
      off[k] += i * bc.strides[k][d];
  }
}

/// The same for fewer than 2^31 output elements (so every input offset
/// fits 32 bits too): the axes' extents as FastDivmods. Axes of extent 1
/// are dropped (their index is always 0).
struct Broadcast32 {
  int rank = 0;
  FastDivmod outShape[kMaxRank];
  uint32_t strides[3][kMaxRank] = {};
};

inline Broadcast32 broadcast32(const BroadcastIndex &bc) {
  Broadcast32 d;
  for (int i = 0; i < bc.rank; ++i) {
    if (bc.outShape[i] == 1)
      continue;
    d.outShape[d.rank] = FastDivmod(static_cast<uint32_t>(bc.outShape[i]));
    for (int k = 0; k < 3; ++k)
      d.strides[k][d.rank] = static_cast<uint32_t>(bc.strides[k][i]);
    ++d.rank;
  }
  return d;
}

template <int Inputs>
__device__ inline void offsetsOf32(const Broadcast32 &bc, uint32_t index, uint32_t *off) {
#pragma unroll
  for (int k = 0; k < Inputs; ++k)
    off[k] = 0;
  for (int d = bc.rank - 1; d >= 0; --d) {
    uint32_t i;
    index = bc.outShape[d].divmod(index, &i);
#pragma unroll
    for (int k = 0; k < Inputs; ++k)
      off[k] += i * bc.strides[k][d];
  }
}

/// R when input k's element for output index i is i % R (its trailing axes
/// are the output's, contiguous, and its leading ones broadcast), else 0.
/// R = 1 for a scalar, R = numel for an input of the output's shape.
inline int64_t rowLength(const BroadcastIndex &bc, int k) {
  int64_t run = 1;
  int d = bc.rank - 1;
  for (; d >= 0; --d) {
    if (bc.outShape[d] != 1 && bc.strides[k][d] != run)
      break;
    run *= bc.outShape[d];
  }
  for (; d >= 0; --d)
    if (bc.outShape[d] != 1 && bc.strides[k][d] != 0)
      return 0;
  return run;
}

template <class F, class O, class... I, size_t... K>
__device__ inline O applyAt(const F &f, const uint32_t *off, std::index_sequence<K...>,
                            const I *...in) {
  return f(in[off[K]]...);
}

/// out[i] = f(in[offset_k(i)]...) for i < n (< 2^31): any broadcast.
template <class F, class O, class... I>
__global__ void broadcastKernel(F f, Broadcast32 bc, uint32_t n, O *out, const I *...in) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t off[sizeof...(I)];
    offsetsOf32<sizeof...(I)>(bc, i, off);
    out[i] = applyAt<F, O>(f, off, std::index_sequence_for<I...>{}, in...);
  }
}

template <class F, class O, class... I>
Status launchBroadcast(const Context &c, const char *what, const F &f, const BroadcastIndex &bc,
                       O *out, const I *...in) {
  broadcastKernel<<<blocksFor(c, bc.numel), kThreads, 0, streamOf(c)>>>(
      f, broadcast32(bc), static_cast<uint32_t>(bc.numel), out, in...);
  return launched(what);
}

/// out[i] = f(full[i], part[i % R]) for i < n (< 2^31), or f(part[i % R],
/// full[i]) when `partFirst`; R = 1 (Scalar: part[0], read once per
/// thread) or a multiple of V. `rowPacks` divides by R / V.
template <int V, bool Scalar, class F, class O, class I>
__global__ void rowKernel(F f, uint32_t n, O *out, const I *full, const I *part, bool partFirst,
                          FastDivmod rowPacks) {
  const uint32_t stride = gridDim.x * blockDim.x;
  const uint32_t first = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t packs = n / V;
  const I s = Scalar ? part[0] : I{};
  for (uint32_t j = first; j < packs; j += stride) {
    const Pack<I, V> a = reinterpret_cast<const Pack<I, V> *>(full)[j];
    Pack<I, V> b;
    if constexpr (Scalar) {
#pragma unroll
      for (int k = 0; k < V; ++k)
        b.v[k] = s;
    } else {
      uint32_t r;
      rowPacks.divmod(j, &r);
      b = reinterpret_cast<const Pack<I, V> *>(part)[r];
    }
    Pack<O, V> o;
    if (partFirst)
      applyPacks<V>(f, o, b, a);
    else
      applyPacks<V>(f, o, a, b);
    reinterpret_cast<Pack<O, V> *>(out)[j] = o;
  }
  const uint32_t row = rowPacks.divisor * V;
  for (uint32_t i = packs * V + first; i < n; i += stride) {
    const I p = Scalar ? s : part[i % row];
    out[i] = partFirst ? f(p, full[i]) : f(full[i], p);
  }
}

/// Launches rowKernel for `part` of row length R (1 <= R < n, n <=
/// kMaxIndex32): Packs of 16 bytes when the pointers are aligned and R is 1
/// or a multiple of V, else one element per access.
template <class F, class O, class I>
Status launchRow(const Context &c, const char *what, const F &f, int64_t n, O *out, const I *full,
                 const I *part, bool partFirst, int64_t R) {
  constexpr int V = vectorWidth<F, O, I>();
  const bool aligned = packAligned(out, V) && packAligned(full, V);
  const uint32_t count = static_cast<uint32_t>(n);
  cudaStream_t s = streamOf(c);
  if (R == 1) {
    if (aligned)
      rowKernel<V, true><<<blocksForPacks(c, n, V), kThreads, 0, s>>>(f, count, out, full, part,
                                                                      partFirst, FastDivmod(1));
    else
      rowKernel<1, true><<<blocksFor(c, n), kThreads, 0, s>>>(f, count, out, full, part, partFirst,
                                                              FastDivmod(1));
  } else if (aligned && R % V == 0 && packAligned(part, V)) {
    rowKernel<V, false><<<blocksForPacks(c, n, V), kThreads, 0, s>>>(
        f, count, out, full, part, partFirst, FastDivmod(static_cast<uint32_t>(R / V)));
  } else {
    rowKernel<1, false><<<blocksFor(c, n), kThreads, 0, s>>>(f, count, out, full, part, partFirst,
                                                             FastDivmod(static_cast<uint32_t>(R)));
  }
  return launched(what);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_BROADCAST_CUH
