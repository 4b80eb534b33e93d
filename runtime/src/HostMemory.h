//===- HostMemory.h - host buffers sized by a plan, checked -------*- C++ -*-===//
//
// A buffer whose size comes from a plan (a tensor's bytes) or a file is
// asked for through resizeHostBuffer, which fails with a message naming
// the bytes rather than throwing std::bad_alloc (which aborted the checked
// and observed runs: issue 29, finding 7) or, with memory overcommit,
// waking the OOM killer when the zeroed pages are touched.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_HOSTMEMORY_H
#define MPTRT_SRC_HOSTMEMORY_H

#include "Status.h"

#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "mptrt/PhysicalMemory.h"

namespace mptrt {
namespace rt {

using mptrt::allocatableBytes;

/// Resizes `*buffer` to `count` elements, for `what` (said in the message);
/// fails, naming the bytes, when they exceed what this process can allocate
/// (mptrt::allocatableBytes) or the allocation fails. `limit` replaces that
/// bound (tests; 0: none).
template <typename T>
Status resizeHostBuffer(std::vector<T> *buffer, uint64_t count, const std::string &what,
                        uint64_t limit = allocatableBytes()) {
  const bool overflows = count > std::numeric_limits<uint64_t>::max() / sizeof(T);
  const uint64_t bytes = overflows ? std::numeric_limits<uint64_t>::max() : count * sizeof(T);
  auto fail = [&](const std::string &why) {
    return Status::error("cannot allocate " +
                         (overflows ? "more than 2^64" : std::to_string(bytes)) +
                         " bytes of host memory for " + what + ": " + why);
  };
  if (limit != 0 && bytes > limit)
    return fail("more than the " + std::to_string(limit) + " bytes this process can use");
  try {
    buffer->resize(static_cast<size_t>(count));
  } catch (const std::bad_alloc &) {
    return fail("out of memory");
  } catch (const std::length_error &) {
    return fail("too large");
  }
  return Status::ok();
}

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_HOSTMEMORY_H
