//===- ConvGradKernels.cpp - conv_grad_input and conv_grad_weight --------===//
//
// The gradients of conv (ContractionKernels.cpp) through the same im2col
// layout: for image n and group g, col[Cg * K, O] is the im2col of
// x[n, g*Cg:(g+1)*Cg] (row (c, k...), column o an output position), and the
// forward is Y_g[Mg, O] = W_g[Mg, Cg*K] * col. So
//
//   conv_grad_input:   col = W_g^T * dY_g          (sgemm, trans A)
//                      dx[n, g*Cg + c] += col2im(col)
//   conv_grad_weight:  dW_g += dY_g * col^T        (sgemm, trans B), n = 0, 1, ...
//
// Operands are widened to float32 and each image's products accumulate in
// float32 inside sgemm (the GEMM exemption of docs/runtime.md,
// "Accumulation"). conv_grad_weight adds the images' products in double, in
// image order, and rounds the total once (the batch can be long: 32 images
// of 16x16 are 8192 products per weight); conv_grad_input's col2im adds at
// most kernel-size products per input element, in float32. Each result is
// rounded once into its dtype.
//
// Threads: as in conv, the units of work (one per (image, group) for the
// input gradient, one per group for the weight gradient, whose images are
// summed in order) are spread over the pool when there are enough to share
// out evenly, each thread with its own workspace; otherwise each unit's
// sgemm is cut into blocks of rows (Gemm.h; bit-exact) and its col2im /
// im2col are split over channels / rows. Either way every element is summed
// in the same order, so the bits do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Gemm.h"
#include "cpu/Parallel.h"
#include "ops/Backward.h"

#include <algorithm>
#include <string>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

using ConvGradKernel = WithF32Copies<ConvParams>;

/// A tensor as float32: the tensor itself if it is f32, else a widened copy
/// in `scratch` (numel floats, from prepare).
const float *asF32(const TensorArg &t, float *scratch) {
  const DType dtype = t.desc->dtype;
  if (dtype == DType::F32)
    return static_cast<const float *>(t.data);
  parallelFor(t.desc->numel, grainForCost(1), [&](int64_t b, int64_t e) {
    loadF32(dtype, elementPtr(t.data, dtype, b), e - b, scratch + b);
  });
  return scratch;
}

/// Where a float32 result is accumulated: the tensor itself if it is f32,
/// else `scratch`; zeroed.
float *zeroedF32(const TensorArg &t, float *scratch) {
  float *out = t.desc->dtype == DType::F32 ? static_cast<float *>(t.data) : scratch;
  std::fill(out, out + t.desc->numel, 0.0f);
  return out;
}

/// Rounds a result accumulated by zeroedF32 into the tensor's dtype.
void finishF32(const TensorArg &t, const float *y) {
  const DType dtype = t.desc->dtype;
  if (dtype == DType::F32)
    return;
  parallelFor(t.desc->numel, grainForCost(1), [&](int64_t b, int64_t e) {
    storeF32(y + b, e - b, dtype, elementPtr(t.data, dtype, b));
  });
}

/// The im2col workspace (rows * outSize floats) can dwarf the tensors.
Status checkWorkspace(int64_t rows, int64_t outSize) {
  if (outSize != 0 && rows > (int64_t{1} << 44) / outSize)
    return Status::error("the im2col workspace (" + std::to_string(rows) + " x " +
                         std::to_string(outSize) + " floats) is too large");
  return Status::ok();
}

/// conv_grad's decoder, and the im2col workspace's size checked at load.
Status decodeConvGradKernel(const KernelView &v, ConvGradKernel *k) {
  MPTRT_TRY((decodeWithF32Copies<ConvParams, decodeConvGrad>(v, k)));
  return checkWorkspace(k->p.C / k->p.group * k->p.kernelSize, k->p.outSize);
}

/// Whether `units` units of work are spread over the threads (one workspace
/// each) rather than run one at a time with their insides split: only when
/// there are enough to share out evenly. As conv decides.
bool spreadUnits(int64_t units, int64_t unitGrain) {
  const int64_t threads = numThreads();
  return threads > 1 && units >= 2 * unitGrain && (units % threads == 0 || units >= 4 * threads);
}

