//===- DataMovementKernels.cu - copies, indexing, dropout, gather/slice grad ===//
//
// The CUDA twins of kernels/datamovement/DataMovementKernels.cpp (with its
// gather_grad and slice_grad) and kernels/elementwise/DropoutKernels.cpp.
//
// Kernels that only move elements work on raw elements of 1, 2, 4 or 8
// bytes whatever the dtype (plan tensors are 64-byte aligned, so typed
// access is aligned), so they are bit for bit the CPU's. Each output element
// is one iteration of a grid-stride loop that computes where it comes from
// (a gather), never a scatter, except slice_grad, whose slice positions are
// distinct, so no two threads write one element.
//
// Prepared kernels take fast paths unless MPTRT_CUDA_GENERIC_KERNELS was
// set (Chosen, CudaKernels.h) and the sizes allow (fewer than 2^31
// elements): 32-bit indices with FastDivmod divisions, strided views with
// their axes coalesced, and elements widened to up to 16 bytes where the
// innermost run is contiguous and everything is a multiple of the width
// (transpose, slice, expand, slice_grad, concat, split, gather), and
// gather's index dtype fixed. They move the same bytes to the same places.
//
// Those that convert (constant_of_shape, dropout, slice_grad between float
// types) use Device.cuh's load/store, the CPU's rounding code. gather_grad
// sums in double in increasing index order, as the CPU does, so it is bit
// for bit the CPU's too (see its section). dropout draws the CPU's Philox
// words (mptrt/Philox.h), so its mask is the CPU's, element for element.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "cuda/FastDivmod.h"
#include "cuda/Vectorized.cuh"
#include "mptrt/Philox.h"
#include "ops/Backward.h"

#include <cub/device/device_radix_sort.cuh>

#include <cstring>
#include <type_traits>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

/// Calls `launch(T{})` with T the unsigned integer of `size` bytes (1, 2,
/// 4 or 8), or uint4 for 16 (widened elements): the element type of a
/// byte-moving kernel.
template <typename Launch> void bySize(int64_t size, Launch launch) {
  switch (size) {
  case 16:
    launch(uint4{});
    return;
  case 1:
    launch(uint8_t{});
    return;
  case 2:
    launch(uint16_t{});
    return;
  case 4:
    launch(uint32_t{});
    return;
  default:
    launch(uint64_t{});
    return;
  }
}

//===----------------------------------------------------------------------===//
// copy, identity, reshape, flatten, squeeze, unsqueeze: the bytes.
//===----------------------------------------------------------------------===//

