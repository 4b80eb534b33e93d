//===- Cudnn.h - cuDNN for the CUDA backend, opened at run time -*- C++ -*-===//
//
// The CUDA backend's convolutions go through cuDNN's graph (backend) API
// when the build found cudnn.h (MPTRT_HAVE_CUDNN) and the library opens at
// run time; otherwise they are the direct kernels of ConvKernels.cu, and
// the device's line says which (convDescription). Like NCCL, cuDNN is not
// linked: libcudnn.so.9 is opened with dlopen on first use, from the
// loader's path or from the folder the build found it in (the toolkit's, or
// Python's nvidia-cudnn-cu13 package), so a runtime built with cuDNN still
// loads on a host without it.
//
// MPTRT_CUDA_CONV, read when a conv kernel is prepared, chooses the path:
// unset or `auto` (cuDNN where it takes the kernel, else the direct
// kernel), `cudnn` (prepare fails where cuDNN does not take it: the tests'
// way to know it ran) or `direct`.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CUDA_CUDNN_H
#define MPTRT_SRC_CUDA_CUDNN_H

#include "Status.h"
#include "cuda/CudaContext.h"

#include <string>

#ifdef MPTRT_HAVE_CUDNN
#include <cudnn_graph.h>
#endif

namespace mptrt {
namespace rt {
namespace cuda {

enum class ConvPath { Auto, Cudnn, Direct };

/// MPTRT_CUDA_CONV's choice; an error naming the variable for another value.
Status convPathFromEnvironment(ConvPath *out);

/// How this process runs convolutions on CUDA, for the device's line:
/// "cuDNN 9.19.0 convolutions" or "direct convolutions (<why not cuDNN>)".
std::string convDescription();

/// Destroys the context's cuDNN handle, if a kernel made one.
void releaseCudnn(Context &c);

#ifdef MPTRT_HAVE_CUDNN

/// cuDNN's entry points, from the library opened at run time.
struct CudnnApi {
  decltype(&cudnnGetVersion) getVersion = nullptr;
  decltype(&cudnnGetErrorString) getErrorString = nullptr;
  decltype(&cudnnGetLastErrorString) getLastErrorString = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) setStream = nullptr;
  decltype(&cudnnBackendCreateDescriptor) createDescriptor = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) destroyDescriptor = nullptr;
  decltype(&cudnnBackendSetAttribute) setAttribute = nullptr;
  decltype(&cudnnBackendGetAttribute) getAttribute = nullptr;
  decltype(&cudnnBackendFinalize) finalize = nullptr;
  decltype(&cudnnBackendExecute) execute = nullptr;
};

/// The library, opened once per process; null with `why` when it cannot be.
const CudnnApi *cudnnApi(std::string *why);

/// The context's cuDNN handle on its stream, made by the first call.
Status cudnnHandleOf(const Context &c, cudnnHandle_t *out);

/// "cudnn: <what>: <status> (<cuDNN's last message>)", or ok.
Status cudnnCheck(cudnnStatus_t s, const char *what);

/// One backend descriptor, destroyed with its owner.
class CudnnDescriptor {
public:
  CudnnDescriptor() = default;
  CudnnDescriptor(const CudnnDescriptor &) = delete;
  CudnnDescriptor &operator=(const CudnnDescriptor &) = delete;
  CudnnDescriptor(CudnnDescriptor &&o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  CudnnDescriptor &operator=(CudnnDescriptor &&o) noexcept;
  ~CudnnDescriptor() { reset(); }

  Status create(cudnnBackendDescriptorType_t type);
  Status set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
             const void *values);
  Status finalize();
  void reset();
  cudnnBackendDescriptor_t get() const { return d_; }

private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

#endif // MPTRT_HAVE_CUDNN

} // namespace cuda
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CUDA_CUDNN_H
