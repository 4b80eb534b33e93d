//===- LastError.h - the C API's per-thread error message -------*- C++ -*-===//
//
// For C API functions implemented outside CApi.cpp (train/CApi.cpp): sets
// the message mptrt_last_error() returns and gives back MPTRT_ERROR.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_LASTERROR_H
#define MPTRT_SRC_LASTERROR_H

#include <string>

namespace mptrt {
namespace rt {

int setLastError(const std::string &message);

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_LASTERROR_H