Status runCopy(const Context &c, const CopyParams &p, const KernelArgs &args) {
  void *dst = args.results[0].data;
  const void *src = args.operands[0].data;
  if (p.bytes == 0 || dst == src)
    return Status::ok();
  MPTRT_CUDA_TRY(cudaMemcpyAsync(dst, src, p.bytes, cudaMemcpyDeviceToDevice, streamOf(c)));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// transpose and slice: output element i reads the input at
//   base + sum_d index_d(i) * stride[d]
// with index_d(i) the row-major index of i in `shape`. transpose: base 0,
// stride[d] = the input stride of axis perm[d]; slice: base = sum start[d]
// * inStride[d], stride[d] = step[d] * inStride[d] (negative for a negative
// step).
//===----------------------------------------------------------------------===//

struct Strided {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
  int64_t base = 0;
};

__device__ inline int64_t stridedOffset(const Strided &s, int64_t i) {
  int64_t offset = s.base;
  for (int d = s.rank - 1; d >= 0; --d) {
    offset += (i % s.shape[d]) * s.stride[d];
    i /= s.shape[d];
  }
  return offset;
}

/// The same view with its axes of extent 1 dropped and each axis merged
/// into the next inner one where stride[d] = stride[d + 1] * shape[d + 1]
/// (a run the two walk as one): the same offset for every index, with
/// fewer divisions. A transpose that keeps the last axes, or a slice of
/// whole inner rows, becomes a copy of long contiguous runs.
Strided coalesced(const Strided &s) {
  Strided c;
  c.base = s.base;
  for (int d = 0; d < s.rank; ++d) {
    if (s.shape[d] == 1)
      continue;
    if (c.rank > 0 && c.stride[c.rank - 1] == s.stride[d] * s.shape[d]) {
      c.shape[c.rank - 1] *= s.shape[d];
      c.stride[c.rank - 1] = s.stride[d];
      continue;
    }
    c.shape[c.rank] = s.shape[d];
    c.stride[c.rank] = s.stride[d];
    ++c.rank;
  }
  return c;
}

/// The widest element (at most 16 bytes) the strided copy of `s` may move
/// at once: k = width / elementSize consecutive output elements come from
/// k consecutive input elements when the innermost axis is contiguous
/// (stride 1) and its extent, the base, every other stride and both
/// pointers are multiples of k elements. Rescales `s` and `n` to that
/// element and returns its size (elementSize when nothing is wider).
int64_t widened(Strided *s, int64_t *n, int64_t elementSize, const void *in, const void *out) {
  const int inner = s->rank - 1;
  if (inner < 0 || s->stride[inner] != 1)
    return elementSize;
  for (int64_t width = 16; width > elementSize; width /= 2) {
    const int64_t k = width / elementSize;
    bool ok = s->shape[inner] % k == 0 && s->base % k == 0 &&
              reinterpret_cast<uintptr_t>(in) % width == 0 &&
              reinterpret_cast<uintptr_t>(out) % width == 0;
    for (int d = 0; d < inner && ok; ++d)
      ok = s->stride[d] % k == 0;
    if (!ok)
      continue;
    s->shape[inner] /= k;
    for (int d = 0; d < inner; ++d)
      s->stride[d] /= k;
    s->base /= k;
    *n /= k;
    return width;
  }
  return elementSize;
}

/// A coalesced view of fewer than 2^31 elements into a tensor of fewer
/// than 2^31 elements: 32-bit offsets, FastDivmod extents. Offsets are
/// summed modulo 2^32 (a negative step's terms), and the sum is in range.
struct Strided32 {
  int rank = 0;
  FastDivmod shape[kMaxRank];
  uint32_t stride[kMaxRank] = {};
  uint32_t base = 0;
};

Strided32 strided32(const Strided &s) {
  Strided32 d;
  d.rank = s.rank;
  d.base = static_cast<uint32_t>(s.base);
  for (int i = 0; i < s.rank; ++i) {
    d.shape[i] = FastDivmod(static_cast<uint32_t>(s.shape[i]));
    d.stride[i] = static_cast<uint32_t>(s.stride[i]);
  }
  return d;
}

__device__ inline uint32_t stridedOffset32(const Strided32 &s, uint32_t i) {
  uint32_t offset = s.base;
  for (int d = s.rank - 1; d >= 0; --d) {
    uint32_t r;
    i = s.shape[d].divmod(i, &r);
    offset += r * s.stride[d];
  }
  return offset;
}

template <typename T>
__global__ void stridedGatherKernel(Strided s, const T *in, T *out, int64_t n) {
  MPTRT_FOR_EACH(i, n)
  out[i] = in[stridedOffset(s, i)];
}

template <typename T>
__global__ void stridedGatherKernel32(Strided32 s, const T *__restrict__ in, T *__restrict__ out,
                                      uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = in[stridedOffset32(s, i)];
}

/// out[i] = in[offset(i)] for the n elements of the view `s` of `in` (of
/// `inElements` elements). Coalesced, widened and with 32-bit offsets
/// where the sizes allow (`fast`, unless MPTRT_CUDA_GENERIC_KERNELS was
/// set at prepare), else per element with 64-bit offsets.
Status launchStridedGather(const Context &c, bool fast, Strided s, int64_t elementSize,
                           int64_t inElements, const void *in, void *out, int64_t n,
                           const char *what) {
  if (n == 0)
    return Status::ok();
  if (fast && n <= kMaxIndex32 && inElements <= kMaxIndex32) {
    s = coalesced(s);
    const int64_t width = widened(&s, &n, elementSize, in, out);
    const Strided32 s32 = strided32(s);
    bySize(width, [&](auto tag) {
      using T = decltype(tag);
      stridedGatherKernel32<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
          s32, static_cast<const T *>(in), static_cast<T *>(out), static_cast<uint32_t>(n));
    });
    return launched(what);
  }
  bySize(elementSize, [&](auto tag) {
    using T = decltype(tag);
    stridedGatherKernel<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
        s, static_cast<const T *>(in), static_cast<T *>(out), n);
  });
  return launched(what);
}

Status runTranspose(const Context &c, const Chosen<TransposeParams> &k, const KernelArgs &args) {
  const TransposeParams &p = k.p;
  Strided s;
  s.rank = p.rank;
  for (int d = 0; d < p.rank; ++d) {
    s.shape[d] = p.outShape[d];
    s.stride[d] = p.inStride[d];
  }
  return launchStridedGather(c, k.fast, s, p.elementSize, p.numel, args.operands[0].data,
                             args.results[0].data, p.numel, "transpose kernel");
}

/// The slice window as a strided view of the sliced tensor.
Strided sliceView(const SliceParams &p) {
  Strided s;
  s.rank = p.rank;
  for (int d = 0; d < p.rank; ++d) {
    s.shape[d] = p.outShape[d];
    s.stride[d] = p.step[d] * p.inStride[d];
    s.base += p.start[d] * p.inStride[d];
  }
  return s;
}

Status runSlice(const Context &c, const Chosen<SliceParams> &k, const KernelArgs &args) {
  const SliceParams &p = k.p;
  return launchStridedGather(c, k.fast, sliceView(p), p.elementSize, args.operands[0].desc->numel,
                             args.operands[0].data, args.results[0].data, p.numel, "slice kernel");
}

//===----------------------------------------------------------------------===//
// concat and split: one launch per piece. Piece i is an [outer, run_i]
// matrix (run_i = dim_i * inner) at column `column_i` of the whole
// [outer, total * inner] matrix.
//===----------------------------------------------------------------------===//

