//===- PhysicalMemory.h - the machine's memory, the bound on sizes -*- C++ -*-===//
//
// The physical memory of the machine, which the runtime (host buffers sized
// by a plan, files read whole) and the plan emitter (constants a model asks
// for) take as the bound on what a size taken from an input may be. Header
// only, without MLIR, so both sides include the same function.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PHYSICALMEMORY_H
#define MPTRT_PHYSICALMEMORY_H

#include <cstdint>

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

} // namespace mptrt

#endif // MPTRT_PHYSICALMEMORY_H
