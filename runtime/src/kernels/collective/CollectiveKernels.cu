//===- CollectiveKernels.cu - data parallelism's kernels on the GPU -------===//
//
// all_reduce, reduce_scatter, all_gather and shard on the CUDA backend
// (docs/distributed.md), with the CPU kernels' numerics: every operand is
// widened exactly into an f32 staging buffer (the kernel's workspace), the
// staging buffer is summed over the ranks (DeviceCollectives: NCCL, on the
// backend's stream), and each result is the sum divided by the world size,
// rounded once into its dtype. A bucket's shards travel as one block per
// rank, as on the CPU (collective/ShardingKernels.cpp).
//
// In a world of one process (and no MPTRT_DEVICE_COLLECTIVES=nccl) there
// are no device collectives: all_reduce copies, and a tensor's one shard is
// the tensor itself.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "cuda/DeviceCollectives.h"
#include "ops/Training.h"

#include "mptrt/Communicator.h"

namespace mptrt {
namespace rt {
namespace cuda {

namespace {

/// dst[k] = f32(src[begin + k]) for k < count, 0 for count <= k < width.
__global__ void widenKernel(DType dtype, const void *src, int64_t begin, int64_t count, float *dst,
                            int64_t width) {
  MPTRT_FOR_EACH(k, width) { dst[k] = k < count ? loadF32(dtype, src, begin + k) : 0.0f; }
}

/// dst[begin + k] = round(src[k] * scale) into `dtype`, for k < count.
__global__ void narrowKernel(const float *src, float scale, DType dtype, void *dst, int64_t begin,
                             int64_t count) {
  MPTRT_FOR_EACH(k, count) { storeF32(dtype, dst, begin + k, src[k] * scale); }
}

Status widen(const Context &c, const TensorArg &t, int64_t begin, int64_t count, float *dst,
             int64_t width) {
  if (width == 0)
    return Status::ok();
  widenKernel<<<blocksFor(c, width), kThreads, 0, streamOf(c)>>>(t.desc->dtype, t.data, begin,
                                                                 count, dst, width);
  return launched("collective staging kernel");
}

Status narrow(const Context &c, const float *src, float scale, const TensorArg &t, int64_t begin,
              int64_t count) {
  if (count == 0)
    return Status::ok();
  narrowKernel<<<blocksFor(c, count), kThreads, 0, streamOf(c)>>>(src, scale, t.desc->dtype, t.data,
                                                                  begin, count);
  return launched("collective staging kernel");
}

/// The device collectives, or null in a world of one process; an error
/// when the world is not `worldSize` ranks (0: any).
Status collectivesFor(const Context &c, const KernelView &v, int64_t worldSize,
                      DeviceCollectives **out) {
  MPTRT_TRY(deviceCollectives(c.deviceOrdinal, out));
  std::string why;
  Communicator *world = processCommunicator(&why);
  if (!world)
    return v.error("no communicator for the data-parallel world: " + why);
  if (worldSize > 0 && world->size() != worldSize)
    return v.error("the plan shards its optimizer state over " + std::to_string(worldSize) +
                   " ranks (--shard-optimizer-state=" + std::to_string(worldSize) +
                   "), but this world has " + std::to_string(world->size()) +
                   ": compile it with --shard-optimizer-state=" + std::to_string(world->size()) +
                   " (a checkpoint resumes under any world size)");
  return Status::ok();
}

/// A collective kernel's state: its parameters and the device collectives
/// (null in a world of one process).
template <class Params> class CollectiveKernel : public PreparedKernel {
public:
  CollectiveKernel(const Context &c, Params p, DeviceCollectives *coll)
      : c_(c), p_(std::move(p)), coll_(coll) {}

protected:
  const Context &c_;
  Params p_;
  DeviceCollectives *coll_;
};

class AllReduceKernel final : public CollectiveKernel<AllReduceParams> {
public:
  using CollectiveKernel::CollectiveKernel;

  uint64_t workspaceBytes() const override {
    return coll_ ? static_cast<uint64_t>(p_.total) * sizeof(float) : 0;
  }

  Status run(const KernelArgs &args) override {
    const size_t n = args.operands.size();
    if (!coll_) { // one process: the mean is the operand
      for (size_t i = 0; i < n; ++i)
        if (args.results[i].data != args.operands[i].data)
          MPTRT_CUDA_TRY(cudaMemcpyAsync(args.results[i].data, args.operands[i].data,
                                         args.operands[i].desc->bytes, cudaMemcpyDeviceToDevice,
                                         streamOf(c_)));
      return Status::ok();
    }
    float *staging = static_cast<float *>(args.workspace);
    int64_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      MPTRT_TRY(widen(c_, args.operands[i], 0, p_.numel[i], staging + at, p_.numel[i]));
      at += p_.numel[i];
    }
    MPTRT_TRY(coll_->allReduceSum(staging, static_cast<size_t>(p_.total), c_.stream));
    const float inverse = p_.sum ? 1.0f : 1.0f / static_cast<float>(coll_->size());
    at = 0;
    for (size_t i = 0; i < n; ++i) {
      MPTRT_TRY(narrow(c_, staging + at, inverse, args.results[i], 0, p_.numel[i]));
      at += p_.numel[i];
    }
    return Status::ok();
  }
};

class ReduceScatterKernel final : public CollectiveKernel<ShardParams> {
public:
  using CollectiveKernel::CollectiveKernel;
  uint64_t workspaceBytes() const override { return p_.stagingBytes(); }

