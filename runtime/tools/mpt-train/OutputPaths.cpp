//===- OutputPaths.cpp - mpt-train's outputs never destroy its inputs ----===//
#include "OutputPaths.h"

#include "mptrt/OutputPaths.h"

namespace mptrt {
namespace tools {

std::string checkOutputPaths(const TrainOptions &opt) {
  std::vector<PathUse> reads = {{"the plan", opt.planPath}};
  for (const auto &[name, file] : opt.inputs)
    reads.push_back({"--input " + name, file});
  for (const auto &[name, file] : opt.evalInputs)
    reads.push_back({"--eval-input " + name, file});
  for (const auto &[name, file] : opt.params)
    reads.push_back({"--param " + name, file});
  if (!opt.paramsPath.empty())
    reads.push_back({"--params", opt.paramsPath});
  if (!opt.resumePath.empty())
    reads.push_back({"--resume", opt.resumePath});

  std::vector<PathUse> writes;
  if (!opt.savePath.empty())
    writes.push_back({"--save", opt.savePath});
  if (!opt.metricsPath.empty())
    writes.push_back({"--metrics", opt.metricsPath});
  if (!opt.rangesPath.empty())
    writes.push_back({"--collect-ranges", opt.rangesPath});
  if (!opt.profilePath.empty())
    writes.push_back({opt.profileFromEnv ? "MPTRT_PROFILE" : "--profile", opt.profilePath});

  // --save may name the --resume checkpoint: the run continues it.
  auto continues = [](const PathUse &write, const PathUse &read) {
    return write.what == "--save" && read.what == "--resume";
  };
  if (std::string conflict = findOutputConflict(reads, writes, continues); !conflict.empty())
    return conflict;
  if (!opt.savePath.empty()) {
    std::string target, error;
    if (!train::checkpointTarget(opt.savePath, opt.steps, &target, &error))
      return "--save: " + error;
  }
  return "";
}

} // namespace tools
} // namespace mptrt
