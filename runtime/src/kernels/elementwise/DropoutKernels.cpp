//===- DropoutKernels.cpp - inference and training dropout ---------------===//
//
// dropout: x[, seed, step] -> y[, mask].
//
//   inference, or ratio 0:  y = x (converted between float types), mask = 1
//   training, ratio > 0:    keep_i = philox::dropoutKeep(seed, step, stream, i)
//                           y_i    = x_i * (keep_i ? 1 / (1 - ratio) : 0)
//                           mask_i = keep_i
//
// The product is taken in f32 and rounded once into y's type, as PyTorch's
// x * mask * (1 / (1 - p)) is for f32 (a NaN or inf input stays NaN when
// dropped, so a non-finite forward still reaches the finite check). The
// random word of element i depends on (seed, step, stream, i) alone
// (mptrt/Philox.h), so the chunking below changes nothing.
//
// In a data-parallel run (docs/distributed.md) rank r draws with i + r *
// numel: its own stream of masks, and, for a tensor whose first axis is the
// batch, exactly the masks one process draws for rank r's rows of the
// global batch.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"

#include "mptrt/Philox.h"

#include <algorithm>
#include <cstring>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// A Philox call (10 rounds of two 32x32 multiplies) per four elements, plus
/// the load, multiply and store.
constexpr int64_t kGrain = grainForCost(8);

int64_t readI64(const TensorArg &t) {
  int64_t v;
  std::memcpy(&v, t.data, sizeof v);
  return v;
}

Status runDropout(const DropoutParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const DType xt = x.desc->dtype, yt = y.desc->dtype;
  uint8_t *mask = p.hasMask ? static_cast<uint8_t *>(args.results[1].data) : nullptr;
  if (!p.draw) {
    parallelFor(p.numel, kGrain, [&](int64_t begin, int64_t end) {
      float buf[kBlock];
      for (int64_t i = begin; i < end; i += kBlock) {
        const int64_t m = std::min(kBlock, end - i);
        loadF32(xt, elementPtr(x.data, xt, i), m, buf);
        storeF32(buf, m, yt, elementPtr(y.data, yt, i));
      }
    });
    if (mask && p.numel)
      std::memset(mask, 1, p.numel);
    return Status::ok();
  }
  const uint64_t seed = static_cast<uint64_t>(readI64(args.operands[1]));
  const int64_t step = readI64(args.operands[2]);
  if (step < 0)
    return Status::error("dropout: the step operand is negative (" + std::to_string(step) + ")");
  parallelFor(p.numel, kGrain, [&](int64_t begin, int64_t end) {
    float buf[kBlock];
    uint8_t keep[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      loadF32(xt, elementPtr(x.data, xt, i), m, buf);
      // One Philox block serves four consecutive elements (index / 4).
      philox::Block bits{};
      int64_t group = -1;
      for (int64_t j = 0; j < m; ++j) {
        const int64_t e = i + j + p.elementOffset;
        if ((e >> 2) != group) {
          group = e >> 2;
          bits = philox::dropoutBlock(seed, static_cast<uint64_t>(step), p.stream,
                                      static_cast<uint32_t>(group));
        }
        keep[j] = uint64_t(bits.v[e & 3]) >= p.threshold;
        buf[j] *= keep[j] ? p.scale : 0.0f;
      }
      storeF32(buf, m, yt, elementPtr(y.data, yt, i));
      if (mask)
        std::memcpy(mask + i, keep, static_cast<size_t>(m));
    }
  });
  return Status::ok();
}

} // namespace

Status prepareDropout(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<DropoutParams>(v, out, decodeDropout, runDropout);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
