//===- OptimizerKernels.cpp - sgd_update and adamw_update -----------------===//
//
// PyTorch's torch.optim.SGD and torch.optim.AdamW (single-tensor path, f32
// parameters, a Python float lr whose value is the f32 `lr` operand), with
// the same f32 roundings in the same order:
//
// - Scalar factors are computed in double as the Python code does, and each
//   is rounded to f32 where a PyTorch CPU kernel receives it (the kernels
//   convert a Scalar argument to the tensor's f32 "opmath" type).
// - `a.add_(b, alpha=s)` is fma(b, s, a): PyTorch's vectorized CPU add is
//   Vectorized::fmadd (one rounding), and so is its scalar remainder loop as
//   compiled. Likewise `lerp_(end, w)` is fma(w, end - self, self) for
//   |w| < 0.5 and fma(w - 1, end - self, end) otherwise, and
//   `addcmul_(t1, t2, value=c)` is fma(c * t1, t2, self). `mul_`, `div`,
//   `sqrt` and `addcdiv_` (self + c * t1 / t2) round each operation.
//   (Checked bit for bit against torch 2.15 on an AVX2 CPU.)
//
// This file is compiled with -ffp-contract=off, so these fmas are the only
// fused operations, whatever the compiler and target.
//
// Each element's operands are read before its results are written, so a
// result may occupy its operand's bytes (param' over param, buf' over buf,
// exp_avg' over exp_avg, ...). adamw_update's param may be bf16 (master
// weights in bf16): the same f32 arithmetic on the widened weight, rounded
// once into bf16 at the end (to nearest even, or stochastically).
// When `finite` is 0 nothing is computed:
// every result receives its operand's bytes, or is left alone when it is
// the operand.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"
#include "cpu/Scalars.h"
#include "kernels/training/OptimizerMath.h"
#include "ops/Training.h"

#include "mptrt/Numerics.h"
#include "mptrt/Philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// A skipped step: the result keeps the operand's bytes.
void keep(const TensorArg &result, const TensorArg &operand) {
  if (result.data != operand.data)
    std::memcpy(result.data, operand.data, result.desc->bytes);
}

//===----------------------------------------------------------------------===//
// sgd_update: param, grad, [buf], step, lr, finite -> param', [buf'].
//
//   g = grad.add(param, alpha=wd)                 if wd != 0
//   buf = g                                       if step == 0
//   buf = buf.mul_(momentum).add_(g, alpha=1 - dampening)   otherwise
//   g = nesterov ? g.add(buf, alpha=momentum) : buf         (with momentum)
//   param.add_(g, alpha=-lr)
//===----------------------------------------------------------------------===//

