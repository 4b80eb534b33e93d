//===- NcclCollectives.cpp - device collectives through NCCL --------------===//
//
// DeviceCollectives.h's NCCL implementation: libnccl.so.2 opened with dlopen
// on first use, its functions looked up by name (the declarations of the
// toolkit's nccl.h, which this file is compiled against); a communicator
// of the world's ranks from rank 0's unique id, broadcast through MPI.
//
//===----------------------------------------------------------------------===//
#include "cuda/DeviceCollectives.h"

#include "mptrt/Communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

namespace mptrt {
namespace rt {
namespace cuda {

namespace {

/// NCCL's entry points, from the library opened at run time.
struct NcclApi {
  decltype(&ncclGetVersion) getVersion = nullptr;
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclGetErrorString) getErrorString = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclReduceScatter) reduceScatter = nullptr;
  decltype(&ncclAllGather) allGather = nullptr;

  bool load(std::string *error) {
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      *error = std::string("NCCL is not found (dlopen libnccl.so.2: ") + (why ? why : "?") +
               "): install it (the CUDA toolkit's NCCL, Debian's libnccl2, or Python's "
               "nvidia-nccl-cu13 wheel) where the loader finds it (LD_LIBRARY_PATH)";
      return false;
    }
    auto find = [&](auto *fn, const char *name) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(lib, name));
      if (!*fn)
        *error = std::string("libnccl.so.2 has no ") + name +
                 ": NCCL is too old (2.10 or "
                 "later is needed)";
      return *fn != nullptr;
    };
    return find(&getVersion, "ncclGetVersion") && find(&getUniqueId, "ncclGetUniqueId") &&
           find(&commInitRank, "ncclCommInitRank") && find(&getErrorString, "ncclGetErrorString") &&
           find(&allReduce, "ncclAllReduce") && find(&reduceScatter, "ncclReduceScatter") &&
           find(&allGather, "ncclAllGather");
  }
};

class NcclCollectives final : public DeviceCollectives {
public:
  NcclCollectives(const NcclApi &api, ncclComm_t comm, int rank, int size)
      : api_(api), comm_(comm), rank_(rank), size_(size) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  Status allReduceSum(float *data, size_t n, CUstream_st *stream) override {
    return check("ncclAllReduce", api_.allReduce(data, data, n, ncclFloat32, ncclSum, comm_,
                                                 reinterpret_cast<cudaStream_t>(stream)));
  }
  Status allReduceSum(double *data, size_t n, CUstream_st *stream) override {
    return check("ncclAllReduce", api_.allReduce(data, data, n, ncclFloat64, ncclSum, comm_,
                                                 reinterpret_cast<cudaStream_t>(stream)));
  }
  Status reduceScatterSum(const float *send, float *recv, size_t block,
                          CUstream_st *stream) override {
    return check("ncclReduceScatter",
                 api_.reduceScatter(send, recv, block, ncclFloat32, ncclSum, comm_,
                                    reinterpret_cast<cudaStream_t>(stream)));
  }
  Status allGather(const float *send, float *recv, size_t block, CUstream_st *stream) override {
    return check("ncclAllGather", api_.allGather(send, recv, block, ncclFloat32, comm_,
                                                 reinterpret_cast<cudaStream_t>(stream)));
  }

private:
  Status check(const char *call, ncclResult_t r) const {
    if (r == ncclSuccess)
      return Status::ok();
    return Status::error(std::string(call) + " over " + std::to_string(size_) +
                         " ranks failed: " + api_.getErrorString(r));
  }

  const NcclApi &api_;
  ncclComm_t comm_;
  int rank_, size_;
};

/// Whether MPTRT_DEVICE_COLLECTIVES asks for NCCL in a world of one.
bool ncclAskedFor() {
  const char *env = std::getenv("MPTRT_DEVICE_COLLECTIVES");
  return env && std::strcmp(env, "nccl") == 0;
}

} // namespace

Status deviceCollectives(int device, DeviceCollectives **out) {
  static std::once_flag once;
  static NcclApi api;
  static std::unique_ptr<DeviceCollectives> made;
  static Status status = Status::ok();
  std::call_once(once, [device] {
    std::string why;
    Communicator *world = processCommunicator(&why);
    if (!world) {
      status = Status::error("no communicator for the data-parallel world: " + why);
      return;
    }
    if (world->size() == 1 && !ncclAskedFor())
      return; // one process: the kernels copy
    if (!api.load(&why)) {
      status = Status::error(why);
      return;
    }
    ncclUniqueId id;
    std::memset(&id, 0, sizeof id);
    if (world->rank() == 0) {
      if (ncclResult_t r = api.getUniqueId(&id); r != ncclSuccess) {
        status = Status::error(std::string("ncclGetUniqueId failed: ") + api.getErrorString(r));
        // The others wait in the broadcast: they get an id of zeros, and
        // their ncclCommInitRank fails too.
      }
    }
    if (!world->broadcast(&id, sizeof id, 0, &why)) {
      status = Status::error("broadcasting NCCL's unique id: " + why);
      return;
    }
    if (!status)
      return;
    if (cudaSetDevice(device) != cudaSuccess) {
      status = Status::error("NCCL: cudaSetDevice(" + std::to_string(device) + ") failed");
      return;
    }
    ncclComm_t comm = nullptr;
    if (ncclResult_t r = api.commInitRank(&comm, world->size(), id, world->rank());
        r != ncclSuccess) {
      status = Status::error("ncclCommInitRank (rank " + std::to_string(world->rank()) + " of " +
                             std::to_string(world->size()) + ", device " + std::to_string(device) +
                             ") failed: " + api.getErrorString(r));
      return;
    }
    made = std::make_unique<NcclCollectives>(api, comm, world->rank(), world->size());
  });
  *out = made.get();
  return status;
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
