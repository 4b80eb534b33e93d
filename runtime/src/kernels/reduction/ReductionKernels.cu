//===- ReductionKernels.cu - reduce_*, the losses and their grads ---------===//
//
// The CPU's formulas (kernels/reduction/ReductionKernels.cpp), one block per output
// element (reduce_*) or per sample (the losses), folded by BlockReduce.cuh's
// fixed tree: float sums in double, integer sums in wrapping int64, rounded
// once into the result's dtype. The loss gradients (last) write one output
// element per thread.
//
//===----------------------------------------------------------------------===//
#include "cuda/BlockReduce.cuh"
#include "cuda/CpuMath.cuh"
#include "cuda/CudaKernels.h"
#include "ops/Backward.h"

#include <cmath>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

//===----------------------------------------------------------------------===//
// reduce_sum / reduce_mean / reduce_max / reduce_l2. Output o is the kept
// axes' row-major index; its inputs are enumerated row-major over the
// reduced axes, which is their order in the input, so thread shares and the
// tree fold them in the CPU's order. Float: sum, sum / count, max (the first
// maximum; NaN wins), sqrt(sum of squares), all in double. Integer sum
// (wrapping) and max in int64: order-free, so exactly the CPU's.
//===----------------------------------------------------------------------===//

/// The input split into kept axes (giving the output index) and reduced
/// axes, each with its input element stride, both in input axis order.
struct ReduceLayout {
  ReduceOp op;
  int keptRank, reducedRank;
  int64_t keptShape[kMaxRank], keptStride[kMaxRank];
  int64_t reducedShape[kMaxRank], reducedStride[kMaxRank];
  int64_t outNumel, count;
};

ReduceLayout reduceLayout(const ReduceParams &p) {
  ReduceLayout l{};
  l.op = p.op;
  int64_t inStride[kMaxRank];
  int64_t stride = 1;
  for (int d = p.rank - 1; d >= 0; --d) {
    inStride[d] = stride;
    stride *= p.inShape[d];
  }
  for (int d = 0; d < p.rank; ++d) {
    if (p.outStride[d] == 0 && p.inShape[d] != 1) {
      l.reducedShape[l.reducedRank] = p.inShape[d];
      l.reducedStride[l.reducedRank++] = inStride[d];
    } else if (p.outStride[d] != 0) {
      l.keptShape[l.keptRank] = p.inShape[d];
      l.keptStride[l.keptRank++] = inStride[d];
    }
    // A reduced axis of size 1 contributes index 0 only: nothing to walk.
  }
  l.outNumel = p.outNumel;
  l.count = p.reducedCount;
  return l;
}

/// The input offset of output o's first element, and of its j-th element
/// relative to that.
__device__ inline int64_t keptOffset(const ReduceLayout &l, int64_t o) {
  int64_t off = 0;
  for (int d = l.keptRank - 1; d >= 0; --d) {
    off += (o % l.keptShape[d]) * l.keptStride[d];
    o /= l.keptShape[d];
  }
  return off;
}
__device__ inline int64_t reducedOffset(const ReduceLayout &l, int64_t j) {
  int64_t off = 0;
  for (int d = l.reducedRank - 1; d >= 0; --d) {
    off += (j % l.reducedShape[d]) * l.reducedStride[d];
    j /= l.reducedShape[d];
  }
  return off;
}

__global__ void reduceFloatKernel(ReduceLayout l, DType xt, const void *x, DType yt, void *y) {
  __shared__ double shared[kThreads];
  const bool isMax = l.op == ReduceOp::Max;
  for (int64_t o = blockIdx.x; o < l.outNumel; o += gridDim.x) {
    const int64_t base = keptOffset(l, o);
    const Share sh = shareOf(l.count);
    double acc = isMax ? -INFINITY : 0.0;
    for (int64_t j = sh.begin; j < sh.end; ++j) {
      const double v = loadF32(xt, x, base + reducedOffset(l, j));
      if (isMax)
        acc = MaxNaNWins{}(acc, v);
      else
        acc += l.op == ReduceOp::L2 ? v * v : v; // a float squared is exact in double
    }
    double total = isMax ? blockReduce<double>(acc, shared, MaxNaNWins{})
                         : blockReduce<double>(acc, shared, AddOp{});
    if (l.op == ReduceOp::Mean)
      total = total / static_cast<double>(l.count); // 0 / 0 is NaN, as on the CPU
    else if (l.op == ReduceOp::L2)
      total = sqrt(total);
    if (threadIdx.x == 0)
      storeF32(yt, y, o, static_cast<float>(total));
  }
}

