//===- TensorFile.cpp - pick the reader for a tensor file ----------------===//
#include "TensorFile.h"

#include "mptrt/ReadFile.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace mptrt {
namespace tools {

bool splitBinding(const std::string &text, std::pair<std::string, std::string> *out) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return false;
  *out = {text.substr(0, eq), text.substr(eq + 1)};
  return true;
}

bool readTensorFile(const std::string &path, FileTensor *out, std::string *error,
                    const TensorFileCheck &check) {
  auto fail = [&](const std::string &message) {
    *error = path + ": " + message;
    return false;
  };
  RegularFile file;
  if (!file.open(path, error))
    return false;
  std::vector<uint8_t> prefix;
  if (!file.read(0, std::min<uint64_t>(file.size(), 4096), &prefix, error))
    return false;
  auto endsWith = [&](const char *ext) {
    const size_t n = std::strlen(ext);
    return path.size() >= n && path.compare(path.size() - n, n, ext) == 0;
  };
  std::string message;
  if ((prefix.size() >= 6 && std::memcmp(prefix.data(), "\x93NUMPY", 6) == 0) || endsWith(".npy")) {
    uint64_t offset = 0, needed = 0;
    if (!parseNpyHeader(prefix.data(), prefix.size(), file.size(), out, &offset, &needed,
                        &message)) {
      if (needed == 0)
        return fail(message);
      // A header longer than the first read: read it whole, once.
      if (!file.read(0, needed, &prefix, error))
        return false;
      if (!parseNpyHeader(prefix.data(), prefix.size(), file.size(), out, &offset, &needed,
                          &message))
        return fail(message);
    }
    if (check && !check(*out, &message))
      return fail(message);
    return file.read(offset, file.size() - offset, &out->bytes, error);
  }
  if (!endsWith(".pb"))
    return fail("neither a .npy file (no \\x93NUMPY magic) nor a .pb TensorProto");
  std::vector<uint8_t> bytes;
  if (!file.read(0, file.size(), &bytes, error))
    return false;
  if (!parseTensorProto(bytes, out, &message))
    return fail(message);
  if (check && !check(*out, &message))
    return fail(message);
  return true;
}

} // namespace tools
} // namespace mptrt
