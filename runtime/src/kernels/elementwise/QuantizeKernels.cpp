//===- QuantizeKernels.cpp - per-tensor scaled conversion into FP8 --------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"

#include <algorithm>
#include <cstring>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

constexpr int64_t kBlock = 256;

Status runQuantize(const QuantizeParams &p, const KernelArgs &args) {
  const TensorArg &in = args.operands[0], &out = args.results[0];
  float scale;
  std::memcpy(&scale, args.operands[1].data, sizeof(float));
  const DType it = in.desc->dtype, ot = out.desc->dtype;
  parallelFor(p.numel, grainForCost(2), [&](int64_t begin, int64_t end) {
    float buf[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      loadF32(it, elementPtr(in.data, it, i), m, buf);
      for (int64_t j = 0; j < m; ++j)
        buf[j] *= scale;
      storeF32(buf, m, ot, elementPtr(out.data, ot, i), /*saturate=*/true);
    }
  });
  return Status::ok();
}

} // namespace

Status prepareQuantize(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<QuantizeParams>(v, out, decodeQuantize, runQuantize);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
