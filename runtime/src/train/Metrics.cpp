//===- Metrics.cpp - metrics lines ---------------------------------------===//
#include "mptrt/train/Metrics.h"

#include "mptrt/TrainStepAbi.h"

#include <cerrno>
#include <cmath>
#include <cstring>

namespace mptrt {
namespace train {

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
  // The plan's outputs, each under its role's name.
  using abi::OutputRole;
  add(abi::roleName(OutputRole::Loss), m.loss);
  add(abi::roleName(OutputRole::LossScale), m.lossScale);
  if (m.skipped)
    s += std::string(", \"") + abi::roleName(OutputRole::Skipped) +
         "\": " + (*m.skipped ? "true" : "false");
  add(abi::roleName(OutputRole::GradNorm), m.gradNorm);
  add(abi::roleName(OutputRole::Lr), m.lr);
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

} // namespace train
} // namespace mptrt
