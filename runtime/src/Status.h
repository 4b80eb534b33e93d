//===- Status.h - success or an error message --------------------*- C++ -*-===//
//
// The runtime reports every failure as a message and never throws, so it
// builds with -fno-exceptions like the compiler side.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_STATUS_H
#define MPTRT_SRC_STATUS_H

#include <string>
#include <utility>

namespace mptrt {
namespace rt {

class [[nodiscard]] Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.text = std::move(message);
    return s;
  }

  /// True on success: `if (Status s = f(); !s) return s;`.
  explicit operator bool() const { return !failed; }
  const std::string &message() const { return text; }

  /// Prefixes the message of a failure with `context + ": "`.
  Status withContext(const std::string &context) const {
    if (!failed)
      return *this;
    return error(context + ": " + text);
  }

private:
  bool failed = false;
  std::string text;
};

} // namespace rt
} // namespace mptrt

/// Returns from the enclosing function if `expr` (a Status) failed.
#define MPTRT_TRY(expr)                                                                            \
  do {                                                                                             \
    ::mptrt::rt::Status mptrtTryStatus = (expr);                                                   \
    if (!mptrtTryStatus)                                                                           \
      return mptrtTryStatus;                                                                       \
  } while (0)

#endif // MPTRT_SRC_STATUS_H
