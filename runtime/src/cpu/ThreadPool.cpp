//===- ThreadPool.cpp - the CPU backend's persistent worker threads ------===//
#include "cpu/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sched.h>
#endif
#ifdef __unix__
#include <pthread.h>
#endif

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// More threads than this is a typo in MPTRT_NUM_THREADS, not a machine.
constexpr int kMaxThreads = 1024;

/// How long an idle worker polls for the next loop before it sleeps, and
/// how long the calling thread polls for the workers' last chunks before it
/// sleeps. Waking a sleeping thread costs tens of microseconds; kernels run
/// back to back, so the next loop usually comes sooner than that.
constexpr std::chrono::microseconds kWorkerSpin{50};
constexpr std::chrono::microseconds kCallerSpin{50};
/// Polling first only pauses the core; after this long it also yields the
/// CPU between polls, so that on a busy machine the threads that have work
/// (another process's, or a preempted worker of ours) get to run.
constexpr std::chrono::microseconds kPauseOnly{5};

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

/// Polls `done()` for up to `budget`; true once it holds, false if the
/// budget ran out.
template <typename Done> bool spinUntil(const Done &done, std::chrono::microseconds budget) {
  const auto start = std::chrono::steady_clock::now();
  for (unsigned i = 1;; ++i) {
    if (done())
      return true;
    if (i % 16 == 0) {
      const auto spent = std::chrono::steady_clock::now() - start;
      if (spent > budget)
        return false;
      if (spent > kPauseOnly) {
        std::this_thread::yield();
        continue;
      }
    }
    cpuRelax();
  }
}

int detectThreads() {
  if (const char *env = std::getenv("MPTRT_NUM_THREADS")) {
    const int v = std::atoi(env);
    if (v >= 1)
      return std::min(v, kMaxThreads);
  }
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
#ifdef __linux__
  // A process confined to some CPUs (taskset, a container's cpuset) should
  // not start a thread per CPU of the machine.
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    cpus = cpus > 0 ? std::min(cpus, CPU_COUNT(&set)) : CPU_COUNT(&set);
#endif
  return std::clamp(cpus, 1, kMaxThreads);
}

std::atomic<uint64_t> pooledLoops{0}, inlineLoops{0};

/// Whether this thread is running a chunk of a pooled loop: a loop started
/// there runs inline.
thread_local bool tlsInChunk = false;

/// Set in the child of a fork(): the pool's workers were not copied into
/// it, so its loops run inline there.
std::atomic<bool> forkedChild{false};

/// Sets forkedChild in the child of a fork(), from before the first loop
/// that uses other threads (the pool's, or OpenMP's team, whose threads a
/// child has not either: libgomp would wait for them).
void watchForks() {
#ifdef __unix__
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, [] { forkedChild.store(true); });
    return true;
  }();
  (void)registered;
#endif
}

class Pool {
public:
  explicit Pool(int workers) {
    threads_.reserve(workers);
    for (int i = 0; i < workers; ++i)
      threads_.emplace_back([this] { workerLoop(); });
  }

  ~Pool() {
    stop_.store(true, std::memory_order_seq_cst);
    {
      std::lock_guard<std::mutex> lock(mutex_);
    }
    wake_.notify_all();
    for (std::thread &t : threads_)
      t.join();
  }

  Pool(const Pool &) = delete;
  Pool &operator=(const Pool &) = delete;

  /// Runs the loop on the pool; false (and nothing run) if the pool is
  /// already running one.
  bool tryRun(int64_t n, int64_t chunks, ChunkFn fn, const void *ctx) {
    if (busy_.exchange(true, std::memory_order_acquire))
      return false;
    fn_ = fn;
    ctx_ = ctx;
    n_ = n;
    chunks_ = chunks;
    error_ = nullptr;
    unfinished_.store(chunks, std::memory_order_relaxed);
    const uint32_t gen = ++generation_;
    state_.store((static_cast<uint64_t>(gen) << 32) | static_cast<uint64_t>(chunks),
                 std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
      }
      // One chunk is the caller's; wake at most one worker per other chunk.
      const int64_t wanted = std::min<int64_t>(chunks - 1, static_cast<int64_t>(threads_.size()));
      if (wanted >= static_cast<int64_t>(threads_.size()))
        wake_.notify_all();
      else
        for (int64_t i = 0; i < wanted; ++i)
          wake_.notify_one();
    }

    for (int64_t c; (c = claim(gen)) >= 0;)
      runChunk(c);
    waitUntilFinished();

    std::exception_ptr error = error_;
    error_ = nullptr;
    pooledLoops.fetch_add(1, std::memory_order_relaxed);
    busy_.store(false, std::memory_order_release);
    if (error)
      std::rethrow_exception(error);
    return true;
  }

