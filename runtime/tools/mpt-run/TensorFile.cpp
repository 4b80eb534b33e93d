//===- TensorFile.cpp - pick the reader for a tensor file ----------------===//
#include "TensorFile.h"

#include "mptrt/ReadFile.h"

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

bool readTensorFile(const std::string &path, FileTensor *out, std::string *error) {
  std::vector<uint8_t> bytes;
  if (!readRegularFile(path, &bytes, error))
    return false;
  auto endsWith = [&](const char *ext) {
    const size_t n = std::strlen(ext);
    return path.size() >= n && path.compare(path.size() - n, n, ext) == 0;
  };
  const bool isNpy =
      (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0) || endsWith(".npy");
  const bool isPb = endsWith(".pb");
  std::string message;
  bool ok;
  if (isNpy)
    ok = parseNpy(std::move(bytes), out, &message);
  else if (isPb)
    ok = parseTensorProto(bytes, out, &message);
  else {
    ok = false;
    message = "neither a .npy file (no \\x93NUMPY magic) nor a .pb TensorProto";
  }
  if (!ok)
    *error = path + ": " + message;
  return ok;
}

} // namespace tools
} // namespace mptrt
