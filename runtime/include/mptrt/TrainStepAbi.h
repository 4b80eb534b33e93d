//===- TrainStepAbi.h - the names of the train_step ABI ----------*- C++ -*-===//
//
// The names through which a training plan's entry points and state are
// found, and the roles by which its outputs are: the compiler
// (--build-training-step) creates them, and mpt-train, the Python package
// and the checkpoints look them up. Each name
// is said here once; docs/training.md describes the ABI. Header-only, C++17
// standard library alone (the compiler includes it without the runtime).
//
// Changing a name here changes every plan and checkpoint that holds it.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAINSTEPABI_H
#define MPTRT_TRAINSTEPABI_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mptrt::abi {

//===--- Entry points -----------------------------------------------------===//

/// The training step: forward, gradients, loss scaling, the optimizer
/// update; it reads and writes every state parameter below.
inline constexpr const char *kTrainEntry = "train_step";
/// The forward pass and the loss, no update, beside train_step (the
/// compiler's default eval-entry; it reads train_step's parameters).
inline constexpr const char *kEvalEntry = "eval_step";

//===--- Outputs ----------------------------------------------------------===//

/// What an entry point's output is. The plan records each output's role
/// (docs/plan-format.md: the values are the role bytes of format version 4,
/// and the C API's mptrt_output_role), so that a consumer finds an output by
/// its role, never by its name. Loss to Lr are train_step's outputs, in the
/// order the compiler returns them, before the gradients of emit-gradients
/// and the new state.
enum class OutputRole : uint8_t {
  /// No role in the ABI: any other output (a forward function's outputs).
  None = 0,
  /// f32 0-d: the loss, unscaled (eval_step's first output too).
  Loss = 1,
  /// i1 0-d: true when the gradient was not finite and the update skipped.
  Skipped = 2,
  /// f32 0-d: the global L2 norm of the unscaled gradients, before clipping.
  GradNorm = 3,
  /// f32 0-d: the loss scale this step used (1 without loss scaling).
  LossScale = 4,
  /// f32 0-d: the learning rate this step used (after the schedule).
  Lr = 5,
  /// emit-gradients: a parameter's unscaled, unclipped gradient (f32, the
  /// parameter's shape), named `grad.<p>` (kGradientOutputPrefix); any
  /// number of an entry point's outputs may have it.
  Gradient = 6,
};

/// The largest role value; a role byte above it is invalid.
inline constexpr uint8_t kMaxOutputRole = 6;

/// Whether `v` is a role's value.
constexpr bool isValidOutputRole(uint8_t v) { return v <= kMaxOutputRole; }

/// The roles of train_step's one-value outputs (each at most once per
/// entry point).
inline constexpr std::size_t kOutputRoleCount = 5;

/// Those roles, in output order.
inline constexpr std::array<OutputRole, kOutputRoleCount> kOutputRoles = {
    OutputRole::Loss, OutputRole::Skipped, OutputRole::GradNorm, OutputRole::LossScale,
    OutputRole::Lr};

/// The index of one of kOutputRoles in it (for arrays of one per role).
constexpr std::size_t outputRoleIndex(OutputRole role) {
  return static_cast<std::size_t>(role) - static_cast<std::size_t>(OutputRole::Loss);
}

/// The output name the compiler gives `role`: one of kOutputRoles' names,
/// or "" for None and Gradient, which have none of their own.
constexpr const char *outputName(OutputRole role) {
  switch (role) {
  case OutputRole::Loss:
    return "loss";
  case OutputRole::Skipped:
    return "skipped";
  case OutputRole::GradNorm:
    return "grad_norm";
  case OutputRole::LossScale:
    return "loss_scale";
  case OutputRole::Lr:
    return "lr";
  case OutputRole::None:
  case OutputRole::Gradient:
    break;
  }
  return "";
}

/// emit-gradients: output `grad.<p>` is parameter p's gradient (role
/// Gradient), after the outputs above.
inline constexpr const char *kGradientOutputPrefix = "grad.";