private:
  /// Claims the next chunk of loop `gen`: its index, or -1 if that loop has
  /// none left (or is over).
  int64_t claim(uint32_t gen) {
    uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
      if (static_cast<uint32_t>(s >> 32) != gen || (s & 0xffffffffu) == 0)
        return -1;
      if (state_.compare_exchange_weak(s, s - 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire))
        // A successful claim orders these reads after the publisher's
        // writes, and the loop cannot end before this chunk does.
        return chunks_ - static_cast<int64_t>(s & 0xffffffffu);
    }
  }

  void runChunk(int64_t c) {
    tlsInChunk = true;
    try {
      fn_(ctx_, c, n_ * c / chunks_, n_ * (c + 1) / chunks_);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_)
        error_ = std::current_exception();
    }
    tlsInChunk = false;
    if (unfinished_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        callerSleeping_.load(std::memory_order_seq_cst)) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
      }
      done_.notify_one();
    }
  }

  void waitUntilFinished() {
    if (spinUntil([&] { return unfinished_.load(std::memory_order_acquire) == 0; }, kCallerSpin))
      return;
    std::unique_lock<std::mutex> lock(mutex_);
    callerSleeping_.store(true, std::memory_order_seq_cst);
    done_.wait(lock, [&] { return unfinished_.load(std::memory_order_seq_cst) == 0; });
    callerSleeping_.store(false, std::memory_order_relaxed);
  }

  uint32_t generationOf(std::memory_order order) const {
    return static_cast<uint32_t>(state_.load(order) >> 32);
  }

  void workerLoop() {
    uint32_t seen = 0;
    for (;;) {
      if (!waitForLoop(seen))
        return;
      seen = generationOf(std::memory_order_acquire);
      for (int64_t c; (c = claim(seen)) >= 0;)
        runChunk(c);
    }
  }

  /// Waits for a loop newer than `seen`; false when the pool is stopping.
  bool waitForLoop(uint32_t seen) {
    if (spinUntil(
            [&] {
              return stop_.load(std::memory_order_relaxed) ||
                     generationOf(std::memory_order_acquire) != seen;
            },
            kWorkerSpin))
      return !stop_.load(std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(mutex_);
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    wake_.wait(lock, [&] {
      return stop_.load(std::memory_order_seq_cst) ||
             generationOf(std::memory_order_seq_cst) != seen;
    });
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return !stop_.load(std::memory_order_relaxed);
  }

  // Set while a loop runs; a second loop then runs inline.
  std::atomic<bool> busy_{false};
  // The current loop: written by its caller before state_ publishes it,
  // read by a thread only after it has claimed one of its chunks.
  ChunkFn fn_ = nullptr;
  const void *ctx_ = nullptr;
  int64_t n_ = 0, chunks_ = 0;
  std::exception_ptr error_; // guarded by mutex_ while the loop runs
  uint32_t generation_ = 0;  // the caller's count of loops
  // (generation << 32) | chunks not yet claimed.
  std::atomic<uint64_t> state_{0};
  std::atomic<int64_t> unfinished_{0}; // chunks not yet finished
  std::atomic<int> sleepers_{0};
  std::atomic<bool> callerSleeping_{false};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
};

/// Owns the pool: at exit, stops and joins the workers. A forked child
/// leaves it alone: its workers (and the waiters on its condition
/// variables, which destroying them would wait for) exist only in the parent.
struct PoolOwner {
  Pool *pool;
  ~PoolOwner() {
    if (!forkedChild.load())
      delete pool;
  }
};

Pool &pool() {
  static PoolOwner owner{new Pool(numThreads() - 1)};
  return *owner.pool;
}

#ifdef MPTRT_POOL_OPENMP
/// Whether loops run on OpenMP's team rather than on Pool: yes unless
/// MPTRT_THREAD_POOL=own (kept for comparing the two; docs/runtime.md).
bool loopsOnOpenMP() {
  static const bool openmp = [] {
    const char *env = std::getenv("MPTRT_THREAD_POOL");
    return !(env && std::strcmp(env, "own") == 0);
  }();
  return openmp;
}

/// Runs the loop on OpenMP's team (the threads oneDNN's primitives run on),
/// with Pool's contract: chunk c covers [n * c / chunks, n * (c + 1) /
/// chunks), each chunk runs on one thread, the first exception is rethrown
/// once all have finished, and a loop inside a chunk runs inline.
void runOnOpenMP(int64_t n, int64_t chunks, ChunkFn fn, const void *ctx) {
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex errorMutex;
#pragma omp parallel num_threads(static_cast<int>(chunks))
  {
    tlsInChunk = true;
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) {
      try {
        fn(ctx, c, n * c / chunks, n * (c + 1) / chunks);
      } catch (...) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!error)
          error = std::current_exception();
      }
    }
    tlsInChunk = false;
  }
  pooledLoops.fetch_add(1, std::memory_order_relaxed);
  if (error)
    std::rethrow_exception(error);
}
#endif

} // namespace

int numThreads() {
  static const int threads = detectThreads();
  return threads;
}

void runChunks(int64_t n, int64_t chunks, ChunkFn fn, const void *ctx) {
  if (chunks > 1 && numThreads() > 1 && !tlsInChunk &&
      !forkedChild.load(std::memory_order_relaxed)) {
    watchForks();
#ifdef MPTRT_POOL_OPENMP
    if (loopsOnOpenMP())
      return runOnOpenMP(n, chunks, fn, ctx);
#endif
    if (pool().tryRun(n, chunks, fn, ctx))
      return;
  }
  if (chunks > 1)
    inlineLoops.fetch_add(1, std::memory_order_relaxed);
  fn(ctx, 0, 0, n);
}

const char *loopExecutor() {
#ifdef MPTRT_POOL_OPENMP
  if (loopsOnOpenMP())
    return "openmp";
#endif
  return "pool";
}

PoolStats poolStats() {
  PoolStats stats;
  stats.pooledLoops = pooledLoops.load(std::memory_order_relaxed);
  stats.inlineLoops = inlineLoops.load(std::memory_order_relaxed);
  return stats;
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
