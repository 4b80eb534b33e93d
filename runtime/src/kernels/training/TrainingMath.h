//===- TrainingMath.h - the loss-scale update and the LR schedules --------===//
//
// The scalar rules of the training step's 0-d kernels, written once for the
// CPU and the CUDA backend (MPTRT_HOST_DEVICE). Each backend compiles them
// with its own flags: kernels/training/TrainingKernels.cpp with -ffp-contract=off, CUDA
// with nvcc's defaults.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_KERNELS_TRAINING_TRAININGMATH_H
#define MPTRT_SRC_KERNELS_TRAINING_TRAININGMATH_H

#include "mptrt/Numerics.h" // MPTRT_HOST_DEVICE, bitsOfF32
#include "ops/Training.h"   // LossScaleParams, LrScheduleParams

#include <cmath>
#include <cstdint>

namespace mptrt {
namespace math {

/// Whether a float32 is finite (neither infinite nor NaN).
MPTRT_HOST_DEVICE inline bool finiteF32(float x) {
  return (numerics::bitsOfF32(x) & 0x7f800000u) != 0x7f800000u;
}

/// update_loss_scale, as PyTorch's _amp_update_scale_:
///   not finite: scale = f32(scale * backoff), tracker = 0
///   finite:     tracker + 1 == growth_interval ? (scale = f32(scale * growth)
///               if that is finite; tracker = 0) : tracker += 1
MPTRT_HOST_DEVICE inline void updateLossScale(const rt::LossScaleParams &p, bool finite,
                                              float *scale, int64_t *tracker) {
  if (!finite) {
    *scale = static_cast<float>(static_cast<double>(*scale) * p.backoffFactor);
    *tracker = 0;
    return;
  }
  // (Wrapping, not signed overflow, for a corrupt tracker of INT64_MAX.)
  const int64_t successful = static_cast<int64_t>(static_cast<uint64_t>(*tracker) + 1);
  if (successful == p.growthInterval) {
    const float grown = static_cast<float>(static_cast<double>(*scale) * p.growthFactor);
    if (finiteF32(grown))
      *scale = grown;
    *tracker = 0;
  } else {
    *tracker = successful;
  }
}

/// lr_schedule at step s, in double, rounded once to f32 by the caller:
///   constant:      lr
///   warmup_cosine: s < warmup: lr * (s + 1) / warmup
///                  else p = min(1, (s - warmup) / max(1, total - warmup)),
///                       min_lr + 0.5 * (1 + cos(pi p)) * (lr - min_lr)
/// `cosine` is the libm's double cos (std::cos on the CPU, CUDA's cos).
template <class Cos>
MPTRT_HOST_DEVICE inline double lrAt(const rt::LrScheduleParams &p, int64_t s, Cos cosine) {
  if (!p.warmupCosine)
    return p.lr;
  if (s < p.warmupSteps)
    return p.lr * (static_cast<double>(s) + 1) / static_cast<double>(p.warmupSteps);
  const int64_t spanSteps = p.totalSteps - p.warmupSteps;
  const double span = static_cast<double>(spanSteps > 1 ? spanSteps : int64_t{1});
  const double q = static_cast<double>(s - p.warmupSteps) / span;
  const double progress = q < 1.0 ? q : 1.0;
  const double pi = 3.14159265358979323846;
  return p.minLr + 0.5 * (1 + cosine(pi * progress)) * (p.lr - p.minLr);
}

} // namespace math
} // namespace mptrt

#endif // MPTRT_SRC_KERNELS_TRAINING_TRAININGMATH_H