Status runSgdUpdate(const SgdParams &p, const KernelArgs &args) {
  const size_t s = p.hasBuffer ? 3 : 2; // step, lr, finite
  const int64_t step = readI64(args.operands[s]);
  const double lr = readF32(args.operands[s + 1]);
  if (!readI1(args.operands[s + 2])) {
    keep(args.results[0], args.operands[0]);
    if (p.hasBuffer)
      keep(args.results[1], args.operands[2]);
    return Status::ok();
  }
  math::SgdStep st;
  st.decay = p.weightDecay != 0;
  st.hasBuffer = p.hasBuffer;
  st.nesterov = p.nesterov;
  st.first = step == 0;
  st.wd = static_cast<float>(p.weightDecay);
  st.momentum = static_cast<float>(p.momentum);
  st.bufKeep = static_cast<float>(1.0 - p.dampening);
  st.negLr = static_cast<float>(-lr);

  const TensorArg &grad = args.operands[1];
  const DType gt = grad.desc->dtype;
  const float *param = static_cast<const float *>(args.operands[0].data);
  float *paramOut = static_cast<float *>(args.results[0].data);
  const float *buf = p.hasBuffer ? static_cast<const float *>(args.operands[2].data) : nullptr;
  float *bufOut = p.hasBuffer ? static_cast<float *>(args.results[1].data) : nullptr;
  parallelFor(p.numel, grainForCost(6), [&](int64_t begin, int64_t end) {
    float g[kBlock];
    for (int64_t i = begin; i < end; i += kBlock) {
      const int64_t m = std::min(kBlock, end - i);
      loadF32(gt, elementPtr(grad.data, gt, i), m, g);
      for (int64_t j = 0; j < m; ++j) {
        const int64_t k = i + j;
        paramOut[k] = math::sgdElement(st, param[k], g[j], buf ? buf[k] : 0.0f,
                                       bufOut ? &bufOut[k] : nullptr);
      }
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// adamw_update: param, grad, exp_avg, exp_avg_sq, step, lr, finite ->
// param', exp_avg', exp_avg_sq', with t = step + 1:
//
//   param.mul_(1 - lr * wd)                       if wd != 0
//   exp_avg.lerp_(grad, 1 - beta1)
//   exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
//   step_size = lr / (1 - beta1^t); bc2_sqrt = (1 - beta2^t) ** 0.5
//   denom = (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps)
//   param.addcdiv_(exp_avg, denom, value=-step_size)
//===----------------------------------------------------------------------===//

Status runAdamWUpdate(const AdamWParams &p, const KernelArgs &args) {
  const int64_t step = readI64(args.operands[4]);
  const double lr = readF32(args.operands[5]);
  if (!readI1(args.operands[6])) {
    for (size_t r = 0; r < 3; ++r)
      keep(args.results[r], args.operands[r == 0 ? 0 : r + 1]);
    return Status::ok();
  }
  // The Python scalars, in double.
  const double t = static_cast<double>(step) + 1;
  const double biasCorrection1 = 1 - std::pow(p.beta1, t);
  const double biasCorrection2 = 1 - std::pow(p.beta2, t);
  const double stepSize = lr / biasCorrection1;
  // ... and as the f32 kernels receive them.
  math::AdamWStep st;
  st.decay = p.weightDecay != 0;
  st.decayFactor = static_cast<float>(1 - lr * p.weightDecay);
  st.w1 = static_cast<float>(1 - p.beta1); // lerp weight
  st.smallWeight = std::fabs(st.w1) < 0.5f;
  st.w1Minus1 = st.w1 - 1.0f;
  st.beta2 = static_cast<float>(p.beta2);
  st.oneMinusBeta2 = static_cast<float>(1 - p.beta2);
  st.bc2Sqrt = static_cast<float>(std::pow(biasCorrection2, 0.5));
  st.eps = static_cast<float>(p.eps);
  st.negStepSize = static_cast<float>(-stepSize);

  const TensorArg &grad = args.operands[1];
  const DType gt = grad.desc->dtype;
  const float *expAvg = static_cast<const float *>(args.operands[2].data);
  const float *expAvgSq = static_cast<const float *>(args.operands[3].data);
  float *expAvgOut = static_cast<float *>(args.results[1].data);
  float *expAvgSqOut = static_cast<float *>(args.results[2].data);
  // The master weight's dtype: f32, or bf16 widened exactly on load and
  // rounded once on store (to nearest even, or stochastically with the
  // Philox word of (seed, step, stream, k): numerics::f32ToBf16Stochastic).
  const uint64_t seed = p.stochasticRounding ? uint64_t(readI64(args.operands[7])) : 0;
  auto update = [&](auto loadParam, auto storeParam) {
    parallelFor(p.numel, grainForCost(16), [&](int64_t begin, int64_t end) {
      float g[kBlock];
      for (int64_t i = begin; i < end; i += kBlock) {
        const int64_t n = std::min(kBlock, end - i);
        loadF32(gt, elementPtr(grad.data, gt, i), n, g);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t k = i + j;
          float w = loadParam(k), m = expAvg[k], v = expAvgSq[k];
          math::adamwElement(st, g[j], &w, &m, &v);
          storeParam(k, w);
          expAvgOut[k] = m;
          expAvgSqOut[k] = v;
        }
      }
    });
  };
  if (!p.bf16Param) {
    const float *param = static_cast<const float *>(args.operands[0].data);
    float *paramOut = static_cast<float *>(args.results[0].data);
    update([&](int64_t k) { return param[k]; }, [&](int64_t k, float w) { paramOut[k] = w; });
    return Status::ok();
  }
  const uint16_t *param = static_cast<const uint16_t *>(args.operands[0].data);
  uint16_t *paramOut = static_cast<uint16_t *>(args.results[0].data);
  auto load = [&](int64_t k) { return numerics::bf16ToF32(param[k]); };
  if (p.stochasticRounding)
    update(load, [&](int64_t k, float w) {
      paramOut[k] = numerics::f32ToBf16Stochastic(
          w, philox::roundingBits(seed, uint64_t(step), p.stream, p.elementOffset + k));
    });
  else
    update(load, [&](int64_t k, float w) { paramOut[k] = numerics::f32ToBf16(w); });
  return Status::ok();
}

} // namespace

Status prepareSgdUpdate(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<SgdParams>(v, out, decodeSgdUpdate, runSgdUpdate);
}
Status prepareAdamWUpdate(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<AdamWParams>(v, out, decodeAdamWUpdate, runAdamWUpdate);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
