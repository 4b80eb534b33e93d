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
// Those that convert (constant_of_shape, dropout, slice_grad between float
// types) use Device.cuh's load/store, the CPU's rounding code. gather_grad
// sums in double in increasing index order, as the CPU does, so it is bit
// for bit the CPU's too (see its section). dropout draws the CPU's Philox
// words (mptrt/Philox.h), so its mask is the CPU's, element for element.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "mptrt/Philox.h"
#include "ops/Backward.h"

#include <cub/device/device_radix_sort.cuh>

#include <cstring>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

/// Calls `launch(T{})` with T the unsigned integer of `size` bytes (1, 2,
/// 4 or 8): the element type of a byte-moving kernel.
template <typename Launch> void bySize(int64_t size, Launch launch) {
  switch (size) {
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

/// The grid-stride loop over [0, n) every kernel here uses.
#define MPTRT_FOR_EACH(i, n)                                                                       \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n);                        \
       i += int64_t(gridDim.x) * blockDim.x)

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

template <typename T>
__global__ void stridedGatherKernel(Strided s, const T *in, T *out, int64_t n) {
  MPTRT_FOR_EACH(i, n)
  out[i] = in[stridedOffset(s, i)];
}

Status launchStridedGather(const Context &c, const Strided &s, int64_t elementSize, const void *in,
                           void *out, int64_t n, const char *what) {
  if (n == 0)
    return Status::ok();
  bySize(elementSize, [&](auto tag) {
    using T = decltype(tag);
    stridedGatherKernel<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
        s, static_cast<const T *>(in), static_cast<T *>(out), n);
  });
  return launched(what);
}

