//===- ReadFile.h - read an input file, bounded --------------------*- C++ -*-===//
//
// How the runtime and its tools read a data or checkpoint file: only
// a regular file (`/dev/zero`, a FIFO or a directory is refused, instead of
// being read forever or without bound), no larger than the machine's
// memory (refused with both sizes named, instead of std::bad_alloc or the
// OOM killer), read whole or by ranges into buffers of exactly their size
// (no doubling while they grow), so that a reader can check a header
// against the file's size before it allocates for the rest. Issue 29,
// finding 4; docs/security.md. Header-only, C++17 and
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

/// An open regular file of a known size, read by ranges: the readers check
/// what a file's header declares against its size before they allocate for
/// the rest. Refuses anything but a regular file (`/dev/zero`, a FIFO, a
/// directory) and a file larger than `limit` (0: what this process can
/// allocate, mptrt::allocatableBytes), naming the path and both sizes.
class RegularFile {
public:
  RegularFile() = default;
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;
  ~RegularFile() {
    if (file_)
      std::fclose(file_);
  }

  bool open(const std::string &path, std::string *error, uint64_t limit = 0) {
    path_ = path;
    if (limit == 0)
      limit = allocatableBytes() ? allocatableBytes() : UINT64_MAX;
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) {
      *error = "cannot open '" + path + "': " + std::strerror(errno);
      return false;
    }
    struct stat st = {};
    if (::fstat(::fileno(file_), &st) != 0 || !S_ISREG(st.st_mode)) {
      *error = "'" + path + "' is not a regular file";
      return false;
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > limit) {
      *error = "'" + path + "' has " + std::to_string(size_) + " bytes, more than the " +
               std::to_string(limit) + " bytes of memory this process can use";
      return false;
    }
    return true;
  }

  uint64_t size() const { return size_; }

  /// Reads bytes [offset, offset + count) into `*bytes`, allocated at
  /// exactly that size; a file that shrank since open fails here.
  bool read(uint64_t offset, uint64_t count, std::vector<uint8_t> *bytes, std::string *error) {
    if (offset > size_ || count > size_ - offset) {
      *error = "'" + path_ + "' has " + std::to_string(size_) + " bytes; bytes [" +
               std::to_string(offset) + ", " + std::to_string(offset + count) + ") were asked for";
      return false;
    }
    bytes->clear();
    bytes->shrink_to_fit();
    try {
      bytes->resize(static_cast<size_t>(count));
    } catch (const std::bad_alloc &) {
      *error = "cannot allocate " + std::to_string(count) + " bytes to read '" + path_ + "'";
      return false;
    }
    if (count == 0)
      return true;
    const bool bad = ::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0 ||
                     std::fread(bytes->data(), 1, bytes->size(), file_) != bytes->size();
    if (bad) {
      *error = "error reading '" + path_ + "'";
      return false;
    }
    return true;
  }

private:
  std::FILE *file_ = nullptr;
  std::string path_;
  uint64_t size_ = 0;
};

/// Reads the regular file at `path` into `*bytes` (RegularFile's checks).
/// `limit` is the largest size accepted (0: what this process can allocate).
inline bool readRegularFile(const std::string &path, std::vector<uint8_t> *bytes,
                            std::string *error, uint64_t limit = 0) {
  RegularFile file;
  return file.open(path, error, limit) && file.read(0, file.size(), bytes, error);
}

} // namespace mptrt

#endif // MPTRT_READFILE_H
