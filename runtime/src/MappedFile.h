//===- MappedFile.h - A file's bytes, mapped read-only -----------*- C++ -*-===//
//
// Plans are loaded from a read-only mapping of their file, so that loading
// a large plan costs no copy of it: the loader reads the tables and the
// checksums from the mapping, and copies each weight once, into its buffer.
// Where the file cannot be mapped (a pipe, a system without mmap) its bytes
// are read into memory instead.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_MAPPEDFILE_H
#define MPTRT_SRC_MAPPEDFILE_H

#include "Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

class MappedFile {
public:
  MappedFile() = default;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  /// Maps (or reads) the whole file at `path`; fails naming it.
  Status open(const std::string &path);

  const uint8_t *data() const { return mapped_ ? mapped_ : read_.data(); }
  size_t size() const { return size_; }
  /// Whether the bytes are a mapping of the file (false: a copy in memory).
  bool isMapped() const { return mapped_ != nullptr; }

private:
  const uint8_t *mapped_ = nullptr;
  std::vector<uint8_t> read_;
  size_t size_ = 0;
};

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_MAPPEDFILE_H
