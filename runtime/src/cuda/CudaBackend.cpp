//===- CudaBackend.cpp - the CUDA backend: device memory, stream, kernels -===//
//
// One backend is one device (MPTRT_CUDA_DEVICE; in a data-parallel run of
// several ranks the launcher's local rank; else 0), one stream and
// one cuBLASLt handle (and a cuDNN one once a convolution asks). Plans
// keep every tensor in device memory: the arena,
// the parameters (FP32 masters, optimizer state) and the constants, each
// allocated once when the plan is loaded. A run enqueues its kernels on the
// stream and synchronize() waits once at its end, then reads the device
// error word (CudaContext.h). Host copies are synchronous from the caller's
// view: the caller's buffer may be reused as soon as they return.
//
// The kernel table lists the kinds written so far; a plan with another kind
// fails to load on this backend with a message naming it (never a silent
// fallback to the host), and `--device auto` then picks a backend that has
// every kind of the plan (Model.cpp).
//
//===----------------------------------------------------------------------===//
#include "Backend.h"
#include "ChannelsLast.h"
#include "KindTable.h"
#include "cuda/CudaContext.h"
#include "cuda/CudaKernels.h"
#include "cuda/Cudnn.h"
#include "mptrt/Communicator.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace mptrt {
namespace rt {
namespace cuda {

std::string describeDeviceError(const DeviceErrorRecord &e) {
  const std::string value = std::to_string(e.value), position = std::to_string(e.position),
                    bound = std::to_string(e.bound);
  switch (static_cast<DeviceError>(e.code)) {
  case DeviceError::None:
    return "no error";
  case DeviceError::IndexOutOfRange:
    return "gather: index " + value + " at position " + position + " is outside [-" + bound + ", " +
           bound + ")";
  case DeviceError::LabelOutOfRange:
    return "loss: label " + value + " at sample " + position + " is outside [0, " + bound +
           ") and is not the ignore_index";
  case DeviceError::NegativeStep:
    return "the step operand is negative (" + value + ")";
  }
  return "device error " + std::to_string(e.code);
}

Status cudaStatus(int error, const char *what) {
  if (error == 0)
    return Status::ok();
  return Status::error(std::string("cuda: ") + what + ": " +
                       cudaGetErrorString(static_cast<cudaError_t>(error)));
}

namespace {

/// cuBLASLt's workspace: one buffer for every GEMM of the backend.
constexpr uint64_t kLtWorkspaceBytes = 32ull << 20;

/// Kernel kind -> prepare function: every kind of KernelSchema.def, by its
/// family (docs/runtime.md lists the families).
const KindEntry<PrepareFn> kKinds[] = {
#define MPTRT_KERNEL(kind, family, minOperands, maxOperands, minResults, maxResults)               \
  {#kind, prepare##family},
#define MPTRT_ATTR(kind, name, type, required)
#include "mptrt/KernelSchema.def"
};

/// A recorded run: an instantiated CUDA graph.
class CudaRecordedRun final : public RecordedRun {
public:
  explicit CudaRecordedRun(cudaGraphExec_t exec) : exec(exec) {}
  ~CudaRecordedRun() override { cudaGraphExecDestroy(exec); }
  cudaGraphExec_t exec;
};

/// Whether runs are recorded into CUDA graphs and replayed: MPTRT_CUDA_GRAPHS
/// "0" turns it off, anything else (or unset) leaves it on.
bool graphsEnabled() {
  const char *env = std::getenv("MPTRT_CUDA_GRAPHS");
  return !(env && std::string(env) == "0");
}

/// The device this process uses, and the variable that chose it:
/// MPTRT_CUDA_DEVICE; else, in a data-parallel run of several ranks, the
/// launcher's local rank (LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, ...), one
/// device per rank of a machine, as NCCL needs; else 0.
int deviceOrdinal(std::string *source = nullptr) {
  const char *env = std::getenv("MPTRT_CUDA_DEVICE");
  if (env && *env) {
    if (source)
      *source = std::string("MPTRT_CUDA_DEVICE=") + env;
    return std::atoi(env);
  }
  WorldInfo world;
  std::string error;
  if (worldFromEnvironment(&world, &error) && world.size > 1) {
    if (source)
      *source = "the launcher's local rank " + std::to_string(world.localRank) + " (from " +
                world.source + ")";
    return world.localRank;
  }
  if (source)
    *source = "device 0";
  return 0;
}

class CudaBackend final : public Backend {
public:
  CudaBackend() { init_ = init(); }
  ~CudaBackend() override {
    for (cudaEvent_t e : events_)
      cudaEventDestroy(e);
    if (ctx_.errorWord)
      cudaFree(ctx_.errorWord);
    if (ctx_.ltWorkspace)
      cudaFree(ctx_.ltWorkspace);
    if (ctx_.lt)
      cublasLtDestroy(reinterpret_cast<cublasLtHandle_t>(ctx_.lt));
    releaseCudnn(ctx_);
    if (ctx_.stream)
      cudaStreamDestroy(reinterpret_cast<cudaStream_t>(ctx_.stream));
  }

  const char *name() const override { return "cuda"; }

  Status allocate(uint64_t bytes, void **out) override {
    MPTRT_TRY(init_);
    void *p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes ? bytes : 64);
    if (e != cudaSuccess) {
      cudaGetLastError(); // clear it: an allocation failure is not sticky
      size_t freeBytes = 0, totalBytes = 0;
      cudaMemGetInfo(&freeBytes, &totalBytes);
      return Status::error("cuda: cannot allocate " + std::to_string(bytes) +
                           " bytes of device memory (" + std::to_string(freeBytes) + " of " +
                           std::to_string(totalBytes) + " free): " + cudaGetErrorString(e));
    }
    *out = p;
    return Status::ok();
  }
  void deallocate(void *ptr) override { cudaFree(ptr); }
  uint64_t memoryBytes() override {
    size_t freeBytes = 0, totalBytes = 0;
    if (!init_ || cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return totalBytes;
  }

  Status copyToDevice(void *dst, const void *src, uint64_t bytes) override {
    MPTRT_TRY(init_);
    if (!bytes)
      return Status::ok();
    MPTRT_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream()));
    MPTRT_CUDA_TRY(cudaStreamSynchronize(stream()));
    return Status::ok();
  }
  Status copyToHost(void *dst, const void *src, uint64_t bytes) override {
    MPTRT_TRY(init_);
    if (!bytes)
      return Status::ok();
    MPTRT_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream()));
    MPTRT_CUDA_TRY(cudaStreamSynchronize(stream()));
    return Status::ok();
  }
  Status copyOnDevice(void *dst, const void *src, uint64_t bytes) override {
    MPTRT_TRY(init_);
    if (!bytes)
      return Status::ok();
    // cudaMemcpyDefault: the pointers say where they are (unified
    // addressing), so another device's buffer is copied too.
    MPTRT_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream()));
    MPTRT_CUDA_TRY(cudaStreamSynchronize(stream()));
    return Status::ok();
  }
  Status fillZero(void *dst, uint64_t bytes) override {
    MPTRT_TRY(init_);
    if (bytes)
      MPTRT_CUDA_TRY(cudaMemsetAsync(dst, 0, bytes, stream()));
    return Status::ok();
  }
  bool canRecord() const override { return graphs_ && init_; }
  Status beginRecording() override {
    MPTRT_TRY(init_);
    MPTRT_CUDA_TRY(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal));
    return Status::ok();
  }
  Status endRecording(std::unique_ptr<RecordedRun> *out) override {
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream(), &graph);
    if (!out || ended != cudaSuccess) {
      if (graph)
        cudaGraphDestroy(graph);
      cudaGetLastError(); // a failed capture is not sticky
      return out ? cudaStatus(ended, "cudaStreamEndCapture") : Status::ok();
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    MPTRT_CUDA_TRY(made);
    *out = std::make_unique<CudaRecordedRun>(exec);
    return Status::ok();
  }
  Status replay(RecordedRun &run) override {
    MPTRT_CUDA_TRY(cudaGraphLaunch(static_cast<CudaRecordedRun &>(run).exec, stream()));
    return Status::ok();
  }

  /// Timing (Backend::beginTiming): event 0 before the first kernel and
  /// event i + 1 after kernel i, all on the stream; endTiming waits for the
  /// last and reads the elapsed time between neighbours. The events are
  /// created when a run first needs them and reused by every later one.
  Status beginTiming(size_t kernels) override {
    MPTRT_TRY(init_);
    while (events_.size() < kernels + 1) {
      cudaEvent_t e = nullptr;
      MPTRT_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDefault));
      events_.push_back(e);
    }
    timedKernels_ = kernels;
    MPTRT_CUDA_TRY(cudaEventRecord(events_[0], stream()));
    return Status::ok();
  }
  Status markKernel(size_t position) override {
    if (position >= timedKernels_)
      return Status::error("markKernel: kernel " + std::to_string(position) + " of " +
                           std::to_string(timedKernels_) + " timed");
    MPTRT_CUDA_TRY(cudaEventRecord(events_[position + 1], stream()));
    return Status::ok();
  }
  Status endTiming(double *ms, size_t kernels) override {
    if (kernels != timedKernels_)
      return Status::error("endTiming: " + std::to_string(kernels) + " kernels, " +
                           std::to_string(timedKernels_) + " timed");
    MPTRT_CUDA_TRY(cudaEventSynchronize(events_[kernels]));
    for (size_t i = 0; i < kernels; ++i) {
      float elapsed = 0;
      MPTRT_CUDA_TRY(cudaEventElapsedTime(&elapsed, events_[i], events_[i + 1]));
      ms[i] = elapsed;
    }
    return Status::ok();
  }

  Status synchronize() override {
    MPTRT_TRY(init_);
    MPTRT_CUDA_TRY(cudaStreamSynchronize(stream()));
    DeviceErrorRecord error;
    MPTRT_CUDA_TRY(cudaMemcpy(&error, ctx_.errorWord, sizeof error, cudaMemcpyDeviceToHost));
    if (error.code != 0) {
      MPTRT_CUDA_TRY(cudaMemset(ctx_.errorWord, 0, sizeof error));
      return Status::error("cuda: " + describeDeviceError(error));
    }
    return Status::ok();
  }

  std::vector<std::string> kernelKinds() const override { return kindNames(kKinds); }
  bool hasKernel(const std::string &kind) const override {
    return findKind(kKinds, kind) != nullptr;
  }
  Status prepareKernel(const KernelView &kernel, std::unique_ptr<PreparedKernel> *out) override {
    MPTRT_TRY(init_);
    if (const auto *k = findKind(kKinds, kernel.kind())) {
      MPTRT_TRY(kernel.allowSchemaAttributes());
      return k->prepare(ctx_, kernel, out);
    }
    return Status::error("the cuda backend has no kernel '" + kernel.kind() +
                         "' yet (docs/runtime.md lists the kinds each backend has)");
  }

  /// The batch norms (the channels-first kernels' bits), and the
  /// convolutions through cuDNN with NHWC strides where cuDNN takes them
  /// (MPTRT_CUDA_CONV `auto`; with `cudnn` a convolution cuDNN does not
  /// take channels last fails the load, as a channels-first one does); the
  /// direct convolutions run channels first between transposes.
  Status prepareChannelsLastKernel(const KernelView &kernel,
                                   std::unique_ptr<PreparedKernel> *out) override {
    out->reset();
    MPTRT_TRY(init_);
    const std::string &kind = kernel.kind();
    const bool norm = kind == "batch_norm" || kind == "batch_norm_train";
    const bool conv = kind == "conv" || kind == "conv_grad_input" || kind == "conv_grad_weight";
    const bool pool = kind == "max_pool" || kind == "average_pool" || kind == "global_average_pool";
    const bool poolGrad = kind == "max_pool_grad" || kind == "average_pool_grad";
    if (!norm && !conv && !pool && !poolGrad && kind != "batch_norm_grad")
      return Status::ok();
    ConvPath path = ConvPath::Auto;
    if (conv) {
      MPTRT_TRY(convPathFromEnvironment(&path));
      if (path == ConvPath::Direct)
        return Status::ok();
    }
    MPTRT_TRY(kernel.allowSchemaAttributes());
    ChannelsFirstForm form;
    MPTRT_TRY(form.build(kernel));
    if (norm)
      return prepareBatchNormChannelsLast(ctx_, form.view(), out);
    if (pool)
      return preparePoolChannelsLast(ctx_, form.view(), out);
    if (poolGrad)
      return preparePoolGradChannelsLast(ctx_, form.view(), out);
    if (!conv)
      return prepareBatchNormGradChannelsLast(ctx_, form.view(), out);
    std::string whyNot;
    if (prepareCudnnConv(ctx_, form.view(), out, &whyNot, /*channelsLast=*/true))
      return Status::ok();
    out->reset();
    if (path == ConvPath::Cudnn)
      return Status::error(kind +
                           ": MPTRT_CUDA_CONV=cudnn, but cuDNN does not take it channels "
                           "last: " +
                           whyNot);
    return Status::ok();
  }

