//===- ParallelTest.cpp - the CPU thread pool and parallelFor -------------===//
//
// Runs with four threads (MPTRT_NUM_THREADS=4 unless the environment says
// otherwise), whatever the machine, so the pool is always exercised.
//
//===----------------------------------------------------------------------===//
#include "cpu/Parallel.h"
#include "KernelTestUtil.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace mptrt {
namespace rt {
namespace cpu {
// ContractionKernels.cpp: rows per block when sgemm cuts a product over the
// threads (0: it never does, e.g. with one thread or no exact cut).
int64_t sgemmRowCutUnit();
} // namespace cpu
} // namespace rt
} // namespace mptrt

using namespace mptrt;
using namespace mptrt::test;
using mptrt::rt::cpu::grainForCost;
using mptrt::rt::cpu::kMinChunkCost;
using mptrt::rt::cpu::numThreads;
using mptrt::rt::cpu::parallelFor;
using mptrt::rt::cpu::poolStats;

namespace {

// Before main, so before the runtime first reads it.
const bool kThreadsSet = [] {
  setenv("MPTRT_NUM_THREADS", "4", /*overwrite=*/0);
  return true;
}();

/// The chunks one parallelFor ran, sorted.
std::vector<std::pair<int64_t, int64_t>> chunksOf(int64_t n, int64_t grain) {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  parallelFor(n, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    chunks.emplace_back(begin, end);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

// Tests that the chunks tile [0, n) exactly, in at most numThreads() pieces
// of at least `grain` items, cut at n * c / k.
TEST(ParallelFor, ChunksTileTheRange) {
  ASSERT_TRUE(kThreadsSet);
  const int64_t threads = numThreads();
  for (int64_t n : {1, 2, 3, 7, 64, 1000, 4097, 100000})
    for (int64_t grain : {1, 2, 5, 100, 1024, 50000}) {
      const auto chunks = chunksOf(n, grain);
      const int64_t k = std::max<int64_t>(1, std::min<int64_t>(threads, n / grain));
      ASSERT_EQ(static_cast<int64_t>(chunks.size()), k) << "n " << n << " grain " << grain;
      for (int64_t c = 0; c < k; ++c) {
        EXPECT_EQ(chunks[c].first, n * c / k);
        EXPECT_EQ(chunks[c].second, n * (c + 1) / k);
        if (k > 1) {
          EXPECT_GE(chunks[c].second - chunks[c].first, grain);
        }
      }
    }
  // Nothing to do: fn is not called.
  bool called = false;
  parallelFor(0, 1, [&](int64_t, int64_t) { called = true; });
  parallelFor(-5, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// Tests the grain rule: loops below twice the minimum chunk cost run inline
// on the calling thread, without the pool.
TEST(ParallelFor, SmallLoopsRunInline) {
  EXPECT_EQ(grainForCost(1), kMinChunkCost);
  EXPECT_EQ(grainForCost(0), kMinChunkCost);
  EXPECT_EQ(grainForCost(kMinChunkCost), 1);
  EXPECT_EQ(grainForCost(kMinChunkCost * 10), 1);
  EXPECT_EQ(grainForCost(3), (kMinChunkCost + 2) / 3);

  const auto before = poolStats();
  const std::thread::id self = std::this_thread::get_id();
  int calls = 0;
  parallelFor(2 * kMinChunkCost - 1, grainForCost(1), [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 2 * kMinChunkCost - 1);
    EXPECT_EQ(std::this_thread::get_id(), self);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(poolStats().pooledLoops, before.pooledLoops);
}

// Tests that the pool really runs chunks at the same time, the calling
// thread among them: every chunk waits until all have started.
TEST(ParallelFor, ChunksRunConcurrently) {
  const int64_t threads = numThreads();
  if (threads < 2)
    GTEST_SKIP() << "one thread";
  std::atomic<int64_t> started{0};
  std::atomic<bool> callerRan{false};
  const std::thread::id self = std::this_thread::get_id();
  std::mutex mutex;
  std::set<std::thread::id> ids;
  const auto before = poolStats();
  parallelFor(threads, 1, [&](int64_t begin, int64_t end) {
    EXPECT_EQ(end - begin, 1);
    if (std::this_thread::get_id() == self)
      callerRan = true;
    {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    }
    started.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (started.load() < threads && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    EXPECT_EQ(started.load(), threads) << "chunks did not run concurrently";
  });
  EXPECT_TRUE(callerRan);
  EXPECT_EQ(static_cast<int64_t>(ids.size()), threads);
  EXPECT_EQ(poolStats().pooledLoops, before.pooledLoops + 1);
}

// Tests which executor runs the loops: OpenMP's team in a runtime built
// with oneDNN on OpenMP, MPT's own pool otherwise or with
// MPTRT_THREAD_POOL=own (the ctest mptrt-parallel-test-own-pool runs this
// whole file so, and says what to expect in MPTRT_EXPECT_LOOP_EXECUTOR).
TEST(ParallelFor, LoopExecutor) {
  const char *expected = std::getenv("MPTRT_EXPECT_LOOP_EXECUTOR");
  EXPECT_STREQ(mptrt::rt::cpu::loopExecutor(), expected ? expected : MPTRT_EXPECT_LOOP_EXECUTOR);
}

// Tests many loops back to back (workers spinning) and loops separated by
// pauses long enough for the workers to fall asleep.
TEST(ParallelFor, ManyLoopsSpinningAndSleeping) {
  std::vector<int64_t> data(4096);
  for (int round = 0; round < 20000; ++round) {
    parallelFor(static_cast<int64_t>(data.size()), 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        data[i] += i;
    });
  }
  for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i)
    ASSERT_EQ(data[i], 20000 * i);
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::atomic<int64_t> sum{0};
    parallelFor(1000, 1, [&](int64_t begin, int64_t end) {
      int64_t s = 0;
      for (int64_t i = begin; i < end; ++i)
        s += i;
      sum += s;
    });
    ASSERT_EQ(sum.load(), 999 * 1000 / 2);
  }
}

// Tests that a loop inside a chunk runs inline, as one chunk on that thread.
TEST(ParallelFor, NestedLoopsRunInline) {
  if (numThreads() < 2)
    GTEST_SKIP() << "one thread";
  std::atomic<int64_t> total{0};
  std::atomic<int> innerCalls{0};
  parallelFor(4, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const std::thread::id outer = std::this_thread::get_id();
      parallelFor(1000, 1, [&](int64_t b, int64_t e) {
        ++innerCalls;
        EXPECT_EQ(b, 0);
        EXPECT_EQ(e, 1000);
        EXPECT_EQ(std::this_thread::get_id(), outer);
        total += e - b;
      });
    }
  });
  EXPECT_EQ(total.load(), 4000);
  EXPECT_EQ(innerCalls.load(), 4);
}

// Tests loops started from several threads at once: each completes (one on
// the pool, the others inline), with the right result.
TEST(ParallelFor, ConcurrentCallers) {
  constexpr int kCallers = 4, kRounds = 2000;
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < kCallers; ++t)
    callers.emplace_back([&, t] {
      std::vector<int> data(1000);
      for (int round = 0; round < kRounds; ++round) {
        parallelFor(1000, 10, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            data[i] += t + 1;
        });
      }
      for (int v : data)
        if (v != kRounds * (t + 1))
          ++failures;
    });
  for (std::thread &t : callers)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

// Tests that an exception thrown by a chunk, on a worker or on the calling
// thread, reaches the caller after every chunk has finished, and that the
// pool works afterwards.
TEST(ParallelFor, ExceptionsReachTheCaller) {
  const int64_t threads = numThreads();
  for (int64_t thrower = 0; thrower < threads; ++thrower) {
    std::atomic<int64_t> finished{0};
    bool caught = false;
    try {
      parallelFor(threads, 1, [&](int64_t begin, int64_t) {
        if (begin == thrower)
          throw std::runtime_error("chunk " + std::to_string(begin));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++finished;
      });
    } catch (const std::runtime_error &e) {
      caught = true;
      EXPECT_EQ(std::string(e.what()), "chunk " + std::to_string(thrower));
    }
    EXPECT_TRUE(caught);
    EXPECT_EQ(finished.load(), threads - 1);
  }
  std::atomic<int64_t> sum{0};
  parallelFor(100, 1, [&](int64_t begin, int64_t end) { sum += end - begin; });
  EXPECT_EQ(sum.load(), 100);
}

// Tests that a forked child (which has none of the pool's threads) still
// runs loops, inline, and exits cleanly.
TEST(ParallelFor, WorksInAForkedChild) {
  std::atomic<int64_t> sum{0};
  parallelFor(1000, 1, [&](int64_t begin, int64_t end) { sum += end - begin; }); // pool up
  ASSERT_EQ(sum.load(), 1000);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::vector<int64_t> data(100000);
    parallelFor(static_cast<int64_t>(data.size()), 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        data[i] = i;
    });
    bool ok = true;
    for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i)
      ok = ok && data[i] == i;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // The sanitizers' exit-time checks can deadlock in a forked child of a
    // threaded process (their locks may have been held in the parent).
    _exit(ok ? 0 : 1);