struct WrapAddI64 {
  __device__ long long operator()(long long a, long long b) const {
    return static_cast<long long>(static_cast<unsigned long long>(a) +
                                  static_cast<unsigned long long>(b));
  }
};
struct MaxI64 {
  __device__ long long operator()(long long a, long long b) const { return a < b ? b : a; }
};

__global__ void reduceIntKernel(ReduceLayout l, DType xt, const void *x, DType yt, void *y) {
  __shared__ long long shared[kThreads];
  const bool isMax = l.op == ReduceOp::Max;
  for (int64_t o = blockIdx.x; o < l.outNumel; o += gridDim.x) {
    const int64_t base = keptOffset(l, o);
    const Share sh = shareOf(l.count);
    long long acc = isMax ? INT64_MIN : 0;
    for (int64_t j = sh.begin; j < sh.end; ++j) {
      const long long v = loadI64(xt, x, base + reducedOffset(l, j));
      acc = isMax ? MaxI64{}(acc, v) : WrapAddI64{}(acc, v);
    }
    const long long total = isMax ? blockReduce<long long>(acc, shared, MaxI64{})
                                  : blockReduce<long long>(acc, shared, WrapAddI64{});
    if (threadIdx.x == 0)
      storeI64(yt, y, o, total);
  }
}

