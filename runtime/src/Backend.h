//===- Backend.h - what a device must provide to run plans -------*- C++ -*-===//
//
// The model (Model.cpp) owns the plan, the bindings and the schedule; a
// backend owns device memory and kernels. Loading a plan asks the backend to
// prepare every kernel once (decode and check its operands and attributes,
// precompute loop bounds); a run then calls each prepared kernel with the
// device addresses of its tensors. Memory handed to kernels comes from
// `allocate`; the model moves host data in and out only through
// `copyToDevice` / `copyToHost`, so a device backend (CUDA, later) fits the
// same model: its pointers are device pointers and `run` enqueues work.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_BACKEND_H
#define MPTRT_SRC_BACKEND_H

#include "Status.h"
#include "TensorDesc.h"
#include "ops/KernelView.h"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

/// One kernel of the plan, checked and ready to run (docs/runtime.md,
/// "Prepare, then run"). Preparing does every shape and attribute check and
/// settles every size; `run` then allocates nothing (no host or device
/// memory, no std::vector or std::string on its success path), so a plan
/// can run inside a CUDA graph.
class PreparedKernel {
public:
  virtual ~PreparedKernel() = default;
  /// Scratch memory `run` needs in `args.workspace`, in bytes; fixed at
  /// prepare. The model allocates one workspace for the largest of its
  /// kernels, once, when it is loaded.
  virtual uint64_t workspaceBytes() const { return 0; }
  /// Runs on the tensors in `args`, whose types are those it was prepared
  /// with. Fails only on data-dependent errors (an index out of range).
  /// Allocates nothing; scratch comes from `args.workspace`.
  virtual Status run(const KernelArgs &args) = 0;
};

/// The work one run of an entry point enqueued, recorded by a backend that
/// can replay it (the CUDA backend's graphs; Backend::beginRecording).
class RecordedRun {
public:
  virtual ~RecordedRun() = default;
};

class Backend {
public:
  virtual ~Backend() = default;

  /// "cpu", "cuda", ...
  virtual const char *name() const = 0;

  /// Device memory of at least `bytes` bytes (64-byte aligned), or an error.
  virtual Status allocate(uint64_t bytes, void **out) = 0;
  /// The memory `allocate` draws from, in bytes (the machine's or the
  /// device's); 0 when unknown. A plan that needs more is refused at load,
  /// before anything is allocated.
  virtual uint64_t memoryBytes() { return 0; }
  virtual void deallocate(void *ptr) = 0;
  virtual Status copyToDevice(void *dst, const void *src, uint64_t bytes) = 0;
  virtual Status copyToHost(void *dst, const void *src, uint64_t bytes) = 0;
  /// Copies between two buffers of this backend's memory (on a GPU, device
  /// memory another library allocated, such as a PyTorch tensor's), and
  /// returns once the copy is complete. mptrt_bind_input_device and
  /// mptrt_read_output_device use it.
  virtual Status copyOnDevice(void *dst, const void *src, uint64_t bytes) = 0;
  virtual Status fillZero(void *dst, uint64_t bytes) = 0;
  /// Waits for all work enqueued by prepared kernels.
  virtual Status synchronize() = 0;

  /// Recording (docs/runtime.md, "Replaying a step"): a backend that can
  /// replay what one run enqueued says so here. Between beginRecording and
  /// endRecording, prepared kernels' work is recorded and not run;
  /// endRecording(nullptr) discards it (after a failed run). replay
  /// enqueues the recorded work again; synchronize waits for it as usual.
  virtual bool canRecord() const { return false; }
  virtual Status beginRecording() { return Status::error("this backend cannot record runs"); }
  virtual Status endRecording(std::unique_ptr<RecordedRun> *out) {
    (void)out;
    return Status::error("this backend cannot record runs");
  }
  virtual Status replay(RecordedRun &run) {
    (void)run;
    return Status::error("this backend cannot record runs");
  }

