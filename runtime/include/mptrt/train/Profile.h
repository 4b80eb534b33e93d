//===- Profile.h - per-kernel profile (mpt-train --profile) ------*- C++ -*-===//
//
// Where a step's time goes, kernel by kernel: each profiled step runs the
// entry point with mptrt_run_profiled (never a replayed CUDA graph; the
// backend's clock between kernels: host wall time on the CPU, CUDA events
// on a GPU), and the times add up per kernel over the steps. The summary
// groups them by kernel kind and by originating ONNX node and phase.
//
// The file (docs/mpt-train.md, "Profiling") is JSON:
//
//   {"version": 1, "plan": "mlp.train.mptp", "entry": "train_step",
//    "device": "cuda", "steps": 9, "warmup_steps": 1,
//    "kernels_per_step": 42, "kernel_ms_per_step": 1.93,
//    "wall_ms_per_step": 2.41,
//    "by_kind": [{"kind": "matmul", "kernels": 6, "ms": 7.2,
//                 "ms_per_step": 0.8, "share": 0.41}, ...],
//    "by_node": [{"node": "fc1", "phase": "backward", "kernels": 3,
//                 "ms": 3.1, "ms_per_step": 0.34, "share": 0.18,
//                 "kinds": ["matmul", "reduce_sum"]}, ...],
//    "kernels": [{"position": 0, "kernel": 17, "kind": "matmul",
//                 "node": "fc1", "phase": "forward", "ms": 0.9,
//                 "ms_per_step": 0.1}, ...]}
//
// `steps` counts the profiled steps summed (after `warmup_steps` that ran
// profiled and were left out); `ms` is the sum over them, `share` that sum
// over the sum of every kernel's; `kernels` is the group's kernels per step.
// Rows are sorted by ms, largest first (ties by name); `kernels` is in
// entry-point order. `wall_ms_per_step` is the host's time around each
// profiled run, synchronisation included: the kernels' sum falls short of it
// by the launch and bookkeeping time between kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAIN_PROFILE_H
#define MPTRT_TRAIN_PROFILE_H

#include "mptrt.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace mptrt {
namespace train {

/// One kernel of the profiled entry point, in entry-point order.
struct ProfiledKernel {
  uint32_t kernel = 0; // plan kernel id
  std::string kind, node, phase;
};

/// One group of kernels: a kind (byKind) or a node and phase (byNode).
struct ProfileRow {
  std::string kind;               // byKind rows
  std::string node, phase;        // byNode rows
  std::vector<std::string> kinds; // byNode rows: the kinds it ran, sorted
  uint64_t kernels = 0;           // kernels of the group in one step
  double ms = 0;                  // summed over the profiled steps
  double share = 0;               // ms over every kernel's ms (0 if that is 0)
};

struct ProfileSummary {
  double kernelMs = 0; // every kernel, every profiled step
  std::vector<ProfileRow> byKind, byNode;
};

/// Groups per-kernel times (`ms[i]`: kernel i's sum over the steps) by kind
/// and by (node, phase), sorted by ms, largest first, then by name.
ProfileSummary summarizeProfile(const std::vector<ProfiledKernel> &kernels,
                                const std::vector<double> &ms);

/// Profiles the steps of one entry point of a model.
class KernelProfile {
public:
  /// Reads the entry point's kernels and clears the sums.
  bool setUp(const Model &model, const std::string &entry, std::string *error);
  /// Leaves the next `n` profiled runs out of the sums (default 0).
  void setWarmupSteps(uint64_t n) { warmup_ = warmupSeen_ + n; }
  /// Runs the entry point once, profiled, and adds its times.
  bool run(Model &model, std::string *error);

  uint64_t steps() const { return steps_; }
  uint64_t warmupSteps() const { return warmupSeen_; }
  const std::vector<ProfiledKernel> &kernels() const { return kernels_; }
  /// Each kernel's milliseconds summed over the profiled steps.
  const std::vector<double> &totalMs() const { return totalMs_; }
  double wallMs() const { return wallMs_; }

  /// Writes the JSON file; false with a message in *error.
  bool write(const std::string &path, const std::string &plan, const std::string &device,
             std::string *error) const;
  /// Prints the `n` kinds and the `n` nodes that took longest.
  void report(FILE *out, const std::string &device, size_t n) const;

private:
  std::string entry_;
  std::vector<ProfiledKernel> kernels_;
  std::vector<double> stepMs_, totalMs_;
  uint64_t warmup_ = 0, warmupSeen_ = 0, steps_ = 0;
  double wallMs_ = 0;
};

} // namespace train
} // namespace mptrt

#endif // MPTRT_TRAIN_PROFILE_H
