//===- Metrics.cpp - metrics lines and the progress line -----------------===//
#include "Metrics.h"

#include "mptrt/TrainStepAbi.h"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace mptrt {
namespace tools {

std::string jsonNumber(double v) {
  if (std::isnan(v))
    return "\"nan\"";
  if (std::isinf(v))
    return v > 0 ? "\"inf\"" : "\"-inf\"";
  char text[40];
  std::snprintf(text, sizeof(text), "%.9g", v);
  return text;
}

std::string formatNumber(const char *format, double v) {
  if (std::isnan(v))
    return "nan"; // printf would write "-nan" for a NaN with its sign bit set
  char text[48];
  std::snprintf(text, sizeof(text), format, v);
  return text;
}

std::string jsonString(const std::string &v) {
  std::string s = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char text[8];
      std::snprintf(text, sizeof(text), "\\u%04x", static_cast<unsigned>(c));
      s += text;
    } else {
      s += c;
    }
  }
  return s + "\"";
}

std::string describeNonFinite(const NonFiniteOrigin &o) {
  if (!o.found)
    return "not reproduced";
  return (o.node.empty() ? "kernel " + std::to_string(o.kernel) : o.node) + " (" + o.op + ", " +
         o.phase + ", output " + std::to_string(o.output) + ")";
}

std::string metricsJson(const StepMetrics &m) {
  std::string s = "{\"step\": " + std::to_string(m.step);
  auto add = [&](const char *key, const std::optional<double> &v) {
    if (v)
      s += std::string(", \"") + key + "\": " + jsonNumber(*v);
  };
  // The plan's outputs, each under its output name.
  using abi::OutputRole;
  add(abi::outputName(OutputRole::Loss), m.loss);
  add(abi::outputName(OutputRole::LossScale), m.lossScale);
  if (m.skipped)
    s += std::string(", \"") + abi::outputName(OutputRole::Skipped) +
         "\": " + (*m.skipped ? "true" : "false");
  add(abi::outputName(OutputRole::GradNorm), m.gradNorm);
  add(abi::outputName(OutputRole::Lr), m.lr);
  add("fp8_scale_min", m.fp8ScaleMin);
  add("fp8_scale_max", m.fp8ScaleMax);
  add("val_loss", m.valLoss);
  char time[40];
  std::snprintf(time, sizeof(time), "%.4f", m.timeMs);
  s += std::string(", \"time_ms\": ") + time;
  if (m.valLoss) {
    std::snprintf(time, sizeof(time), "%.4f", m.evalMs);
    s += std::string(", \"eval_ms\": ") + time;
  }
  if (const std::optional<NonFiniteOrigin> &o = m.firstNonFinite) {
    s += ", \"first_nonfinite\": ";
    if (o->found)
      s += "{\"node\": " + jsonString(o->node) + ", \"op\": " + jsonString(o->op) +
           ", \"phase\": " + jsonString(o->phase) + ", \"output\": " + std::to_string(o->output) +
           ", \"kernel\": " + std::to_string(o->kernel) + "}";
    else
      s += "null";
  }
  if (m.checkMs) {
    std::snprintf(time, sizeof(time), "%.4f", *m.checkMs);
    s += std::string(", \"check_ms\": ") + time;
  }
  return s + "}";
}

MetricsFile::~MetricsFile() {
  if (file_)
    std::fclose(file_);
}

bool MetricsFile::open(const std::string &path, bool append, std::string *error) {
  path_ = path;
  file_ = std::fopen(path.c_str(), append ? "ab" : "wb");
  if (!file_) {
    *error = "cannot open metrics file '" + path + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

bool MetricsFile::write(const StepMetrics &m, std::string *error) {
  const std::string line = metricsJson(m) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    *error = "cannot write metrics file '" + path_ + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

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
