//===- DataMovementKernels.cpp - copies, indexing, gather_grad, slice_grad ===//
//
// These kernels move elements without arithmetic, so they work on raw
// bytes (element size 1, 2, 4 or 8) whatever the dtype; only
// constant_of_shape converts values (dropout is in DropoutKernels.cpp).
// The gradients of gather and slice come last: gather_grad adds in double,
// and slice_grad converts where dy's dtype is not dx's.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "cpu/WholeTensor.h"

#include "mptrt/Numerics.h"
#include "ops/Backward.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// Elements per chunk for loops that move one element per item with a
/// little index arithmetic (Parallel.h's grain rule).
constexpr int64_t kGrain = grainForCost(2);

/// Copies one element of `size` bytes.
inline void copyElement(uint8_t *dst, const uint8_t *src, int64_t size) {
  switch (size) {
  case 1:
    *dst = *src;
    return;
  case 2:
    std::memcpy(dst, src, 2);
    return;
  case 4:
    std::memcpy(dst, src, 4);
    return;
  default:
    std::memcpy(dst, src, 8);
    return;
  }
}

/// copy / identity / reshape / flatten / squeeze / unsqueeze: the bytes.
Status runCopy(const CopyParams &p, const KernelArgs &args) {
  if (p.bytes)
    std::memmove(args.results[0].data, args.operands[0].data, p.bytes);
  return Status::ok();
}

/// transpose: output element at index o reads the input at
/// sum_i o[i] * inStride[i] (inStride[i]: input stride of axis perm[i]).
Status runTranspose(const TransposeParams &p, const KernelArgs &args) {
  const uint8_t *in = static_cast<const uint8_t *>(args.operands[0].data);
  uint8_t *out = static_cast<uint8_t *>(args.results[0].data);
  parallelFor(p.numel, kGrain, [&](int64_t begin, int64_t end) {
    int64_t index[kMaxRank];
    int64_t offset = 0, rest = begin;
    for (int d = p.rank - 1; d >= 0; --d) {
      index[d] = rest % p.outShape[d];
      rest /= p.outShape[d];
      offset += index[d] * p.inStride[d];
    }
    for (int64_t i = begin; i < end; ++i) {
      copyElement(out + i * p.elementSize, in + offset * p.elementSize, p.elementSize);
      for (int d = p.rank - 1; d >= 0; --d) {
        offset += p.inStride[d];
        if (++index[d] < p.outShape[d])
          break;
        offset -= p.inStride[d] * p.outShape[d];
        index[d] = 0;
      }
    }
  });
  return Status::ok();
}

/// concat: for each outer index, the operands' [dim_i * inner] runs in turn.
Status runConcat(const ConcatParams &p, const KernelArgs &args) {
  uint8_t *out = static_cast<uint8_t *>(args.results[0].data);
  for (int64_t o = 0; o < p.outer; ++o)
    for (size_t i = 0; i < p.dims.size(); ++i) {
      const int64_t run = p.dims[i] * p.inner * p.elementSize;
      if (run) {
        std::memcpy(out, static_cast<const uint8_t *>(args.operands[i].data) + o * run, run);
        out += run;
      }
    }
  return Status::ok();
}

/// split: the inverse of concat.
Status runSplit(const SplitParams &p, const KernelArgs &args) {
  const uint8_t *in = static_cast<const uint8_t *>(args.operands[0].data);
  for (int64_t o = 0; o < p.outer; ++o)
    for (size_t i = 0; i < p.sizes.size(); ++i) {
      const int64_t run = p.sizes[i] * p.inner * p.elementSize;
      if (run) {
        std::memcpy(static_cast<uint8_t *>(args.results[i].data) + o * run, in, run);
        in += run;
      }
    }
  return Status::ok();
}