#else
    std::exit(ok ? 0 : 1); // runs the pool's owner's destructor in the child
#endif
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  sum = 0;
  parallelFor(1000, 1, [&](int64_t begin, int64_t end) { sum += end - begin; });
  EXPECT_EQ(sum.load(), 1000);
}

//===----------------------------------------------------------------------===//
// Kernels give the same bits with the pool as on one thread. A kernel run
// inside a chunk runs single-threaded (its loops are nested, so inline).
//===----------------------------------------------------------------------===//

KernelRun runSingleThreaded(const std::string &kind, const std::vector<HostTensor> &operands,
                            const std::vector<HostTensor> &results,
                            const std::vector<Attribute> &attrs) {
  KernelRun run;
  parallelFor(2, 1, [&](int64_t begin, int64_t) {
    if (begin == 0)
      run = runKernel(kind, operands, results, attrs);
  });
  return run;
}

/// Runs the kernel on the pool and single-threaded; the results must be
/// bit-identical. `mustPool`: the pooled run must have used the pool.
void expectSameBits(const std::string &kind, const std::vector<HostTensor> &operands,
                    const std::vector<HostTensor> &results,
                    const std::vector<Attribute> &attrs = {}, bool mustPool = true) {
  const auto before = poolStats();
  KernelRun pooled = runKernel(kind, operands, results, attrs);
  ASSERT_TRUE(pooled.ok) << pooled.error;
  if (mustPool && numThreads() > 1) {
    EXPECT_GT(poolStats().pooledLoops, before.pooledLoops) << kind << " did not use the pool";
  }
  KernelRun single = runSingleThreaded(kind, operands, results, attrs);
  ASSERT_TRUE(single.ok) << single.error;
  ASSERT_EQ(pooled.outputs.size(), single.outputs.size());
  for (size_t i = 0; i < pooled.outputs.size(); ++i)
    EXPECT_TRUE(pooled.outputs[i].bytes == single.outputs[i].bytes)
        << kind << " result " << i << " differs from the single-threaded run";
}

