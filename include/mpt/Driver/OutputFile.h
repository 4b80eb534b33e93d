//===- OutputFile.h - outputs that replace a file only when complete -*- C++
//-*-===//
//
// How the compiler's tools write a file: into a temporary file beside it,
// renamed over it once complete, so that an output that fails (an error,
// running out of memory, a signal) leaves what was there as it was, and a
// symbolic link is written through to its target, which stays a link's
// target. A character device (`-o /dev/null`) is written in place, never
// replaced; a directory, FIFO, socket or block device is refused. "-" is
// stdout. Issue 29, findings 2 and 3; docs/security.md.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_DRIVER_OUTPUTFILE_H
#define MPT_DRIVER_OUTPUTFILE_H

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace mpt::driver {

class OutputFile {
public:
  /// Opens `path` for writing as above; null with a message naming it.
  static std::unique_ptr<OutputFile> open(llvm::StringRef path,
                                          std::string *error);
  ~OutputFile();

  llvm::raw_ostream &os() { return *stream; }
  /// Flushes and puts the file in place; false with a message naming it.
  bool commit(std::string *error);

private:
  OutputFile() = default;
  std::string path;   // as given, for messages
  std::string target; // where the bytes end up (a link's target)
  std::optional<llvm::sys::fs::TempFile> temp;
  std::unique_ptr<llvm::raw_fd_ostream> owned;
  llvm::raw_ostream *stream = nullptr;
};

} // namespace mpt::driver

#endif // MPT_DRIVER_OUTPUTFILE_H
