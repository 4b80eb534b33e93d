//===- Vectorized.cuh - contiguous elementwise loops, 16 bytes at a time -===//
//
// The elementwise kernels specialised at prepare (docs/runtime.md, "CUDA
// kernels specialised at prepare") run one functor per element: out[i] =
// f(in0[i], in1[i], ...), where f holds the kernel's uniform parameters
// (the op, its constants) and its template the dtypes, so no element
// switches on a dtype. This file is their contiguous loop:
//
//   - 32-bit indices (the prepare functions take this path only for fewer
//     than 2^31 elements; larger tensors keep the generic 64-bit kernels);
//   - V elements per thread per step, loaded and stored as one aligned
//     Pack: V = 16 bytes / the widest element, so the widest operand moves
//     16 bytes per access and the narrower ones 8, 4 or 2; functors with
//     large bodies cap V at 4 (MaxPack: each element of a pack is an
//     inlined copy of the body), so their 2-byte operands move 8 bytes and
//     1-byte ones 4;
//   - V = 1 when any pointer is not aligned to its Pack (a tensor at an
//     odd offset), decided on the host at each run;
//   - the n % V last elements one per thread after the packs.
//
// Every element goes through the same f either way, so V changes memory
// access, never a result. No pointer is __restrict__: a result may be its
// operand's bytes (each element is read before it is written, by the
// thread that writes it).
//
// Only nvcc includes this file.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_VECTORIZED_CUH
#define MPTRT_SRC_CUDA_VECTORIZED_CUH

#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"

#include <type_traits>

namespace mptrt {
namespace rt {
namespace cuda {

/// The most elements a specialised kernel indexes with 32 bits.
inline constexpr int64_t kMaxIndex32 = INT32_MAX;

/// Bytes one vector access moves.
inline constexpr int kVectorBytes = 16;

/// V elements of T, aligned so that one load or store moves them all.
template <class T, int V> struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

/// The most elements a functor F computes per pack: F::kMaxPack when it
/// declares one (the unary, binary and gradient functors, whose bodies are
/// large: each pack element is an inlined copy), else 16.
template <class F, class = void> struct MaxPack {
  static constexpr int value = 16;
};
template <class F> struct MaxPack<F, std::void_t<decltype(F::kMaxPack)>> {
  static constexpr int value = F::kMaxPack;
};

/// The elements per vector access of F over these element types: 16 bytes
/// of the widest, at most MaxPack<F>.
template <class F, class... T> constexpr int vectorWidth() {
  size_t widest = 1;
  ((widest = sizeof(T) > widest ? sizeof(T) : widest), ...);
  const int v = static_cast<int>(kVectorBytes / widest);
  return v < MaxPack<F>::value ? v : MaxPack<F>::value;
}

/// Whether `p` may be accessed as Packs of V elements of T.
template <class T> bool packAligned(const T *p, int V) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * V) == 0;
}

template <int V, class F, class O, class... I>
__device__ inline void applyPacks(const F &f, Pack<O, V> &out, const Pack<I, V> &...in) {
#pragma unroll
  for (int k = 0; k < V; ++k)
    out.v[k] = f(in.v[k]...);
}

/// out[i] = f(in[i]...) for i < n (< 2^31), V elements per access.
template <int V, class F, class O, class... I>
__global__ void contiguousKernel(F f, uint32_t n, O *out, const I *...in) {
  const uint32_t stride = gridDim.x * blockDim.x;
  const uint32_t first = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t packs = n / V;
  for (uint32_t j = first; j < packs; j += stride) {
    Pack<O, V> o;
    applyPacks<V>(f, o, reinterpret_cast<const Pack<I, V> *>(in)[j]...);
    reinterpret_cast<Pack<O, V> *>(out)[j] = o;
  }
  for (uint32_t i = packs * V + first; i < n; i += stride)
    out[i] = f(in[i]...);
}

/// Blocks for n elements taken V at a time.
inline unsigned blocksForPacks(const Context &c, int64_t n, int V) {
  return blocksFor(c, (n + V - 1) / V);
}

/// Launches contiguousKernel over n elements (0 < n <= kMaxIndex32): with
/// 16-byte Packs when every pointer is aligned to its Pack, else one
/// element per access.
template <class F, class O, class... I>
Status launchContiguous(const Context &c, const char *what, const F &f, int64_t n, O *out,
                        const I *...in) {
  constexpr int V = vectorWidth<F, O, I...>();
  const bool aligned = packAligned(out, V) && (packAligned(in, V) && ...);
  const uint32_t count = static_cast<uint32_t>(n);
  if (aligned)
    contiguousKernel<V>
        <<<blocksForPacks(c, n, V), kThreads, 0, streamOf(c)>>>(f, count, out, in...);
  else
    contiguousKernel<1><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(f, count, out, in...);
  return launched(what);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_VECTORIZED_CUH
