//===- CudaContext.h - what every CUDA kernel of a backend shares -*- C++ -*-===//
//
// One CudaBackend owns one Context: the stream every kernel is enqueued on,
// the cuBLASLt handle and its workspace, cuDNN's handle, and a device word where kernels
// report data-dependent errors (an index out of range). Kernels never
// synchronise: a run enqueues its kernels, and Backend::synchronize waits
// for the stream and then reads the error word, so a plan can be captured
// in a CUDA graph.
//
// Plain C++ (no CUDA types in the interface beyond opaque handles), so that
// host-only files include it without nvcc.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_CUDACONTEXT_H
#define MPTRT_SRC_CUDA_CUDACONTEXT_H

#include "Status.h"

#include <cstdint>
#include <string>

struct CUstream_st;
struct cublasLtContext;

namespace mptrt {
namespace rt {
namespace cuda {

/// Data-dependent errors a kernel can raise on the device. The first one
/// raised wins (atomicCAS on DeviceErrorRecord::code); synchronize() turns
/// it into a Status and clears it.
enum class DeviceError : int32_t {
  None = 0,
  IndexOutOfRange = 1, // gather, gather_grad: an index outside [-n, n)
  LabelOutOfRange = 2, // losses: a label outside [0, C) that is not ignore_index
  NegativeStep = 3,    // dropout, lr_schedule: a negative step counter
};

/// A raised error and what the message names: the offending value, where it
/// was (an index's position, a label's sample) and the bound it broke. Only
/// the thread that raised the error writes the three, so they belong
/// together.
struct DeviceErrorRecord {
  int32_t code = 0; // a DeviceError, 0 = none
  int32_t unused = 0;
  int64_t value = 0;
  int64_t position = 0;
  int64_t bound = 0;
};

/// The message of a device error, for synchronize(): the CPU backend's
/// words for the same error.
std::string describeDeviceError(const DeviceErrorRecord &error);

struct Context {
  CUstream_st *stream = nullptr; // cudaStream_t
  cublasLtContext *lt = nullptr; // cublasLtHandle_t
  void *ltWorkspace = nullptr;   // device memory for cuBLASLt
  uint64_t ltWorkspaceBytes = 0;
  DeviceErrorRecord *errorWord = nullptr; // device memory, code 0 = none
  int deviceOrdinal = 0;
  int smCount = 0; // multiprocessors, for grid sizes
  /// cudnnHandle_t on `stream`, made by the first kernel prepared through
  /// cuDNN (Cudnn.h), so a backend without convolutions never loads cuDNN;
  /// prepare sees the context as const, hence mutable.
  mutable void *cudnn = nullptr;
};

/// "cuda: <what>: <cudaGetErrorString>" for a failed runtime call, or ok.
Status cudaStatus(int error, const char *what);

} // namespace cuda
} // namespace rt
} // namespace mptrt

/// Returns a Status error from the enclosing function when a CUDA runtime
/// call fails.
#define MPTRT_CUDA_TRY(call)                                                                       \
  do {                                                                                             \
    int mptrtCudaError = static_cast<int>(call);                                                   \
    if (mptrtCudaError != 0)                                                                       \
      return ::mptrt::rt::cuda::cudaStatus(mptrtCudaError, #call);                                 \
  } while (0)

#endif // MPTRT_SRC_CUDA_CUDACONTEXT_H
