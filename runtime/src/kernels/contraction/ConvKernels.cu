//===- ConvKernels.cu - conv and its gradients, direct kernels ------------===//
//
// The CUDA backend's convolutions: through cuDNN where the build has it and
// it takes the kernel (CudnnConv.cpp; MPTRT_CUDA_CONV, cuda/Cudnn.h), else
// the direct kernels here: one thread per result element, each summing its
// products directly. Slow next to cuDNN or an implicit GEMM, and simple
// enough to be checked by reading. A direct loop is a sequential sum over a
// long axis (C/group x kernel positions, or every output position), so each
// sum is accumulated in double and rounded once (docs/runtime.md,
// "Accumulation"), never as a naive float32 sum:
//
//   conv             y[n, m, o] = sum over (c, k) of x * w, + bias[m] (then
//                    the fused relu on the rounded value);
//   conv_grad_input  dx[n, c, i] = sum over (m, k) with i = o s - pad + k d of
//                    dy[n, m, o] w[m, c, k];
//   conv_grad_weight dw[m, c, k] = sum over n and o of
//                    dy[n, m, o] x[n, c, o s - pad + k d].
//
// The CPU backend multiplies the same products with float32 sgemm (the GEMM
// exemption of "Accumulation"), so the results agree with the CPU's to that
// sgemm's float32 rounding, not bit for bit. Also here: the kernel the
// cuDNN path runs after cuDNN's (adding the bias and rounding the result).
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Cudnn.h"
#include "cuda/Device.cuh"
#include "ops/Backward.h"

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

/// ConvParams in a form a kernel takes by value.
struct DeviceConv {
  int rank;
  int64_t N, C, M, Cg, Mg;
  int64_t in[kMaxRank], out[kMaxRank], kernel[kMaxRank];
  int64_t stride[kMaxRank], pad[kMaxRank], dilation[kMaxRank];
  int64_t inSize, outSize, kernelSize;
  bool relu; // conv's fused relu
};

Status deviceConv(const ConvParams &p, DeviceConv *d) {
  if (p.spatialRank > kMaxRank)
    return Status::error("conv: spatial rank " + std::to_string(p.spatialRank) +
                         " is above the CUDA backend's " + std::to_string(kMaxRank));
  *d = DeviceConv{};
  d->rank = p.spatialRank;
  d->N = p.N;
  d->C = p.C;
  d->M = p.M;
  d->Cg = p.C / p.group;
  d->Mg = p.M / p.group;
  d->relu = p.relu;
  for (int i = 0; i < p.spatialRank; ++i) {
    d->in[i] = p.in[i];
    d->out[i] = p.out[i];
    d->kernel[i] = p.kernel[i];
    d->stride[i] = p.strides[i];
    d->pad[i] = p.padsBegin[i];
    d->dilation[i] = p.dilations[i];
  }
  d->inSize = p.inSize;
  d->outSize = p.outSize;
  d->kernelSize = p.kernelSize;
  return Status::ok();
}

/// The input position (flat, within one channel) that output position `o`
/// reads through kernel position `k`, or -1 in the padding.
__device__ inline int64_t inputAt(const DeviceConv &p, int64_t o, int64_t k) {
  int64_t flat = 0;
  for (int d = 0; d < p.rank; ++d) {
    int64_t oStride = 1, kStride = 1;
    for (int e = d + 1; e < p.rank; ++e) {
      oStride *= p.out[e];
      kStride *= p.kernel[e];
    }
    const int64_t od = (o / oStride) % p.out[d], kd = (k / kStride) % p.kernel[d];
    const int64_t pos = od * p.stride[d] - p.pad[d] + kd * p.dilation[d];
    if (pos < 0 || pos >= p.in[d])
      return -1;
    flat = flat * p.in[d] + pos;
  }
  return flat;
}

