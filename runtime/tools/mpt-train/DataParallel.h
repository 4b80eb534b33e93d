//===- DataParallel.h - mpt-train's place in a data-parallel run -*- C++ -*-===//
//
// Under a launcher (`mpirun -np N mpt-train plan.mptp ...`, srun), each
// process is one rank of the run (docs/distributed.md): it trains on its
// block of every global batch (mptrt/train/Batches.h), the plan's
// all_reduce kernels average the gradients, and rank 0 alone prints
// progress and writes metrics, checkpoints, ranges and profiles.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPT_TRAIN_DATAPARALLEL_H
#define MPTRT_TOOLS_MPT_TRAIN_DATAPARALLEL_H

#include "mptrt/Communicator.h"
#include "mptrt/train.hpp"

#include <string>

namespace mptrt {
namespace tools {

struct World {
  Communicator *comm = nullptr;
  int rank = 0;
  int ranks = 1;
  bool lead() const { return rank == 0; }
};

/// Joins the launcher's world (mptrt::processCommunicator) and checks that
/// every rank was given the same plan file: the ranks exchange the CRC-32
/// of its bytes, and all of them fail, naming the ranks that differ, when
/// they disagree.
bool joinWorld(const std::string &planPath, World *out, std::string *error);

/// With more than one rank, the plan's `entry` must average its gradients
/// (an all_reduce kernel, `mpt-compile --data-parallel`): otherwise each
/// rank would train a model of its own.
bool checkDataParallelPlan(const train::Trainer &trainer, const std::string &entry,
                           const World &world, std::string *error);

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPT_TRAIN_DATAPARALLEL_H