// sgemm cuts a large product into blocks of rows only where OpenBLAS gives
// the very bits of one call; the first use measures where that is.
TEST(ParallelKernels, GemmSameBitsAsOneThread) {
  // Mode: reference, pinned (the fast mode's bits depend on the thread
  // count, and oneDNN does not use the pool).
  CpuNumericsMode reference("reference");
  const int64_t unit = rt::cpu::sgemmRowCutUnit();
  // 0 is legitimate (no exact cut on this CPU's kernel: large GEMMs then
  // run on one thread), but worth seeing in the log.
  std::cout << "sgemm row cut unit: " << unit << "\n";
  std::mt19937 rng(7);
  for (DType t : {DType::F32, DType::BF16}) {
    // Rows not a multiple of any kernel's row group, so the cut matters.
    HostTensor a = randomTensor(t, {203, 301}, rng), b = randomTensor(t, {301, 157}, rng);
    HostTensor c = randomTensor(t, {157}, rng);
    expectSameBits("gemm", {a, b, c}, {HostTensor(t, {203, 157})},
                   {Attribute::makeString("activation", "gelu")});
    // f32 without an epilogue: only the sgemm itself can use the pool.
    HostTensor at = randomTensor(t, {301, 203}, rng), bt = randomTensor(t, {157, 301}, rng);
    expectSameBits("gemm", {at, bt}, {HostTensor(t, {203, 157})},
                   {Attribute::makeInt("trans_a", 1), Attribute::makeInt("trans_b", 1),
                    Attribute::makeFloat("alpha", 0.5f)},
                   /*mustPool=*/unit > 0);
  }
}

