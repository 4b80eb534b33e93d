//===- CpuBackend.cpp - the CPU backend: host memory and kernel table ----===//
#include "Backend.h"
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
    if (const auto *k = findKind(kKinds, kernel.kind())) {
      MPTRT_TRY(kernel.allowSchemaAttributes());
      return k->prepare(kernel, out);
    }
    return Status::error("unknown kernel kind '" + kernel.kind() + "'");
  }
};

} // namespace
} // namespace cpu

std::unique_ptr<Backend> createCpuBackend() { return std::make_unique<cpu::CpuBackend>(); }

void registerCpuBackend(BackendRegistry &registry) {
  BackendFactory f;
  f.name = "cpu";
  f.rank = 0; // the reference: always present, picked when nothing faster is
  f.probe = [](std::string *detail) {
    *detail = "host CPU, " + std::to_string(cpu::numThreads()) +
#ifdef MPTRT_HAVE_BLAS
              " threads (MPTRT_NUM_THREADS), OpenBLAS GEMMs";
#else
              " threads (MPTRT_NUM_THREADS), plain-loop GEMMs (built without BLAS: slow)";
#endif
    return true;
  };
  f.create = createCpuBackend;
  f.kinds = [] { return kindNames(cpu::kKinds); };
  registry.add(std::move(f));
}

} // namespace rt
} // namespace mptrt