Status runTranspose(const Context &c, const TransposeParams &p, const KernelArgs &args) {
  Strided s;
  s.rank = p.rank;
  for (int d = 0; d < p.rank; ++d) {
    s.shape[d] = p.outShape[d];
    s.stride[d] = p.inStride[d];
  }
  return launchStridedGather(c, s, p.elementSize, args.operands[0].data, args.results[0].data,
                             p.numel, "transpose kernel");
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

Status runSlice(const Context &c, const SliceParams &p, const KernelArgs &args) {
  return launchStridedGather(c, sliceView(p), p.elementSize, args.operands[0].data,
                             args.results[0].data, p.numel, "slice kernel");
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

Status runConcat(const Context &c, const ConcatParams &p, const KernelArgs &args) {
  int64_t total = 0;
  for (int64_t d : p.dims)
    total += d;
  const int64_t wholeRow = total * p.inner;
  int64_t column = 0;
  for (size_t k = 0; k < p.dims.size(); ++k) {
    const int64_t run = p.dims[k] * p.inner, n = p.outer * run;
    if (n > 0) {
      bySize(p.elementSize, [&](auto tag) {
        using T = decltype(tag);
        pieceToWholeKernel<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
            static_cast<const T *>(args.operands[k].data), static_cast<T *>(args.results[0].data),
            run, wholeRow, column, n);
      });
      MPTRT_TRY(launched("concat kernel"));
    }
    column += run;
  }
  return Status::ok();
}

Status runSplit(const Context &c, const SplitParams &p, const KernelArgs &args) {
  const int64_t wholeRow = p.dim * p.inner;
  int64_t column = 0;
  for (size_t k = 0; k < p.sizes.size(); ++k) {
    const int64_t run = p.sizes[k] * p.inner, n = p.outer * run;
    if (n > 0) {
      bySize(p.elementSize, [&](auto tag) {
        using T = decltype(tag);
        wholeToPieceKernel<T><<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
            static_cast<const T *>(args.operands[0].data), static_cast<T *>(args.results[k].data),
            run, wholeRow, column, n);
      });
      MPTRT_TRY(launched("split kernel"));
    }
    column += run;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gather: out[o, i, m] = data[o, idx[i], m], idx[i] + axisDim where it is
// negative. An index outside [-axisDim, axisDim) raises IndexOutOfRange and
// its output elements are zero bytes.
//===----------------------------------------------------------------------===//

template <typename T>
__global__ void gatherKernel(const T *data, DType indexType, const void *indices, T *out,
                             int64_t axisDim, int64_t inner, int64_t numIndices, int64_t n,
                             DeviceErrorRecord *errorWord) {
  MPTRT_FOR_EACH(e, n) {
    const int64_t m = e % inner, row = e / inner; // row = o * numIndices + i
    const int64_t i = row % numIndices, o = row / numIndices;
    int64_t a = loadI64(indexType, indices, i);
    if (a < -axisDim || a >= axisDim) {
      raise(errorWord, DeviceError::IndexOutOfRange, a, i, axisDim);
      out[e] = T(0);
      continue;
    }
    if (a < 0)
      a += axisDim;
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

Status runGather(const Context &c, const GatherParams &p, const KernelArgs &args) {
  const TensorArg &indices = args.operands[1];
  const int64_t n = p.outer * p.numIndices * p.inner;
  if (n == 0) {
    if (p.numIndices == 0)
      return Status::ok();
    checkIndicesKernel<<<blocksFor(c, p.numIndices), kThreads, 0, streamOf(c)>>>(
        indices.desc->dtype, indices.data, p.axisDim, p.numIndices, c.errorWord);
    return launched("gather index check kernel");
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

Status runExpand(const Context &c, const ExpandParams &p, const KernelArgs &args) {
  Strided s;
  s.rank = p.bc.rank;
  for (int d = 0; d < p.bc.rank; ++d) {
    s.shape[d] = p.bc.outShape[d];
    s.stride[d] = p.bc.strides[0][d];
  }
  return launchStridedGather(c, s, p.elementSize, args.operands[0].data, args.results[0].data,
                             p.bc.numel, "expand kernel");
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
    out[e] = keep ? in[e] : T(0);
  }
}

Status runTrilu(const Context &c, const TriluParams &p, const KernelArgs &args) {
  const int64_t n = p.batch * p.rows * p.cols;
  if (n == 0)
    return Status::ok();
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

__global__ void dropoutCopyKernel(DType xt, const void *x, DType yt, void *y, uint8_t *mask,
                                  int64_t n) {
  MPTRT_FOR_EACH(i, n) {
    storeF32(yt, y, i, loadF32(xt, x, i));
    if (mask)
      mask[i] = 1;
  }
}

__global__ void dropoutDrawKernel(DType xt, const void *x, DType yt, void *y, uint8_t *mask,
                                  const int64_t *seedPtr, const int64_t *stepPtr, uint32_t stream,
                                  uint64_t threshold, float scale, int64_t n,
                                  DeviceErrorRecord *errorWord) {
  const uint64_t seed = static_cast<uint64_t>(*seedPtr);
  const int64_t step = *stepPtr;
  MPTRT_FOR_EACH(i, n) {
    if (step < 0) {
      if (i == 0)
        raise(errorWord, DeviceError::NegativeStep, step, 0, 0);
      storeF32(yt, y, i, 0.0f);
      if (mask)
        mask[i] = 0;
      continue;
    }
    // Word i & 3 of the Philox block of elements 4 * (i / 4) .. + 3, as the
    // CPU draws it.
    const philox::Block bits = philox::dropoutBlock(seed, static_cast<uint64_t>(step), stream,
                                                    static_cast<uint32_t>(i >> 2));
    const bool keep = uint64_t(bits.v[i & 3]) >= threshold;
    storeF32(yt, y, i, loadF32(xt, x, i) * (keep ? scale : 0.0f));
    if (mask)
      mask[i] = keep ? 1 : 0;
  }
}

Status runDropout(const Context &c, const DropoutParams &p, const KernelArgs &args) {
  if (p.numel == 0)
    return Status::ok();
  const TensorArg &x = args.operands[0], &y = args.results[0];
  uint8_t *mask = p.hasMask ? static_cast<uint8_t *>(args.results[1].data) : nullptr;
  const unsigned blocks = blocksFor(c, p.numel);
  if (!p.draw) {
    dropoutCopyKernel<<<blocks, kThreads, 0, streamOf(c)>>>(x.desc->dtype, x.data, y.desc->dtype,
                                                            y.data, mask, p.numel);
    return launched("dropout kernel");
  }
  dropoutDrawKernel<<<blocks, kThreads, 0, streamOf(c)>>>(
      x.desc->dtype, x.data, y.desc->dtype, y.data, mask,
      static_cast<const int64_t *>(args.operands[1].data),
      static_cast<const int64_t *>(args.operands[2].data), p.stream, p.threshold, p.scale, p.numel,
      c.errorWord);
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

Status runSliceGrad(const Context &c, const SliceParams &p, const KernelArgs &args) {
  const TensorArg &dy = args.operands[0], &dx = args.results[0];
  if (dx.desc->bytes)
    MPTRT_CUDA_TRY(cudaMemsetAsync(dx.data, 0, dx.desc->bytes, streamOf(c)));
  if (p.numel == 0)
    return Status::ok();
  const Strided s = sliceView(p);
  const unsigned blocks = blocksFor(c, p.numel);
  if (dy.desc->dtype == dx.desc->dtype) {
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
  return prepareWith<TransposeParams>(c, v, out, decodeTranspose, runTranspose);
}
Status prepareConcat(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ConcatParams>(c, v, out, decodeConcat, runConcat);
}
Status prepareSplit(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SplitParams>(c, v, out, decodeSplit, runSplit);
}
Status prepareSlice(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SliceParams>(c, v, out, decodeSlice, runSlice);
}
Status prepareGather(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<GatherParams>(c, v, out, decodeGather, runGather);
}
Status prepareExpand(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ExpandParams>(c, v, out, decodeExpand, runExpand);
}
Status prepareTrilu(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<TriluParams>(c, v, out, decodeTrilu, runTrilu);
}
Status prepareFill(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<FillParams>(c, v, out, decodeFill, runFill);
}
Status prepareDropout(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<DropoutParams>(c, v, out, decodeDropout, runDropout);
}
Status prepareSliceGrad(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SliceParams>(c, v, out, decodeSliceGrad, runSliceGrad);
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
