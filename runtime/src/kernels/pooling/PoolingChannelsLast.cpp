//===- PoolingChannelsLast.cpp - 2-D pooling on NHWC activations ----------===//
//
// The CPU's own channels-last kernels (`layout = nhwc`, ChannelsLast.h) of
// max_pool, average_pool, global_average_pool, max_pool_grad and
// average_pool_grad, on [N, H, W, C] activations. They walk the output
// positions and windows of PoolingKernels.cpp's 2-D planes (poolPlane2d,
// poolGradPlane2d; the windows' positions from Window2d.h) in the same
// order, with a slice of channels side by side instead of one plane: each
// channel sees the same comparisons and the same additions in the same
// order, so the bits are the channels-first kernels'
// (ChannelsLast.SameBitsAsChannelsFirstOnTheCpu checks them). A unit of work is
// one image's block of up to kChannelBlock channels, units split over the
// cores; each reads and writes runs of consecutive channels.
//
// 1-D and 3-D pooling and integer max pooling have no kernel here: the
// model runs them as their channels-first form between transposes.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "kernels/pooling/Window2d.h"
#include "ops/Backward.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// The most channels one unit of work takes: 16 floats are a cache line,
/// and a gradient's double sums for 16 channels of a 32 x 32 image (128 KiB)
/// stay in a core's cache, where 64 channels' (512 KiB) may not.
constexpr int64_t kChannelBlock = 16;

int64_t channelBlocks(const PoolParams &p) { return (p.C + kChannelBlock - 1) / kChannelBlock; }

/// Unit u's image and channel range [c0, c1).
void unitRange(const PoolParams &p, int64_t u, int64_t *n, int64_t *c0, int64_t *c1) {
  const int64_t blocks = channelBlocks(p);
  *n = u / blocks;
  *c0 = (u % blocks) * kChannelBlock;
  *c1 = std::min(p.C, *c0 + kChannelBlock);
}

/// A window position's channels [c0, c0 + count) as floats: the tensor's
/// own memory when it is f32, else widened into `row`.
const float *loadChannels(const TensorArg &t, int64_t at, int64_t count, float *row) {
  const DType dtype = t.desc->dtype;
  if (dtype == DType::F32)
    return static_cast<const float *>(t.data) + at;
  loadF32(dtype, elementPtr(t.data, dtype, at), count, row);
  return row;
}

/// Per chunk: a slice of channels as floats (the input row, the average's
/// result row, the window's maximum) and the average's double sums.
struct PoolNhwcScratch {
  float *row, *out, *best;
  double *sum;
};
PoolNhwcScratch poolNhwcScratch(const PoolParams &, Scratch &s) {
  const int64_t k = maxChunks() * kChannelBlock;
  return {s.take<float>(k), s.take<float>(k), s.take<float>(k), s.take<double>(k)};
}

Status runPoolNhwc(const PoolParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  const DType yt = y.desc->dtype;
  const int64_t OH = p.out[0], OW = p.out[1], C = p.C;
  const Window2d window(p);
  const bool isMax = p.kind == PoolKind::Max;
  Scratch scratch(args.workspace);
  const PoolNhwcScratch ws = poolNhwcScratch(p, scratch);
  const int64_t units = p.N * channelBlocks(p);
  const int64_t unitCost =
      std::min(C, kChannelBlock) * (p.inSize + 2 * p.outSize * p.kernel[0] * p.kernel[1]);
  parallelForChunks(units, grainForCost(unitCost), [&](int64_t chunk, int64_t begin, int64_t end) {
    float *row = ws.row + chunk * kChannelBlock, *out = ws.out + chunk * kChannelBlock;
    float *best = ws.best + chunk * kChannelBlock;
    double *sum = ws.sum + chunk * kChannelBlock;
    for (int64_t u = begin; u < end; ++u) {
      int64_t n, c0, c1;
      unitRange(p, u, &n, &c0, &c1);
      const int64_t cw = c1 - c0;
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          std::fill(best, best + cw, -std::numeric_limits<float>::infinity());
          std::fill(sum, sum + cw, 0.0);
          window.forInside(oh, ow, [&](int64_t offset) {
            const float *v = loadChannels(x, (n * p.inSize + offset) * C + c0, cw, row);
            if (isMax) {
              // As a select, which vectorises; NaN propagates.
              for (int64_t c = 0; c < cw; ++c)
                best[c] = v[c] > best[c] || v[c] != v[c] ? v[c] : best[c];
            } else {
              for (int64_t c = 0; c < cw; ++c)
                sum[c] += static_cast<double>(v[c]);
            }
          });
          if (!isMax) {
            int64_t valid, padded;
            window.count(oh, ow, &valid, &padded);
            const int64_t count = p.countIncludePad ? padded : valid;
            for (int64_t c = 0; c < cw; ++c)
              out[c] = static_cast<float>(count ? sum[c] / static_cast<double>(count) : NAN);
          }
          storeF32(isMax ? best : out, cw, yt,
                   elementPtr(y.data, yt, ((n * OH + oh) * OW + ow) * C + c0));
        }
      }
    }
  });
  return Status::ok();
}

