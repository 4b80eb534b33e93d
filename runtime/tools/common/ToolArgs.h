//===- ToolArgs.h - Command-line walking shared by the runtime tools ------===//
//
// mpt-run and mpt-train parse their command lines by hand (runtime/ has no
// option library). ArgWalker holds what their loops share: the option at
// hand, taking its value, NAME=FILE bindings and bounded whole numbers.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_TOOLARGS_H
#define MPTRT_TOOLS_TOOLARGS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mptrt::tools {

/// Parses decimal digits only (no sign, no spaces) into [min, max].
bool parseWholeNumber(const std::string &text, uint64_t min, uint64_t max, uint64_t *out);

/// Walks argv one option at a time.
class ArgWalker {
public:
  ArgWalker(int argc, char **argv) : argc_(argc), argv_(argv) {}

  /// Moves to the next argument; false past the last one.
  bool next();
  /// The argument at hand.
  const std::string &arg() const { return arg_; }

  /// Takes the next argument as the value of the option at hand; false when
  /// there is none.
  bool value(std::string *out);
  /// Takes a NAME=FILE value and appends it to `list`; false when the value
  /// is missing or is not NAME=FILE.
  bool binding(std::vector<std::pair<std::string, std::string>> *list);
  /// Takes a whole number in [min, max]; false with `*error` saying what the
  /// option needs when the value is missing or out of range.
  bool number(uint64_t min, uint64_t max, uint64_t *out, std::string *error);

private:
  int argc_;
  char **argv_;
  int index_ = 0;
  std::string arg_;
};

} // namespace mptrt::tools

#endif // MPTRT_TOOLS_TOOLARGS_H
