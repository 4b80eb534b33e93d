//===- AttentionKernels.cu - attention and its gradient on CUDA -----------===//
//
// The CPU's reference formulas (AttentionKernels.cpp) on the GPU, in the
// same order wherever a sum is sequential there: one block per query row
// for the forward pass (the row's scores in the workspace, the softmax
// statistics folded by BlockReduce.cuh's tree in double, each output
// element summed over the keys in order by one thread), one block per
// problem for the gradient (rows in order, each accumulator owned by one
// thread). The sums over keys and rows are in double, as on the CPU.
// These are the numerics of `reference`; the fast path of issue "GPU
// training speed" replaces them with cuDNN's fused attention.
//
//===----------------------------------------------------------------------===//
#include "cuda/BlockReduce.cuh"
#include "cuda/CpuMath.cuh"
#include "cuda/CudaKernels.h"

#include <cmath>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

struct In {
  DType type;
  const void *data;
};
struct Out {
  DType type;
  void *data;
};

__device__ inline float dotAt(In a, int64_t aAt, In b, int64_t bAt, int64_t n) {
  float sum = 0.0f;
  for (int64_t t = 0; t < n; ++t)
    sum += loadF32(a.type, a.data, aAt + t) * loadF32(b.type, b.data, bAt + t);
  return sum;
}

__device__ inline float scoreAt(const AttentionParams &p, In q, In k, In mask, int64_t b, int64_t i,
                                int64_t j) {
  float s = p.scale * dotAt(q, (b * p.tq + i) * p.d, k, (b * p.tk + j) * p.d, p.d);
  if (p.hasMask)
    s += loadF32(mask.type, mask.data, p.maskOffset(b) + i * p.maskRowStride + j * p.maskColStride);
  return s;
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

__global__ void attentionKernel(AttentionParams p, In q, In k, In v, In mask, Out out, Out lse,
                                float *scratch) {
  __shared__ double shared[kThreads];
  float *scores = scratch + blockIdx.x * p.tk;
  for (int64_t r = blockIdx.x; r < p.batch * p.tq; r += gridDim.x) {
    const int64_t b = r / p.tq, i = r % p.tq;
    float localMax = -INFINITY;
    for (int64_t j = threadIdx.x; j < p.tk; j += blockDim.x) {
      const float s = scoreAt(p, q, k, mask, b, i, j);
      scores[j] = s;
      localMax = localMax < s ? s : localMax;
    }
    const float max = static_cast<float>(blockReduce<double>(localMax, shared, MaxKeepFirst{}));
    double localSum = 0;
    for (int64_t j = threadIdx.x; j < p.tk; j += blockDim.x)
      localSum += expAsCpu(scores[j] - max);
    const double sum = blockReduce<double>(localSum, shared, AddOp{});
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t j = threadIdx.x; j < p.tk; j += blockDim.x)
      scores[j] = expAsCpu(scores[j] - max) * inv;
    __syncthreads();
    for (int64_t t = threadIdx.x; t < p.dv; t += blockDim.x) {
      double acc = 0.0;
      for (int64_t j = 0; j < p.tk; ++j)
        acc += static_cast<double>(scores[j]) * loadF32(v.type, v.data, (b * p.tk + j) * p.dv + t);
      storeF32(out.type, out.data, r * p.dv + t, static_cast<float>(acc));
    }
    if (threadIdx.x == 0)
      storeF32(lse.type, lse.data, r, max + static_cast<float>(log(sum)));
    __syncthreads(); // the next row reuses `scores`
  }
}

In inOf(const TensorArg &t) { return {t.desc->dtype, t.data}; }
Out outOf(const TensorArg &t) { return {t.desc->dtype, t.data}; }

Status runAttention(const Context &c, const AttentionParams &p, const KernelArgs &args) {
  const int64_t rows = p.batch * p.tq;
  if (rows == 0 || p.tk == 0)
    return Status::ok();
  const In mask = p.hasMask ? inOf(args.operands[3]) : In{DType::F32, nullptr};
  attentionKernel<<<rowBlocks(rows), kThreads, 0, streamOf(c)>>>(
      p, inOf(args.operands[0]), inOf(args.operands[1]), inOf(args.operands[2]), mask,
      outOf(args.results[0]), outOf(args.results[1]), static_cast<float *>(args.workspace));
  return launched("attention kernel");
}

//===----------------------------------------------------------------------===//
// attention_grad
//===----------------------------------------------------------------------===//

struct GradTensors {
  In q, k, v, o, lse, grad, mask;
  Out dq, dk, dv;
};

