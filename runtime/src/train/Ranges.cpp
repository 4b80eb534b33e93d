//===- Ranges.cpp - range headroom (mpt-train --collect-ranges) ----------===//
#include "mptrt/train/Ranges.h"

#include "mptrt/train/Metrics.h"

#include "mptrt/Numerics.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

namespace mptrt {
namespace train {
namespace {

/// x rounded into format `f` (to nearest even, no saturation) and back.
float roundTrip(RangeFormat f, float x) {
  switch (f) {
  case RangeFormat::F16:
    return numerics::f16ToF32(numerics::f32ToF16(x));
  case RangeFormat::E4M3:
    return numerics::f8E4M3FNToF32(numerics::f32ToF8E4M3FN(x));
  case RangeFormat::E5M2:
    return numerics::f8E5M2ToF32(numerics::f32ToF8E5M2(x));
  }
  return x;
}

/// The largest positive float whose bits satisfy `pred`, for a `pred` that
/// holds from 0 up to some point and fails after it.
template <typename Pred> uint32_t lastBitsWhere(Pred pred) {
  uint32_t lo = 0, hi = 0x7F7FFFFFu; // pred(lo) holds; find the last that does
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo + 1) / 2;
    if (pred(numerics::f32OfBits(mid)))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// A double as JSON: 9 significant digits, or null when not finite.
std::string number(double v) {
  if (!std::isfinite(v))
    return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string where(const ResultRange &r) {
  std::string s = r.node.empty() ? "kernel " + std::to_string(r.kernel) : r.node;
  s += " (" + r.kind + ", " + r.phase;
  if (r.result != 0)
    s += ", result " + std::to_string(r.result);
  return s + ")";
}

} // namespace

const char *rangeFormatName(RangeFormat f) {
  switch (f) {
  case RangeFormat::F16:
    return "fp16";
  case RangeFormat::E4M3:
    return "e4m3";
  case RangeFormat::E5M2:
    return "e5m2";
  }
  return "?";
}

FormatLimits formatLimits(RangeFormat f) {
  FormatLimits l;
  const uint32_t lastFinite =
      lastBitsWhere([&](float x) { return std::isfinite(roundTrip(f, x)); });
  l.overflowAt = numerics::f32OfBits(lastFinite + 1);
  l.max = roundTrip(f, numerics::f32OfBits(lastFinite));
  l.flushAtOrBelow =
      numerics::f32OfBits(lastBitsWhere([&](float x) { return roundTrip(f, x) == 0.0f; }));
  return l;
}

double ResultRange::headroom(const FormatLimits &limits) const {
  if (maxAbs == 0)
    return std::numeric_limits<double>::infinity();
  return std::log2(static_cast<double>(limits.max) / maxAbs);
}

RangeCollector::RangeCollector() {
  for (int f = 0; f < kRangeFormats; ++f)
    limits_[f] = formatLimits(static_cast<RangeFormat>(f));
}

void RangeCollector::observe(const mptrt_result_view *view, void *user) {
  static_cast<RangeCollector *>(user)->add(*view);
}

void RangeCollector::add(const mptrt_result_view &v) {
  ResultRange &r = ranges_[{v.kernel, v.result}];
  if (r.count == 0 && r.nonfinite == 0) {
    r.kernel = v.kernel;
    r.result = v.result;
    r.kind = v.kind;
    r.node = v.origin;
    r.phase = v.phase;
    r.tensor = v.tensor;
    r.dtype = v.dtype;
  }
  float maxAbs = static_cast<float>(r.maxAbs);
  float minNonzero =
      r.nonzero ? static_cast<float>(r.minNonzeroAbs) : std::numeric_limits<float>::infinity();
  uint64_t nonzero = 0, nonfinite = 0;
  uint64_t over[kRangeFormats] = {}, flush[kRangeFormats] = {};
  for (uint64_t i = 0; i < v.count; ++i) {
    const float a = std::fabs(v.values[i]);
    if (!std::isfinite(a)) {
      ++nonfinite;
      continue;
    }
    if (a == 0.0f)
      continue;
    ++nonzero;
    maxAbs = std::max(maxAbs, a);
    minNonzero = std::min(minNonzero, a);
    for (int f = 0; f < kRangeFormats; ++f) {
      over[f] += a >= limits_[f].overflowAt;
      flush[f] += a <= limits_[f].flushAtOrBelow;
    }
  }
  r.count += v.count;
  r.nonzero += nonzero;
  r.nonfinite += nonfinite;
  r.maxAbs = maxAbs;
  r.minNonzeroAbs = r.nonzero ? minNonzero : 0.0;
  for (int f = 0; f < kRangeFormats; ++f) {
    r.overflow[f] += over[f];
    r.flush[f] += flush[f];
  }
}

bool RangeCollector::write(const std::string &path, const std::string &plan,
                           const std::string &entry, std::string *error) const {
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    *error = "cannot write the ranges file '" + path + "': " + std::strerror(errno);
    return false;
  }
  out << "{\"version\": 1, \"plan\": " << jsonString(plan) << ", \"entry\": " << jsonString(entry)
      << ", \"steps\": " << steps_ << ",\n \"formats\": {";
  for (int f = 0; f < kRangeFormats; ++f)
    out << (f ? ", " : "") << jsonString(rangeFormatName(static_cast<RangeFormat>(f)))
        << ": {\"max\": " << number(limits_[f].max)
        << ", \"overflow_at\": " << number(limits_[f].overflowAt)
        << ", \"flush_at_or_below\": " << number(limits_[f].flushAtOrBelow) << "}";
  out << "},\n \"results\": [";
  bool first = true;
  for (const auto &[key, r] : ranges_) {
    out << (first ? "\n  " : ",\n  ");
    first = false;
    out << "{\"kernel\": " << r.kernel << ", \"result\": " << r.result
        << ", \"kind\": " << jsonString(r.kind) << ", \"node\": " << jsonString(r.node)
        << ", \"phase\": " << jsonString(r.phase) << ", \"tensor\": " << jsonString(r.tensor)
        << ", \"dtype\": " << jsonString(mptrt_dtype_name(r.dtype)) << ", \"count\": " << r.count
        << ", \"nonzero\": " << r.nonzero << ", \"nonfinite\": " << r.nonfinite
        << ", \"max_abs\": " << number(r.maxAbs)
        << ", \"min_nonzero_abs\": " << number(r.minNonzeroAbs);
    for (const char *what : {"headroom", "overflow", "flush"}) {
      out << ", \"" << what << "\": {";
      for (int f = 0; f < kRangeFormats; ++f) {
        double v;
        if (what[0] == 'h')
          v = r.headroom(limits_[f]);
        else
          v = r.count ? static_cast<double>(what[0] == 'o' ? r.overflow[f] : r.flush[f]) /
                            static_cast<double>(r.count)
                      : 0.0;
        out << (f ? ", " : "") << jsonString(rangeFormatName(static_cast<RangeFormat>(f))) << ": "
            << number(v);
      }
      out << "}";
    }
    out << "}";
  }
  out << "\n]}\n";
  out.flush();
  if (!out) {
    *error = "writing the ranges file '" + path + "' failed";
    return false;
  }
  return true;
}

void RangeCollector::report(FILE *out, size_t n) const {
  const FormatLimits &f16 = limits_[static_cast<int>(RangeFormat::F16)];
  std::vector<const ResultRange *> all;
  // Named results (parameters, optimizer state, outputs) stay FP32 in
  // every mode: the report is about the arena's activations and gradients.
  for (const auto &[key, r] : ranges_)
    if (r.nonzero > 0 && r.tensor.empty())
      all.push_back(&r);
  std::vector<const ResultRange *> byHeadroom = all;
  std::stable_sort(byHeadroom.begin(), byHeadroom.end(),
                   [&](const ResultRange *a, const ResultRange *b) {
                     return a->headroom(f16) < b->headroom(f16);
                   });
  std::fprintf(out,
               "ranges: %zu intermediate results over %llu steps; least fp16 headroom "
               "(log2 of 65504 / max|x|):\n",
               all.size(), static_cast<unsigned long long>(steps_));
  for (size_t i = 0; i < std::min(n, byHeadroom.size()); ++i) {
    const ResultRange &r = *byHeadroom[i];
    std::fprintf(out, "  %+6.1f  max|x| %-11.4g overflows fp16 %.3g%%, e4m3 %.3g%%  %s\n",
                 r.headroom(f16), r.maxAbs, 100.0 * r.overflow[0] / r.count,
                 100.0 * r.overflow[1] / r.count, where(r).c_str());
  }
  std::vector<const ResultRange *> byFlush;
  for (const ResultRange *r : all)
    if (r->flush[0] > 0)
      byFlush.push_back(r);
  std::stable_sort(byFlush.begin(), byFlush.end(), [](const ResultRange *a, const ResultRange *b) {
    return static_cast<double>(a->flush[0]) / static_cast<double>(a->count) >
           static_cast<double>(b->flush[0]) / static_cast<double>(b->count);
  });
  if (byFlush.empty()) {
    std::fprintf(out, "ranges: no nonzero value would flush to zero in fp16\n");
    return;
  }
  std::fprintf(out, "ranges: most values flushed to zero in fp16:\n");
  for (size_t i = 0; i < std::min(n, byFlush.size()); ++i) {
    const ResultRange &r = *byFlush[i];
    std::fprintf(out, "  %6.3g%%  min nonzero |x| %-10.4g %s\n", 100.0 * r.flush[0] / r.count,
                 r.minNonzeroAbs, where(r).c_str());
  }
}

} // namespace train
} // namespace mptrt
