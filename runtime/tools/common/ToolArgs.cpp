//===- ToolArgs.cpp - Command-line walking shared by the runtime tools ----===//

#include "ToolArgs.h"

#include "TensorFile.h"

namespace mptrt::tools {

bool parseWholeNumber(const std::string &text, uint64_t min, uint64_t max, uint64_t *out) {
  if (text.empty() || text.size() > 19) // 19 digits cannot overflow uint64_t
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v < min || v > max)
    return false;
  *out = v;
  return true;
}

bool ArgWalker::next() {
  if (index_ + 1 >= argc_)
    return false;
  arg_ = argv_[++index_];
  return true;
}

bool ArgWalker::value(std::string *out) {
  if (index_ + 1 >= argc_)
    return false;
  *out = argv_[++index_];
  return true;
}

bool ArgWalker::binding(std::vector<std::pair<std::string, std::string>> *list) {
  std::string v;
  std::pair<std::string, std::string> named;
  if (!value(&v) || !splitBinding(v, &named))
    return false;
  list->push_back(std::move(named));
  return true;
}

bool ArgWalker::number(uint64_t min, uint64_t max, uint64_t *out, std::string *error) {
  std::string v;
  if (!value(&v)) {
    *error = "option '" + arg_ + "' needs a value";
    return false;
  }
  if (!parseWholeNumber(v, min, max, out)) {
    *error = "option '" + arg_ + "' needs a whole number from " + std::to_string(min) + " to " +
             std::to_string(max) + ", not '" + v + "'";
    return false;
  }
  return true;
}

} // namespace mptrt::tools
