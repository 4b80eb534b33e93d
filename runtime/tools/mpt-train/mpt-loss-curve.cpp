//===- mpt-loss-curve.cpp - print a training run's loss curve -------------===//
//
//   mpt-loss-curve metrics.jsonl [reference_loss.npy] [every]
//
// Prints the `loss` of every `every`-th step of an mpt-train metrics file
// (default 25), next to a reference curve (an f32 .npy of per-step losses,
// e.g. PyTorch's, recorded on the same batches) when one is given, and the
// mean loss of the last 32 steps of each with their relative difference.
// Exit code 0, or 1 for an unreadable file.
//
//===----------------------------------------------------------------------===//
#include "TensorFile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

/// The number after `"key":` in one JSON line, or NaN.
double field(const std::string &line, const char *key) {
  std::string quoted = std::string("\"") + key + "\":";
  size_t at = line.find(quoted);
  if (at == std::string::npos)
    return NAN;
  const char *p = line.c_str() + at + quoted.size();
  while (*p == ' ')
    ++p;
  if (*p == '"') // "inf", "-inf", "nan"
    return std::strtod(p + 1, nullptr);
  return std::strtod(p, nullptr);
}

double meanOfLast(const std::vector<double> &v, size_t n) {
  if (v.empty())
    return NAN;
  size_t from = v.size() > n ? v.size() - n : 0;
  double sum = 0;
  for (size_t i = from; i < v.size(); ++i)
    sum += v[i];
  return sum / static_cast<double>(v.size() - from);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4 || !std::strcmp(argv[1], "--help")) {
    std::fprintf(stderr, "usage: mpt-loss-curve metrics.jsonl [reference_loss.npy] [every]\n");
    return argc < 2 || argc > 4 ? 2 : 0;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "mpt-loss-curve: cannot read %s\n", argv[1]);
    return 1;
  }
  std::vector<double> loss;
  std::vector<long> steps;
  for (std::string line; std::getline(in, line);) {
    if (line.empty())
      continue;
    steps.push_back(static_cast<long>(field(line, "step")));
    loss.push_back(field(line, "loss"));
  }
  std::vector<double> ref;
  if (argc >= 3) {
    mptrt::tools::FileTensor t;
    std::string error;
    bool ok = mptrt::tools::readTensorFile(argv[2], &t, &error);
    if (!ok || t.bytes.size() != static_cast<size_t>(t.numel()) * 4 ||
        std::find(t.compatible.begin(), t.compatible.end(), MPTRT_F32) == t.compatible.end()) {
      std::fprintf(stderr, "mpt-loss-curve: %s: %s\n", argv[2],
                   error.empty() ? "expected a float32 array" : error.c_str());
      return 1;
    }
    const float *values = reinterpret_cast<const float *>(t.bytes.data());
    ref.assign(values, values + t.numel());
  }
  long every = argc == 4 ? std::atol(argv[3]) : 25;
  if (every < 1)
    every = 1;
  std::printf("%8s %10s%s\n", "step", "loss", ref.empty() ? "" : "  reference");
  for (size_t i = 0; i < loss.size(); ++i) {
    long step = steps[i];
    if (step != 1 && step % every != 0 && i + 1 != loss.size())
      continue;
    std::printf("%8ld %10.4f", step, loss[i]);
    if (step >= 1 && static_cast<size_t>(step) <= ref.size())
      std::printf("  %9.4f", ref[step - 1]);
    std::printf("\n");
  }
  double ours = meanOfLast(loss, 32);
  std::printf("mean loss of the last 32 steps: %.4f", ours);
  if (!ref.empty()) {
    std::vector<double> refRun(ref.begin(), ref.begin() + std::min(ref.size(), loss.size()));
    double theirs = meanOfLast(refRun, 32);
    std::printf(" (reference %.4f, %+.2f%%)", theirs, 100.0 * (ours - theirs) / theirs);
  }
  std::printf("\n");
  return 0;
}
