//===- Communicator.cpp - the launcher's world, the single process --------===//
#include "mptrt/Communicator.h"

#include "comm/MpiCommunicator.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace mptrt {

namespace {

/// One launcher's variables: rank, size and (optional) local rank.
struct LauncherVars {
  const char *rank, *size, *localRank, *label;
  bool mpi;
};

constexpr LauncherVars kLaunchers[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_RANK/SIZE (mpirun)", true},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "PMI_RANK/SIZE", true},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_PROCID/NTASKS (srun)", true},
    {"RANK", "WORLD_SIZE", "LOCAL_RANK", "RANK/WORLD_SIZE (torchrun)", false},
};

bool parseInt(const char *name, const char *text, int *out, std::string *error) {
  errno = 0;
  char *end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (errno || end == text || *end || value < 0 || value > (1 << 24)) {
    *error = std::string("the launcher's ") + name + "='" + text +
             "' is not a whole number from 0 to 16777216";
    return false;
  }
  *out = static_cast<int>(value);
  return true;
}

/// The world of one process.
class SingleProcess final : public Communicator {
public:
  const char *name() const override { return "single"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  bool allReduceSum(float *, size_t, std::string *) override { return true; }
  bool allReduceSum(double *, size_t, std::string *) override { return true; }
  bool allGather(uint64_t value, std::vector<uint64_t> *out, std::string *) override {
    out->assign(1, value);
    return true;
  }
  bool reduceScatterSum(const float *send, float *recv, size_t block, std::string *) override {
    if (send != recv)
      std::memmove(recv, send, block * sizeof(float));
    return true;
  }
  bool allGather(const float *send, float *recv, size_t block, std::string *) override {
    if (send != recv)
      std::memmove(recv, send, block * sizeof(float));
    return true;
  }
  bool broadcast(void *, size_t, int, std::string *) override { return true; }
};

} // namespace

bool worldFromEnvironment(WorldInfo *out, std::string *error) {
  *out = WorldInfo();
  for (const LauncherVars &l : kLaunchers) {
    const char *rank = std::getenv(l.rank), *size = std::getenv(l.size);
    if (!rank || !size)
      continue;
    WorldInfo w;
    if (!parseInt(l.rank, rank, &w.rank, error) || !parseInt(l.size, size, &w.size, error))
      return false;
    if (w.size < 1 || w.rank >= w.size) {
      *error = std::string("the launcher's ") + l.rank + "=" + rank + " is not a rank of " +
               l.size + "=" + size;
      return false;
    }
    if (const char *local = std::getenv(l.localRank))
      if (!parseInt(l.localRank, local, &w.localRank, error))
        return false;
    w.source = l.label;
    w.mpiLauncher = l.mpi;
    *out = w;
    return true;
  }
  return true;
}

bool builtWithMpi() { return comm::mpiBuilt(); }

Communicator *processCommunicator(std::string *error) {
  static std::once_flag once;
  static std::unique_ptr<Communicator> made;
  static std::string why;
  std::call_once(once, [] {
    WorldInfo world;
    if (!worldFromEnvironment(&world, &why))
      return;
    if (world.size == 1 && !world.mpiLauncher) {
      made = std::make_unique<SingleProcess>();
      return;
    }
    if (!comm::mpiBuilt()) {
      if (world.size == 1) { // mpirun -np 1: one rank needs no MPI
        made = std::make_unique<SingleProcess>();
        return;
      }
      why = "a world of " + std::to_string(world.size) + " ranks (from " + world.source +
            ") needs MPI, and this runtime was built without it: install libopenmpi-dev and "
            "rebuild with -DMPTRT_ENABLE_MPI=ON";
      return;
    }
    made = comm::makeMpiCommunicator(world, &why);
  });
  if (!made && error)
    *error = why;
  return made.get();
}

} // namespace mptrt
