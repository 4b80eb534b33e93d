//===- MpiCommunicator.cpp - the communicator over MPI_COMM_WORLD ---------===//
//
// MPI_Allreduce and MPI_Reduce_scatter_block with MPI_SUM, and
// MPI_Allgather, on MPI_COMM_WORLD. Open MPI chooses its
// algorithm from the world size and the message size alone, and every rank
// receives the same bytes, so a run is deterministic for a given world.
// Counts beyond INT_MAX go in pieces. Every call is watched: one that
// waits longer than MPTRT_COLLECTIVE_TIMEOUT ends the rank
// (CollectiveWatchdog.h).
//
//===----------------------------------------------------------------------===//
#include "comm/MpiCommunicator.h"

#include "comm/CollectiveWatchdog.h"

// The C API only: Open MPI's and MPICH's deprecated C++ bindings stay out.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace mptrt {
namespace comm {

namespace {

std::string mpiError(const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    length = 0;
  return std::string(call) +
         " failed: " + (length ? std::string(text, length) : "error " + std::to_string(code));
}

void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(int rank, int size, std::unique_ptr<CollectiveWatchdog> dog)
      : rank_(rank), size_(size), dog_(std::move(dog)) {}
  const char *name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  bool allReduceSum(float *data, size_t count, std::string *error) override {
    return reduce(data, count, MPI_FLOAT, sizeof(float), error);
  }
  bool allReduceSum(double *data, size_t count, std::string *error) override {
    return reduce(data, count, MPI_DOUBLE, sizeof(double), error);
  }
  bool allGather(uint64_t value, std::vector<uint64_t> *out, std::string *error) override {
    out->assign(static_cast<size_t>(size_), 0);
    auto watch = dog_->watch("MPI_Allgather", 1);
    const int rc =
        MPI_Allgather(&value, 1, MPI_UINT64_T, out->data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return *error = mpiError("MPI_Allgather", rc), false;
    return true;
  }

  bool reduceScatterSum(const float *send, float *recv, size_t block, std::string *error) override {
    if (block > INT_MAX)
      return *error = "a reduce-scatter block of " + std::to_string(block) +
                      " elements is more than MPI's count can say (INT_MAX)",
             false;
    auto watch = dog_->watch("MPI_Reduce_scatter_block", block * size_);
    const int rc = MPI_Reduce_scatter_block(send, recv, static_cast<int>(block), MPI_FLOAT, MPI_SUM,
                                            MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return *error = mpiError("MPI_Reduce_scatter_block", rc), false;
    return true;
  }
  bool allGather(const float *send, float *recv, size_t block, std::string *error) override {
    if (block > INT_MAX)
      return *error = "an all-gather block of " + std::to_string(block) +
                      " elements is more than MPI's count can say (INT_MAX)",
             false;
    auto watch = dog_->watch("MPI_Allgather", block * size_);
    const int rc = MPI_Allgather(send, static_cast<int>(block), MPI_FLOAT, recv,
                                 static_cast<int>(block), MPI_FLOAT, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return *error = mpiError("MPI_Allgather", rc), false;
    return true;
  }

  bool broadcast(void *data, size_t bytes, int root, std::string *error) override {
    if (bytes > INT_MAX)
      return *error = "a broadcast of " + std::to_string(bytes) +
                      " bytes is more than MPI's "
                      "count can say (INT_MAX)",
             false;
    auto watch = dog_->watch("MPI_Bcast", bytes);
    const int rc = MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return *error = mpiError("MPI_Bcast", rc), false;
    return true;
  }

private:
  bool reduce(void *data, size_t count, MPI_Datatype type, size_t size, std::string *error) {
    char *p = static_cast<char *>(data);
    while (count) {
      const size_t n = std::min<size_t>(count, INT_MAX);
      auto watch = dog_->watch("MPI_Allreduce", n);
      const int rc =
          MPI_Allreduce(MPI_IN_PLACE, p, static_cast<int>(n), type, MPI_SUM, MPI_COMM_WORLD);
      if (rc != MPI_SUCCESS)
        return *error = mpiError("MPI_Allreduce", rc), false;
      p += n * size;
      count -= n;
    }
    return true;
  }

  int rank_, size_;
  std::unique_ptr<CollectiveWatchdog> dog_;
};

} // namespace

bool mpiBuilt() { return true; }

std::unique_ptr<Communicator> makeMpiCommunicator(const WorldInfo &launcher, std::string *error) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS)
      return *error = mpiError("MPI_Init_thread", rc), nullptr;
    std::atexit(finalizeAtExit);
  }
  // Errors come back as codes, to be reported with the kernel that failed.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != launcher.size || rank != launcher.rank) {
    *error = "the launcher's " + launcher.source + " say rank " + std::to_string(launcher.rank) +
             " of " + std::to_string(launcher.size) + ", but MPI sees rank " +
             std::to_string(rank) + " of " + std::to_string(size) +
             (launcher.mpiLauncher ? ""
                                   : ": a torchrun-style launch needs a rendezvous MPT does not "
                                     "have yet; launch with mpirun or srun");
    return nullptr;
  }
  std::unique_ptr<CollectiveWatchdog> dog = CollectiveWatchdog::fromEnvironment(rank, size, error);
  if (!dog)
    return nullptr;
  return std::make_unique<MpiCommunicator>(rank, size, std::move(dog));
}

} // namespace comm
} // namespace mptrt
