//===- WholeTensor.h - whole-tensor helpers of the CPU kernels ---*- C++ -*-===//
//
// What several kernel families do to a whole tensor argument: widen it into
// float32 scratch (per-channel parameters, statistics, an upstream
// gradient) or zero it before a kernel scatters into it.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_WHOLETENSOR_H
#define MPTRT_SRC_CPU_WHOLETENSOR_H

#include "cpu/Convert.h"

#include <cstring>

namespace mptrt {
namespace rt {
namespace cpu {

/// A whole tensor widened to float32 into `dst` (numel floats).
inline const float *widen(const TensorArg &t, float *dst) {
  loadF32(t.desc->dtype, t.data, t.desc->numel, dst);
  return dst;
}

/// Zero bytes are +0.0 in every float format.
inline void zeroFill(const TensorArg &t) {
  if (t.desc->bytes)
    std::memset(t.data, 0, t.desc->bytes);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_WHOLETENSOR_H
