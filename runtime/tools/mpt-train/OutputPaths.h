//===- OutputPaths.h - mpt-train's outputs never destroy its inputs -*- C++ -*-===//
//
// The files mpt-train writes (--save, --metrics, --collect-ranges,
// --profile) must not be files it reads (the plan, the --input,
// --eval-input and --param files, the --resume checkpoint) or one another;
// --save may name the --resume checkpoint, which the run continues. Two
// paths are the same file when they resolve to the same path (through
// symbolic links, `.` and `..`) or to the same inode (hard links). And
// --save may not name a file that is no checkpoint, or a checkpoint of more
// steps than --steps (train::checkpointTarget), so a run never replaces
// later training with earlier.
// docs/security.md.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPTTRAIN_OUTPUTPATHS_H
#define MPTRT_TOOLS_MPTTRAIN_OUTPUTPATHS_H

#include "Options.h"

#include <string>

namespace mptrt {
namespace tools {

/// Why `opt`'s outputs cannot be written as given, or "" when they can.
std::string checkOutputPaths(const TrainOptions &opt);

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPTTRAIN_OUTPUTPATHS_H
