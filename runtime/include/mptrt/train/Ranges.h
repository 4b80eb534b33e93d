//===- Ranges.h - range headroom (mpt-train --collect-ranges) ---*- C++ -*-===//
//
// Per floating-point kernel result of the steps run, how close its values
// come to the edges of the narrow formats: the largest |x|, the smallest
// nonzero |x|, and the fraction of values that would overflow or flush to
// zero if rounded (to nearest even) into fp16, E4M3 (FN) or E5M2. The
// thresholds are found once with the runtime's own conversions
// (mptrt/Numerics.h), so "would overflow" means exactly what the CPU
// backend's rounding would do.
//
// The file (docs/numerics-observability.md, "Range headroom") is JSON:
//
//   {"version": 1, "plan": "...", "entry": "train_step", "steps": 20,
//    "formats": {"fp16": {"max": 65504, "overflow_at": 65520,
//                         "flush_at_or_below": 2.98e-08}, ...},
//    "results": [{"kernel": 7, "result": 0, "kind": "matmul",
//                 "node": "fc1", "phase": "forward", "tensor": "",
//                 "dtype": "f32", "count": 40960, "nonzero": 40960,
//                 "nonfinite": 0, "max_abs": 131072.5,
//                 "min_nonzero_abs": 0.25,
//                 "headroom": {"fp16": -1.0, "e4m3": -8.2, "e5m2": -1.2},
//                 "overflow": {"fp16": 0.12, ...},
//                 "flush": {"fp16": 0, ...}}, ...]}
//
// `headroom` is log2(format max / max_abs): how many doublings the largest
// value can still take (negative: it already overflows). Counts add up over
// the steps (each step's values of the same kernel result).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAIN_RANGES_H
#define MPTRT_TRAIN_RANGES_H

#include "mptrt.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mptrt {
namespace train {

/// The narrow formats a range is measured against.
enum class RangeFormat { F16 = 0, E4M3 = 1, E5M2 = 2 };
inline constexpr int kRangeFormats = 3;
const char *rangeFormatName(RangeFormat f);

/// Where a format overflows and flushes under round-to-nearest-even.
struct FormatLimits {
  float max = 0;            // largest finite value
  float overflowAt = 0;     // smallest |x| that rounds to inf / NaN
  float flushAtOrBelow = 0; // largest |x| that rounds to zero
};
/// The limits of `f`, found with the runtime's conversions.
FormatLimits formatLimits(RangeFormat f);

/// The statistics of one kernel result over the steps observed.
struct ResultRange {
  uint32_t kernel = 0, result = 0;
  std::string kind, node, phase, tensor;
  mptrt_dtype dtype = MPTRT_F32;
  uint64_t count = 0, nonzero = 0, nonfinite = 0;
  double maxAbs = 0, minNonzeroAbs = 0; // minNonzeroAbs: 0 when nonzero == 0
  uint64_t overflow[kRangeFormats] = {};
  uint64_t flush[kRangeFormats] = {};

  /// log2(limits.max / maxAbs); +inf when every value is zero.
  double headroom(const FormatLimits &limits) const;
};

/// Accumulates the ranges of an observed run's results (hand `observe` to
/// mptrt_run_observed with the collector as `user`).
class RangeCollector {
public:
  RangeCollector();
  static void observe(const mptrt_result_view *view, void *user);
  /// One more step observed.
  void countStep() { ++steps_; }

  /// Writes the JSON file; false with a message in *error.
  bool write(const std::string &path, const std::string &plan, const std::string &entry,
             std::string *error) const;
  /// Prints the `n` intermediate results (unnamed: activations and
  /// gradients) with the least fp16 headroom and the `n` that flush most in
  /// fp16, one line each.
  void report(FILE *out, size_t n) const;

  const std::map<std::pair<uint32_t, uint32_t>, ResultRange> &results() const { return ranges_; }

private:
  void add(const mptrt_result_view &view);
  FormatLimits limits_[kRangeFormats];
  std::map<std::pair<uint32_t, uint32_t>, ResultRange> ranges_; // (kernel, result)
  uint64_t steps_ = 0;
};

} // namespace train
} // namespace mptrt

#endif // MPTRT_TRAIN_RANGES_H
