//===- Metrics.h - what a training step reports, as a JSON line --*- C++ -*-===//
//
// The metrics file (JSON Lines) has one object per step, written and flushed
// as the step ends:
//
//   {"step": 3, "loss": 2.30258512, "loss_scale": 65536, "skipped": false,
//    "grad_norm": 1.5, "lr": 0.00100000005, "time_ms": 1.2345}
//
// `step` counts the steps run so far, this one included (1-based, across
// --resume). The float values are the plan's 0-d outputs, printed with 9
// significant digits (enough to give back every f32 exactly); a non-finite
// value is the string "inf", "-inf" or "nan". A key whose output the plan
// lacks is left out. `time_ms` is the wall time of the step's mptrt_run.
// A step after which the validation loss was computed (--eval-input) also
// has "val_loss", and "eval_ms", the time that took. A plan with FP8 scale
// state (`<t>.fp8_scale` parameters, --precision=fp8) also has
// "fp8_scale_min" and "fp8_scale_max": the range of those scales after the
// step, i.e. the ones the next step uses with delayed scaling.
//
// A step with a finite check (--check-finite) that found an inf or a NaN
// also has "first_nonfinite": {"node": "fc2", "op": "matmul", "phase":
// "backward", "output": 0, "kernel": 17}, the first kernel whose result
// was not finite (node is the ONNX node, "" when the plan does not say);
// a skipped step whose rerun found nothing has "first_nonfinite": null.
// "check_ms" is the time of that check: the rerun of a skipped step
// (on-skip), or the checked run's overhead is inside time_ms (every-kernel).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAIN_METRICS_H
#define MPTRT_TRAIN_METRICS_H

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace mptrt {
namespace train {

/// The first kernel of a checked run whose result was not finite.
struct NonFiniteOrigin {
  bool found = false; // false: the check ran and saw only finite values
  std::string node, op, phase;
  uint32_t output = 0, kernel = 0;
};

/// What one step reported; an absent output is std::nullopt.
struct StepMetrics {
  int64_t step = 0; // 1-based
  std::optional<double> loss, lossScale, gradNorm, lr;
  std::optional<double> fp8ScaleMin, fp8ScaleMax; // the range of the FP8 scales
  std::optional<bool> skipped;
  std::optional<double> valLoss; // after this step, with --eval-input
  double timeMs = 0;
  double evalMs = 0;                             // with valLoss
  std::optional<NonFiniteOrigin> firstNonFinite; // when a check ran and says so
  std::optional<double> checkMs;                 // the on-skip rerun's time
};

/// "fc2 (matmul, backward, output 0)", or "not reproduced" when !found.
std::string describeNonFinite(const NonFiniteOrigin &origin);

/// A JSON value for a float: "%.9g", or the string "inf", "-inf", "nan".
std::string jsonNumber(double v);

/// `v` printed with a printf format, but NaN as "nan" (never "-nan").
std::string formatNumber(const char *format, double v);
/// `v` as a JSON string: quoted, with '"', '\\' and control bytes escaped.
std::string jsonString(const std::string &v);

/// One metrics line, without the newline.
std::string metricsJson(const StepMetrics &m);

/// The metrics file: truncated, or appended to (--resume).
class MetricsFile {
public:
  MetricsFile() = default;
  ~MetricsFile();
  MetricsFile(const MetricsFile &) = delete;
  MetricsFile &operator=(const MetricsFile &) = delete;

  bool open(const std::string &path, bool append, std::string *error);
  bool isOpen() const { return file_ != nullptr; }
  /// Writes and flushes one line.
  bool write(const StepMetrics &m, std::string *error);

private:
  std::string path_;
  FILE *file_ = nullptr;
};

} // namespace train
} // namespace mptrt

#endif // MPTRT_TRAIN_METRICS_H
