//===- OutputPaths.cpp - mpt-train's outputs never destroy its inputs ----===//
#include "OutputPaths.h"

#include <filesystem>
#include <system_error>
#include <vector>

#include <sys/stat.h>

namespace mptrt {
namespace tools {

namespace {

namespace fs = std::filesystem;

struct PathUse {
  std::string flag; // "--save", "the plan", ...
  std::string path;
};

/// Whether `a` and `b` name the same file, existing or not.
bool sameFile(const std::string &a, const std::string &b) {
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(a, ea), cb = fs::weakly_canonical(b, eb);
  if (!ea && !eb && ca == cb)
    return true;
  struct stat sa = {}, sb = {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

std::string describe(const PathUse &use) { return use.flag + " '" + use.path + "'"; }

} // namespace

std::string checkOutputPaths(const TrainOptions &opt) {
  std::vector<PathUse> reads = {{"the plan", opt.planPath}};
  for (const auto &[name, file] : opt.inputs)
    reads.push_back({"--input " + name, file});
  for (const auto &[name, file] : opt.evalInputs)
    reads.push_back({"--eval-input " + name, file});
  for (const auto &[name, file] : opt.params)
    reads.push_back({"--param " + name, file});
  if (!opt.resumePath.empty())
    reads.push_back({"--resume", opt.resumePath});

  std::vector<PathUse> writes;
  if (!opt.savePath.empty())
    writes.push_back({"--save", opt.savePath});
  if (!opt.metricsPath.empty())
    writes.push_back({"--metrics", opt.metricsPath});
  if (!opt.rangesPath.empty())
    writes.push_back({"--collect-ranges", opt.rangesPath});

  for (size_t w = 0; w < writes.size(); ++w) {
    for (const PathUse &read : reads) {
      if (writes[w].flag == "--save" && read.flag == "--resume")
        continue; // the run continues that checkpoint
      if (sameFile(writes[w].path, read.path))
        return describe(writes[w]) + " names the same file as " + describe(read) +
               ", which this run reads: refusing to overwrite it";
    }
    for (size_t other = 0; other < w; ++other)
      if (sameFile(writes[w].path, writes[other].path))
        return describe(writes[w]) + " and " + describe(writes[other]) + " name the same file";
  }
  if (!opt.savePath.empty()) {
    std::string target, error;
    if (!train::checkpointTarget(opt.savePath, opt.steps, &target, &error))
      return "--save: " + error;
  }
  return "";
}

} // namespace tools
} // namespace mptrt
