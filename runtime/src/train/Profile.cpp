//===- Profile.cpp - per-kernel times, grouped by kind and by node -------===//
#include "mptrt/train/Profile.h"

#include "mptrt/train/Metrics.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <tuple>

namespace mptrt {
namespace train {
namespace {

/// Sorts rows by ms, largest first; ties by kind, then node, then phase.
void sortRows(std::vector<ProfileRow> *rows) {
  std::sort(rows->begin(), rows->end(), [](const ProfileRow &a, const ProfileRow &b) {
    if (a.ms != b.ms)
      return a.ms > b.ms;
    return std::tie(a.kind, a.node, a.phase) < std::tie(b.kind, b.node, b.phase);
  });
}

std::string rowJson(const ProfileRow &r, uint64_t steps, bool byNode) {
  std::string s = byNode
                      ? "{\"node\": " + jsonString(r.node) + ", \"phase\": " + jsonString(r.phase)
                      : "{\"kind\": " + jsonString(r.kind);
  s += ", \"kernels\": " + std::to_string(r.kernels) + ", \"ms\": " + jsonNumber(r.ms) +
       ", \"ms_per_step\": " + jsonNumber(steps ? r.ms / double(steps) : 0.0) +
       ", \"share\": " + jsonNumber(r.share);
  if (byNode) {
    s += ", \"kinds\": [";
    for (size_t i = 0; i < r.kinds.size(); ++i)
      s += (i ? ", " : "") + jsonString(r.kinds[i]);
    s += "]";
  }
  return s + "}";
}

} // namespace

ProfileSummary summarizeProfile(const std::vector<ProfiledKernel> &kernels,
                                const std::vector<double> &ms) {
  ProfileSummary summary;
  std::map<std::string, ProfileRow> kinds;
  std::map<std::pair<std::string, std::string>, ProfileRow> nodes;
  for (size_t i = 0; i < kernels.size() && i < ms.size(); ++i) {
    const ProfiledKernel &k = kernels[i];
    summary.kernelMs += ms[i];
    ProfileRow &kind = kinds[k.kind];
    kind.kind = k.kind;
    ++kind.kernels;
    kind.ms += ms[i];
    ProfileRow &node = nodes[{k.node, k.phase}];
    node.node = k.node;
    node.phase = k.phase;
    ++node.kernels;
    node.ms += ms[i];
    if (std::find(node.kinds.begin(), node.kinds.end(), k.kind) == node.kinds.end())
      node.kinds.push_back(k.kind);
  }
  for (auto &[name, row] : kinds)
    summary.byKind.push_back(std::move(row));
  for (auto &[key, row] : nodes) {
    std::sort(row.kinds.begin(), row.kinds.end());
    summary.byNode.push_back(std::move(row));
  }
  for (std::vector<ProfileRow> *rows : {&summary.byKind, &summary.byNode}) {
    for (ProfileRow &r : *rows)
      r.share = summary.kernelMs > 0 ? r.ms / summary.kernelMs : 0.0;
    sortRows(rows);
  }
  return summary;
}

bool KernelProfile::setUp(const Model &model, const std::string &entry, std::string *error) {
  std::vector<mptrt_kernel_info> infos;
  if (!model.entryKernels(entry, &infos)) {
    *error = mptrt::lastError();
    return false;
  }
  entry_ = entry;
  kernels_.clear();
  for (const mptrt_kernel_info &info : infos)
    kernels_.push_back({info.kernel, info.kind, info.origin, info.phase});
  stepMs_.assign(kernels_.size(), 0.0);
  totalMs_.assign(kernels_.size(), 0.0);
  warmup_ = warmupSeen_ = steps_ = 0;
  wallMs_ = 0;
  return true;
}

bool KernelProfile::run(Model &model, std::string *error) {
  const auto start = std::chrono::steady_clock::now();
  if (!model.runProfiled(entry_, &stepMs_)) {
    *error = mptrt::lastError();
    return false;
  }
  const double wall =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (warmupSeen_ < warmup_) {
    ++warmupSeen_;
    return true;
  }
  for (size_t i = 0; i < stepMs_.size(); ++i)
    totalMs_[i] += stepMs_[i];
  wallMs_ += wall;
  ++steps_;
  return true;
}

bool KernelProfile::write(const std::string &path, const std::string &plan,
                          const std::string &device, std::string *error) const {
  std::ofstream out(path, std::ios::trunc);
  if (!out) {
    *error = "cannot write the profile '" + path + "': " + std::strerror(errno);
    return false;
  }
  const ProfileSummary summary = summarizeProfile(kernels_, totalMs_);
  const double steps = static_cast<double>(steps_);
  out << "{\"version\": 1, \"plan\": " << jsonString(plan) << ", \"entry\": " << jsonString(entry_)
      << ", \"device\": " << jsonString(device) << ", \"steps\": " << steps_
      << ", \"warmup_steps\": " << warmupSeen_ << ",\n \"kernels_per_step\": " << kernels_.size()
      << ", \"kernel_ms_per_step\": " << jsonNumber(steps_ ? summary.kernelMs / steps : 0.0)
      << ", \"wall_ms_per_step\": " << jsonNumber(steps_ ? wallMs_ / steps : 0.0);
  auto rows = [&](const char *name, const std::vector<ProfileRow> &list, bool byNode) {
    out << ",\n \"" << name << "\": [";
    for (size_t i = 0; i < list.size(); ++i)
      out << (i ? ",\n  " : "\n  ") << rowJson(list[i], steps_, byNode);
    out << "\n ]";
  };
  rows("by_kind", summary.byKind, false);
  rows("by_node", summary.byNode, true);
  out << ",\n \"kernels\": [";
  for (size_t i = 0; i < kernels_.size(); ++i) {
    const ProfiledKernel &k = kernels_[i];
    out << (i ? ",\n  " : "\n  ") << "{\"position\": " << i << ", \"kernel\": " << k.kernel
        << ", \"kind\": " << jsonString(k.kind) << ", \"node\": " << jsonString(k.node)
        << ", \"phase\": " << jsonString(k.phase) << ", \"ms\": " << jsonNumber(totalMs_[i])
        << ", \"ms_per_step\": " << jsonNumber(steps_ ? totalMs_[i] / steps : 0.0) << "}";
  }
  out << "\n ]}\n";
  out.flush();
  if (!out) {
    *error = "writing the profile '" + path + "' failed";
    return false;
  }
  return true;
}

void KernelProfile::report(FILE *out, const std::string &device, size_t n) const {
  const ProfileSummary summary = summarizeProfile(kernels_, totalMs_);
  const double steps = steps_ ? static_cast<double>(steps_) : 1.0;
  std::fprintf(out,
               "profile of '%s' on %s: %llu step%s profiled%s, %zu kernels, %.4f ms of kernels "
               "per step (%.4f ms wall)\n",
               entry_.c_str(), device.c_str(), static_cast<unsigned long long>(steps_),
               steps_ == 1 ? "" : "s",
               warmupSeen_ ? (" after " + std::to_string(warmupSeen_) + " warm-up step" +
                              (warmupSeen_ == 1 ? "" : "s") + " left out")
                                 .c_str()
                           : "",
               kernels_.size(), summary.kernelMs / steps, wallMs_ / steps);
  auto table = [&](const char *what, const std::vector<ProfileRow> &rows, bool byNode) {
    std::fprintf(out, "top %zu of %zu %s:\n  %10s %6s %7s  %s\n", std::min(n, rows.size()),
                 rows.size(), what, "ms/step", "share", "kernels",
                 byNode ? "node (phase: kinds)" : "kind");
    for (size_t i = 0; i < rows.size() && i < n; ++i) {
      const ProfileRow &r = rows[i];
      std::string name = r.kind;
      if (byNode) {
        name = (r.node.empty() ? std::string("(no node)") : r.node) + " (" + r.phase + ":";
        for (const std::string &k : r.kinds)
          name += " " + k;
        name += ")";
      }
      std::fprintf(out, "  %10.4f %5.1f%% %7llu  %s\n", r.ms / steps, 100.0 * r.share,
                   static_cast<unsigned long long>(r.kernels), name.c_str());
    }
  };
  table("kinds", summary.byKind, false);
  table("nodes", summary.byNode, true);
}

} // namespace train
} // namespace mptrt
