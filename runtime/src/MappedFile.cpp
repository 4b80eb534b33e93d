//===- MappedFile.cpp - A file's bytes, mapped read-only -----------------===//

#include "MappedFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define MPTRT_HAVE_MMAP 1
#endif

namespace mptrt {
namespace rt {

MappedFile::~MappedFile() {
#ifdef MPTRT_HAVE_MMAP
  if (mapped_)
    munmap(const_cast<uint8_t *>(mapped_), size_);
#endif
}

Status MappedFile::open(const std::string &path) {
#ifdef MPTRT_HAVE_MMAP
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st{};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    void *p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      ::close(fd);
      mapped_ = static_cast<const uint8_t *>(p);
      size_ = static_cast<size_t>(st.st_size);
      // The loader reads the file from start to end (checksums, then weights).
      madvise(p, size_, MADV_SEQUENTIAL);
      return Status::ok();
    }
  }
  ::close(fd);
#endif
  // Not mappable (empty, a pipe, no mmap): read it.
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return Status::error("cannot open '" + path + "': " + std::strerror(errno));
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    read_.insert(read_.end(), chunk, chunk + n);
  const bool bad = std::ferror(f);
  std::fclose(f);
  if (bad)
    return Status::error("error reading '" + path + "'");
  size_ = read_.size();
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
