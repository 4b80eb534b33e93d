//===- ReadFile.h - read a whole input file, bounded ---------------*- C++ -*-===//
//
// How the runtime and its tools read a whole data or checkpoint file: only
// a regular file (`/dev/zero`, a FIFO or a directory is refused, instead of
// being read forever or without bound), no larger than the machine's
// memory (refused with both sizes named, instead of std::bad_alloc or the
// OOM killer), read into a buffer of exactly its size (no doubling while it
// grows). Issue 29, finding 4; docs/security.md. Header-only, C++17 and
// POSIX.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_READFILE_H
#define MPTRT_READFILE_H

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "mptrt/PhysicalMemory.h"

#include <sys/stat.h>
#include <unistd.h>

namespace mptrt {

/// Reads the regular file at `path` into `*bytes`. `limit` is the largest
/// size accepted (0: the machine's physical memory).
inline bool readRegularFile(const std::string &path, std::vector<uint8_t> *bytes,
                            std::string *error, uint64_t limit = 0) {
  if (limit == 0)
    limit = physicalMemoryBytes() ? physicalMemoryBytes() : UINT64_MAX;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    *error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  struct stat st = {};
  if (::fstat(::fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(f);
    *error = "'" + path + "' is not a regular file";
    return false;
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > limit) {
    std::fclose(f);
    *error = "'" + path + "' has " + std::to_string(size) + " bytes, more than the " +
             std::to_string(limit) + " bytes of memory this machine has";
    return false;
  }
  bytes->clear();
  bytes->shrink_to_fit();
  try {
    bytes->resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc &) {
    std::fclose(f);
    *error = "cannot allocate " + std::to_string(size) + " bytes to read '" + path + "'";
    return false;
  }
  const size_t got = size ? std::fread(bytes->data(), 1, bytes->size(), f) : 0;
  // A file that grew or shrank since fstat reads as what it was then, or
  // fails here.
  const bool bad = std::ferror(f) || got != bytes->size();
  std::fclose(f);
  if (bad) {
    *error = "error reading '" + path + "'";
    return false;
  }
  return true;
}

} // namespace mptrt

#endif // MPTRT_READFILE_H