/// concat: whole[o, column + j] = piece[o, j].
template <typename T>
__global__ void pieceToWholeKernel(const T *piece, T *whole, int64_t run, int64_t wholeRow,
                                   int64_t column, int64_t n) {
  MPTRT_FOR_EACH(i, n)
  whole[(i / run) * wholeRow + column + i % run] = piece[i];
}

/// split: piece[o, j] = whole[o, column + j].
template <typename T>
__global__ void wholeToPieceKernel(const T *whole, T *piece, int64_t run, int64_t wholeRow,
                                   int64_t column, int64_t n) {
  MPTRT_FOR_EACH(i, n)
  piece[i] = whole[(i / run) * wholeRow + column + i % run];
}

/// The same with 32-bit indices and `run` as a FastDivmod, for a whole
/// matrix of fewer than 2^31 elements; ToWhole says which way.
template <typename T, bool ToWhole>
__global__ void pieceKernel32(const T *__restrict__ from, T *__restrict__ to, FastDivmod run,
                              uint32_t wholeRow, uint32_t column, uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t j;
    const uint32_t o = run.divmod(i, &j);
    const uint32_t w = o * wholeRow + column + j;
    if constexpr (ToWhole)
      to[w] = from[i];
    else
      to[i] = from[w];
  }
}

/// One piece of a concat (ToWhole) or split: an [outer, run] matrix at
/// `column` of the [outer, wholeRow] matrix, `n` = outer * run elements.
/// With `fast` and a whole matrix of fewer than 2^31 elements: 32-bit
/// indices, and elements widened to up to 16 bytes where run, wholeRow,
/// column and both pointers are multiples of the width.
template <bool ToWhole>
Status launchPiece(const Context &c, bool fast, int64_t elementSize, const void *from, void *to,
                   int64_t run, int64_t wholeRow, int64_t column, int64_t n, int64_t wholeElements,
                   const char *what) {
  if (n == 0)
    return Status::ok();
  if (fast && wholeElements <= kMaxIndex32) {
    int64_t width = elementSize;
    for (int64_t w = 16; w > elementSize; w /= 2) {
      const int64_t k = w / elementSize;
      if (run % k == 0 && wholeRow % k == 0 && column % k == 0 &&
          reinterpret_cast<uintptr_t>(from) % w == 0 && reinterpret_cast<uintptr_t>(to) % w == 0) {
        width = w;
        break;
      }
    }
    const int64_t k = width / elementSize;
    bySize(width, [&](auto tag) {
      using T = decltype(tag);
      pieceKernel32<T, ToWhole><<<blocksFor(c, n / k), kThreads, 0, streamOf(c)>>>(
          static_cast<const T *>(from), static_cast<T *>(to),
          FastDivmod(static_cast<uint32_t>(run / k)), static_cast<uint32_t>(wholeRow / k),
          static_cast<uint32_t>(column / k), static_cast<uint32_t>(n / k));
    });
    return launched(what);
  }
  bySize(elementSize, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (ToWhole)
      pieceToWholeKernel<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
          static_cast<const T *>(from), static_cast<T *>(to), run, wholeRow, column, n);
    else
      wholeToPieceKernel<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
          static_cast<const T *>(from), static_cast<T *>(to), run, wholeRow, column, n);
  });
  return launched(what);
}

Status runConcat(const Context &c, const Chosen<ConcatParams> &k, const KernelArgs &args) {
  const ConcatParams &p = k.p;
  int64_t total = 0;
  for (int64_t d : p.dims)
    total += d;
  const int64_t wholeRow = total * p.inner;
  int64_t column = 0;
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const int64_t run = p.dims[i] * p.inner;
    MPTRT_TRY(launchPiece<true>(c, k.fast, p.elementSize, args.operands[i].data,
                                args.results[0].data, run, wholeRow, column, p.outer * run,
                                p.outer * wholeRow, "concat kernel"));
    column += run;
  }
  return Status::ok();
}