private:
  cudaStream_t stream() const { return reinterpret_cast<cudaStream_t>(ctx_.stream); }

  Status init() {
    ctx_.deviceOrdinal = deviceOrdinal();
    MPTRT_CUDA_TRY(cudaSetDevice(ctx_.deviceOrdinal));
    MPTRT_CUDA_TRY(
        cudaDeviceGetAttribute(&ctx_.smCount, cudaDevAttrMultiProcessorCount, ctx_.deviceOrdinal));
    cudaStream_t s = nullptr;
    MPTRT_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    ctx_.stream = reinterpret_cast<CUstream_st *>(s);
    cublasLtHandle_t lt = nullptr;
    if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS)
      return Status::error("cuda: cublasLtCreate failed");
    ctx_.lt = reinterpret_cast<cublasLtContext *>(lt);
    MPTRT_CUDA_TRY(cudaMalloc(&ctx_.ltWorkspace, kLtWorkspaceBytes));
    ctx_.ltWorkspaceBytes = kLtWorkspaceBytes;
    MPTRT_CUDA_TRY(
        cudaMalloc(reinterpret_cast<void **>(&ctx_.errorWord), sizeof(DeviceErrorRecord)));
    MPTRT_CUDA_TRY(cudaMemset(ctx_.errorWord, 0, sizeof(DeviceErrorRecord)));
    return Status::ok();
  }

  Context ctx_;
  Status init_;
  std::vector<cudaEvent_t> events_; // timing: kernels + 1 of the largest timed run
  size_t timedKernels_ = 0;
  bool graphs_ = graphsEnabled();
};