__global__ void attentionGradKernel(AttentionParams p, GradTensors t, double *sums, float *rows) {
  __shared__ float di;
  const int64_t qn = p.batch * p.tq * p.d, kn = p.batch * p.tk * p.d;
  double *dqAll = sums, *dkAll = sums + qn, *dvAll = sums + qn + kn;
  float *probs = rows + blockIdx.x * 2 * p.tk;
  float *dss = probs + p.tk;
  for (int64_t b = blockIdx.x; b < p.batch; b += gridDim.x) {
    double *dq = dqAll + b * p.tq * p.d, *dk = dkAll + b * p.tk * p.d;
    double *dv = dvAll + b * p.tk * p.dv;
    for (int64_t x = threadIdx.x; x < p.tq * p.d; x += blockDim.x)
      dq[x] = 0.0;
    for (int64_t x = threadIdx.x; x < p.tk * p.d; x += blockDim.x)
      dk[x] = 0.0;
    for (int64_t x = threadIdx.x; x < p.tk * p.dv; x += blockDim.x)
      dv[x] = 0.0;
    for (int64_t i = 0; i < p.tq; ++i) {
      const int64_t r = b * p.tq + i;
      if (threadIdx.x == 0)
        di = dotAt(t.grad, r * p.dv, t.o, r * p.dv, p.dv);
      __syncthreads();
      const float lse = loadF32(t.lse.type, t.lse.data, r);
      for (int64_t j = threadIdx.x; j < p.tk; j += blockDim.x) {
        const float prob = expAsCpu(scoreAt(p, t.q, t.k, t.mask, b, i, j) - lse);
        probs[j] = prob;
        dss[j] = prob * (dotAt(t.grad, r * p.dv, t.v, (b * p.tk + j) * p.dv, p.dv) - di);
      }
      __syncthreads();
      for (int64_t x = threadIdx.x; x < p.d; x += blockDim.x) {
        double acc = dq[i * p.d + x];
        for (int64_t j = 0; j < p.tk; ++j)
          acc +=
              static_cast<double>(dss[j]) * loadF32(t.k.type, t.k.data, (b * p.tk + j) * p.d + x);
        dq[i * p.d + x] = acc * p.scale;
      }
      for (int64_t x = threadIdx.x; x < p.tk * p.d; x += blockDim.x) {
        const int64_t j = x / p.d, u = x % p.d;
        dk[x] += static_cast<double>(dss[j]) * loadF32(t.q.type, t.q.data, r * p.d + u);
      }
      for (int64_t x = threadIdx.x; x < p.tk * p.dv; x += blockDim.x) {
        const int64_t j = x / p.dv, u = x % p.dv;
        dv[x] += static_cast<double>(probs[j]) * loadF32(t.grad.type, t.grad.data, r * p.dv + u);
      }
      __syncthreads(); // the next row reuses probs, dss and di
    }
    for (int64_t x = threadIdx.x; x < p.tq * p.d; x += blockDim.x)
      storeF32(t.dq.type, t.dq.data, b * p.tq * p.d + x, static_cast<float>(dq[x]));
    for (int64_t x = threadIdx.x; x < p.tk * p.d; x += blockDim.x)
      storeF32(t.dk.type, t.dk.data, b * p.tk * p.d + x, static_cast<float>(dk[x] * p.scale));
    for (int64_t x = threadIdx.x; x < p.tk * p.dv; x += blockDim.x)
      storeF32(t.dv.type, t.dv.data, b * p.tk * p.dv + x, static_cast<float>(dv[x]));
  }
}

Status runAttentionGrad(const Context &c, const AttentionParams &p, const KernelArgs &args) {
  if (p.batch == 0)
    return Status::ok();
  GradTensors t;
  t.q = inOf(args.operands[0]);
  t.k = inOf(args.operands[1]);
  t.v = inOf(args.operands[2]);
  t.o = inOf(args.operands[3]);
  t.lse = inOf(args.operands[4]);
  t.grad = inOf(args.operands[5]);
  t.mask = p.hasMask ? inOf(args.operands[6]) : In{DType::F32, nullptr};
  t.dq = outOf(args.results[0]);
  t.dk = outOf(args.results[1]);
  t.dv = outOf(args.results[2]);
  double *sums = static_cast<double *>(args.workspace);
  float *rows = reinterpret_cast<float *>(sums + p.batch * (p.tq * p.d + p.tk * p.d + p.tk * p.dv));
  attentionGradKernel<<<rowBlocks(p.batch), kThreads, 0, streamOf(c)>>>(p, t, sums, rows);
  return launched("attention_grad kernel");
}

} // namespace

Status prepareAttention(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  AttentionParams p;
  MPTRT_TRY(decodeAttention(v, &p));
  // A row of scores per block.
  const uint64_t bytes = uint64_t{rowBlocks(p.batch * p.tq)} * p.tk * sizeof(float);
  *out = std::make_unique<ParamsKernel<AttentionParams>>(c, p, runAttention, bytes);
  return Status::ok();
}

Status prepareAttentionGrad(const Context &c, const KernelView &v,
                            std::unique_ptr<PreparedKernel> *out) {
  AttentionParams p;
  MPTRT_TRY(decodeAttentionGrad(v, &p));
  // The three gradients' sums in double, and a row of probabilities and one
  // of their gradients (float32) per block.
  const uint64_t doubles = p.batch * (p.tq * p.d + p.tk * p.d + p.tk * p.dv);
  const uint64_t floats = uint64_t{rowBlocks(p.batch)} * 2 * p.tk;
  *out = std::make_unique<ParamsKernel<AttentionParams>>(
      c, p, runAttentionGrad, doubles * sizeof(double) + floats * sizeof(float));
  return Status::ok();
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