Status runSplit(const Context &c, const Chosen<SplitParams> &k, const KernelArgs &args) {
  const SplitParams &p = k.p;
  const int64_t wholeRow = p.dim * p.inner;
  int64_t column = 0;
  for (size_t i = 0; i < p.sizes.size(); ++i) {
    const int64_t run = p.sizes[i] * p.inner;
    MPTRT_TRY(launchPiece<false>(c, k.fast, p.elementSize, args.operands[0].data,
                                 args.results[i].data, run, wholeRow, column, p.outer * run,
                                 p.outer * wholeRow, "split kernel"));
    column += run;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gather: out[o, i, m] = data[o, idx[i], m], idx[i] + axisDim where it is
// negative. An index outside [-axisDim, axisDim) raises IndexOutOfRange and
// its output elements are zero bytes.
//===----------------------------------------------------------------------===//

/// Index `*a` into an axis of `axisDim` made non-negative (-1 is the last);
/// false, raising IndexOutOfRange at `position`, when it is outside
/// [-axisDim, axisDim).
__device__ inline bool checkedIndex(int64_t *a, int64_t axisDim, int64_t position,
                                    DeviceErrorRecord *errorWord) {
  if (*a < -axisDim || *a >= axisDim) {
    raise(errorWord, DeviceError::IndexOutOfRange, *a, position, axisDim);
    return false;
  }
  if (*a < 0)
    *a += axisDim;
  return true;
}

template <typename T>
__global__ void gatherKernel(const T *data, DType indexType, const void *indices, T *out,
                             int64_t axisDim, int64_t inner, int64_t numIndices, int64_t n,
                             DeviceErrorRecord *errorWord) {
  MPTRT_FOR_EACH(e, n) {
    const int64_t m = e % inner, row = e / inner; // row = o * numIndices + i
    const int64_t i = row % numIndices, o = row / numIndices;
    int64_t a = loadI64(indexType, indices, i);
    if (!checkedIndex(&a, axisDim, i, errorWord)) {
      out[e] = T{};
      continue;
    }
    out[e] = data[(o * axisDim + a) * inner + m];
  }
}

/// The index check alone, for a gather with no output elements (the CPU
/// still checks every index).
__global__ void checkIndicesKernel(DType indexType, const void *indices, int64_t axisDim,
                                   int64_t numIndices, DeviceErrorRecord *errorWord) {
  MPTRT_FOR_EACH(i, numIndices) {
    const int64_t a = loadI64(indexType, indices, i);
    if (a < -axisDim || a >= axisDim)
      raise(errorWord, DeviceError::IndexOutOfRange, a, i, axisDim);
  }
}

/// gatherKernel with the index dtype I (int32_t or int64_t) fixed at
/// prepare, 32-bit element indices (fewer than 2^31 output and data
/// elements) and the divisions by inner and numIndices as FastDivmods.
template <typename T, typename I>
__global__ void gatherKernel32(const T *__restrict__ data, const I *__restrict__ indices,
                               T *__restrict__ out, int64_t axisDim, FastDivmod inner,
                               FastDivmod numIndices, uint32_t n, DeviceErrorRecord *errorWord) {
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x) {
    uint32_t m, i;
    const uint32_t row = inner.divmod(e, &m); // row = o * numIndices + i
    const uint32_t o = numIndices.divmod(row, &i);
    int64_t a = indices[i];
    if (!checkedIndex(&a, axisDim, i, errorWord)) {
      out[e] = T{};
      continue;
    }
    out[e] = data[(o * uint32_t(axisDim) + uint32_t(a)) * inner.divisor + m];
  }
}

/// gather with 32-bit indices, its rows widened to up to 16-byte elements
/// where inner and both pointers allow.
template <typename I>
Status launchGather32(const Context &c, const GatherParams &p, const void *data, const I *indices,
                      void *out, int64_t n) {
  int64_t width = p.elementSize;
  for (int64_t w = 16; w > p.elementSize; w /= 2) {
    const int64_t k = w / p.elementSize;
    if (p.inner % k == 0 && reinterpret_cast<uintptr_t>(data) % w == 0 &&
        reinterpret_cast<uintptr_t>(out) % w == 0) {
      width = w;
      break;
    }
  }
  const int64_t k = width / p.elementSize;
  bySize(width, [&](auto tag) {
    using T = decltype(tag);
    gatherKernel32<T, I><<<blocksFor(c, n / k), kThreads, 0, streamOf(c)>>>(
        static_cast<const T *>(data), indices, static_cast<T *>(out), p.axisDim,
        FastDivmod(static_cast<uint32_t>(p.inner / k)),
        FastDivmod(static_cast<uint32_t>(p.numIndices)), static_cast<uint32_t>(n / k), c.errorWord);
  });
  return launched("gather kernel");
}

Status runGather(const Context &c, const Chosen<GatherParams> &k, const KernelArgs &args) {
  const GatherParams &p = k.p;
  const TensorArg &indices = args.operands[1];
  const int64_t n = p.outer * p.numIndices * p.inner;
  if (n == 0) {
    if (p.numIndices == 0)
      return Status::ok();
    checkIndicesKernel<<<blocksFor(c, p.numIndices), kThreads, 0, streamOf(c)>>>(
        indices.desc->dtype, indices.data, p.axisDim, p.numIndices, c.errorWord);
    return launched("gather index check kernel");
  }
  const DType it = indices.desc->dtype;
  if (k.fast && n <= kMaxIndex32 && args.operands[0].desc->numel <= kMaxIndex32 &&
      (it == DType::I64 || it == DType::I32)) {
    if (it == DType::I64)
      return launchGather32(c, p, args.operands[0].data, static_cast<const int64_t *>(indices.data),
                            args.results[0].data, n);
    return launchGather32(c, p, args.operands[0].data, static_cast<const int32_t *>(indices.data),
                          args.results[0].data, n);
  }
  bySize(p.elementSize, [&](auto tag) {
    using T = decltype(tag);
    gatherKernel<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
        static_cast<const T *>(args.operands[0].data), indices.desc->dtype, indices.data,
        static_cast<T *>(args.results[0].data), p.axisDim, p.inner, p.numIndices, n, c.errorWord);
  });
  return launched("gather kernel");
}

//===----------------------------------------------------------------------===//
// expand: output element i copies the input element at its broadcast
// offset (stride 0 along broadcast axes).
//===----------------------------------------------------------------------===//

