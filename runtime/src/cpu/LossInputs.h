//===- LossInputs.h - the labels and class weights of a loss ----*- C++ -*-===//
//
// What the CPU losses and their gradients read before computing anything:
// the labels, checked against the class count (a bad label fails the run
// before any result is written), and the per-class weights (1 without a
// weights operand).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_LOSSINPUTS_H
#define MPTRT_SRC_CPU_LOSSINPUTS_H

#include "cpu/Convert.h"
#include "ops/OpParams.h"

#include <algorithm>
#include <string>

namespace mptrt {
namespace rt {
namespace cpu {

/// Widens the N*D labels into `label` and checks each one is a class in
/// [0, C) or the ignore_index.
inline Status loadLabels(const LossCommon &p, const TensorArg &labels, int64_t *label) {
  const int64_t samples = p.N * p.D;
  loadI64(labels.desc->dtype, labels.data, samples, label);
  for (int64_t s = 0; s < samples; ++s) {
    if (p.hasIgnoreIndex && label[s] == p.ignoreIndex)
      continue;
    if (label[s] < 0 || label[s] >= p.C)
      return Status::error("label " + std::to_string(label[s]) + " at sample " + std::to_string(s) +
                           " is outside [0, " + std::to_string(p.C) + ")");
  }
  return Status::ok();
}

/// The C class weights into `weights`: the operand widened, or all 1.
inline void loadClassWeights(const LossCommon &p, const TensorArg *weightsOperand, float *weights) {
  if (p.hasWeights)
    loadF32(weightsOperand->desc->dtype, weightsOperand->data, p.C, weights);
  else
    std::fill(weights, weights + p.C, 1.0f);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_LOSSINPUTS_H