/// The role's name, for messages and the Python package: its output name
/// ("loss", "grad_norm", ...), "gradient" or "none".
constexpr const char *roleName(OutputRole role) {
  switch (role) {
  case OutputRole::None:
    return "none";
  case OutputRole::Gradient:
    return "gradient";
  default:
    return outputName(role);
  }
}

/// The role an output named `name` has by name alone: how plans of format
/// version 3 and older, which record no roles, are read (their outputs were
/// found by these names). Nothing else should look roles up by name.
constexpr OutputRole legacyOutputRole(std::string_view name) {
  for (OutputRole role : kOutputRoles)
    if (name == outputName(role))
      return role;
  const std::string_view prefix = kGradientOutputPrefix;
  if (name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix)
    return OutputRole::Gradient;
  return OutputRole::None;
}

namespace detail {
constexpr bool outputRolesAreInOrder() {
  for (std::size_t i = 0; i < kOutputRoleCount; ++i)
    if (outputRoleIndex(kOutputRoles[i]) != i)
      return false;
  return true;
}
constexpr bool outputNamesRoundTrip() {
  for (OutputRole role : kOutputRoles)
    if (legacyOutputRole(outputName(role)) != role)
      return false;
  return true;
}
} // namespace detail
static_assert(detail::outputRolesAreInOrder(), "kOutputRoles follow the role values");
static_assert(detail::outputNamesRoundTrip(), "every output role has its own name");

//===--- State parameters -------------------------------------------------===//

/// i64 0-d, initial 0, never updated: the seed of training-mode dropout
/// and stochastic rounding (mpt-train --seed binds it); only in plans with
/// either.
inline constexpr const char *kTrainSeed = "train.seed";
/// i64 0-d, initial 0: the steps run, skipped ones included (the learning
/// rate schedule and dropout read it).
inline constexpr const char *kTrainStep = "train.step";
/// i64 0-d, initial 0: the optimizer updates made, skipped steps not
/// counted (the optimizer update reads it: AdamW's bias correction).
inline constexpr const char *kOptimizerStep = "optimizer.step";
/// f32 0-d, initial 1, never updated (settable-lr): the learning rate of
/// each step is the schedule's times this, which a caller may set between
/// steps (Python's mpt.torch.Trainer.lr) instead of recompiling.
inline constexpr const char *kLrScale = "optimizer.lr_scale";
/// f32 0-d: the loss scale (loss-scale=dynamic or static:S; initial
/// init-scale or S).
inline constexpr const char *kLossScaleScale = "loss_scale.scale";
/// i64 0-d, initial 0: finite steps since the scale last changed
/// (loss-scale=dynamic).
inline constexpr const char *kLossScaleGrowthTracker = "loss_scale.growth_tracker";

/// Per-parameter optimizer state, named `<p><suffix>` for parameter p:
/// f32, p's shape, initial 0.
/// AdamW's first moment.
inline constexpr const char *kExpAvgSuffix = ".exp_avg";
/// AdamW's second moment.
inline constexpr const char *kExpAvgSqSuffix = ".exp_avg_sq";
/// SGD with momentum's buffer.
inline constexpr const char *kMomentumBufferSuffix = ".momentum_buffer";

/// FP8 scaling (precision=fp8): a scaled tensor t has the scale
/// `<t>.fp8_scale` (f32 0-d, initial 1) and, unless fp8-scaling=none, the
/// amax history `<t>.amax_history` (f32, [fp8-amax-history], or [1] with
/// current scaling; initial 0).
inline constexpr const char *kFP8ScaleSuffix = ".fp8_scale";
inline constexpr const char *kAmaxHistorySuffix = ".amax_history";
/// The tensor name t of a gradient's FP8 scale: `<node>.grad`, or
/// `<node>.grad#<n>` for the n-th other gradient of the same node.
inline constexpr const char *kFP8GradientSuffix = ".grad";

} // namespace mptrt::abi

#endif // MPTRT_TRAINSTEPABI_H
