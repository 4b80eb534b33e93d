//===- Options.h - mpt-train's command line -----------------------*- C++ -*-===//
//
// The options of mpt-train (docs/mpt-train.md), their parsing and the usage
// text. Messages go to stderr; a usage error exits with status 2.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPTTRAIN_OPTIONS_H
#define MPTRT_TOOLS_MPTTRAIN_OPTIONS_H

#include "mptrt/train.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mptrt {
namespace tools {

struct TrainOptions {
  train::CheckFinite checkFinite = train::CheckFinite::OnSkip;
  std::string planPath, entry = abi::kTrainEntry, device = "auto", evalEntry = abi::kEvalEntry;
  std::vector<std::pair<std::string, std::string>> inputs, params, evalInputs;
  bool synthetic = false, quiet = false;
  uint64_t seed = 0, intRange = 2, steps = 0, logEvery = 0, saveEvery = 0, evalEvery = 0;
  bool haveSteps = false, haveSeed = false;
  std::string metricsPath, savePath, resumePath, rangesPath;
  std::string paramsPath;  // --params: every model parameter from a .safetensors or .npz
  std::string profilePath; // --profile, or MPTRT_PROFILE when it is not given
  bool profileFromEnv = false;
};

/// Parses the command line; returns -1 to go on, else the exit status
/// (0 after --help, 2 after a usage error, which it has printed).
int parseTrainArgs(int argc, char **argv, TrainOptions *o);

/// Prints "mpt-train: MESSAGE" and the usage text; returns 2.
int trainUsage(const std::string &message);

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPTTRAIN_OPTIONS_H
