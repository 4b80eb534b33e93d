//===- AllReduceKernels.cpp - all_reduce on the CPU, through MPI ----------===//
//
// all_reduce (docs/distributed.md): the mean (with `sum`, the sum) over the
// ranks of each operand, the operands reduced together as one flat bucket.
//
//   world size 1   each result is a copy of its operand, bit for bit
//   otherwise      staging[k] = f32(operand element k), all operands one
//                  after the other; the communicator sums staging over the
//                  ranks in place (MPI_Allreduce, MPI_SUM, MPI_FLOAT);
//                  result = round(staging[k] / world size) into the
//                  operand's type (with `sum`, round(staging[k]))
//
// MPI has no bf16 or f16 type, so every dtype goes through the f32 staging
// buffer (the kernel's workspace): the sum is f32 whether or not the op asks
// for `reduce_in_f32`. Every rank receives the same sums, so every rank
// computes the same results and takes the same skip decision.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "ops/Training.h"

#include "mptrt/Communicator.h"

#include <cstring>
#include <string>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

class AllReduceKernel final : public PreparedKernel {
public:
  AllReduceKernel(AllReduceParams params, Communicator *comm) : p(std::move(params)), comm(comm) {}

  uint64_t workspaceBytes() const override {
    return comm->size() == 1 ? 0 : static_cast<uint64_t>(p.total) * sizeof(float);
  }

  Status run(const KernelArgs &args) override {
    const size_t n = args.operands.size();
    if (comm->size() == 1) {
      for (size_t i = 0; i < n; ++i)
        if (args.results[i].data != args.operands[i].data)
          std::memcpy(args.results[i].data, args.operands[i].data, args.operands[i].desc->bytes);
      return Status::ok();
    }
    float *staging = static_cast<float *>(args.workspace);
    int64_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      loadF32(args.operands[i].desc->dtype, args.operands[i].data, p.numel[i], staging + at);
      at += p.numel[i];
    }
    std::string error;
    if (!comm->allReduceSum(staging, static_cast<size_t>(p.total), &error))
      return Status::error("all_reduce over " + std::to_string(comm->size()) + " ranks: " + error);
    const float ranks = static_cast<float>(comm->size());
    if (!p.sum)
      for (int64_t k = 0; k < p.total; ++k)
        staging[k] /= ranks;
    at = 0;
    for (size_t i = 0; i < n; ++i) {
      storeF32(staging + at, p.numel[i], args.results[i].desc->dtype, args.results[i].data);
      at += p.numel[i];
    }
    return Status::ok();
  }

private:
  AllReduceParams p;
  Communicator *comm;
};

} // namespace

Status prepareAllReduce(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  AllReduceParams p;
  MPTRT_TRY(decodeAllReduce(v, &p));
  std::string why;
  Communicator *comm = processCommunicator(&why);
  if (!comm)
    return v.error("no communicator for the data-parallel world: " + why);
  *out = std::make_unique<AllReduceKernel>(std::move(p), comm);
  return Status::ok();
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
