//===- Communicator.h - the ranks of a data-parallel run ---------*- C++ -*-===//
//
// Data parallelism (docs/distributed.md) runs one process per rank, each on
// its slice of the global batch; the plan's `all_reduce` kernels average the
// gradients over the ranks through the process's communicator. It sits
// beside the backend registry: a backend's kernels find it with
// processCommunicator(), and mpt-train asks it for the rank and world size.
//
// Two implementations, on existing engines only:
//   - "single": one process, world size 1; every collective is the
//     identity. Always built.
//   - "mpi": MPI_COMM_WORLD (Debian's OpenMPI), when the runtime is built
//     with MPI (CMake option MPTRT_ENABLE_MPI, on when MPI is found).
//
// The launcher is recognised from its environment: mpirun
// (OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK), srun (SLURM_PROCID /
// SLURM_NTASKS / SLURM_LOCALID), PMI launchers (PMI_RANK / PMI_SIZE) and
// torchrun (RANK / WORLD_SIZE / LOCAL_RANK). A world of more than one rank
// needs MPI: a runtime built without it says so, with the variable that
// asked for the world, instead of training each rank alone.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_COMMUNICATOR_H
#define MPTRT_COMMUNICATOR_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mptrt {

/// The rank and world size a launcher's environment gives this process.
struct WorldInfo {
  int rank = 0;
  int size = 1;
  int localRank = 0;
  /// The variables they came from ("OMPI_COMM_WORLD_RANK/SIZE"), or ""
  /// when no launcher's variables are set (one process).
  std::string source;
  /// Whether the launcher is an MPI one (mpirun, srun, PMI), whose
  /// processes MPI_Init joins into one world.
  bool mpiLauncher = false;
};

/// Reads the launcher's variables (the first set of mpirun's, srun's, PMI's
/// and torchrun's). False with a message when one is malformed (not a
/// number, rank outside [0, size)).
bool worldFromEnvironment(WorldInfo *out, std::string *error);

class Communicator {
public:
  virtual ~Communicator() = default;
  /// "single" or "mpi".
  virtual const char *name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Sums data[0, count) element-wise over the ranks, in place. Every rank
  /// gets the same bytes, and the same inputs give the same bytes on every
  /// run. Allocates nothing.
  virtual bool allReduceSum(float *data, size_t count, std::string *error) = 0;
  virtual bool allReduceSum(double *data, size_t count, std::string *error) = 0;
  /// Every rank's `value`, in rank order.
  virtual bool allGather(uint64_t value, std::vector<uint64_t> *out, std::string *error) = 0;
  /// send holds size() blocks of `block` floats; sums them element-wise over
  /// the ranks and writes block rank() of the sum into recv[0, block).
  /// Deterministic as allReduceSum. Allocates nothing.
  virtual bool reduceScatterSum(const float *send, float *recv, size_t block,
                                std::string *error) = 0;
  /// Every rank's send[0, block), in rank order, into recv[0, size() *
  /// block). Allocates nothing.
  virtual bool allGather(const float *send, float *recv, size_t block, std::string *error) = 0;
  /// Rank `root`'s bytes data[0, bytes) into every rank's `data` (NCCL's
  /// unique id, for the CUDA backend's device collectives).
  virtual bool broadcast(void *data, size_t bytes, int root, std::string *error) = 0;
};

/// The process's communicator, made on the first call from the launcher's
/// environment (worldFromEnvironment): MPI when the launcher is an MPI one
/// or the world has more than one rank, else the single process. Null, with
/// why in *error (on every call), when that world cannot be served: a
/// runtime built without MPI asked for more than one rank, a torchrun-style
/// world that MPI does not see, or a failed MPI_Init.
Communicator *processCommunicator(std::string *error);

/// Whether this runtime was built with MPI.
bool builtWithMpi();

} // namespace mptrt

#endif // MPTRT_COMMUNICATOR_H
