//===- DeviceCollectives.h - the CUDA backend's collectives -------*- C++ -*-===//
//
// Data parallelism on GPUs (docs/distributed.md): the CUDA kernels of
// all_reduce, reduce_scatter, all_gather and the over-ranks finite check and
// norm sum device buffers over the ranks through NCCL, on the backend's
// stream, so that a step's kernels and its collectives stay in one stream
// order and the step can still be captured as one CUDA graph (NCCL's calls
// may be captured).
//
// NCCL is loaded when it is first needed (dlopen of libnccl.so.2, found as
// the dynamic loader finds libraries: LD_LIBRARY_PATH, the toolkit's lib
// folder, Python's nvidia-nccl-cu13 wheel), so a runtime built with NCCL's
// header still starts, and serves one process, on a host without it. Its
// unique id goes from rank 0 to the others through the process's MPI
// communicator (mptrt/Communicator.h); each rank uses the device the CUDA
// backend chose, LOCAL_RANK's by default.
//
// Used when the world has more than one rank, or when
// MPTRT_DEVICE_COLLECTIVES=nccl asks for NCCL in a world of one (to check
// the NCCL path on one GPU); otherwise the kernels copy, as a world of one
// needs nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_DEVICECOLLECTIVES_H
#define MPTRT_SRC_CUDA_DEVICECOLLECTIVES_H

#include "Status.h"

#include <cstddef>

struct CUstream_st;

namespace mptrt {
namespace rt {
namespace cuda {

class DeviceCollectives {
public:
  virtual ~DeviceCollectives() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// In place: data[0, n) summed element-wise over the ranks.
  virtual Status allReduceSum(float *data, size_t n, CUstream_st *stream) = 0;
  virtual Status allReduceSum(double *data, size_t n, CUstream_st *stream) = 0;
  /// send: size() blocks of `block` floats; recv: block rank() of their
  /// sum over the ranks.
  virtual Status reduceScatterSum(const float *send, float *recv, size_t block,
                                  CUstream_st *stream) = 0;
  /// recv[r * block, (r + 1) * block) = rank r's send[0, block).
  virtual Status allGather(const float *send, float *recv, size_t block, CUstream_st *stream) = 0;
};

/// The process's device collectives on CUDA device `device`, made on the
/// first call: ok with *out null when the world is one process and
/// MPTRT_DEVICE_COLLECTIVES does not ask for NCCL; an error saying what is
/// missing (no NCCL in this build, libnccl.so.2 not found, a failed
/// ncclCommInitRank, a process communicator that cannot be made).
Status deviceCollectives(int device, DeviceCollectives **out);

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_DEVICECOLLECTIVES_H