/// The output position (flat) that reads input position `i` through kernel
/// position `k`, or -1 if none does.
__device__ inline int64_t outputAt(const DeviceConv &p, int64_t i, int64_t k) {
  int64_t flat = 0;
  for (int d = 0; d < p.rank; ++d) {
    int64_t iStride = 1, kStride = 1;
    for (int e = d + 1; e < p.rank; ++e) {
      iStride *= p.in[e];
      kStride *= p.kernel[e];
    }
    const int64_t id = (i / iStride) % p.in[d], kd = (k / kStride) % p.kernel[d];
    const int64_t num = id + p.pad[d] - kd * p.dilation[d];
    if (num < 0 || num % p.stride[d] != 0)
      return -1;
    const int64_t od = num / p.stride[d];
    if (od >= p.out[d])
      return -1;
    flat = flat * p.out[d] + od;
  }
  return flat;
}

__global__ void convKernel(DeviceConv p, DType xt, const void *x, DType wt, const void *w, DType bt,
                           const void *bias, DType yt, void *y) {
  const int64_t total = p.N * p.M * p.outSize;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t o = e % p.outSize, m = (e / p.outSize) % p.M, n = e / (p.outSize * p.M);
    const int64_t g = m / p.Mg;
    double acc = 0.0;
    for (int64_t c = 0; c < p.Cg; ++c) {
      const int64_t xBase = (n * p.C + g * p.Cg + c) * p.inSize;
      const int64_t wBase = (m * p.Cg + c) * p.kernelSize;
      for (int64_t k = 0; k < p.kernelSize; ++k) {
        const int64_t i = inputAt(p, o, k);
        if (i >= 0)
          acc += static_cast<double>(loadF32(xt, x, xBase + i)) * loadF32(wt, w, wBase + k);
      }
    }
    if (bias)
      acc += loadF32(bt, bias, m);
    const float v = static_cast<float>(acc);
    storeF32(yt, y, e, p.relu ? reluRounded(yt, v) : v);
  }
}

__global__ void convGradInputKernel(DeviceConv p, DType dyt, const void *dy, DType wt,
                                    const void *w, DType dxt, void *dx) {
  const int64_t total = p.N * p.C * p.inSize;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e % p.inSize, ch = (e / p.inSize) % p.C, n = e / (p.inSize * p.C);
    const int64_t g = ch / p.Cg, c = ch % p.Cg;
    double acc = 0.0;
    for (int64_t mg = 0; mg < p.Mg; ++mg) {
      const int64_t m = g * p.Mg + mg;
      const int64_t dyBase = (n * p.M + m) * p.outSize;
      const int64_t wBase = (m * p.Cg + c) * p.kernelSize;
      for (int64_t k = 0; k < p.kernelSize; ++k) {
        const int64_t o = outputAt(p, i, k);
        if (o >= 0)
          acc += static_cast<double>(loadF32(dyt, dy, dyBase + o)) * loadF32(wt, w, wBase + k);
      }
    }
    storeF32(dxt, dx, e, static_cast<float>(acc));
  }
}

__global__ void convGradWeightKernel(DeviceConv p, DType xt, const void *x, DType dyt,
                                     const void *dy, DType dwt, void *dw) {
  const int64_t total = p.M * p.Cg * p.kernelSize;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = e % p.kernelSize, c = (e / p.kernelSize) % p.Cg,
                  m = e / (p.kernelSize * p.Cg);
    const int64_t g = m / p.Mg;
    double acc = 0.0;
    for (int64_t n = 0; n < p.N; ++n) {
      const int64_t xBase = (n * p.C + g * p.Cg + c) * p.inSize;
      const int64_t dyBase = (n * p.M + m) * p.outSize;
      for (int64_t o = 0; o < p.outSize; ++o) {
        const int64_t i = inputAt(p, o, k);
        if (i >= 0)
          acc += static_cast<double>(loadF32(dyt, dy, dyBase + o)) * loadF32(xt, x, xBase + i);
      }
    }
    storeF32(dwt, dw, e, static_cast<float>(acc));
  }
}

struct ConvRun {
  ConvParams p;
  DeviceConv d;
};

