//===- BlockReduce.cuh - deterministic one-block reductions ----------------===//
//
// The row kernels (softmax, layer norm, reduce_*, the losses and
// their gradients) give each row to one block of kThreads threads. Thread t
// takes the contiguous share [t * per, (t + 1) * per) of the row's n items
// (per = ceil(n / kThreads)) and folds it in index order; the block then
// combines the kThreads partials in a fixed pairwise tree over shared memory,
// always as combine(lower threads, higher threads):
//
//   step s = 1, 2, 4, ...:  partial[t] = combine(partial[t], partial[t + s])
//                           for every t that is a multiple of 2s
//
// So every row is folded in index order by a tree whose shape depends on n
// alone: the result never depends on scheduling, and an order-sensitive but
// associative combine (reduce_max's "first maximum, last NaN") gives the
// CPU's sequential result exactly. Float sums are folded in double, as the
// CPU's are (mptrt/Accumulate.h); only the tree's grouping of the double
// additions differs from the CPU's left-to-right order, far below float's
// rounding.
//
// Only nvcc includes this file. Every kernel using it must be launched with
// exactly kThreads threads, and every thread of the block must call it.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_BLOCKREDUCE_CUH
#define MPTRT_SRC_CUDA_BLOCKREDUCE_CUH

#include "cuda/Device.cuh"

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cuda {

/// This thread's contiguous share [begin, end) of n items.
struct Share {
  int64_t begin, end;
};
__device__ inline Share shareOf(int64_t n) {
  const int64_t per = (n + kThreads - 1) / kThreads;
  int64_t begin = per * threadIdx.x;
  if (begin > n)
    begin = n;
  int64_t end = begin + per;
  if (end > n)
    end = n;
  return {begin, end};
}

struct AddOp {
  template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};

/// std::max(a, b) as the CPU's softmax and loss use it: b only when a < b,
/// so the earlier of equal values (+0 / -0) is kept and NaN never wins.
struct MaxKeepFirst {
  __device__ double operator()(double a, double b) const { return a < b ? b : a; }
};

/// reduce_max's rule (cpu ReductionKernels.cpp): b when b > a or b is NaN,
/// so the first maximum is kept and the last NaN wins.
struct MaxNaNWins {
  __device__ double operator()(double a, double b) const { return (b > a || b != b) ? b : a; }
};

/// Combines each thread's `v` over the block (see the file comment) and
/// returns the result to every thread. `shared` holds kThreads values.
template <typename T, typename Op> __device__ T blockReduce(T v, T *shared, Op op) {
  const int t = threadIdx.x;
  shared[t] = v;
  __syncthreads();
  for (int s = 1; s < kThreads; s *= 2) {
    if (t % (2 * s) == 0)
      shared[t] = op(shared[t], shared[t + s]);
    __syncthreads();
  }
  const T total = shared[0];
  __syncthreads(); // `shared` may be written again right after
  return total;
}

/// Blocks for a one-block-per-row grid over `rows` rows (the kernels loop
/// row += gridDim.x, so any count covers every row).
inline unsigned rowBlocks(int64_t rows) {
  const int64_t cap = 65535;
  return static_cast<unsigned>(rows < 1 ? 1 : (rows < cap ? rows : cap));
}

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_BLOCKREDUCE_CUH
