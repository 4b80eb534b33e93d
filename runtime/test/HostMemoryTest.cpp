//===- HostMemoryTest.cpp - host buffers sized by a plan fail cleanly ----===//
//
// Tests resizeHostBuffer (runtime/src/HostMemory.h), the one path for host
// buffers whose size comes from a plan or a file: a size beyond the
// machine's memory, a size that overflows, and an allocation the process
// limit refuses (std::bad_alloc, which aborted --check-finite=every-kernel
// and --collect-ranges before: issue 29, finding 7) each give a message
// naming the bytes, never an exception.
//
//===----------------------------------------------------------------------===//
#include "HostMemory.h"
#include "Sanitizers.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

using namespace mptrt::rt;

TEST(HostMemory, FitsAndZeroes) {
  std::vector<float> v;
  Status s = resizeHostBuffer(&v, 1000, "a test buffer");
  ASSERT_TRUE(static_cast<bool>(s)) << s.message();
  EXPECT_EQ(v.size(), 1000u);
  EXPECT_EQ(v[999], 0.0f);
}

TEST(HostMemory, MoreThanTheMachineIsRefused) {
  std::vector<uint8_t> v(3, 7);
  Status s = resizeHostBuffer(&v, 5000, "a copy of the largest result", /*limit=*/4096);
  ASSERT_FALSE(static_cast<bool>(s));
  EXPECT_EQ(s.message(), "cannot allocate 5000 bytes of host memory for a copy of the largest "
                         "result: more than the 4096 bytes this process can use");
  EXPECT_EQ(v, (std::vector<uint8_t>{7, 7, 7})); // untouched
}

TEST(HostMemory, OverflowIsRefused) {
  std::vector<float> v;
  Status s = resizeHostBuffer(&v, UINT64_MAX / 2, "x");
  ASSERT_FALSE(static_cast<bool>(s));
  EXPECT_NE(s.message().find("cannot allocate more than 2^64 bytes of host memory for x"),
            std::string::npos)
      << s.message();
}

// Under an address-space limit (as `prlimit --as` sets), the allocation
// itself fails: the message says so, and the process goes on.
TEST(HostMemory, AllocationFailureIsAMessage) {
  if (mptrt::test::kAddressSanitizer)
    GTEST_SKIP()
        << "caps the address space, which AddressSanitizer's shadow memory cannot live with";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct rlimit limit = {};
    ::getrlimit(RLIMIT_AS, &limit);
    // Leave the current mappings room, refuse 8 GiB more.
    limit.rlim_cur = 4ull << 30;
    if (::setrlimit(RLIMIT_AS, &limit) != 0)
      ::_exit(3);
    std::vector<uint8_t> v;
    Status s = resizeHostBuffer(&v, 8ull << 30, "a test buffer", /*limit=*/0);
    if (s)
      ::_exit(1);
    ::_exit(s.message() ==
                    "cannot allocate 8589934592 bytes of host memory for a test buffer: out of "
                    "memory"
                ? 0
                : 2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: it succeeded, 2: another message, 3: no setrlimit";
}
