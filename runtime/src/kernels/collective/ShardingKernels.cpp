//===- ShardingKernels.cpp - ZeRO-1's collectives on the CPU, through MPI -===//
//
// reduce_scatter, all_gather and shard (docs/distributed.md, "Sharded
// optimizer state"). A tensor of E elements has one shard of S = ceil(E / N)
// elements per rank; rank r's holds elements [r S, r S + S), zero past E.
// A bucket's shards travel as one block per rank: block r is rank r's shard
// of every tensor of the bucket, one after the other.
//
//   reduce_scatter  staging = N blocks, f32 (each operand widened exactly);
//                   the communicator sums them over the ranks and returns
//                   this rank's block (MPI_Reduce_scatter_block, MPI_SUM,
//                   MPI_FLOAT); result = round(sum / N) into the operand's
//                   type
//   all_gather      this rank's block (each shard widened exactly to f32),
//                   MPI_Allgather of every rank's, then each result's
//                   elements narrowed back (exact: they were its dtype)
//   shard           a copy of this rank's elements, zero past E
//
// Every rank receives the same bytes, as for all_reduce. The plan fixes N
// (--shard-optimizer-state=N): a world of another size is refused at load.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "ops/Training.h"

#include "mptrt/Communicator.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// The process's communicator, if its world has the plan's size.
Status shardingCommunicator(const KernelView &v, int64_t worldSize, Communicator **out) {
  std::string why;
  Communicator *comm = processCommunicator(&why);
  if (!comm)
    return v.error("no communicator for the data-parallel world: " + why);
  if (comm->size() != worldSize)
    return v.error("the plan shards its optimizer state over " + std::to_string(worldSize) +
                   " ranks (--shard-optimizer-state=" + std::to_string(worldSize) +
                   "), but this world has " + std::to_string(comm->size()) +
                   ": compile it with --shard-optimizer-state=" + std::to_string(comm->size()) +
                   " (a checkpoint resumes under any world size)");
  *out = comm;
  return Status::ok();
}

/// reduce_scatter's and all_gather's state: the bucket's layout and the
/// world.
class ShardingKernel : public PreparedKernel {
public:
  ShardingKernel(ShardParams p, Communicator *comm) : p(std::move(p)), comm(comm) {}
  uint64_t workspaceBytes() const override { return p.stagingBytes(); }

protected:
  ShardParams p;
  Communicator *comm;
};

class ReduceScatterKernel final : public ShardingKernel {
public:
  using ShardingKernel::ShardingKernel;

  Status run(const KernelArgs &args) override {
    float *staging = static_cast<float *>(args.workspace);
    float *mine = staging + p.shardTotal * p.worldSize;
    for (size_t i = 0; i < args.operands.size(); ++i) {
      const DType dt = args.operands[i].desc->dtype;
      for (int64_t r = 0; r < p.worldSize; ++r) {
        const ShardParams::Range s = p.range(i, r);
        float *block = staging + r * p.shardTotal + p.offset[i];
        loadF32(dt, elementPtr(args.operands[i].data, dt, s.begin), s.count, block);
        std::fill(block + s.count, block + p.shard[i], 0.0f);
      }
    }
    std::string error;
    if (!comm->reduceScatterSum(staging, mine, static_cast<size_t>(p.shardTotal), &error))
      return Status::error("reduce_scatter over " + std::to_string(comm->size()) +
                           " ranks: " + error);
    const float ranks = static_cast<float>(comm->size());
    for (int64_t k = 0; k < p.shardTotal; ++k)
      mine[k] /= ranks;
    for (size_t i = 0; i < args.results.size(); ++i)
      storeF32(mine + p.offset[i], p.shard[i], args.results[i].desc->dtype, args.results[i].data);
    return Status::ok();
  }
};

class AllGatherKernel final : public ShardingKernel {
public:
  using ShardingKernel::ShardingKernel;

  Status run(const KernelArgs &args) override {
    float *mine = static_cast<float *>(args.workspace);
    float *all = mine + p.shardTotal;
    for (size_t i = 0; i < args.operands.size(); ++i)
      loadF32(args.operands[i].desc->dtype, args.operands[i].data, p.shard[i], mine + p.offset[i]);
    std::string error;
    if (!comm->allGather(mine, all, static_cast<size_t>(p.shardTotal), &error))
      return Status::error("all_gather over " + std::to_string(comm->size()) + " ranks: " + error);
    for (size_t i = 0; i < args.results.size(); ++i) {
      const DType dt = args.results[i].desc->dtype;
      for (int64_t r = 0; r < p.worldSize; ++r) {
        const ShardParams::Range s = p.range(i, r);
        storeF32(all + r * p.shardTotal + p.offset[i], s.count, dt,
                 elementPtr(args.results[i].data, dt, s.begin));
      }
    }
    return Status::ok();
  }
};

class ShardKernel final : public PreparedKernel {
public:
  ShardKernel(ShardParams p, Communicator *comm) : p(std::move(p)), comm(comm) {}

  Status run(const KernelArgs &args) override {
    const TensorArg &in = args.operands[0];
    const size_t size = plan::dtypeSize(in.desc->dtype);
    const ShardParams::Range s = p.range(0, comm->rank());
    char *out = static_cast<char *>(args.results[0].data);
    std::memcpy(out, static_cast<const char *>(in.data) + s.begin * size, s.count * size);
    std::memset(out + s.count * size, 0, (p.shard[0] - s.count) * size);
    return Status::ok();
  }

private:
  ShardParams p;
  Communicator *comm;
};

template <class K>
Status prepareSharding(const KernelView &v, Status (*decode)(const KernelView &, ShardParams *),
                       std::unique_ptr<PreparedKernel> *out) {
  ShardParams p;
  MPTRT_TRY(decode(v, &p));
  Communicator *comm = nullptr;
  MPTRT_TRY(shardingCommunicator(v, p.worldSize, &comm));
  *out = std::make_unique<K>(std::move(p), comm);
  return Status::ok();
}

} // namespace

Status prepareReduceScatter(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareSharding<ReduceScatterKernel>(v, decodeReduceScatter, out);
}
Status prepareAllGather(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareSharding<AllGatherKernel>(v, decodeAllGather, out);
}
Status prepareShard(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareSharding<ShardKernel>(v, decodeShard, out);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
