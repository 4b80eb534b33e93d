//===- Parallel.h - split a loop over the CPU cores --------------*- C++ -*-===//
//
// The CPU kernels' only threading primitive: parallelFor(n, grain, fn) runs
// fn(begin, end) over contiguous chunks of [0, n), one chunk per thread,
// each of at least `grain` items; the calling thread runs the first chunk.
// Threads are started per call (tens of microseconds), so kernels choose a
// grain that makes a chunk worth far more than that. MPTRT_NUM_THREADS in the
// environment overrides the thread count (default: all hardware threads).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_PARALLEL_H
#define MPTRT_SRC_CPU_PARALLEL_H

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace mptrt {
namespace rt {
namespace cpu {

/// Threads parallelFor may use (>= 1).
int numThreads();

template <typename Fn>
void parallelFor(int64_t n, int64_t grain, const Fn &fn) {
  if (n <= 0)
    return;
  const int64_t chunks =
      std::min<int64_t>(numThreads(), (n + std::max<int64_t>(grain, 1) - 1) /
                                          std::max<int64_t>(grain, 1));
  if (chunks <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  // Chunk c covers [n * c / chunks, n * (c + 1) / chunks).
  std::vector<std::thread> threads;
  threads.reserve(chunks - 1);
  for (int64_t c = 1; c < chunks; ++c)
    threads.emplace_back([&fn, n, c, chunks] { fn(n * c / chunks, n * (c + 1) / chunks); });
  fn(int64_t{0}, n / chunks);
  for (std::thread &t : threads)
    t.join();
}

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_PARALLEL_H
