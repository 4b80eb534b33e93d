//===- CpuBackend.cpp - the CPU backend: host memory and kernel table ----===//
#include "Backend.h"
#include "cpu/CpuKernels.h"
#include "cpu/ThreadPool.h"

#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// Kernel kind -> prepare function. docs/runtime.md lists the same table.
struct KindEntry {
  const char *kind;
  PrepareFn prepare;
};

const KindEntry kKinds[] = {
    // Elementwise unary.
    {"sqrt", prepareUnary}, {"exp", prepareUnary}, {"log", prepareUnary},
    {"erf", prepareUnary}, {"tanh", prepareUnary}, {"sigmoid", prepareUnary},
    {"relu", prepareUnary}, {"neg", prepareUnary}, {"abs", prepareUnary},
    {"not", prepareUnary}, {"leaky_relu", prepareUnary}, {"gelu", prepareUnary},
    {"clip", prepareUnary},
    // Elementwise binary with broadcasting, and select.
    {"add", prepareBinary}, {"sub", prepareBinary}, {"mul", prepareBinary},
    {"div", prepareBinary}, {"pow", prepareBinary}, {"max", prepareBinary},
    {"min", prepareBinary}, {"equal", prepareBinary}, {"less", prepareBinary},
    {"greater", prepareBinary}, {"where", prepareWhere},
    // Contractions.
    {"matmul", prepareMatMul}, {"gemm", prepareGemm}, {"conv", prepareConv},
    // Pooling.
    {"max_pool", preparePool}, {"average_pool", preparePool},
    {"global_average_pool", preparePool},
    // Normalisation, softmax.
    {"batch_norm", prepareBatchNorm}, {"batch_norm_train", prepareBatchNorm},
    {"layer_norm", prepareLayerNorm}, {"softmax", prepareSoftmax},
    {"log_softmax", prepareSoftmax},
    // Reductions and losses.
    {"reduce_sum", prepareReduce}, {"reduce_mean", prepareReduce},
    {"reduce_max", prepareReduce}, {"reduce_l2", prepareReduce},
    {"softmax_cross_entropy_loss", prepareLoss}, {"nll_loss", prepareLoss},
    // Data movement.
    {"copy", prepareCopy}, {"identity", prepareCopy}, {"reshape", prepareCopy},
    {"flatten", prepareCopy}, {"squeeze", prepareCopy}, {"unsqueeze", prepareCopy},
    {"cast", prepareCast}, {"quantize", prepareQuantize}, {"dropout", prepareDropout}, {"transpose", prepareTranspose},
    {"concat", prepareConcat}, {"split", prepareSplit}, {"slice", prepareSlice},
    {"gather", prepareGather}, {"expand", prepareExpand}, {"trilu", prepareTrilu},
    {"constant_of_shape", prepareFill},
    // Backward (docs/training.md).
    {"unary_grad", prepareUnaryGrad}, {"softmax_grad", prepareSoftmaxGrad},
    {"layer_norm_grad", prepareLayerNormGrad},
    {"softmax_cross_entropy_loss_grad", prepareLossGrad}, {"nll_loss_grad", prepareLossGrad},
    {"gather_grad", prepareGatherGrad}, {"slice_grad", prepareSliceGrad},
    {"max_pool_grad", preparePoolGrad}, {"average_pool_grad", preparePoolGrad},
    {"conv_grad_input", prepareConvGrad}, {"conv_grad_weight", prepareConvGrad},
    {"batch_norm_grad", prepareBatchNormGrad},
    // Training: loss scaling, norms, optimizer updates, counters, FP8 scales.
    {"scale_loss", prepareScaleLoss}, {"unscale", prepareUnscale},
    {"all_finite", prepareAllFinite}, {"global_norm", prepareGlobalNorm},
    {"clip_by_norm", prepareClipByNorm}, {"sgd_update", prepareSgdUpdate},
    {"adamw_update", prepareAdamWUpdate}, {"update_loss_scale", prepareUpdateLossScale},
    {"lr_schedule", prepareLrSchedule}, {"advance_step", prepareAdvanceStep},
    {"amax", prepareAmax}, {"update_fp8_scale", prepareUpdateFp8Scale},
};

std::vector<std::string> kindNames() {
  std::vector<std::string> kinds;
  for (const KindEntry &k : kKinds)
    kinds.push_back(k.kind);
  return kinds;
}

/// Physical memory in bytes, or 0 if unknown.
uint64_t physicalMemoryBytes() {
  static const uint64_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * pageSize : 0;
  }();
  return bytes;
}

class CpuBackend final : public Backend {
public:
  const char *name() const override { return "cpu"; }

  Status allocate(uint64_t bytes, void **out) override {
    // aligned_alloc wants a multiple of the alignment; never zero bytes, so
    // every tensor, even an empty one, has a valid address.
    // A corrupt or hostile plan can ask for absurd sizes; with memory
    // overcommit such an allocation might "succeed" and fail only when
    // touched, so refuse anything larger than the machine's memory.
    const uint64_t physical = physicalMemoryBytes();
    if (physical != 0 && bytes > physical)
      return Status::error("cannot allocate " + std::to_string(bytes) +
                           " bytes: more than the machine's " + std::to_string(physical) +
                           " bytes of memory");
    uint64_t size = (bytes + 63) / 64 * 64;
    if (size == 0)
      size = 64;
    void *p = std::aligned_alloc(64, size);
    if (!p)
      return Status::error("out of host memory allocating " + std::to_string(bytes) +
                           " bytes");
    *out = p;
    return Status::ok();
  }
  void deallocate(void *ptr) override { std::free(ptr); }
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

  std::vector<std::string> kernelKinds() const override { return kindNames(); }

  bool hasKernel(const std::string &kind) const override {
    for (const KindEntry &k : kKinds)
      if (kind == k.kind)
        return true;
    return false;
  }

  Status prepareKernel(const KernelView &kernel,
                       std::unique_ptr<PreparedKernel> *out) override {
    for (const KindEntry &k : kKinds)
      if (kernel.kind() == k.kind) {
        MPTRT_TRY(kernel.allowSchemaAttributes());
        return k.prepare(kernel, out);
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
  f.kinds = cpu::kindNames;
  registry.add(std::move(f));
}

} // namespace rt
} // namespace mptrt