Status runExpand(const Context &c, const Chosen<ExpandParams> &k, const KernelArgs &args) {
  const ExpandParams &p = k.p;
  Strided s;
  s.rank = p.bc.rank;
  for (int d = 0; d < p.bc.rank; ++d) {
    s.shape[d] = p.bc.outShape[d];
    s.stride[d] = p.bc.strides[0][d];
  }
  return launchStridedGather(c, k.fast, s, p.elementSize, args.operands[0].desc->numel,
                             args.operands[0].data, args.results[0].data, p.bc.numel,
                             "expand kernel");
}

//===----------------------------------------------------------------------===//
// trilu: element (r, col) of each matrix is kept if col - r >= k (upper) or
// col - r <= k (lower), else zero bytes.
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void triluKernel(const T *in, T *out, bool upper, int64_t k, int64_t rows, int64_t cols,
                            int64_t n) {
  MPTRT_FOR_EACH(e, n) {
    const int64_t col = e % cols, r = (e / cols) % rows;
    const bool keep = upper ? col - r >= k : col - r <= k;
    out[e] = keep ? in[e] : T{};
  }
}

/// triluKernel with 32-bit indices and FastDivmod rows and columns.
template <typename T>
__global__ void triluKernel32(const T *__restrict__ in, T *__restrict__ out, bool upper, int64_t k,
                              FastDivmod rows, FastDivmod cols, uint32_t n) {
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x) {
    uint32_t col, r;
    rows.divmod(cols.divmod(e, &col), &r);
    const int64_t diagonal = int64_t(col) - int64_t(r);
    const bool keep = upper ? diagonal >= k : diagonal <= k;
    out[e] = keep ? in[e] : T{};
  }
}

Status runTrilu(const Context &c, const Chosen<TriluParams> &chosen, const KernelArgs &args) {
  const TriluParams &p = chosen.p;
  const int64_t n = p.batch * p.rows * p.cols;
  if (n == 0)
    return Status::ok();
  if (chosen.fast && n <= kMaxIndex32) {
    bySize(p.elementSize, [&](auto tag) {
      using T = decltype(tag);
      triluKernel32<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
          static_cast<const T *>(args.operands[0].data), static_cast<T *>(args.results[0].data),
          p.upper, p.k, FastDivmod(static_cast<uint32_t>(p.rows)),
          FastDivmod(static_cast<uint32_t>(p.cols)), static_cast<uint32_t>(n));
    });
    return launched("trilu kernel");
  }
  bySize(p.elementSize, [&](auto tag) {
    using T = decltype(tag);
    triluKernel<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
        static_cast<const T *>(args.operands[0].data), static_cast<T *>(args.results[0].data),
        p.upper, p.k, p.rows, p.cols, n);
  });
  return launched("trilu kernel");
}

//===----------------------------------------------------------------------===//
// constant_of_shape: every element is the value converted as the CPU does
// (an int attribute through int64, a float one through f32(double)), by the
// same store functions.
//===----------------------------------------------------------------------===//

__global__ void fillKernel(bool isInt, int64_t intValue, float value, DType dtype, void *out,
                           int64_t n) {
  MPTRT_FOR_EACH(i, n) {
    if (isInt)
      storeI64(dtype, out, i, intValue);
    else
      storeF32(dtype, out, i, value);
  }
}

Status runFill(const Context &c, const FillParams &p, const KernelArgs &args) {
  if (p.numel == 0)
    return Status::ok();
  const TensorArg &y = args.results[0];
  fillKernel<<<blocksFor(c, p.numel), kThreads, 0, streamOf(c)>>>(
      p.isInt, p.intValue, static_cast<float>(p.value), y.desc->dtype, y.data, p.numel);
  return launched("constant_of_shape kernel");
}

//===----------------------------------------------------------------------===//
// dropout (kernels/elementwise/DropoutKernels.cpp):
//   no draw:  y = x (converted), mask = 1
//   draw:     keep_i = philox word i of (seed, step, stream) >= threshold
//             y_i = f32(x_i) * (keep_i ? scale : 0), mask_i = keep_i
// seed and step are read on the device. A negative step raises
// NegativeStep, and y and the mask are then zeros.
//===----------------------------------------------------------------------===//

/// dropout's x and y: their dtypes read per element (AnyX / AnyY, the
/// generic kernels, 64-bit indices) or fixed at prepare (X<D> / Y<D>, one
/// float dtype in and out, 32-bit indices); the same conversions either
/// way (Element<D>).
struct AnyX {
  using Index = int64_t;
  DType dtype;
  const void *data;
  __device__ float operator[](int64_t i) const { return loadF32(dtype, data, i); }
};
struct AnyY {
  DType dtype;
  void *data;
  __device__ void store(int64_t i, float v) const { storeF32(dtype, data, i, v); }
};
template <DType D> struct X {
  using Index = uint32_t;
  const typename Element<D>::Storage *data;
  __device__ float operator[](uint32_t i) const { return Element<D>::toF32(data[i]); }
};
template <DType D> struct Y {
  typename Element<D>::Storage *data;
  __device__ void store(uint32_t i, float v) const { data[i] = Element<D>::fromF32(v, false); }
};