Status runReduce(const Context &c, const ReduceParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &y = args.results[0];
  if (p.outNumel == 0)
    return Status::ok();
  const ReduceLayout l = reduceLayout(p);
  if (p.integer)
    reduceIntKernel<<<rowBlocks(p.outNumel), kThreads, 0, streamOf(c)>>>(l, x.desc->dtype, x.data,
                                                                         y.desc->dtype, y.data);
  else
    reduceFloatKernel<<<rowBlocks(p.outNumel), kThreads, 0, streamOf(c)>>>(l, x.desc->dtype, x.data,
                                                                           y.desc->dtype, y.data);
  return launched("reduce kernel");
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_loss and nll_loss over scores [N, C, D]. One block
// per sample s = (n, d), its classes at (n * C + c) * D + d, label t:
//   log_prob = x - max - float(log(sum exp(x - max)))     (SCE only; the
//              sum in double, as softmax's)
//   loss[s]  = -w[t] * log_prob[t]   (nll: -w[t] * x[t]); 0 when ignored.
// "none" writes loss[s]; "sum" and "mean" keep loss[s] and w[t] (0 when
// ignored) in the workspace, and one block then folds both in double:
// total, or total / weight sum, rounded once.
//
// A label outside [0, C) that is not the ignore index raises
// LabelOutOfRange (the CPU fails the run before writing); the sample is
// then treated as ignored, so every result is still written.
//===----------------------------------------------------------------------===//

struct LossTensors {
  DType st, lt, wt, ot, pt;
  const void *scores, *labels, *weights;
  void *out, *logProb;
  float *sampleLoss, *sampleWeight; // workspace, "sum" and "mean" only
  DeviceErrorRecord *errorWord;
};

__global__ void lossSampleKernel(LossParams p, LossTensors t) {
  __shared__ double shared[kThreads];
  const int64_t samples = p.N * p.D;
  for (int64_t s = blockIdx.x; s < samples; s += gridDim.x) {
    const int64_t n = s / p.D, d = s % p.D;
    const int64_t base = n * p.C * p.D + d; // class c at base + c * D
    const int64_t label = loadI64(t.lt, t.labels, s);
    bool ignored = p.hasIgnoreIndex && label == p.ignoreIndex;
    if (!ignored && (label < 0 || label >= p.C)) {
      if (threadIdx.x == 0)
        raise(t.errorWord, DeviceError::LabelOutOfRange, label, s, p.C);
      ignored = true;
    }
    float max = 0.0f, logSum = 0.0f;
    if (p.fromLogits) {
      const Share sh = shareOf(p.C);
      float localMax = -INFINITY;
      for (int64_t c = sh.begin; c < sh.end; ++c) {
        const float v = loadF32(t.st, t.scores, base + c * p.D);
        localMax = localMax < v ? v : localMax;
      }
      max = static_cast<float>(blockReduce<double>(localMax, shared, MaxKeepFirst{}));
      double localSum = 0;
      for (int64_t c = sh.begin; c < sh.end; ++c)
        localSum += expAsCpu(loadF32(t.st, t.scores, base + c * p.D) - max);
      logSum = static_cast<float>(log(blockReduce<double>(localSum, shared, AddOp{})));
      if (p.hasLogProb)
        for (int64_t c = sh.begin; c < sh.end; ++c) {
          const int64_t at = base + c * p.D;
          storeF32(t.pt, t.logProb, at, loadF32(t.st, t.scores, at) - max - logSum);
        }
    }
    if (threadIdx.x == 0) {
      float weight = 0.0f, loss = 0.0f;
      if (!ignored) {
        weight = p.hasWeights ? loadF32(t.wt, t.weights, label) : 1.0f;
        float v = loadF32(t.st, t.scores, base + label * p.D);
        if (p.fromLogits)
          v = v - max - logSum;
        loss = -weight * v;
      }
      if (p.reduction == Reduction::None) {
        storeF32(t.ot, t.out, s, loss);
      } else {
        t.sampleLoss[s] = loss;
        t.sampleWeight[s] = weight;
      }
    }
  }
}

/// One block: total = sum(loss), weights = sum(w) in double; the result is
/// total ("sum") or total / weights ("mean"), rounded once.
__global__ void lossTotalKernel(LossParams p, LossTensors t) {
  __shared__ double shared[kThreads];
  const int64_t samples = p.N * p.D;
  const Share sh = shareOf(samples);
  double localLoss = 0, localWeight = 0;
  for (int64_t s = sh.begin; s < sh.end; ++s) {
    localLoss += t.sampleLoss[s];
    localWeight += t.sampleWeight[s];
  }
  const double total = blockReduce<double>(localLoss, shared, AddOp{});
  const double weights = blockReduce<double>(localWeight, shared, AddOp{});
  if (threadIdx.x == 0)
    storeF32(t.ot, t.out, 0,
             static_cast<float>(p.reduction == Reduction::Sum ? total : total / weights));
}

/// Bytes of the per-sample losses and weights ("sum" and "mean").
uint64_t lossWorkspace(const LossParams &p) {
  return p.reduction == Reduction::None ? 0 : 2 * static_cast<uint64_t>(p.N * p.D) * sizeof(float);
}

Status runLoss(const Context &c, const LossParams &p, const KernelArgs &args) {
  const int64_t samples = p.N * p.D;
  LossTensors t{};
  t.st = args.operands[0].desc->dtype;
  t.scores = args.operands[0].data;
  t.lt = args.operands[1].desc->dtype;
  t.labels = args.operands[1].data;
  if (p.hasWeights) {
    t.wt = args.operands[2].desc->dtype;
    t.weights = args.operands[2].data;
  }
  t.ot = args.results[0].desc->dtype;
  t.out = args.results[0].data;
  if (p.hasLogProb) {
    t.pt = args.results[1].desc->dtype;
    t.logProb = args.results[1].data;
  }
  if (p.reduction != Reduction::None) {
    t.sampleLoss = static_cast<float *>(args.workspace);
    t.sampleWeight = t.sampleLoss + samples;
  }
  t.errorWord = c.errorWord;
  cudaStream_t stream = streamOf(c);
  if (samples > 0) {
    lossSampleKernel<<<rowBlocks(samples), kThreads, 0, stream>>>(p, t);
    MPTRT_TRY(launched("loss kernel"));
  }
  if (p.reduction != Reduction::None) { // with no samples: 0, or 0 / 0 = NaN
    lossTotalKernel<<<1, kThreads, 0, stream>>>(p, t);
    MPTRT_TRY(launched("loss total kernel"));
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_loss_grad and nll_loss_grad. Per sample s with
// label t (not ignored), factor = w[t] * g with
//   g = float(dloss / sum of w[label] over non-ignored samples)   (mean)
//       dloss                                                     (sum)
//       dloss[s]                                                  (none)
// then dscores[s, c] = (exp(log_prob[s, c]) - [c == t]) * factor and
// dinput[s, t] = -factor, 0 elsewhere and for ignored samples. For "mean"
// one block first adds the weights in double into the workspace; then one
// thread per output element writes it (every element exactly once).
// A label outside [0, C) that is not the ignore index raises
// LabelOutOfRange and counts as ignored.
//===----------------------------------------------------------------------===//

struct LossGradTensors {
  DType pt, lt, wt, gt, ot;
  const void *logProb, *labels, *weights, *dloss;
  void *out;
  double *weightSum; // workspace, "mean" only
  DeviceErrorRecord *errorWord;
};

/// The label of sample s, or -1 when it is ignored or out of range.
__device__ inline int64_t lossLabel(const LossGradParams &p, const LossGradTensors &t, int64_t s) {
  const int64_t label = loadI64(t.lt, t.labels, s);
  if (p.hasIgnoreIndex && label == p.ignoreIndex)
    return -1;
  if (label < 0 || label >= p.C)
    return -1;
  return label;
}

__global__ void lossGradWeightSumKernel(LossGradParams p, LossGradTensors t) {
  __shared__ double shared[kThreads];
  const Share sh = shareOf(p.N * p.D);
  double local = 0;
  for (int64_t s = sh.begin; s < sh.end; ++s) {
    const int64_t label = lossLabel(p, t, s);
    if (label >= 0)
      local += p.hasWeights ? loadF32(t.wt, t.weights, label) : 1.0f;
  }
  const double total = blockReduce<double>(local, shared, AddOp{});
  if (threadIdx.x == 0)
    *t.weightSum = total;
}

__global__ void lossGradKernel(LossGradParams p, LossGradTensors t) {
  const int64_t n = p.N * p.C * p.D;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t d = e % p.D, c = (e / p.D) % p.C, sampleN = e / (p.D * p.C);
    const int64_t s = sampleN * p.D + d;
    const int64_t raw = loadI64(t.lt, t.labels, s);
    const int64_t label = lossLabel(p, t, s);
    if (label < 0 && !(p.hasIgnoreIndex && raw == p.ignoreIndex) && c == 0)
      raise(t.errorWord, DeviceError::LabelOutOfRange, raw, s, p.C);
    float v = 0.0f;
    if (label >= 0) {
      float g;
      if (p.reduction == Reduction::None)
        g = loadF32(t.gt, t.dloss, s);
      else if (p.reduction == Reduction::Sum)
        g = loadF32(t.gt, t.dloss, 0);
      else
        g = static_cast<float>(static_cast<double>(loadF32(t.gt, t.dloss, 0)) / *t.weightSum);
      const float w = p.hasWeights ? loadF32(t.wt, t.weights, label) : 1.0f;
      const float factor = w * g;
      if (p.fromLogits)
        v = (expAsCpu(loadF32(t.pt, t.logProb, e)) - (c == label ? 1.0f : 0.0f)) * factor;
      else
        v = c == label ? -factor : 0.0f;
    }
    storeF32(t.ot, t.out, e, v);
  }
}

uint64_t lossGradWorkspace(const LossGradParams &p) {
  return p.reduction == Reduction::Mean ? sizeof(double) : 0;
}

Status runLossGrad(const Context &c, const LossGradParams &p, const KernelArgs &args) {
  const size_t first = p.fromLogits ? 1 : 0;
  LossGradTensors t{};
  if (p.fromLogits) {
    t.pt = args.operands[0].desc->dtype;
    t.logProb = args.operands[0].data;
  }
  t.lt = args.operands[first].desc->dtype;
  t.labels = args.operands[first].data;
  if (p.hasWeights) {
    t.wt = args.operands[first + 1].desc->dtype;
    t.weights = args.operands[first + 1].data;
  }
  const TensorArg &dloss = args.operands[args.operands.size() - 1];
  t.gt = dloss.desc->dtype;
  t.dloss = dloss.data;
  t.ot = args.results[0].desc->dtype;
  t.out = args.results[0].data;
  t.weightSum = static_cast<double *>(args.workspace);
  t.errorWord = c.errorWord;
  const int64_t n = p.N * p.C * p.D;
  if (n == 0)
    return Status::ok();
  cudaStream_t stream = streamOf(c);
  if (p.reduction == Reduction::Mean) {
    lossGradWeightSumKernel<<<1, kThreads, 0, stream>>>(p, t);
    MPTRT_TRY(launched("loss grad weight-sum kernel"));
  }
  lossGradKernel<<<blocksFor(c, n), kThreads, 0, stream>>>(p, t);
  return launched("loss grad kernel");
}

} // namespace

Status prepareReduce(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ReduceParams>(c, v, out, decodeReduce, runReduce);
}
Status prepareLoss(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  LossParams p;
  MPTRT_TRY(decodeLoss(v, &p));
  const uint64_t bytes = lossWorkspace(p);
  *out = std::make_unique<ParamsKernel<LossParams>>(c, p, runLoss, bytes);
  return Status::ok();
}
Status prepareLossGrad(const Context &c, const KernelView &v,
                       std::unique_ptr<PreparedKernel> *out) {
  LossGradParams p;
  MPTRT_TRY(decodeLossGrad(v, &p));
  const uint64_t bytes = lossGradWorkspace(p);
  *out = std::make_unique<ParamsKernel<LossGradParams>>(c, p, runLossGrad, bytes);
  return Status::ok();
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