/// slice: output index o reads input index start + o * step per axis.
Status runSlice(const SliceParams &p, const KernelArgs &args) {
  const uint8_t *in = static_cast<const uint8_t *>(args.operands[0].data);
  uint8_t *out = static_cast<uint8_t *>(args.results[0].data);
  int64_t base = 0; // input offset of output index 0
  for (int d = 0; d < p.rank; ++d)
    base += p.start[d] * p.inStride[d];
  parallelFor(p.numel, kGrain, [&](int64_t begin, int64_t end) {
    int64_t index[kMaxRank];
    int64_t offset = base, rest = begin;
    for (int d = p.rank - 1; d >= 0; --d) {
      index[d] = rest % p.outShape[d];
      rest /= p.outShape[d];
      offset += index[d] * p.step[d] * p.inStride[d];
    }
    for (int64_t i = begin; i < end; ++i) {
      copyElement(out + i * p.elementSize, in + offset * p.elementSize, p.elementSize);
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

/// gather: out[o, i, :] = data[o, indices[i], :] with negative indices
/// counting from the end; an index outside [-dim, dim) fails the run.
/// gather's workspace: the indices, widened to i64 and made non-negative.
struct GatherScratch {
  int64_t *idx;
};
GatherScratch gatherScratch(const GatherParams &p, Scratch &s) {
  return {s.take<int64_t>(p.numIndices)};
}

Status runGather(const GatherParams &p, const KernelArgs &args) {
  const TensorArg &indices = args.operands[1];
  Scratch scratch(args.workspace);
  int64_t *idx = gatherScratch(p, scratch).idx;
  loadI64(indices.desc->dtype, indices.data, p.numIndices, idx);
  for (int64_t i = 0; i < p.numIndices; ++i) {
    if (idx[i] < -p.axisDim || idx[i] >= p.axisDim)
      return Status::error("index " + std::to_string(idx[i]) + " at position " + std::to_string(i) +
                           " is outside [-" + std::to_string(p.axisDim) + ", " +
                           std::to_string(p.axisDim) + ")");
    if (idx[i] < 0)
      idx[i] += p.axisDim;
  }
  const uint8_t *data = static_cast<const uint8_t *>(args.operands[0].data);
  uint8_t *out = static_cast<uint8_t *>(args.results[0].data);
  const int64_t run = p.inner * p.elementSize;
  // A row is a memcpy of `run` bytes (~8 bytes per element operation).
  parallelFor(p.outer * p.numIndices, grainForCost(run / 8 + 8), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / p.numIndices, i = r % p.numIndices;
      if (run)
        std::memcpy(out + r * run, data + (o * p.axisDim + idx[i]) * run, run);
    }
  });
  return Status::ok();
}

/// expand: every output element copies its broadcast source element.
Status runExpand(const ExpandParams &p, const KernelArgs &args) {
  const uint8_t *in = static_cast<const uint8_t *>(args.operands[0].data);
  uint8_t *out = static_cast<uint8_t *>(args.results[0].data);
  parallelFor(p.bc.numel, kGrain, [&](int64_t begin, int64_t end) {
    int64_t offsets[kBlock];
    int64_t *lists[3] = {offsets, nullptr, nullptr};
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      broadcastOffsets(p.bc, i, m, lists);
      for (int64_t j = 0; j < m; ++j)
        copyElement(out + (i + j) * p.elementSize, in + offsets[j] * p.elementSize, p.elementSize);
    }
  });
  return Status::ok();
}

/// trilu: element (r, c) of each matrix is kept if c - r >= k (upper) or
/// c - r <= k (lower), else set to zero bytes.
Status runTrilu(const TriluParams &p, const KernelArgs &args) {
  const uint8_t *in = static_cast<const uint8_t *>(args.operands[0].data);
  uint8_t *out = static_cast<uint8_t *>(args.results[0].data);
  const int64_t rowBytes = p.cols * p.elementSize;
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t r = 0; r < p.rows; ++r) {
      const int64_t at = (b * p.rows + r) * rowBytes;
      for (int64_t c = 0; c < p.cols; ++c) {
        const bool keep = p.upper ? c - r >= p.k : c - r <= p.k;
        if (keep)
          copyElement(out + at + c * p.elementSize, in + at + c * p.elementSize, p.elementSize);
        else
          std::memset(out + at + c * p.elementSize, 0, p.elementSize);
      }
    }
  return Status::ok();
}

/// constant_of_shape: one value converted to the result dtype, repeated.
Status runFill(const FillParams &p, const KernelArgs &args) {
  const TensorArg &y = args.results[0];
  const DType yt = y.desc->dtype;
  const int64_t size = y.desc->elementSize();
  uint8_t one[8];
  if (p.isInt) {
    storeI64(&p.intValue, 1, yt, one);
  } else {
    const float v = static_cast<float>(p.value);
    storeF32(&v, 1, yt, one);
  }
  uint8_t *out = static_cast<uint8_t *>(y.data);
  for (int64_t i = 0; i < p.numel; ++i)
    copyElement(out + i * size, one, size);
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

} // namespace

Status prepareCopy(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<CopyParams>(v, out, decodeCopy, runCopy);
}
Status prepareTranspose(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<TransposeParams>(v, out, decodeTranspose, runTranspose);
}
Status prepareConcat(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ConcatParams>(v, out, decodeConcat, runConcat);
}
Status prepareSplit(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SplitParams>(v, out, decodeSplit, runSplit);
}
Status prepareSlice(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SliceParams>(v, out, decodeSlice, runSlice);
}
Status prepareGather(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<GatherParams>(v, out, decodeGather, runGather,
                                   scratchBytes<GatherParams, GatherScratch, gatherScratch>);
}
Status prepareExpand(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ExpandParams>(v, out, decodeExpand, runExpand);
}
Status prepareTrilu(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<TriluParams>(v, out, decodeTrilu, runTrilu);
}
Status prepareFill(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<FillParams>(v, out, decodeFill, runFill);
}
Status prepareGatherGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<GatherGradParams>(
      v, out, decodeGatherGrad, runGatherGrad,
      scratchBytes<GatherGradParams, GatherGradScratch, gatherGradScratch>);
}
Status prepareSliceGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SliceParams>(v, out, decodeSliceGrad, runSliceGrad);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