/// Whether a device is usable; `detail` names it, or says why not.
bool probe(std::string *detail) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *detail =
        std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
    return false;
  }
  std::string source;
  const int ordinal = deviceOrdinal(&source);
  if (ordinal < 0 || ordinal >= count) {
    *detail = "device " + std::to_string(ordinal) + " (" + source + "), but the host has " +
              std::to_string(count) + " CUDA device(s)";
    return false;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, ordinal) != cudaSuccess) {
    cudaGetLastError();
    *detail = "cannot read the properties of CUDA device " + std::to_string(ordinal);
    return false;
  }
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB",
                static_cast<double>(prop.totalGlobalMem) / (1ull << 30));
  *detail = std::string(prop.name) + ", sm_" + std::to_string(prop.major) +
            std::to_string(prop.minor) + ", " + memory + ", device " + std::to_string(ordinal);
  if (prop.major < 8) {
    *detail += ": the CUDA backend needs sm_80 or newer";
    return false;
  }
  *detail += ", " + convDescription();
  return true;
}

} // namespace
} // namespace cuda

std::unique_ptr<Backend> createCudaBackend() { return std::make_unique<cuda::CudaBackend>(); }

void registerCudaBackend(BackendRegistry &registry) {
  BackendFactory f;
  f.name = "cuda";
  f.rank = 10; // preferred by --device auto whenever a device is present
  f.probe = cuda::probe;
  f.create = createCudaBackend;
  f.kinds = [] { return kindNames(cuda::kKinds); };
  registry.add(std::move(f));
}

} // namespace rt
} // namespace mptrt
