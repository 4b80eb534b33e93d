//===- Progress.h - mpt-train's progress line ---------------------*- C++ -*-===//
//
// The progress line (stderr) shows the step, loss, the last validation loss,
// loss scale, skipped steps, samples/s (tokens/s when the first input is an
// integer tensor of rank >= 2) and the ETA.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPTTRAIN_PROGRESS_H
#define MPTRT_TOOLS_MPTTRAIN_PROGRESS_H

#include "mptrt/train/Metrics.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace mptrt {
namespace tools {

using train::StepMetrics;

/// The progress line. Printed every `logEvery` steps when that is > 0, else
/// when 1 s (0.1 s on a terminal) has passed since the last one, and always
/// at the last step. On a terminal it is rewritten in place.
class Progress {
public:
  struct Options {
    FILE *stream = stderr;
    bool terminal = false;
    bool quiet = false;
    int64_t logEvery = 0;
    int64_t firstStep = 0; // steps already run (resume)
    int64_t totalSteps = 0;
    double samplesPerStep = 0; // the first input's batch size
    double tokensPerStep = 0;  // 0: no tokens/s
  };
  explicit Progress(const Options &options);

  /// Records a finished step; `skipped` counts this run's skipped steps.
  void update(const StepMetrics &m, int64_t skipped);
  /// Ends a line rewritten in place.
  void finish();

  /// The line for a step, without '\r' or newline (for tests).
  std::string line(const StepMetrics &m, int64_t skipped, double elapsedSeconds) const;

private:
  Options options_;
  std::chrono::steady_clock::time_point start_, lastPrint_;
  std::optional<double> lastValLoss_;
  std::string lastNonFinite_; // "... at step N", the latest one seen
  bool open_ = false;         // a terminal line is waiting for its newline
};

/// "1:02:03" (h:mm:ss), or "m:ss" under an hour.
std::string formatDuration(double seconds);

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPTTRAIN_PROGRESS_H
