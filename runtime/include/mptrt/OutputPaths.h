//===- OutputPaths.h - outputs that spare the inputs ---------------*- C++ -*-===//
//
// A tool's outputs must never destroy its inputs: `mpt-train --metrics
// model.mptp` or `mpt-compile model.onnx -o model.onnx` would. The tools
// (mpt-compile, mpt-train) list what they read and what they write and ask
// findOutputConflict before they touch anything. Two paths are one file
// when they resolve to the same path (through symbolic links, `.` and `..`)
// or to the same inode (hard links). Header-only, C++17 and POSIX: the
// compiler's tools include it as the runtime's do. docs/security.md.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_OUTPUTPATHS_H
#define MPTRT_OUTPUTPATHS_H

#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include <sys/stat.h>

namespace mptrt {

/// A file a tool reads or writes, and what it is to the user ("the plan",
/// "--metrics").
struct PathUse {
  std::string what;
  std::string path;
};

/// Whether `a` and `b` name the same file, existing or not.
inline bool sameFile(const std::string &a, const std::string &b) {
  std::error_code ea, eb;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ea);
  const std::filesystem::path cb = std::filesystem::weakly_canonical(b, eb);
  if (!ea && !eb && ca == cb)
    return true;
  struct stat sa = {}, sb = {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

/// Why the outputs `writes` cannot be written beside the inputs `reads`:
/// an output that is an input (unless `allowed(output, input)`), or two
/// outputs that are one file; "" when there is no conflict. A path "-"
/// (stdout) is no file.
inline std::string
findOutputConflict(const std::vector<PathUse> &reads, const std::vector<PathUse> &writes,
                   const std::function<bool(const PathUse &, const PathUse &)> &allowed = {}) {
  auto describe = [](const PathUse &use) { return use.what + " '" + use.path + "'"; };
  for (size_t w = 0; w < writes.size(); ++w) {
    if (writes[w].path == "-")
      continue;
    for (const PathUse &read : reads) {
      if (allowed && allowed(writes[w], read))
        continue;
      if (sameFile(writes[w].path, read.path))
        return describe(writes[w]) + " names the same file as " + describe(read) +
               ", which is read: refusing to overwrite it";
    }
    for (size_t other = 0; other < w; ++other)
      if (writes[other].path != "-" && sameFile(writes[w].path, writes[other].path))
        return describe(writes[w]) + " and " + describe(writes[other]) + " name the same file";
  }
  return "";
}

} // namespace mptrt

#endif // MPTRT_OUTPUTPATHS_H