  Status run(const KernelArgs &args) override {
    float *staging = static_cast<float *>(args.workspace);
    float *mine = staging + p_.shardTotal * p_.worldSize;
    for (size_t i = 0; i < args.operands.size(); ++i)
      for (int64_t r = 0; r < p_.worldSize; ++r) {
        const ShardParams::Range s = p_.range(i, r);
        MPTRT_TRY(widen(c_, args.operands[i], s.begin, s.count,
                        staging + r * p_.shardTotal + p_.offset[i], p_.shard[i]));
      }
    float scale = 1.0f;
    if (coll_) {
      MPTRT_TRY(
          coll_->reduceScatterSum(staging, mine, static_cast<size_t>(p_.shardTotal), c_.stream));
      scale = 1.0f / static_cast<float>(coll_->size());
    } else {
      mine = staging; // one rank: its one block
    }
    for (size_t i = 0; i < args.results.size(); ++i)
      MPTRT_TRY(narrow(c_, mine + p_.offset[i], scale, args.results[i], 0, p_.shard[i]));
    return Status::ok();
  }
};

class AllGatherKernel final : public CollectiveKernel<ShardParams> {
public:
  using CollectiveKernel::CollectiveKernel;
  uint64_t workspaceBytes() const override { return p_.stagingBytes(); }

  Status run(const KernelArgs &args) override {
    float *mine = static_cast<float *>(args.workspace);
    float *all = mine + p_.shardTotal;
    for (size_t i = 0; i < args.operands.size(); ++i)
      MPTRT_TRY(widen(c_, args.operands[i], 0, p_.shard[i], mine + p_.offset[i], p_.shard[i]));
    if (coll_)
      MPTRT_TRY(coll_->allGather(mine, all, static_cast<size_t>(p_.shardTotal), c_.stream));
    else
      all = mine; // one rank: its one block
    for (size_t i = 0; i < args.results.size(); ++i)
      for (int64_t r = 0; r < p_.worldSize; ++r) {
        const ShardParams::Range s = p_.range(i, r);
        MPTRT_TRY(narrow(c_, all + r * p_.shardTotal + p_.offset[i], 1.0f, args.results[i], s.begin,
                         s.count));
      }
    return Status::ok();
  }
};

Status runShard(const Context &c, const ShardParams &p, const KernelArgs &args) {
  const TensorArg &in = args.operands[0];
  const size_t size = plan::dtypeSize(in.desc->dtype);
  std::string why;
  Communicator *world = processCommunicator(&why);
  if (!world)
    return Status::error("shard: no communicator for the data-parallel world: " + why);
  const ShardParams::Range s = p.range(0, world->rank());
  char *out = static_cast<char *>(args.results[0].data);
  if (s.count > 0)
    MPTRT_CUDA_TRY(cudaMemcpyAsync(out, static_cast<const char *>(in.data) + s.begin * size,
                                   s.count * size, cudaMemcpyDeviceToDevice, streamOf(c)));
  if (p.shard[0] > s.count)
    MPTRT_CUDA_TRY(
        cudaMemsetAsync(out + s.count * size, 0, (p.shard[0] - s.count) * size, streamOf(c)));
  return Status::ok();
}

} // namespace

Status prepareAllReduce(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  AllReduceParams p;
  MPTRT_TRY(decodeAllReduce(v, &p));
  DeviceCollectives *coll = nullptr;
  MPTRT_TRY(collectivesFor(c, v, 0, &coll));
  *out = std::make_unique<AllReduceKernel>(c, std::move(p), coll);
  return Status::ok();
}

Status prepareReduceScatter(const Context &c, const KernelView &v,
                            std::unique_ptr<PreparedKernel> *out) {
  ShardParams p;
  MPTRT_TRY(decodeReduceScatter(v, &p));
  DeviceCollectives *coll = nullptr;
  MPTRT_TRY(collectivesFor(c, v, p.worldSize, &coll));
  *out = std::make_unique<ReduceScatterKernel>(c, std::move(p), coll);
  return Status::ok();
}

Status prepareAllGather(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  ShardParams p;
  MPTRT_TRY(decodeAllGather(v, &p));
  DeviceCollectives *coll = nullptr;
  MPTRT_TRY(collectivesFor(c, v, p.worldSize, &coll));
  *out = std::make_unique<AllGatherKernel>(c, std::move(p), coll);
  return Status::ok();
}

Status prepareShard(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  ShardParams p;
  MPTRT_TRY(decodeShard(v, &p));
  DeviceCollectives *coll = nullptr;
  MPTRT_TRY(collectivesFor(c, v, p.worldSize, &coll));
  *out = std::make_unique<ParamsKernel<ShardParams>>(c, std::move(p), runShard);
  return Status::ok();
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
