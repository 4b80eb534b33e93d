//===- BatchNormStats.cuh - batch norm's sums, spread over the device -----===//
//
// Batch norm reduces each channel over N x inner elements that lie in N
// separate rows of `inner` contiguous elements ([N, C, inner]: row
// r = n * C + c starts at r * inner). One block per channel (the kernels
// before) left most of the device idle where C is small and read each
// thread's contiguous share, so a warp's loads were `share` elements apart.
// Here every sum is two steps, both with a fixed order, so the bits repeat
// run to run:
//
//   rows:     one warp per row; lane l adds elements l, l + 32, ... (a warp
//             reads 32 consecutive elements at a time), in double, then the
//             lanes are combined by a fixed shuffle tree;
//   channels: one thread per channel adds its N row sums in n order.
//
// The sums are double, as the CPU's are (mptrt/Accumulate.h); only their
// grouping differs from the CPU's left-to-right order, far below float's
// rounding. Elementwise passes (normalising, dx) are grid-stride loops over
// the whole tensor, each thread's loads consecutive with its neighbours'.
//
// Channels last ([N, inner, C], a `layout = nhwc` kernel), row r's element
// i is at (n * inner + i) * C + c instead: the same sums in the same order,
// so the same bits as channels first, at the price of a warp's loads lying
// C elements apart (the warps of one block take consecutive channels, so
// they share the memory segments they read). Element e's channel is
// e % C there, (e / inner) % C channels first (channelOf).
//
// Only nvcc includes this file (NormalizationKernels.cu and
// NormalizationGradKernels.cu); the kernels are `static`, one copy per file.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_KERNELS_NORMALIZATION_BATCHNORMSTATS_CUH
#define MPTRT_SRC_KERNELS_NORMALIZATION_BATCHNORMSTATS_CUH

#include "cuda/Device.cuh"

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cuda {
namespace bnstats {

inline constexpr int kWarp = 32;
inline constexpr int kRowsPerBlock = kThreads / kWarp;

/// The sum of every lane's v, in lane 0 (a fixed tree: lane l takes l + 16,
/// then l + 8, ...).
__device__ inline double warpSum(double v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

/// The rows of an [N, C, inner] tensor (stored [N, inner, C] when
/// `channelsLast`) and what is summed over each.
struct Rows {
  int64_t N, C, inner;
  DType xt;
  const void *x;
  bool channelsLast = false;
};

/// Where row r's element i is stored.
__device__ inline int64_t elementAt(const Rows &t, int64_t r, int64_t i) {
  if (!t.channelsLast)
    return r * t.inner + i;
  const int64_t n = r / t.C, c = r % t.C;
  return (n * t.inner + i) * t.C + c;
}

/// The channel of stored element e of an [N, C, inner] tensor.
__device__ inline int64_t channelOf(int64_t e, int64_t C, int64_t inner, bool channelsLast) {
  return channelsLast ? e % C : (e / inner) % C;
}

/// What a row pass adds per element: x, (x - mean[c])^2, or the gradient
/// sums g and g * (x - mean[c]) * rstd[c] (g masked by a fused relu's
/// output y > 0).
enum class RowSum { X, Squares, Grad };

struct GradInput {
  DType gt, yt;
  const void *g, *y; // y: the forward output, with a fused relu; else null
};

__device__ inline float gradAt(const GradInput &g, int64_t i) {
  const float v = loadF32(g.gt, g.g, i);
  if (!g.y)
    return v;
  return loadF32(g.yt, g.y, i) > 0.0f ? v : 0.0f;
}

/// out0[r] (and out1[r] for Grad) = the row's sum; one warp per row.
static __global__ void rowSumsKernel(Rows t, RowSum what, GradInput g, const double *mean,
                                     const double *rstd, double *out0, double *out1) {
  const int lane = threadIdx.x % kWarp;
  const int64_t rows = t.N * t.C;
  for (int64_t r = blockIdx.x * int64_t(kRowsPerBlock) + threadIdx.x / kWarp; r < rows;
       r += int64_t(gridDim.x) * kRowsPerBlock) {
    const int64_t c = r % t.C;
    double s0 = 0, s1 = 0;
    for (int64_t i = lane; i < t.inner; i += kWarp) {
      const int64_t at = elementAt(t, r, i);
      const float x = loadF32(t.xt, t.x, at);
      if (what == RowSum::X) {
        s0 += x;
      } else if (what == RowSum::Squares) {
        const double d = x - mean[c];
        s0 += d * d;
      } else {
        const float gv = gradAt(g, at);
        s0 += gv;
        s1 += gv * ((x - mean[c]) * rstd[c]);
      }
    }
    s0 = warpSum(s0);
    if (what == RowSum::Grad)
      s1 = warpSum(s1);
    if (lane == 0) {
      out0[r] = s0;
      if (what == RowSum::Grad)
        out1[r] = s1;
    }
  }
}

/// Blocks for the row kernel over N * C rows.
inline unsigned rowSumBlocks(int64_t rows) {
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const int64_t cap = 65535;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks < cap ? blocks : cap));
}

inline Status launchRowSums(const Context &c, const Rows &t, RowSum what, const GradInput &g,
                            const double *mean, const double *rstd, double *out0,
                            double *out1 = nullptr) {
  rowSumsKernel<<<rowSumBlocks(t.N * t.C), kThreads, 0, streamOf(c)>>>(t, what, g, mean, rstd, out0,
                                                                       out1);
  return launched("batch norm row sums kernel");
}

/// Channel c's total of its N row sums, in n order.
__device__ inline double channelTotal(const double *rowSums, int64_t N, int64_t C, int64_t c) {
  double s = 0;
  for (int64_t n = 0; n < N; ++n)
    s += rowSums[n * C + c];
  return s;
}

/// mean[c] = (the channel's total of `rowSums`) / count (0 when empty).
static __global__ void channelMeanKernel(const double *rowSums, int64_t N, int64_t C, int64_t count,
                                         double *mean) {
  MPTRT_FOR_EACH(c, C) {
    mean[c] = count > 0 ? channelTotal(rowSums, N, C, c) / static_cast<double>(count) : 0.0;
  }
}

inline Status launchChannelMean(const Context &c, const double *rowSums, int64_t N, int64_t C,
                                int64_t count, double *mean) {
  channelMeanKernel<<<blocksFor(c, C), kThreads, 0, streamOf(c)>>>(rowSums, N, C, count, mean);
  return launched("batch norm channel mean kernel");
}

/// The workspace of a batch norm kernel: two row-sum arrays and a few
/// per-channel arrays, all double.
struct Workspace {
  double *rowA, *rowB, *channel[6];
};

inline uint64_t workspaceBytes(int64_t N, int64_t C) {
  return static_cast<uint64_t>(2 * N * C + 6 * C) * sizeof(double);
}

inline Workspace workspaceAt(void *base, int64_t N, int64_t C) {
  Workspace w;
  auto *d = static_cast<double *>(base);
  w.rowA = d;
  w.rowB = d + N * C;
  for (int i = 0; i < 6; ++i)
    w.channel[i] = d + 2 * N * C + i * C;
  return w;
}

} // namespace bnstats
} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_KERNELS_NORMALIZATION_BATCHNORMSTATS_CUH
