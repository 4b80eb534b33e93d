//===- Progress.cpp - mpt-train's progress line --------------------------===//
#include "Progress.h"

#include <cmath>

namespace mptrt {
namespace tools {

using train::describeNonFinite;
using train::formatNumber;

std::string formatDuration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e9)
    return "?";
  const long long s = std::llround(seconds);
  char text[48];
  if (s >= 3600)
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(text, sizeof(text), "%lld:%02lld", s / 60, s % 60);
  return text;
}

Progress::Progress(const Options &options)
    : options_(options), start_(std::chrono::steady_clock::now()), lastPrint_(start_) {}

std::string Progress::line(const StepMetrics &m, int64_t skipped, double elapsed) const {
  char text[64];
  std::string s = "step " + std::to_string(m.step) + "/" + std::to_string(options_.totalSteps);
  if (m.loss)
    s += "  loss " + formatNumber("%.6g", *m.loss);
  if (const std::optional<double> &val = m.valLoss ? m.valLoss : lastValLoss_)
    s += "  val_loss " + formatNumber("%.6g", *val);
  if (m.lossScale)
    s += "  scale " + formatNumber("%g", *m.lossScale);
  s += "  skipped " + std::to_string(skipped);
  if (!lastNonFinite_.empty())
    s += "  first non-finite " + lastNonFinite_;
  const double done = static_cast<double>(m.step - options_.firstStep);
  if (elapsed > 0 && done > 0) {
    std::snprintf(text, sizeof(text), "  %.1f samples/s", options_.samplesPerStep * done / elapsed);
    s += text;
    if (options_.tokensPerStep > 0) {
      std::snprintf(text, sizeof(text), "  %.0f tokens/s", options_.tokensPerStep * done / elapsed);
      s += text;
    }
    s += "  ETA " + formatDuration(elapsed / done * double(options_.totalSteps - m.step));
  }
  return s;
}

void Progress::update(const StepMetrics &m, int64_t skipped) {
  if (m.valLoss)
    lastValLoss_ = m.valLoss;
  if (m.firstNonFinite && m.firstNonFinite->found)
    lastNonFinite_ = describeNonFinite(*m.firstNonFinite) + " at step " + std::to_string(m.step);
  if (options_.quiet)
    return;
  const auto now = std::chrono::steady_clock::now();
  const bool last = m.step >= options_.totalSteps;
  bool due;
  if (options_.logEvery > 0)
    due = m.step % options_.logEvery == 0;
  else
    due =
        std::chrono::duration<double>(now - lastPrint_).count() >= (options_.terminal ? 0.1 : 1.0);
  if (!due && !last)
    return;
  lastPrint_ = now;
  const std::string text = line(m, skipped, std::chrono::duration<double>(now - start_).count());
  if (options_.terminal) {
    std::fprintf(options_.stream, "\r%s\x1b[K", text.c_str());
    open_ = true;
  } else {
    std::fprintf(options_.stream, "%s\n", text.c_str());
  }
  std::fflush(options_.stream);
}

void Progress::finish() {
  if (open_) {
    std::fputc('\n', options_.stream);
    std::fflush(options_.stream);
    open_ = false;
  }
}

} // namespace tools
} // namespace mptrt
