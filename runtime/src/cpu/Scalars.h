//===- Scalars.h - 0-d tensors in host memory, read and written --*- C++ -*-===//
//
// The training kernels' scalar operands and results (loss scale, lr, step
// counters, the finite flag) as the CPU backend holds them: one element in
// host memory. memcpy, so no alignment or aliasing is assumed.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_SCALARS_H
#define MPTRT_SRC_CPU_SCALARS_H

#include "TensorDesc.h"

#include <cstdint>
#include <cstring>

namespace mptrt {
namespace rt {
namespace cpu {

inline float readF32(const TensorArg &t) {
  float v;
  std::memcpy(&v, t.data, sizeof v);
  return v;
}
inline int64_t readI64(const TensorArg &t) {
  int64_t v;
  std::memcpy(&v, t.data, sizeof v);
  return v;
}
inline bool readI1(const TensorArg &t) { return *static_cast<const uint8_t *>(t.data) != 0; }
inline void writeF32(const TensorArg &t, float v) { std::memcpy(t.data, &v, sizeof v); }
inline void writeI64(const TensorArg &t, int64_t v) { std::memcpy(t.data, &v, sizeof v); }

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_SCALARS_H