Status runConv(const Context &c, const ConvRun &r, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &w = args.operands[1], &y = args.results[0];
  const int64_t n = y.desc->numel;
  if (n == 0)
    return Status::ok();
  const bool hasBias = r.p.hasBias;
  convKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
      r.d, x.desc->dtype, x.data, w.desc->dtype, w.data,
      hasBias ? args.operands[2].desc->dtype : DType::F32,
      hasBias ? args.operands[2].data : nullptr, y.desc->dtype, y.data);
  return launched("conv kernel");
}

Status runConvGradInput(const Context &c, const ConvRun &r, const KernelArgs &args) {
  const TensorArg &dy = args.operands[0], &w = args.operands[1], &dx = args.results[0];
  const int64_t n = dx.desc->numel;
  if (n == 0)
    return Status::ok();
  convGradInputKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
      r.d, dy.desc->dtype, dy.data, w.desc->dtype, w.data, dx.desc->dtype, dx.data);
  return launched("conv_grad_input kernel");
}

Status runConvGradWeight(const Context &c, const ConvRun &r, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &dy = args.operands[1], &dw = args.results[0];
  const int64_t n = dw.desc->numel;
  if (n == 0)
    return Status::ok();
  convGradWeightKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(
      r.d, x.desc->dtype, x.data, dy.desc->dtype, dy.data, dw.desc->dtype, dw.data);
  return launched("conv_grad_weight kernel");
}

template <Status (*decode)(const KernelView &, ConvParams *)>
Status decodeRun(const KernelView &v, ConvRun *r) {
  MPTRT_TRY(decode(v, &r->p));
  return deviceConv(r->p, &r->d);
}

__global__ void convFinishKernel(const float *acc, DType bt, const void *bias, int64_t channels,
                                 int64_t inner, int64_t n, bool relu, DType yt, void *y) {
  MPTRT_FOR_EACH(e, n) {
    float v = acc[e];
    if (bias)
      v += loadF32(bt, bias, (e / inner) % channels);
    storeF32(yt, y, e, relu ? reluRounded(yt, v) : v);
  }
}

/// cuDNN's kernel for `v` unless MPTRT_CUDA_CONV says direct; false to
/// use the direct kernel; an error where MPTRT_CUDA_CONV=cudnn and cuDNN
/// does not take it.
Status tryCudnn(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out,
                bool *taken) {
  *taken = false;
  ConvPath path;
  MPTRT_TRY(convPathFromEnvironment(&path));
  if (path == ConvPath::Direct)
    return Status::ok();
  std::string whyNot;
  *taken = prepareCudnnConv(c, v, out, &whyNot);
  if (!*taken && path == ConvPath::Cudnn)
    return Status::error(v.kind() +
                         ": MPTRT_CUDA_CONV=cudnn, but cuDNN does not take it: " + whyNot);
  return Status::ok();
}

} // namespace

Status launchConvFinish(const Context &c, const float *acc, DType biasType, const void *bias,
                        int64_t channels, int64_t inner, int64_t n, bool relu, DType outType,
                        void *out) {
  if (n == 0)
    return Status::ok();
  convFinishKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(acc, biasType, bias, channels,
                                                                  inner, n, relu, outType, out);
  return launched("conv result kernel");
}

Status prepareConv(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  bool taken = false;
  MPTRT_TRY(tryCudnn(c, v, out, &taken));
  if (taken)
    return Status::ok();
  return prepareWith<ConvRun>(c, v, out, decodeRun<decodeConv>, runConv);
}

Status prepareConvGrad(const Context &c, const KernelView &v,
                       std::unique_ptr<PreparedKernel> *out) {
  bool taken = false;
  MPTRT_TRY(tryCudnn(c, v, out, &taken));
  if (taken)
    return Status::ok();
  if (v.kind() == "conv_grad_input")
    return prepareWith<ConvRun>(c, v, out, decodeRun<decodeConvGrad>, runConvGradInput);
  return prepareWith<ConvRun>(c, v, out, decodeRun<decodeConvGrad>, runConvGradWeight);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
