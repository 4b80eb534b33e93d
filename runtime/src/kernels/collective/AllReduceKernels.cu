//===- AllReduceKernels.cu - all_reduce on the CUDA backend ---------------===//
//
// The CUDA backend's all_reduce (docs/distributed.md): for now only a world
// of one rank, where each result is a device copy of its operand. A larger
// world needs NCCL, which is not built yet (issue 26): the kernel is refused
// at prepare with that message, so the plan fails at load, before a step.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "ops/Training.h"

namespace mptrt {
namespace rt {
namespace cuda {

namespace {

Status runAllReduce(const Context &c, const AllReduceParams &, const KernelArgs &args) {
  for (size_t i = 0; i < args.operands.size(); ++i)
    if (args.results[i].data != args.operands[i].data)
      MPTRT_CUDA_TRY(cudaMemcpyAsync(args.results[i].data, args.operands[i].data,
                                     args.operands[i].desc->bytes, cudaMemcpyDeviceToDevice,
                                     streamOf(c)));
  return Status::ok();
}

} // namespace

Status prepareAllReduce(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  AllReduceParams p;
  MPTRT_TRY(decodeAllReduce(v, &p));
  MPTRT_TRY(expectSingleRank(v, "all_reduce"));
  *out = std::make_unique<ParamsKernel<AllReduceParams>>(c, std::move(p), runAllReduce);
  return Status::ok();
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