/// The inverse of im2col: adds col[Cg * kernelSize, outSize] into dx's
/// channels [0, Cg) (one image's planes from the group's first channel).
/// Each channel is one item, so its sums run in one thread, in the order
/// row (kernel position) by row, then output position.
void col2im(const ConvParams &p, const float *col, int64_t Cg, float *dx, bool split) {
  const int nsp = p.spatialRank;
  const int last = nsp - 1;
  const int64_t runLength = p.out[last];
  const int64_t runs = p.outSize / std::max<int64_t>(runLength, 1);
  const int64_t stride = p.strides[last], inLast = p.in[last];
  auto channels = [&](int64_t cBegin, int64_t cEnd) {
    for (int64_t c = cBegin; c < cEnd; ++c) {
      float *plane = dx + c * p.inSize;
      for (int64_t kk = 0; kk < p.kernelSize; ++kk) {
        int64_t k[kMaxRank]; // kernel position of row (c, kk)
        for (int64_t rest = kk, d = nsp - 1; d >= 0; --d) {
          k[d] = rest % p.kernel[d];
          rest /= p.kernel[d];
        }
        // Along the last axis, output o reads input o * stride + first:
        // inside the input for lo <= o < hi (as in im2col).
        const int64_t first = k[last] * p.dilations[last] - p.padsBegin[last];
        const int64_t lo =
            std::min(runLength, std::max<int64_t>(0, (-first + stride - 1) / stride));
        const int64_t hi =
            std::max(lo, std::min(runLength, (inLast - first + stride - 1) / stride));
        const float *src = col + (c * p.kernelSize + kk) * p.outSize;
        int64_t o[kMaxRank] = {}; // output position on the outer axes
        for (int64_t r = 0; r < runs; ++r, src += runLength) {
          int64_t offset = 0;
          bool inside = true;
          for (int d = 0; d < last; ++d) {
            const int64_t pos = o[d] * p.strides[d] - p.padsBegin[d] + k[d] * p.dilations[d];
            inside = inside && pos >= 0 && pos < p.in[d];
            offset = offset * p.in[d] + pos;
          }
          if (inside) {
            float *dst = plane + offset * inLast;
            for (int64_t i = lo; i < hi; ++i)
              dst[i * stride + first] += src[i];
          }
          for (int d = last - 1; d >= 0; --d) {
            if (++o[d] < p.out[d])
              break;
            o[d] = 0;
          }
        }
      }
    }
  };
  if (split)
    parallelFor(Cg, grainForCost(p.kernelSize * (p.outSize + 16)), channels);
  else
    channels(0, Cg);
}

//===----------------------------------------------------------------------===//
// conv_grad_input: dy [N, M, o...], weight [M, C/group, k...] -> dx [N, C, d...].
//===----------------------------------------------------------------------===//

/// The grain of conv_grad_input's units (one (image, group) each).
int64_t gradInputUnitGrain(const ConvParams &p) {
  const int64_t rows = p.C / p.group * p.kernelSize, Mg = p.M / p.group;
  return grainForCost(2 * rows * p.outSize + Mg * p.outSize * rows / kMacsPerElementOp +
                      kSgemmCallCost);
}

/// Float32 copies of dy and W and a float32 dx (for those that are not
/// f32), and the col workspaces: one per chunk if the units are spread.
struct GradInputScratch {
  float *dy, *w, *dx, *col;
};
GradInputScratch gradInputScratch(const ConvGradKernel &k, Scratch &s) {
  const ConvParams &p = k.p;
  const int64_t rows = p.C / p.group * p.kernelSize;
  const int64_t slots = spreadUnits(p.N * p.group, gradInputUnitGrain(p)) ? maxChunks() : 1;
  return {s.take<float>(k.operand[0]), s.take<float>(k.operand[1]), s.take<float>(k.result),
          s.take<float>(slots * rows * p.outSize)};
}

