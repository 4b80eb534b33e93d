//===- OptimizerMath.h - the per-element SGD and AdamW updates -------------===//
//
// PyTorch's torch.optim.SGD and AdamW (single-tensor path) for one element,
// written once for the CPU and the CUDA backend (MPTRT_HOST_DEVICE). Both
// backends compile them without contraction (kernels/training/OptimizerKernels.cpp with
// -ffp-contract=off, CUDA with --fmad=false): only the multiply-adds written
// as fma here are fused, as PyTorch's kernels fuse them. Each backend turns
// the step's Python scalars (lr, the bias corrections) into the f32 values
// below in its own way: in double on the host (CPU) or on the device (CUDA).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_KERNELS_TRAINING_OPTIMIZERMATH_H
#define MPTRT_SRC_KERNELS_TRAINING_OPTIMIZERMATH_H

#include "mptrt/Numerics.h" // MPTRT_HOST_DEVICE

#include <cmath>

namespace mptrt {
namespace math {

#if defined(__CUDA_ARCH__)
MPTRT_HOST_DEVICE inline float fusedMulAdd(float a, float b, float c) { return fmaf(a, b, c); }
MPTRT_HOST_DEVICE inline float squareRoot(float x) { return sqrtf(x); }
#else
MPTRT_HOST_DEVICE inline float fusedMulAdd(float a, float b, float c) { return std::fma(a, b, c); }
MPTRT_HOST_DEVICE inline float squareRoot(float x) { return std::sqrt(x); }
#endif

/// sgd_update's step constants, as the f32 kernels receive them.
struct SgdStep {
  bool decay, hasBuffer, nesterov, first; // first: step == 0
  float wd, momentum, bufKeep, negLr;     // bufKeep = 1 - dampening
};

/// One element of sgd_update, g = f32(grad):
///   g = fma(param, wd, g)                                   if wd != 0
///   buf' = first ? g : fma(g, 1 - dampening, buf * momentum)
///   g = nesterov ? fma(buf', momentum, g) : buf'            (with momentum)
///   param' = fma(g, -lr, param)
/// Returns param'; writes buf' (when the step has a buffer).
MPTRT_HOST_DEVICE inline float sgdElement(const SgdStep &s, float w, float g, float buf,
                                          float *bufOut) {
  if (s.decay)
    g = fusedMulAdd(w, s.wd, g);
  if (s.hasBuffer) {
    const float b = s.first ? g : fusedMulAdd(g, s.bufKeep, buf * s.momentum);
    *bufOut = b;
    g = s.nesterov ? fusedMulAdd(b, s.momentum, g) : b;
  }
  return fusedMulAdd(g, s.negLr, w);
}

/// adamw_update's step constants, as the f32 kernels receive them.
struct AdamWStep {
  bool decay, smallWeight; // smallWeight: |1 - beta1| < 0.5 (lerp's branch)
  float decayFactor;       // f32(1 - lr * wd)
  float w1, w1Minus1;      // f32(1 - beta1), and that minus 1
  float beta2, oneMinusBeta2;
  float bc2Sqrt, eps; // f32((1 - beta2^t)^0.5)
  float negStepSize;  // f32(-lr / (1 - beta1^t))
};

/// One element of adamw_update (t = step + 1), g = f32(grad):
///   w = w * decay                                        if wd != 0
///   m = |w1| < 0.5 ? fma(w1, g - m, m) : fma(w1 - 1, g - m, g)   (lerp)
///   v = fma((1 - beta2) * g, g, v * beta2)
///   w = w + (-step_size) * m / (sqrt(v) / bc2_sqrt + eps)
MPTRT_HOST_DEVICE inline void adamwElement(const AdamWStep &s, float g, float *w, float *m,
                                           float *v) {
  if (s.decay)
    *w = *w * s.decayFactor;
  const float diff = g - *m;
  *m = s.smallWeight ? fusedMulAdd(s.w1, diff, *m) : fusedMulAdd(s.w1Minus1, diff, g);
  *v = *v * s.beta2;
  *v = fusedMulAdd(s.oneMinusBeta2 * g, g, *v);
  const float denom = squareRoot(*v) / s.bc2Sqrt + s.eps;
  *w = *w + s.negStepSize * *m / denom;
}

} // namespace math
} // namespace mptrt

#endif // MPTRT_SRC_KERNELS_TRAINING_OPTIMIZERMATH_H
