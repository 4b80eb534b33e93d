//===- NoAllocationTest.cpp - a run after the first allocates nothing ----===//
//
// The contract of docs/runtime.md ("Prepare, then run"): every size is
// settled when a plan is loaded, so running an entry point whose arena
// exists allocates nothing - not in the run loop (Model::run), not in a
// kernel, not on the pool's threads. This binary replaces the global
// operator new / delete (every form) and, on glibc without ASan, malloc,
// calloc, realloc, aligned_alloc, posix_memalign and memalign with versions
// that count while a flag is set. For one kernel of every kind the CPU backend
// has (a realistic shape each, most large enough to be split over the
// threads), it loads a one-kernel plan, binds its inputs, runs it once (the
// entry point's arena is allocated then, and the pool and OpenBLAS start)
// and counts the allocations of a second run through the public C++ API,
// which must be zero. A coverage test checks that the cases name every kind
// of the backend.
//
//===----------------------------------------------------------------------===//
#include "KernelCases.h"
#include "KernelTestUtil.h"
#include "cpu/ThreadPool.h"
#include "mptrt.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <set>
#include <string>
#include <vector>

//===----------------------------------------------------------------------===//
// Counting allocation hooks.
//===----------------------------------------------------------------------===//

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

inline void noteAllocation() {
  if (counting.load(std::memory_order_relaxed))
    allocations.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

// AddressSanitizer owns malloc and its relatives (it intercepts them and
// frees what they return); hooks that call glibc's allocator behind its back
// crash the first free. Under ASan only operator new and delete are counted.
#if defined(__SANITIZE_ADDRESS__)
#define MPTRT_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MPTRT_UNDER_ASAN 1
#endif
#endif

#if defined(__GLIBC__) && !defined(MPTRT_UNDER_ASAN)
// glibc's own entry points, under the names it exports for interposers.
extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);

void *malloc(size_t n) {
  noteAllocation();
  return __libc_malloc(n);
}
void *calloc(size_t n, size_t size) {
  noteAllocation();
  return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n) {
  noteAllocation();
  return __libc_realloc(p, n);
}
void *aligned_alloc(size_t align, size_t n) {
  noteAllocation();
  return __libc_memalign(align, n);
}
void *memalign(size_t align, size_t n) {
  noteAllocation();
  return __libc_memalign(align, n);
}
int posix_memalign(void **out, size_t align, size_t n) {
  noteAllocation();
  void *p = __libc_memalign(align, n);
  if (!p)
    return 12; // ENOMEM
  *out = p;
  return 0;
}
void free(void *p) { __libc_free(p); }
}
#endif