template <class XT, class YT>
__global__ void dropoutCopyKernel(XT x, YT y, uint8_t *mask, int64_t n) {
  MPTRT_FOR_EACH_AS(typename XT::Index, i, n) {
    y.store(i, x[i]);
    if (mask)
      mask[i] = 1;
  }
}

template <class XT, class YT>
__global__ void dropoutDrawKernel(XT x, YT y, uint8_t *mask, const int64_t *seedPtr,
                                  const int64_t *stepPtr, uint32_t stream, uint64_t threshold,
                                  float scale, int64_t n, int64_t offset,
                                  DeviceErrorRecord *errorWord) {
  const uint64_t seed = static_cast<uint64_t>(*seedPtr);
  const int64_t step = *stepPtr;
  MPTRT_FOR_EACH_AS(typename XT::Index, i, n) {
    if (step < 0) {
      if (i == 0)
        raise(errorWord, DeviceError::NegativeStep, step, 0, 0);
      y.store(i, 0.0f);
      if (mask)
        mask[i] = 0;
      continue;
    }
    // Word e & 3 of the Philox block of elements 4 * (e / 4) .. + 3, e the
    // element's index plus the rank's offset, as the CPU draws it.
    const int64_t e = static_cast<int64_t>(i) + offset;
    const philox::Block bits = philox::dropoutBlock(seed, static_cast<uint64_t>(step), stream,
                                                    static_cast<uint32_t>(e >> 2));
    const bool keep = uint64_t(bits.v[e & 3]) >= threshold;
    y.store(i, x[i] * (keep ? scale : 0.0f));
    if (mask)
      mask[i] = keep ? 1 : 0;
  }
}

template <class XT, class YT>
Status runDropoutAs(const Context &c, const DropoutParams &p, const KernelArgs &args) {
  if (p.numel == 0)
    return Status::ok();
  const TensorArg &x = args.operands[0], &y = args.results[0];
  XT xs;
  YT ys;
  if constexpr (std::is_same_v<XT, AnyX>) {
    xs = AnyX{x.desc->dtype, x.data};
    ys = AnyY{y.desc->dtype, y.data};
  } else {
    xs = XT{static_cast<decltype(XT::data)>(x.data)};
    ys = YT{static_cast<decltype(YT::data)>(y.data)};
  }
  uint8_t *mask = p.hasMask ? static_cast<uint8_t *>(args.results[1].data) : nullptr;
  const unsigned blocks = blocksFor(c, p.numel);
  if (!p.draw) {
    dropoutCopyKernel<<<blocks, kThreads, 0, streamOf(c)>>>(xs, ys, mask, p.numel);
    return launched("dropout kernel");
  }
  dropoutDrawKernel<<<blocks, kThreads, 0, streamOf(c)>>>(
      xs, ys, mask, static_cast<const int64_t *>(args.operands[1].data),
      static_cast<const int64_t *>(args.operands[2].data), p.stream, p.threshold, p.scale, p.numel,
      p.elementOffset, c.errorWord);
  return launched("dropout kernel");
}

//===----------------------------------------------------------------------===//
// slice_grad: dx = 0 (zero bytes), then dy's element i goes to dx at the
// slice offset of i (sliceView; the positions are distinct). Same dtypes
// copy the bytes, as the CPU's memcpy; different float types convert
// through f32.
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void stridedScatterKernel(Strided s, const T *in, T *out, int64_t n) {
  MPTRT_FOR_EACH(i, n)
  out[stridedOffset(s, i)] = in[i];
}

__global__ void stridedScatterConvertKernel(Strided s, DType it, const void *in, DType ot,
                                            void *out, int64_t n) {
  MPTRT_FOR_EACH(i, n)
  storeF32(ot, out, stridedOffset(s, i), loadF32(it, in, i));
}

template <typename T>
__global__ void stridedScatterKernel32(Strided32 s, const T *__restrict__ in, T *__restrict__ out,
                                       uint32_t n) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[stridedOffset32(s, i)] = in[i];
}

Status runSliceGrad(const Context &c, const Chosen<SliceParams> &k, const KernelArgs &args) {
  const SliceParams &p = k.p;
  const TensorArg &dy = args.operands[0], &dx = args.results[0];
  if (dx.desc->bytes)
    MPTRT_CUDA_TRY(cudaMemsetAsync(dx.data, 0, dx.desc->bytes, streamOf(c)));
  if (p.numel == 0)
    return Status::ok();
  const Strided s = sliceView(p);
  const unsigned blocks = blocksFor(c, p.numel);
  if (dy.desc->dtype == dx.desc->dtype && k.fast && p.numel <= kMaxIndex32 &&
      dx.desc->numel <= kMaxIndex32) {
    // The slice's coalesced view of dx, widened (both pointers aligned).
    Strided view = coalesced(s);
    int64_t n = p.numel;
    const int64_t width = widened(&view, &n, dy.desc->elementSize(), dy.data, dx.data);
    const Strided32 view32 = strided32(view);
    bySize(width, [&](auto tag) {
      using T = decltype(tag);
      stridedScatterKernel32<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
          view32, static_cast<const T *>(dy.data), static_cast<T *>(dx.data),
          static_cast<uint32_t>(n));
    });
  } else if (dy.desc->dtype == dx.desc->dtype) {
    bySize(dy.desc->elementSize(), [&](auto tag) {
      using T = decltype(tag);
      stridedScatterKernel<T><<<blocks, kThreads, 0, streamOf(c)>>>(
          s, static_cast<const T *>(dy.data), static_cast<T *>(dx.data), p.numel);
    });
  } else {
    stridedScatterConvertKernel<<<blocks, kThreads, 0, streamOf(c)>>>(
        s, dy.desc->dtype, dy.data, dx.desc->dtype, dx.data, p.numel);
  }
  return launched("slice_grad kernel");
}

