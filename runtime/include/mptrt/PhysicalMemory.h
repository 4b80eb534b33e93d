//===- PhysicalMemory.h - the machine's memory, the bound on sizes -*- C++ -*-===//
//
// The physical memory of the machine, and what one allocation of this
// process can get under an address-space limit: the bound that the runtime
// (host buffers sized by a plan, files read, a plan's memory at load) and
// the plan emitter (constants a model asks for) put on a size taken from an
// input. Header only, without MLIR, so both sides include the same
// functions.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PHYSICALMEMORY_H
#define MPTRT_PHYSICALMEMORY_H

#include <cstdint>
#include <cstdio>

#include <sys/resource.h>
#include <unistd.h>

namespace mptrt {

/// Physical memory in bytes, or 0 if the system does not say.
inline uint64_t physicalMemoryBytes() {
  static const uint64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * pageSize : 0;
  }();
  return bytes;
}

/// The most memory one allocation of this process can hope for: the
/// machine's physical memory and, under an address-space limit (`ulimit
/// -v`, `prlimit --as`, a batch scheduler's), what the limit leaves beside
/// the address space already mapped. 0 if neither is known. A size taken
/// from an input is checked against this before it is allocated, so that a
/// limit gives a message naming the size instead of an allocation failure
/// (or LLVM's "out of memory" abort) somewhere later. Not cached: a test or
/// a launcher may set the limit at any time.
inline uint64_t allocatableBytes() {
  uint64_t bound = physicalMemoryBytes();
  struct rlimit limit = {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return bound;
  uint64_t mapped = 0;
  if (std::FILE *f = std::fopen("/proc/self/statm", "r")) {
    unsigned long long pages = 0;
    if (std::fscanf(f, "%llu", &pages) == 1)
      mapped = pages * static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
    std::fclose(f);
  }
  const uint64_t cap = static_cast<uint64_t>(limit.rlim_cur);
  // 1, not 0 (which means "unknown"), when the limit is used up.
  const uint64_t left = cap > mapped ? cap - mapped : 1;
  return bound == 0 || left < bound ? left : bound;
}

} // namespace mptrt

#endif // MPTRT_PHYSICALMEMORY_H