TEST(ParallelKernels, MatMulSameBitsAsOneThread) {
  // Mode: reference, pinned (the fast mode's bits depend on the thread
  // count, and oneDNN does not use the pool).
  CpuNumericsMode reference("reference");
  std::mt19937 rng(8);
  // One large product (rows cut), and many batches (spread over threads).
  expectSameBits(
      "matmul",
      {randomTensor(DType::F32, {250, 200}, rng), randomTensor(DType::F32, {200, 190}, rng)},
      {HostTensor(DType::F32, {250, 190})});
  expectSameBits(
      "matmul",
      {randomTensor(DType::F16, {16, 40, 64}, rng), randomTensor(DType::F16, {16, 64, 48}, rng)},
      {HostTensor(DType::F16, {16, 40, 48})});
}

TEST(ParallelKernels, ConvSameBitsAsOneThread) {
  // Mode: reference, pinned (the fast mode's bits depend on the thread
  // count, and oneDNN does not use the pool).
  CpuNumericsMode reference("reference");
  std::mt19937 rng(9);
  auto attrs = [](int64_t group) {
    return std::vector<Attribute>{
        Attribute::makeInts("strides", {1, 1}), Attribute::makeInts("pads", {1, 1, 1, 1}),
        Attribute::makeInts("dilations", {1, 1}), Attribute::makeInt("group", group)};
  };
  // One image, dense: im2col and the sgemm's rows are spread.
  expectSameBits("conv",
                 {randomTensor(DType::F32, {1, 32, 24, 24}, rng),
                  randomTensor(DType::F32, {75, 32, 3, 3}, rng),
                  randomTensor(DType::F32, {75}, rng)},
                 {HostTensor(DType::F32, {1, 75, 24, 24})}, attrs(1));
  // A batch of images: the images are spread.
  expectSameBits("conv",
                 {randomTensor(DType::F16, {4, 16, 20, 20}, rng),
                  randomTensor(DType::F16, {24, 16, 3, 3}, rng),
                  randomTensor(DType::F16, {24}, rng)},
                 {HostTensor(DType::F16, {4, 24, 20, 20})}, attrs(1));
  // Depthwise: groups (of both images) are spread.
  expectSameBits("conv",
                 {randomTensor(DType::BF16, {2, 96, 20, 20}, rng),
                  randomTensor(DType::BF16, {96, 1, 3, 3}, rng)},
                 {HostTensor(DType::BF16, {2, 96, 20, 20})}, attrs(96));
}

TEST(ParallelKernels, OtherKernelsSameBitsAsOneThread) {
  std::mt19937 rng(10);
  HostTensor x = randomTensor(DType::F32, {64, 96, 33}, rng);
  expectSameBits("gelu", {x}, {HostTensor(DType::F32, x.shape)});
  expectSameBits("add", {x, randomTensor(DType::F32, {96, 1}, rng)},
                 {HostTensor(DType::F32, x.shape)});
  expectSameBits("softmax", {x}, {HostTensor(DType::F32, x.shape)},
                 {Attribute::makeInt("axis", 1)});
  expectSameBits("reduce_sum", {x}, {HostTensor(DType::F32, {64, 96, 1})},
                 {Attribute::makeInts("axes", {2}), Attribute::makeInt("keepdims", 1)});
  expectSameBits("max_pool", {randomTensor(DType::F32, {2, 64, 32, 32}, rng)},
                 {HostTensor(DType::F32, {2, 64, 16, 16})},
                 {Attribute::makeInts("kernel_shape", {3, 3}),
                  Attribute::makeInts("strides", {2, 2}),
                  Attribute::makeInts("pads", {1, 1, 1, 1})});
}

} // namespace