//===----------------------------------------------------------------------===//
// gather_grad: ddata[o, a, m] = sum of dy[o, i, m] over the positions i with
// idx[i] == a, in increasing i, in double, rounded once (0 where a is never
// indexed) - the CPU's sum, term for term, so the same bits.
//
// The CPU groups the positions by row with a counting sort; here:
//   1. keys[i] = a * n + i (n = numIndices, a the normalised index; a bad
//      index raises IndexOutOfRange and gets a = axisDim, past every row);
//   2. CUB's radix sort orders the keys: the keys are distinct, so the
//      sorted order (rows ascending, positions ascending within a row) does
//      not depend on the sort's stability or scheduling;
//   3. first[a] = the first sorted key >= a * n (a binary search, for
//      a = 0 .. axisDim), so row a's positions are sorted[first[a] ..
//      first[a + 1]) - n * a;
//   4. one thread per ddata element sums its row's dy elements in that
//      order.
// No atomics: every step's result is a function of the inputs alone.
//===----------------------------------------------------------------------===//

/// 256-byte aligned offset of `bytes` past `offset`.
uint64_t alignedEnd(uint64_t offset, uint64_t bytes) { return (offset + bytes + 255) / 256 * 256; }

struct GatherGradPlan {
  GatherGradParams p;
  int endBit = 1; // the sort's key bits: enough for (axisDim + 1) * n - 1
  uint64_t keysIn = 0, keysOut = 0, first = 0, temp = 0; // workspace offsets
  uint64_t tempBytes = 0;                                // CUB's temporary storage
  uint64_t workspace = 0;
};

__global__ void gatherGradKeysKernel(DType indexType, const void *indices, int64_t axisDim,
                                     int64_t n, uint64_t *keys, DeviceErrorRecord *errorWord) {
  MPTRT_FOR_EACH(i, n) {
    int64_t a = loadI64(indexType, indices, i);
    if (a < -axisDim || a >= axisDim) {
      raise(errorWord, DeviceError::IndexOutOfRange, a, i, axisDim);
      a = axisDim;
    } else if (a < 0) {
      a += axisDim;
    }
    keys[i] = static_cast<uint64_t>(a) * static_cast<uint64_t>(n) + static_cast<uint64_t>(i);
  }
}

/// first[a] = the number of sorted keys below a * n, a = 0 .. axisDim.
__global__ void gatherGradFirstKernel(const uint64_t *sorted, int64_t axisDim, int64_t n,
                                      int64_t *first) {
  MPTRT_FOR_EACH(a, axisDim + 1) {
    const uint64_t target = static_cast<uint64_t>(a) * static_cast<uint64_t>(n);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (sorted[mid] < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    first[a] = lo;
  }
}

__global__ void gatherGradSumKernel(const uint64_t *sorted, const int64_t *first, DType dyt,
                                    const void *dy, DType ddt, void *dd, int64_t axisDim,
                                    int64_t inner, int64_t n, int64_t total) {
  MPTRT_FOR_EACH(e, total) {
    const int64_t m = e % inner, row = e / inner; // row = o * axisDim + a
    const int64_t a = row % axisDim, o = row / axisDim;
    const uint64_t rowKey = static_cast<uint64_t>(a) * static_cast<uint64_t>(n);
    double acc = 0;
    for (int64_t u = first[a]; u < first[a + 1]; ++u) {
      const int64_t i = static_cast<int64_t>(sorted[u] - rowKey);
      acc += static_cast<double>(loadF32(dyt, dy, (o * n + i) * inner + m));
    }
    storeF32(ddt, dd, e, static_cast<float>(acc));
  }
}

Status runGatherGrad(const Context &c, const GatherGradPlan &plan, const KernelArgs &args) {
  const GatherGradParams &p = plan.p;
  const TensorArg &indices = args.operands[0], &dy = args.operands[1], &dd = args.results[0];
  const int64_t n = p.numIndices, total = p.outer * p.axisDim * p.inner;
  cudaStream_t s = streamOf(c);
  if (n == 0) { // nothing indexed: ddata is zero
    if (dd.desc->bytes)
      MPTRT_CUDA_TRY(cudaMemsetAsync(dd.data, 0, dd.desc->bytes, s));
    return Status::ok();
  }
  uint8_t *ws = static_cast<uint8_t *>(args.workspace);
  uint64_t *keysIn = reinterpret_cast<uint64_t *>(ws + plan.keysIn);
  uint64_t *keysOut = reinterpret_cast<uint64_t *>(ws + plan.keysOut);
  int64_t *first = reinterpret_cast<int64_t *>(ws + plan.first);
  gatherGradKeysKernel<<<blocksFor(c, n), kThreads, 0, s>>>(indices.desc->dtype, indices.data,
                                                            p.axisDim, n, keysIn, c.errorWord);
  MPTRT_TRY(launched("gather_grad keys kernel"));
  size_t tempBytes = plan.tempBytes;
  MPTRT_CUDA_TRY(cub::DeviceRadixSort::SortKeys(ws + plan.temp, tempBytes,
                                                static_cast<const uint64_t *>(keysIn), keysOut, n,
                                                0, plan.endBit, s));
  gatherGradFirstKernel<<<blocksFor(c, p.axisDim + 1), kThreads, 0, s>>>(keysOut, p.axisDim, n,
                                                                         first);
  MPTRT_TRY(launched("gather_grad first kernel"));
  if (total == 0)
    return Status::ok();
  gatherGradSumKernel<<<blocksFor(c, total), kThreads, 0, s>>>(keysOut, first, dy.desc->dtype,
                                                               dy.data, dd.desc->dtype, dd.data,
                                                               p.axisDim, p.inner, n, total);
  return launched("gather_grad sum kernel");
}

} // namespace