/// Per chunk: one unit's dx sums in double ([H, W, block]), and slices of
/// channels: dy's row, x's row, the window's maximum and where it is, the
/// average's shares, the result row.
struct PoolGradNhwcScratch {
  double *acc, *share;
  float *g, *row, *best, *out;
  int64_t *argmax;
};
PoolGradNhwcScratch poolGradNhwcScratch(const PoolParams &p, Scratch &s) {
  const int64_t k = maxChunks() * kChannelBlock;
  return {s.take<double>(k * p.inSize),
          s.take<double>(k),
          s.take<float>(k),
          s.take<float>(k),
          s.take<float>(k),
          s.take<float>(k),
          s.take<int64_t>(k)};
}

Status runPoolGradNhwc(const PoolParams &p, const KernelArgs &args) {
  const bool isMax = p.kind == PoolKind::Max;
  const TensorArg &dy = args.operands[isMax ? 1 : 0], &dx = args.results[0];
  const DType dxt = dx.desc->dtype;
  const int64_t OH = p.out[0], OW = p.out[1], C = p.C;
  const Window2d window(p);
  Scratch scratch(args.workspace);
  const PoolGradNhwcScratch ws = poolGradNhwcScratch(p, scratch);
  const int64_t units = p.N * channelBlocks(p);
  const int64_t unitCost = std::min(C, kChannelBlock) *
                           (3 * p.inSize + p.outSize + 10 * p.outSize * p.kernel[0] * p.kernel[1]);
  parallelForChunks(units, grainForCost(unitCost), [&](int64_t chunk, int64_t begin, int64_t end) {
    const int64_t at = chunk * kChannelBlock;
    double *acc = ws.acc + at * p.inSize, *share = ws.share + at;
    float *g = ws.g + at, *row = ws.row + at, *best = ws.best + at, *out = ws.out + at;
    int64_t *argmax = ws.argmax + at;
    for (int64_t u = begin; u < end; ++u) {
      int64_t n, c0, c1;
      unitRange(p, u, &n, &c0, &c1);
      const int64_t cw = c1 - c0;
      std::fill(acc, acc + p.inSize * cw, 0.0);
      for (int64_t oh = 0; oh < OH; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          const float *gy = loadChannels(dy, ((n * OH + oh) * OW + ow) * C + c0, cw, g);
          if (isMax) {
            // The first maximum of each channel's window, row-major.
            std::fill(argmax, argmax + cw, int64_t{-1});
            std::fill(best, best + cw, 0.0f);
            window.forInside(oh, ow, [&](int64_t offset) {
              const float *v =
                  loadChannels(args.operands[0], (n * p.inSize + offset) * C + c0, cw, row);
              for (int64_t c = 0; c < cw; ++c) {
                const bool take =
                    argmax[c] < 0 || v[c] > best[c] || (v[c] != v[c] && best[c] == best[c]);
                argmax[c] = take ? offset : argmax[c];
                best[c] = take ? v[c] : best[c];
              }
            });
            for (int64_t c = 0; c < cw; ++c)
              if (argmax[c] >= 0)
                acc[argmax[c] * cw + c] += static_cast<double>(gy[c]);
            continue;
          }
          int64_t valid, padded;
          window.count(oh, ow, &valid, &padded);
          if (!valid)
            continue;
          const double count = static_cast<double>(p.countIncludePad ? padded : valid);
          for (int64_t c = 0; c < cw; ++c)
            share[c] = static_cast<double>(gy[c]) / count;
          window.forInside(oh, ow, [&](int64_t offset) {
            double *into = acc + offset * cw;
            for (int64_t c = 0; c < cw; ++c)
              into[c] += share[c];
          });
        }
      }
      for (int64_t pos = 0; pos < p.inSize; ++pos) {
        for (int64_t c = 0; c < cw; ++c)
          out[c] = static_cast<float>(acc[pos * cw + c]);
        storeF32(out, cw, dxt, elementPtr(dx.data, dxt, (n * p.inSize + pos) * C + c0));
      }
    }
  });
  return Status::ok();
}

/// The channels-last kernel `run` for `first`, the channels-first form
/// `decode` reads; *out left null (the form then runs between transposes)
/// for what the kernels here do not take: all but 2-D float pooling.
Status prepareNhwc(const KernelView &first, Status (*decode)(const KernelView &, PoolParams *),
                   Status (*run)(const PoolParams &, const KernelArgs &),
                   uint64_t (*workspace)(const PoolParams &),
                   std::unique_ptr<PreparedKernel> *out) {
  out->reset();
  PoolParams p;
  MPTRT_TRY(decode(first, &p));
  if (p.spatialRank != 2 || p.integer)
    return Status::ok();
  p.channelsLast = true;
  *out = std::make_unique<ParamsKernel<PoolParams>>(std::move(p), run, workspace);
  return Status::ok();
}

} // namespace

Status preparePoolChannelsLast(const KernelView &first, std::unique_ptr<PreparedKernel> *out) {
  return prepareNhwc(first, decodePool, runPoolNhwc,
                     scratchBytes<PoolParams, PoolNhwcScratch, poolNhwcScratch>, out);
}

Status preparePoolGradChannelsLast(const KernelView &first, std::unique_ptr<PreparedKernel> *out) {
  return prepareNhwc(first, decodePoolGrad, runPoolGradNhwc,
                     scratchBytes<PoolParams, PoolGradNhwcScratch, poolGradNhwcScratch>, out);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