Status runConvGradInput(const ConvGradKernel &k, const KernelArgs &args) {
  const ConvParams &p = k.p;
  const TensorArg &dy = args.operands[0], &w = args.operands[1], &dx = args.results[0];
  const int64_t Cg = p.C / p.group, Mg = p.M / p.group;
  const int64_t rows = Cg * p.kernelSize; // col rows
  Scratch scratch(args.workspace);
  const GradInputScratch ws = gradInputScratch(k, scratch);
  const float *W = asF32(w, ws.w);
  const float *dY = asF32(dy, ws.dy);
  float *dX = zeroedF32(dx, ws.dx);
  const int64_t xSize = p.C * p.inSize, ySize = p.M * p.outSize;

  // Unit (n, g): its sgemm, then its col2im into dx[n, g*Cg:(g+1)*Cg].
  auto runUnit = [&](int64_t unit, float *col, bool splitInside) {
    const int64_t n = unit / p.group, g = unit % p.group;
    sgemm(/*transA=*/true, false, rows, p.outSize, Mg, 1.0f, W + g * Mg * rows,
          dY + n * ySize + g * Mg * p.outSize, 0.0f, col, splitInside);
    col2im(p, col, Cg, dX + n * xSize + g * Cg * p.inSize, splitInside);
  };
  const int64_t units = p.N * p.group;
  const int64_t unitGrain = gradInputUnitGrain(p);
  if (spreadUnits(units, unitGrain)) {
    parallelForChunks(units, unitGrain, [&](int64_t chunk, int64_t begin, int64_t end) {
      for (int64_t unit = begin; unit < end; ++unit)
        runUnit(unit, ws.col + chunk * rows * p.outSize, /*splitInside=*/false);
    });
  } else {
    for (int64_t unit = 0; unit < units; ++unit)
      runUnit(unit, ws.col, /*splitInside=*/true);
  }
  finishF32(dx, dX);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// conv_grad_weight: x [N, C, d...], dy [N, M, o...] -> dweight [M, C/group, k...].
//===----------------------------------------------------------------------===//

/// The grain of conv_grad_weight's units (one group each, all images).
int64_t gradWeightUnitGrain(const ConvParams &p) {
  const int64_t rows = p.C / p.group * p.kernelSize, Mg = p.M / p.group;
  return grainForCost(
      p.N * (rows * p.outSize + Mg * p.outSize * rows / kMacsPerElementOp + kSgemmCallCost));
}

/// Float32 copies of x and dy (for those that are not f32), the double
/// totals, and the workspaces - im2col's rows * outSize floats, then one
/// image's product (Mg * rows floats) - one per chunk if the units are
/// spread.
struct GradWeightScratch {
  float *x, *dy;
  double *acc;
  float *space;
};
GradWeightScratch gradWeightScratch(const ConvGradKernel &k, Scratch &s) {
  const ConvParams &p = k.p;
  const int64_t rows = p.C / p.group * p.kernelSize;
  const int64_t slots = spreadUnits(p.group, gradWeightUnitGrain(p)) ? maxChunks() : 1;
  return {s.take<float>(k.operand[0]), s.take<float>(k.operand[1]), s.take<double>(p.M * rows),
          s.take<float>(slots * (rows * p.outSize + p.M / p.group * rows))};
}

Status runConvGradWeight(const ConvGradKernel &k, const KernelArgs &args) {
  const ConvParams &p = k.p;
  const TensorArg &x = args.operands[0], &dy = args.operands[1], &dw = args.results[0];
  const int64_t Cg = p.C / p.group, Mg = p.M / p.group;
  const int64_t rows = Cg * p.kernelSize;
  Scratch scratch(args.workspace);
  const GradWeightScratch ws = gradWeightScratch(k, scratch);
  const float *X = asF32(x, ws.x);
  const float *dY = asF32(dy, ws.dy);
  const int64_t xSize = p.C * p.inSize, ySize = p.M * p.outSize;
  const int64_t unitSize = Mg * rows; // dW_g's elements
  double *acc = ws.acc;
  std::fill(acc, acc + p.M * rows, 0.0);

  // Unit g: acc_g += dY_g(n) * col(n)^T for n = 0, 1, ... in order, each
  // image's product made by sgemm into `prod` and added in double.
  auto runUnit = [&](int64_t g, float *col, float *prod, bool splitInside) {
    double *accG = acc + g * unitSize;
    auto add = [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        accG[i] += prod[i];
    };
    for (int64_t n = 0; n < p.N; ++n) {
      im2col(p, X + n * xSize, g * Cg, Cg, col);
      sgemm(false, /*transB=*/true, Mg, rows, p.outSize, 1.0f, dY + n * ySize + g * Mg * p.outSize,
            col, 0.0f, prod, splitInside);
      if (splitInside)
        parallelFor(unitSize, grainForCost(2), add);
      else
        add(0, unitSize);
    }
  };
  const int64_t unitGrain = gradWeightUnitGrain(p);
  // Each workspace: im2col's rows * outSize floats, then one image's
  // product (unitSize floats).
  const int64_t space = rows * p.outSize + unitSize;
  if (spreadUnits(p.group, unitGrain)) {
    parallelForChunks(p.group, unitGrain, [&](int64_t chunk, int64_t begin, int64_t end) {
      float *myCol = ws.space + chunk * space;
      for (int64_t g = begin; g < end; ++g)
        runUnit(g, myCol, myCol + rows * p.outSize, /*splitInside=*/false);
    });
  } else {
    for (int64_t g = 0; g < p.group; ++g)
      runUnit(g, ws.space, ws.space + rows * p.outSize, /*splitInside=*/true);
  }
  // Round the totals once into dw.
  const DType dwt = dw.desc->dtype;
  parallelFor(dw.desc->numel, grainForCost(2), [&](int64_t b, int64_t e) {
    storeF64(acc + b, e - b, dwt, elementPtr(dw.data, dwt, b));
  });
  return Status::ok();
}

} // namespace

Status prepareConvGrad(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  rowCutUnit(); // settles OpenBLAS's threads and the row cut at load time
  if (v.kind() == "conv_grad_input")
    return prepareWith<ConvGradKernel>(
        v, out, decodeConvGradKernel, runConvGradInput,
        scratchBytes<ConvGradKernel, GradInputScratch, gradInputScratch>);
  return prepareWith<ConvGradKernel>(
      v, out, decodeConvGradKernel, runConvGradWeight,
      scratchBytes<ConvGradKernel, GradWeightScratch, gradWeightScratch>);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