  /// Per-kernel timing (docs/runtime.md, "Profiling a run"), for a run that
  /// is never recorded: beginTiming(n) before the first of its n kernels,
  /// markKernel(i) after kernel i (0 <= i < n), and endTiming after the
  /// run's synchronize, which writes the n kernels' milliseconds to ms[0..n).
  /// The default, for backends whose kernels finish before `run` returns
  /// (the CPU), reads the host's steady clock; the CUDA backend records
  /// events on its stream. Allocates only when n grows past earlier runs.
  virtual Status beginTiming(size_t kernels) {
    if (marks_.size() < kernels + 1)
      marks_.resize(kernels + 1);
    timedKernels_ = kernels;
    marks_[0] = std::chrono::steady_clock::now();
    return Status::ok();
  }
  virtual Status markKernel(size_t position) {
    if (position >= timedKernels_)
      return Status::error("markKernel: kernel " + std::to_string(position) + " of " +
                           std::to_string(timedKernels_) + " timed");
    marks_[position + 1] = std::chrono::steady_clock::now();
    return Status::ok();
  }
  virtual Status endTiming(double *ms, size_t kernels) {
    if (kernels != timedKernels_)
      return Status::error("endTiming: " + std::to_string(kernels) + " kernels, " +
                           std::to_string(timedKernels_) + " timed");
    for (size_t i = 0; i < kernels; ++i)
      ms[i] = std::chrono::duration<double, std::milli>(marks_[i + 1] - marks_[i]).count();
    return Status::ok();
  }

  /// Whether this backend has a kernel of this kind.
  virtual bool hasKernel(const std::string &kind) const = 0;
  /// Every kernel kind this backend has, in its own order.
  virtual std::vector<std::string> kernelKinds() const = 0;

  /// Decodes and checks one kernel; fails for an unknown kind or operands,
  /// results or attributes that the kind does not accept.
  virtual Status prepareKernel(const KernelView &kernel, std::unique_ptr<PreparedKernel> *out) = 0;

  /// Prepares a channels-last kernel (`layout = nhwc`, ChannelsLast.h) to
  /// run on its channels-last tensors as they are, where this backend has
  /// such a kernel for it; leaves `*out` null where it has none, and the
  /// model then runs the kernel's channels-first form between transposes.
  /// A native kernel means what that form means: bit for bit where the
  /// backend's numerics are exact emulation (the CPU reference's batch
  /// norm), within the fast kernels' error bounds where they are not.
  virtual Status prepareChannelsLastKernel(const KernelView &kernel,
                                           std::unique_ptr<PreparedKernel> *out) {
    (void)kernel;
    out->reset();
    return Status::ok();
  }

private:
  // The default timing: the host clock before the first kernel and after
  // each (marks_[i + 1] - marks_[i] is kernel i).
  std::vector<std::chrono::steady_clock::time_point> marks_;
  size_t timedKernels_ = 0;
};

/// How the registry knows a backend: its name, whether this host can run
/// it, and how to make one. Each backend registers itself with a
/// `register<Name>Backend` function (BackendRegistry.cpp calls the ones the
/// build has).
struct BackendFactory {
  std::string name;
  /// `--device auto` takes the available backend with the highest rank.
  int rank = 0;
  /// Whether this host can run the backend; `*detail` describes the device
  /// when it can ("host CPU, 16 threads") and says why not when it cannot.
  std::function<bool(std::string *detail)> probe;
  std::function<std::unique_ptr<Backend>()> create;
  /// The kernel kinds of the backend (Backend::kernelKinds), known without a
  /// device, so that a build can say what its backends cover on any host.
  std::function<std::vector<std::string>()> kinds;
};

class BackendRegistry {
public:
  /// The registry of this build, with every built-in backend registered.
  static BackendRegistry &get();
  void add(BackendFactory factory);
  const std::vector<BackendFactory> &factories() const { return factories_; }
  const BackendFactory *find(const std::string &name) const;
  /// "cpu, cuda": the names, for messages.
  std::string names() const;

private:
  std::vector<BackendFactory> factories_;
};

/// The backend named `name`. "auto" (or empty) picks the best backend this
/// host can run; an unknown name is an error that lists the backends of this
/// build, and a known one this host cannot run says why.
Status createBackend(const std::string &name, std::unique_ptr<Backend> *out);
/// The same, for a plan with these kernel kinds: "auto" then picks the best
/// available backend that has every one of them (a faster backend that
/// lacks one is passed over), so a plan always loads where some backend of
/// the build can run it. A named backend is taken as asked; preparing the
/// plan then names a kind it lacks.
Status createBackendFor(const std::string &name, const std::vector<std::string> &kinds,
                        std::unique_ptr<Backend> *out);

std::unique_ptr<Backend> createCpuBackend();
void registerCpuBackend(BackendRegistry &registry);
/// Only in builds with the CUDA backend (MPTRT_HAVE_CUDA).
std::unique_ptr<Backend> createCudaBackend();
void registerCudaBackend(BackendRegistry &registry);

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_BACKEND_H
