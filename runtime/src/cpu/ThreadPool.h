//===- ThreadPool.h - the CPU backend's persistent worker threads -*- C++ -*-===//
//
// One pool per process, started on the first parallel loop: numThreads() - 1
// workers that live until exit. A loop is published as `chunks` chunks of
// [0, n), chunk c covering [n * c / chunks, n * (c + 1) / chunks); the
// calling thread and the workers claim chunks from a shared counter, so the
// caller runs at least one chunk itself and, if a worker is slow to wake
// (the machine is busy), runs the rest too rather than waiting for it. The
// caller returns once every chunk has finished.
//
// Between loops a worker spins for a short while (back-to-back kernels reuse
// it within microseconds) and then sleeps on a condition variable. The pool
// runs one loop at a time: a loop started while another is running (from a
// second thread, or nested inside a chunk) runs on its own thread as a
// single chunk, chunk 0 = [0, n).
//
// In the child of a fork() (which has none of the workers) every loop runs
// inline. Use parallelFor (Parallel.h); this header is its engine.
//
// Built with oneDNN on OpenMP (MPTRT_POOL_OPENMP), the loops run on OpenMP's
// team instead, with the same contract (loopExecutor() below).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_THREADPOOL_H
#define MPTRT_SRC_CPU_THREADPOOL_H

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cpu {

/// Threads the CPU backend may use, the calling thread included (>= 1):
/// MPTRT_NUM_THREADS if it is set to a positive integer, else the CPUs this
/// process may run on. Read once per process.
int numThreads();

/// Type-erased chunk body: fn(ctx, chunk, begin, end), chunk in
/// [0, chunks). A plain function pointer and a context pointer: publishing
/// a loop allocates nothing.
using ChunkFn = void (*)(const void *ctx, int64_t chunk, int64_t begin, int64_t end);

/// Runs fn over `chunks` chunks of [0, n) (1 <= chunks <= numThreads(),
/// chunks <= n) on the pool and the calling thread, and returns when all
/// have finished; or, if the pool is busy, as fn(ctx, 0, 0, n) on the
/// calling thread. Each chunk index is run by exactly one thread, so a
/// chunk may use scratch indexed by it. An exception thrown by a chunk is rethrown here (the first
/// one, once every chunk has finished).
void runChunks(int64_t n, int64_t chunks, ChunkFn fn, const void *ctx);

/// What runs the parallel loops: "openmp" when the runtime is built with
/// oneDNN on OpenMP (the loops then share OpenMP's team with oneDNN's
/// primitives: two sets of threads on the same cores would each spin or
/// sleep while the other works), unless MPTRT_THREAD_POOL=own; "pool" (the
/// Pool below) otherwise.
const char *loopExecutor();

/// Statistics for tests: loops that ran on the pool (or on OpenMP's team), and loops of more than
/// one chunk that ran inline because the pool was busy (or absent).
struct PoolStats {
  uint64_t pooledLoops = 0;
  uint64_t inlineLoops = 0;
};
PoolStats poolStats();

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_THREADPOOL_H
