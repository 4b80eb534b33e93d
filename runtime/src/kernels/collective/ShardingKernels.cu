//===- ShardingKernels.cu - ZeRO-1's collectives on the CUDA backend ------===//
//
// reduce_scatter, all_gather and shard (docs/distributed.md) on the CUDA
// backend: for now a world of one rank only, where a tensor's one shard is
// the tensor itself, so each kernel is a device copy (and reduce_scatter's
// and shard's results, shards of ceil(E / 1) = E elements, hold the whole
// operand). A larger world needs NCCL, which is not built yet (issue 26):
// the kernels are refused at prepare, so the plan fails at load.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "ops/Training.h"

#include "mptrt/Communicator.h"

namespace mptrt {
namespace rt {
namespace cuda {

namespace {

Status runCopies(const Context &c, const ShardParams &, const KernelArgs &args) {
  for (size_t i = 0; i < args.operands.size(); ++i)
    if (args.results[i].data != args.operands[i].data)
      MPTRT_CUDA_TRY(cudaMemcpyAsync(args.results[i].data, args.operands[i].data,
                                     args.operands[i].desc->bytes, cudaMemcpyDeviceToDevice,
                                     streamOf(c)));
  return Status::ok();
}

Status prepareSharding(const Context &c, const KernelView &v,
                       Status (*decode)(const KernelView &, ShardParams *),
                       std::unique_ptr<PreparedKernel> *out) {
  ShardParams p;
  MPTRT_TRY(decode(v, &p));
  MPTRT_TRY(expectSingleRank(v, "sharded optimizer state"));
  if (p.worldSize != 1)
    return v.error("the plan shards its optimizer state over " + std::to_string(p.worldSize) +
                   " ranks, but this world has 1: compile it with --shard-optimizer-state=1");
  *out = std::make_unique<ParamsKernel<ShardParams>>(c, std::move(p), runCopies);
  return Status::ok();
}

} // namespace

Status expectSingleRank(const KernelView &v, const char *what) {
  std::string why;
  Communicator *comm = processCommunicator(&why);
  if (!comm)
    return v.error("no communicator for the data-parallel world: " + why);
  if (comm->size() != 1)
    return v.error(std::string(what) + " over " + std::to_string(comm->size()) +
                   " ranks needs NCCL on the CUDA backend, which is not built yet; train "
                   "with --device cpu (MPI)");
  return Status::ok();
}

Status prepareReduceScatter(const Context &c, const KernelView &v,
                            std::unique_ptr<PreparedKernel> *out) {
  return prepareSharding(c, v, decodeReduceScatter, out);
}
Status prepareAllGather(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareSharding(c, v, decodeAllGather, out);
}
Status prepareShard(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareSharding(c, v, decodeShard, out);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
