//===- InputFiles.h - mpt-train's data files ----------------------*- C++ -*-===//
//
// mpt-train reads its arrays (--input, --eval-input, --param) from .npy or
// ONNX TensorProto .pb files (TensorFile.h) and hands them to the training
// library (mptrt/train.hpp) in memory.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPTTRAIN_INPUTFILES_H
#define MPTRT_TOOLS_MPTTRAIN_INPUTFILES_H

#include "mptrt/train.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace mptrt {
namespace tools {

/// Reads a .npy or .pb file into an array whose source is `file`.
bool readArrayFile(const std::string &file, train::Array *out, std::string *error);

/// How loadInputFiles ended: every input has its data, or the message is
/// an error (exit 1) or a usage error (exit 2).
enum class LoadOutcome { Ok, Error, Usage };

/// An entry point's inputs and the (NAME, FILE) pairs of `flag`: checks
/// that every pair names an input, once, and every input has a pair, then
/// reads each input's file in the entry's order and hands it to `set`.
/// `missingTail` ends the message for an input without a file;
/// `duplicateIsUsage` makes a repeated NAME a usage error.
struct InputFileSet {
  std::string entry, flag, missingTail;
  bool duplicateIsUsage = false;
  std::vector<std::string> names;
  std::vector<TensorInfo> info;
};
LoadOutcome
loadInputFiles(const InputFileSet &set,
               const std::vector<std::pair<std::string, std::string>> &files,
               const std::function<bool(const std::string &, train::Array, std::string *)> &give,
               std::string *message);

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPTTRAIN_INPUTFILES_H