Status prepareCopy(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<CopyParams>(c, v, out, decodeCopy, runCopy);
}
Status prepareTranspose(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareChosen<TransposeParams>(c, v, out, decodeTranspose, runTranspose);
}
Status prepareConcat(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareChosen<ConcatParams>(c, v, out, decodeConcat, runConcat);
}
Status prepareSplit(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareChosen<SplitParams>(c, v, out, decodeSplit, runSplit);
}
Status prepareSlice(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareChosen<SliceParams>(c, v, out, decodeSlice, runSlice);
}
Status prepareGather(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareChosen<GatherParams>(c, v, out, decodeGather, runGather);
}
Status prepareExpand(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareChosen<ExpandParams>(c, v, out, decodeExpand, runExpand);
}
Status prepareTrilu(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareChosen<TriluParams>(c, v, out, decodeTrilu, runTrilu);
}
Status prepareFill(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<FillParams>(c, v, out, decodeFill, runFill);
}
Status prepareDropout(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  DropoutParams p;
  MPTRT_TRY(decodeDropout(v, &p)); // this rank's draws included
  using RunFn = Status (*)(const Context &, const DropoutParams &, const KernelArgs &);
  RunFn run = runDropoutAs<AnyX, AnyY>;
  const DType dtype = v.operand(0).dtype;
  if (!genericKernelsForced() && p.numel <= kMaxIndex32 && v.result(0).dtype == dtype)
    run = withDType(dtype, [](auto d) -> RunFn {
      constexpr DType D = decltype(d)::value;
      if constexpr (Element<D>::isFloat)
        return runDropoutAs<X<D>, Y<D>>;
      return runDropoutAs<AnyX, AnyY>;
    });
  *out = std::make_unique<ParamsKernel<DropoutParams>>(c, std::move(p), run);
  return Status::ok();
}
Status prepareSliceGrad(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareChosen<SliceParams>(c, v, out, decodeSliceGrad, runSliceGrad);
}

Status prepareGatherGrad(const Context &c, const KernelView &v,
                         std::unique_ptr<PreparedKernel> *out) {
  GatherGradPlan plan;
  MPTRT_TRY(decodeGatherGrad(v, &plan.p));
  const GatherGradParams &p = plan.p;
  const uint64_t n = static_cast<uint64_t>(p.numIndices);
  if (n > 0) {
    // The largest key is (axisDim + 1) * n - 1; it must fit 64 bits.
    const uint64_t rows = static_cast<uint64_t>(p.axisDim) + 1;
    if (rows > UINT64_MAX / n)
      return v.error("gather_grad on CUDA: " + std::to_string(p.numIndices) + " indices into " +
                     std::to_string(p.axisDim) + " rows is too many for its 64-bit sort keys");
    const uint64_t maxKey = rows * n - 1;
    plan.endBit = 1;
    while (plan.endBit < 64 && (maxKey >> plan.endBit) != 0)
      ++plan.endBit;
    size_t tempBytes = 0;
    MPTRT_CUDA_TRY(cub::DeviceRadixSort::SortKeys(
        nullptr, tempBytes, static_cast<const uint64_t *>(nullptr),
        static_cast<uint64_t *>(nullptr), p.numIndices, 0, plan.endBit, streamOf(c)));
    plan.tempBytes = tempBytes;
    plan.keysIn = 0;
    plan.keysOut = alignedEnd(plan.keysIn, n * sizeof(uint64_t));
    plan.first = alignedEnd(plan.keysOut, n * sizeof(uint64_t));
    plan.temp = alignedEnd(plan.first, rows * sizeof(int64_t));
    plan.workspace = alignedEnd(plan.temp, plan.tempBytes);
  }
  const uint64_t workspace = plan.workspace;
  *out =
      std::make_unique<ParamsKernel<GatherGradPlan>>(c, std::move(plan), runGatherGrad, workspace);
  return Status::ok();
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