namespace {
void *countedNew(size_t n) {
  noteAllocation();
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void *countedAlignedNew(size_t n, std::align_val_t align) {
  noteAllocation();
  const size_t a = static_cast<size_t>(align);
  if (void *p = std::aligned_alloc(a, (n + a - 1) / a * a))
    return p;
  throw std::bad_alloc();
}
} // namespace

// With the glibc hooks (not under ASan) each operator new counts twice
// (itself and its malloc); a non-zero count fails either way.
void *operator new(size_t n) { return countedNew(n); }
void *operator new[](size_t n) { return countedNew(n); }
void *operator new(size_t n, const std::nothrow_t &) noexcept {
  noteAllocation();
  return std::malloc(n ? n : 1);
}
void *operator new[](size_t n, const std::nothrow_t &) noexcept {
  noteAllocation();
  return std::malloc(n ? n : 1);
}
void *operator new(size_t n, std::align_val_t a) { return countedAlignedNew(n, a); }
void *operator new[](size_t n, std::align_val_t a) { return countedAlignedNew(n, a); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace mptrt {
namespace test {
namespace {

/// Parallel loops that ran on the pool during the counted runs.
uint64_t pooledWhileCounting = 0;

/// Loads `c` as a one-kernel plan, runs it once, and returns the
/// allocations of a second run (-1 and a failure if it does not run); with
/// `checked`, both runs are mptrt_run_checked.
long allocationsOfSecondRun(const Case &c, bool checked = false) {
  // Longer than std::string's small-buffer: mptrt_run must look it up
  // without building a std::string.
  const std::string entry = "the_entry_point_of_this_kernel";
  const std::vector<uint8_t> bytes = planOf(c, entry);
  Model model;
  if (!model.loadMemory(bytes.data(), bytes.size(), "cpu")) {
    ADD_FAILURE() << describeCase(c) << ": " << lastError();
    return -1;
  }
  for (size_t i = 0; i < c.operands.size(); ++i)
    if (!model.bindInput("in" + std::to_string(i), static_cast<mptrt_dtype>(c.operands[i].dtype),
                         c.operands[i].shape, c.operands[i].bytes.data(),
                         c.operands[i].bytes.size())) {
      ADD_FAILURE() << describeCase(c) << ": " << lastError();
      return -1;
    }
  mptrt_nonfinite first;
  auto run = [&] {
    return checked ? mptrt_run_checked(model.handle(), entry.c_str(), &first) == MPTRT_OK
                   : model.run(entry);
  };
  if (!run()) { // warm-up: the arena, the pool, OpenBLAS, the check's buffers
    ADD_FAILURE() << describeCase(c) << ": " << lastError();
    return -1;
  }
  const uint64_t pooledBefore = rt::cpu::poolStats().pooledLoops;
  allocations = 0;
  counting = true;
  const bool ok = run();
  counting = false;
  pooledWhileCounting += rt::cpu::poolStats().pooledLoops - pooledBefore;
  if (!ok) {
    ADD_FAILURE() << describeCase(c) << ": " << lastError();
    return -1;
  }
  return allocations.load();
}

// Tests that the counting hooks see the allocations they must see (a
// std::vector's buffer, a malloc), so a zero below means something.
TEST(NoAllocation, HooksCountAllocations) {
  allocations = 0;
  counting = true;
  std::vector<float> *v = new std::vector<float>(1000);
  void *p = std::malloc(64);
  counting = false;
  std::free(p);
  delete v;
#if defined(__GLIBC__) && !defined(MPTRT_UNDER_ASAN)
  EXPECT_GE(allocations.load(), 3);
#else
  EXPECT_GE(allocations.load(), 2);
#endif
}

// Tests that a second run of every kernel kind allocates nothing.
TEST(NoAllocation, SecondRunOfEveryKindAllocatesNothing) {
  // Mode: reference, pinned (oneDNN's execute allocates in the fast mode).
  CpuNumericsMode reference("reference");
  for (const Case &c : allCases()) {
    SCOPED_TRACE(describeCase(c));
    const long count = allocationsOfSecondRun(c);
    EXPECT_EQ(count, 0) << describeCase(c) << " allocated in run";
  }
  // The pool's dispatch was among what was counted.
  if (rt::cpu::numThreads() > 1) {
    EXPECT_GT(pooledWhileCounting, 0u);
  }
}

// Tests that a second checked run (docs/runtime.md, "Finding the first
// non-finite kernel") of every kernel kind allocates nothing either.
TEST(NoAllocation, SecondCheckedRunOfEveryKindAllocatesNothing) {
  // Mode: reference, pinned (oneDNN's execute allocates in the fast mode).
  CpuNumericsMode reference("reference");
  for (const Case &c : allCases()) {
    SCOPED_TRACE(describeCase(c));
    EXPECT_EQ(allocationsOfSecondRun(c, /*checked=*/true), 0)
        << describeCase(c) << " allocated in a checked run";
  }
}

/// The workspace bytes of a one-kernel plan (no run).
uint64_t workspaceOf(const Case &c) {
  const std::vector<uint8_t> bytes = planOf(c, "main");
  Model model;
  EXPECT_TRUE(model.loadMemory(bytes.data(), bytes.size(), "cpu")) << lastError();
  return model.workspaceBytes();
}

// Tests the workspace sizes prepare asks for: none for an f32 gemm (it
// works in its tensors), float32 copies of a bf16 matmul's a, b and y, and
// per-thread rows for softmax_grad.
TEST(NoAllocation, WorkspaceIsSizedAtPrepare) {
  // Mode: reference, pinned (oneDNN's execute allocates in the fast mode).
  CpuNumericsMode reference("reference");
  EXPECT_EQ(workspaceOf(make("gemm", {{F32, {64, 256}}, {F32, {256, 128}}}, {{F32, {64, 128}}})),
            0u);
  // a [4, 64, 128], b [128, 96], y [4, 64, 96] as float32, each piece a
  // multiple of 64 bytes.
  EXPECT_EQ(
      workspaceOf(make("matmul", {{BF16, {4, 64, 128}}, {BF16, {128, 96}}}, {{BF16, {4, 64, 96}}})),
      uint64_t{4} * (4 * 64 * 128 + 128 * 96 + 4 * 64 * 96));
  // Per chunk: a row of y and of dy (float) and its offsets (int64).
  EXPECT_EQ(workspaceOf(make("softmax_grad", {{F32, {64, 1024}}, {F32, {64, 1024}}},
                             {{F32, {64, 1024}}}, {aInt("axis", -1)})),
            static_cast<uint64_t>(rt::cpu::numThreads()) * 1024 * (4 + 4 + 8));
}

// Tests that the cases above cover every kernel kind of the CPU backend
// (mptrt_backend_kind_name), so a new kind cannot skip the contract.
TEST(NoAllocation, CasesCoverEveryKind) {
  std::set<std::string> covered;
  for (const Case &c : allCases())
    covered.insert(c.kind);
  size_t count = 0;
  ASSERT_EQ(mptrt_backend_kind_count("cpu", &count), 0) << lastError();
  ASSERT_GT(count, 80u);
  for (size_t i = 0; i < count; ++i) {
    const char *kind = nullptr;
    ASSERT_EQ(mptrt_backend_kind_name("cpu", i, &kind), 0) << lastError();
    EXPECT_TRUE(covered.count(kind)) << "no allocation case for kind '" << kind << "'";
  }
}

} // namespace
} // namespace test
} // namespace mptrt
