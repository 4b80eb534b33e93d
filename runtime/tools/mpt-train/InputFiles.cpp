//===- InputFiles.cpp - mpt-train's data files ---------------------------===//
#include "InputFiles.h"

#include "TensorFile.h"

#include <map>

namespace mptrt {
namespace tools {
bool readArrayFile(const std::string &file, train::Array *out, std::string *error) {
  FileTensor tensor;
  if (!readTensorFile(file, &tensor, error))
    return false;
  out->source = file;
  out->typeName = std::move(tensor.typeName);
  out->dtypes = std::move(tensor.compatible);
  out->shape = std::move(tensor.shape);
  out->bytes = std::move(tensor.bytes);
  return true;
}

LoadOutcome
loadInputFiles(const InputFileSet &set,
               const std::vector<std::pair<std::string, std::string>> &files,
               const std::function<bool(const std::string &, train::Array, std::string *)> &give,
               std::string *message) {
  std::map<std::string, std::string> byName;
  for (const auto &[name, file] : files) {
    bool listed = false;
    for (const std::string &n : set.names)
      listed = listed || n == name;
    if (!listed) {
      *message = "entry point '" + set.entry + "' has no input named '" + name +
                 "' (its inputs: " + train::joinNames(set.names) + ")";
      return LoadOutcome::Error;
    }
    if (!byName.emplace(name, file).second) {
      *message = set.flag + " " + name + " given twice";
      return set.duplicateIsUsage ? LoadOutcome::Usage : LoadOutcome::Error;
    }
  }
  for (size_t i = 0; i < set.names.size(); ++i) {
    const std::string &name = set.names[i];
    auto it = byName.find(name);
    if (it == byName.end()) {
      *message = "entry point '" + set.entry + "' needs " + set.flag + " " + name +
                 "=FILE (a batch is " + train::describeType(set.info[i].dtype, set.info[i].shape) +
                 ")" + set.missingTail;
      return LoadOutcome::Error;
    }
    train::Array array;
    if (!readArrayFile(it->second, &array, message)) {
      *message = "input '" + name + "': " + *message;
      return LoadOutcome::Error;
    }
    if (!give(name, std::move(array), message))
      return LoadOutcome::Error;
  }
  return LoadOutcome::Ok;
}

} // namespace tools
} // namespace mptrt
