//===- Parallel.h - split a loop over the CPU cores --------------*- C++ -*-===//
//
// The CPU kernels' only threading primitive: parallelFor(n, grain, fn) runs
// fn(begin, end) over contiguous chunks of [0, n), at most one chunk per
// thread and each of at least `grain` items, on the persistent pool of
// ThreadPool.h; the calling thread runs chunks too and returns when all have
// finished. Chunk c of k covers [n * c / k, n * (c + 1) / k): the boundaries
// depend on n, grain and the thread count only, and fn must give the same
// result however [0, n) is cut (no reduction across items), so results do
// not depend on the thread count.
//
// The grain rule: handing a chunk to another thread costs about a
// microsecond when the worker is awake and tens of them when it sleeps, so a
// chunk should carry at least kMinChunkCost "element operations" (roughly a
// load, a cheap arithmetic op and a store of one float, ~1 ns). Call sites
// say what one item costs with grainForCost(costPerItem); smaller loops run
// inline on the calling thread. MPTRT_NUM_THREADS sets the thread count
// (default: the CPUs the process may run on).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_PARALLEL_H
#define MPTRT_SRC_CPU_PARALLEL_H

#include "cpu/ThreadPool.h"

#include <algorithm>
#include <cstdint>

namespace mptrt {
namespace rt {
namespace cpu {

/// Least estimated work, in element operations, worth a chunk of its own:
/// a loop is split only if each part gets at least this much.
inline constexpr int64_t kMinChunkCost = int64_t{1} << 15;

/// Items per chunk for a loop whose items cost `costPerItem` element
/// operations each.
constexpr int64_t grainForCost(int64_t costPerItem) {
  costPerItem = std::max<int64_t>(costPerItem, 1);
  return std::max<int64_t>(1, (kMinChunkCost + costPerItem - 1) / costPerItem);
}

/// Most chunks a loop is cut into (numThreads()): per-chunk scratch sized
/// at prepare has this many slots.
inline int64_t maxChunks() { return numThreads(); }

/// Runs fn(chunk, begin, end) over chunks of [0, n) of at least `grain`
/// items each (one chunk, chunk 0, on the calling thread, when n < 2 * grain
/// or with one thread). chunk < maxChunks(), and no two threads run the same
/// chunk index at once, so fn may use scratch slot `chunk`.
template <typename Fn> void parallelForChunks(int64_t n, int64_t grain, const Fn &fn) {
  if (n <= 0)
    return;
  const int64_t chunks = std::min<int64_t>(numThreads(), n / std::max<int64_t>(grain, 1));
  if (chunks <= 1) {
    fn(int64_t{0}, int64_t{0}, n);
    return;
  }
  runChunks(
      n, chunks,
      [](const void *ctx, int64_t chunk, int64_t begin, int64_t end) {
        (*static_cast<const Fn *>(ctx))(chunk, begin, end);
      },
      &fn);
}

/// Runs fn(begin, end) over chunks of [0, n) of at least `grain` items each
/// (one chunk, on the calling thread, when n < 2 * grain or with one thread).
template <typename Fn> void parallelFor(int64_t n, int64_t grain, const Fn &fn) {
  parallelForChunks(n, grain, [&fn](int64_t, int64_t begin, int64_t end) { fn(begin, end); });
}

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_PARALLEL_H
