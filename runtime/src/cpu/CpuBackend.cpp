//===- CpuBackend.cpp - the CPU backend: host memory and kernel table ----===//
#include "Backend.h"
#include "ChannelsLast.h"
#include "HostMemory.h"
#include "KindTable.h"
#include "cpu/CpuKernels.h"
#include "cpu/ThreadPool.h"

#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// Kernel kind -> prepare function: every kind of KernelSchema.def, by its
/// family (docs/runtime.md lists the families).
const KindEntry<PrepareFn> kKinds[] = {
#define MPTRT_KERNEL(kind, family, minOperands, maxOperands, minResults, maxResults)               \
  {#kind, prepare##family},
#define MPTRT_ATTR(kind, name, type, required)
#include "mptrt/KernelSchema.def"
};

class CpuBackend final : public Backend {
public:
  /// The numerics mode is read from MPTRT_CPU_NUMERICS when the backend is
  /// made (each model load makes one); a bad value fails every prepare.
  CpuBackend() { modeStatus_ = cpuNumericsFromEnvironment(&mode_); }

  const char *name() const override { return "cpu"; }

  Status allocate(uint64_t bytes, void **out) override {
    // aligned_alloc wants a multiple of the alignment; never zero bytes, so
    // every tensor, even an empty one, has a valid address.
    // A corrupt or hostile plan can ask for absurd sizes; with memory
    // overcommit such an allocation might "succeed" and fail only when
    // touched, so refuse anything larger than this process can allocate.
    const uint64_t memory = allocatableBytes();
    if (memory != 0 && bytes > memory)
      return Status::error("cannot allocate " + std::to_string(bytes) + " bytes: more than the " +
                           std::to_string(memory) + " bytes of memory this process can use");
    uint64_t size = (bytes + 63) / 64 * 64;
    if (size == 0)
      size = 64;
    void *p = std::aligned_alloc(64, size);
    if (!p)
      return Status::error("out of host memory allocating " + std::to_string(bytes) + " bytes");
    *out = p;
    return Status::ok();
  }
  void deallocate(void *ptr) override { std::free(ptr); }
  uint64_t memoryBytes() override { return allocatableBytes(); }
  Status copyToDevice(void *dst, const void *src, uint64_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  Status copyToHost(void *dst, const void *src, uint64_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  Status copyOnDevice(void *dst, const void *src, uint64_t bytes) override {
    if (bytes)
      std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  Status fillZero(void *dst, uint64_t bytes) override {
    if (bytes)
      std::memset(dst, 0, bytes);
    return Status::ok();
  }
  Status synchronize() override { return Status::ok(); }

  std::vector<std::string> kernelKinds() const override { return kindNames(kKinds); }

  bool hasKernel(const std::string &kind) const override {
    return findKind(kKinds, kind) != nullptr;
  }

  Status prepareKernel(const KernelView &kernel, std::unique_ptr<PreparedKernel> *out) override {
    MPTRT_TRY(modeStatus_);
    if (const auto *k = findKind(kKinds, kernel.kind())) {
      MPTRT_TRY(kernel.allowSchemaAttributes());
      if (mode_ == CpuNumerics::Fast) {
        MPTRT_TRY(prepareFast(kernel, out));
        if (*out)
          return Status::ok();
      }
      return k->prepare(kernel, out);
    }
    return Status::error("unknown kernel kind '" + kernel.kind() + "'");
  }

  /// The batch norms in both modes (the reference's bits), and the
  /// convolutions in the fast mode where oneDNN takes them.
  Status prepareChannelsLastKernel(const KernelView &kernel,
                                   std::unique_ptr<PreparedKernel> *out) override {
    out->reset();
    MPTRT_TRY(modeStatus_);
    const std::string &kind = kernel.kind();
    const bool norm = kind == "batch_norm" || kind == "batch_norm_train";
    const bool conv = kind == "conv" || kind == "conv_grad_input" || kind == "conv_grad_weight";
    const bool pool = kind == "max_pool" || kind == "average_pool" || kind == "global_average_pool";
    const bool poolGrad = kind == "max_pool_grad" || kind == "average_pool_grad";
    if (!norm && kind != "batch_norm_grad" && !pool && !poolGrad &&
        !(conv && mode_ == CpuNumerics::Fast))
      return Status::ok();
    MPTRT_TRY(kernel.allowSchemaAttributes());
    ChannelsFirstForm form;
    MPTRT_TRY(form.build(kernel));
    if (norm)
      return prepareBatchNormChannelsLast(form.view(), out);
    if (pool)
      return preparePoolChannelsLast(form.view(), out);
    if (poolGrad)
      return preparePoolGradChannelsLast(form.view(), out);
    if (!conv)
      return prepareBatchNormGradChannelsLast(form.view(), out);
    return prepareFastChannelsLast(form.view(), out);
  }

private:
  CpuNumerics mode_ = CpuNumerics::Reference;
  Status modeStatus_ = Status::ok();
};

} // namespace

Status cpuNumericsFromEnvironment(CpuNumerics *out) {
  *out = CpuNumerics::Reference;
  const char *env = std::getenv("MPTRT_CPU_NUMERICS");
  const std::string value = env ? env : "";
  if (value.empty()) {
    // The default: fast where the build has oneDNN (issue 27: the mode for
    // training), else the reference kernels, which every build has.
    if (haveFastNumerics())
      *out = CpuNumerics::Fast;
    return Status::ok();
  }
  if (value == "reference")
    return Status::ok();
  if (value == "fast") {
    if (!haveFastNumerics())
      return Status::error("MPTRT_CPU_NUMERICS=fast: this build has no oneDNN (configure with "
                           "libdnnl-dev installed and MPTRT_ENABLE_DNNL=ON)");
    *out = CpuNumerics::Fast;
    return Status::ok();
  }
  return Status::error("MPTRT_CPU_NUMERICS must be \"reference\" or \"fast\", not \"" + value +
                       "\"");
}

bool haveFastNumerics() {
#ifdef MPTRT_HAVE_DNNL
  return true;
#else
  return false;
#endif
}

#ifndef MPTRT_HAVE_DNNL
Status prepareFast(const KernelView &, std::unique_ptr<PreparedKernel> *out) {
  out->reset();
  return Status::ok();
}
Status prepareFastChannelsLast(const KernelView &, std::unique_ptr<PreparedKernel> *out) {
  out->reset();
  return Status::ok();
}
#endif

} // namespace cpu

std::unique_ptr<Backend> createCpuBackend() { return std::make_unique<cpu::CpuBackend>(); }

void registerCpuBackend(BackendRegistry &registry) {
  BackendFactory f;
  f.name = "cpu";
  f.rank = 0; // the reference: always present, picked when nothing faster is
  f.probe = [](std::string *detail) {
    *detail = "host CPU, " + std::to_string(cpu::numThreads()) +
              " threads (MPTRT_NUM_THREADS, loops on " +
              (std::string(cpu::loopExecutor()) == "openmp" ? "OpenMP's team" : "MPT's pool") +
#ifdef MPTRT_HAVE_BLAS
              "), OpenBLAS GEMMs";
#else
              "), plain-loop GEMMs (built without BLAS: slow)";
#endif
    cpu::CpuNumerics mode;
    if (!cpu::cpuNumericsFromEnvironment(&mode))
      *detail += ", MPTRT_CPU_NUMERICS invalid";
    else if (mode == cpu::CpuNumerics::Fast)
      *detail += ", fast numerics (oneDNN convolutions and matmuls)";
    else
      *detail += ", reference numerics";
    return true;
  };
  f.create = createCpuBackend;
  f.kinds = [] { return kindNames(cpu::kKinds); };
  registry.add(std::move(f));
}

} // namespace rt
} // namespace mptrt
