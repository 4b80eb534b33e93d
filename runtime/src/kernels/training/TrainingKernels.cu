//===- TrainingKernels.cu - loss scaling, norms, optimizers, counters -----===//
//
// The CUDA twins of kernels/training/TrainingKernels.cpp and kernels/training/OptimizerKernels.cpp,
// with the same f32 roundings in the same order (PyTorch's; see those
// files): the build has --fmad=false, so nothing is fused except the
// fmaf calls, which stand exactly where the CPU calls std::fma; f32
// division and sqrtf are IEEE (nvcc's default -prec-div / -prec-sqrt), and
// so are double division and sqrt. Every scalar that lives on the device
// (loss scale, lr, step, finite flag, norm) is read by the kernel; run()
// only enqueues.
//
// Bit for bit the CPU's: everything except
//   - adamw_update: 1 - beta^t uses CUDA's pow (within 2 ulp in double;
//     glibc's is within 1), and (1 - beta2^t) ** 0.5 is sqrt (correctly
//     rounded; the CPU's pow(x, 0.5) is within 1 ulp of it). Both are
//     rounded to f32 before use, so the f32 step size and bias correction
//     differ only when a double lands within 2 ulp of an f32 rounding
//     boundary (about 2^-28 of steps), and then by 1 f32 ulp.
//   - lr_schedule: the cosine is CUDA's cos (within 2 ulp in double; glibc
//     within 1), rounded to f32: the same f32 but for the same rare case,
//     then 1 ulp.
//
// unscale, clip_by_norm, sgd_update and adamw_update read their gradient
// through AnyGrad (its dtype per element) or Grad<G> (the dtype fixed at
// prepare, 32-bit indices): the same conversion either way.
//
// all_finite, global_norm and amax cut their operands into the decoder's
// fixed blocks (MultiTensorParams) and reduce over them in block order, as
// the CPU does. global_norm sums each block's squares in element order in
// double on one thread and the block sums in block order on one thread:
// the CPU's additions, one for one, so the same bits.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"
#include "cuda/DeviceCollectives.h"
#include "cuda/Vectorized.cuh"
#include "kernels/training/OptimizerMath.h"
#include "kernels/training/TrainingMath.h"
#include "ops/Training.h"

#include "mptrt/Philox.h"

#include <cmath>
#include <type_traits>
#include <vector>

namespace mptrt {
namespace rt {
namespace cuda {
namespace {

//===----------------------------------------------------------------------===//
// The gradient operand of the elementwise training kernels (unscale,
// clip_by_norm, sgd_update, adamw_update), any float dtype, read into f32:
// AnyGrad reads its dtype per element (the generic kernels, 64-bit
// indices); Grad<G> is specialised at prepare (32-bit indices, fewer than
// 2^31 elements). Both convert with Element<G>::toF32, so a kernel
// computes the same bits with either.
//===----------------------------------------------------------------------===//

struct AnyGrad {
  using Index = int64_t;
  DType dtype;
  const void *data;
  __device__ float operator[](int64_t k) const { return loadF32(dtype, data, k); }
};

template <DType G> struct Grad {
  using Index = uint32_t;
  const typename Element<G>::Storage *data;
  __device__ float operator[](uint32_t k) const { return Element<G>::toF32(data[k]); }
};

template <typename Params>
using RunFn = Status (*)(const Context &, const Params &, const KernelArgs &);

/// `run<AnyGrad>` (generic), or `run<Grad<G>>` for a float gradient dtype G
/// and fewer than 2^31 elements.
template <typename Params, template <class> class Run>
RunFn<Params> runForGrad(DType grad, int64_t numel) {
  if (genericKernelsForced() || numel > kMaxIndex32 || !plan::isFloatDType(grad))
    return Run<AnyGrad>::run;
  return withDType(grad, [](auto d) -> RunFn<Params> {
    constexpr DType G = decltype(d)::value;
    if constexpr (Element<G>::isFloat)
      return Run<Grad<G>>::run;
    return Run<AnyGrad>::run;
  });
}

/// The gradient operand `arg` as a GradT.
template <class GradT> GradT gradOf(const TensorArg &arg) {
  if constexpr (std::is_same_v<GradT, AnyGrad>)
    return AnyGrad{arg.desc->dtype, arg.data};
  else
    return GradT{static_cast<decltype(GradT::data)>(arg.data)};
}

__device__ inline bool isFiniteF32(float x) {
  return (__float_as_uint(x) & 0x7F800000u) != 0x7F800000u;
}

/// PyTorch's (and std::numeric_limits<float>::quiet_NaN()'s) NaN.
__device__ inline float quietNaN() { return __uint_as_float(0x7FC00000u); }

//===----------------------------------------------------------------------===//
// scale_loss: loss * scale.
//===----------------------------------------------------------------------===//

__global__ void scaleLossKernel(const float *loss, const float *scale, float *out) {
  *out = *loss * *scale;
}

Status runScaleLoss(const Context &c, const ScaleLossParams &, const KernelArgs &args) {
  scaleLossKernel<<<1, 1, 0, streamOf(c)>>>(static_cast<const float *>(args.operands[0].data),
                                            static_cast<const float *>(args.operands[1].data),
                                            static_cast<float *>(args.results[0].data));
  return launched("scale_loss kernel");
}

//===----------------------------------------------------------------------===//
// unscale: out[i] = f32(grad[i]) * inv, inv = f32(1 / f64(scale)). Each
// element is read before it is written, so out may be grad's bytes.
//===----------------------------------------------------------------------===//

template <class GradT>
__global__ void unscaleKernel(GradT grad, const float *scale, float *out, int64_t n) {
  const float inv = static_cast<float>(1.0 / static_cast<double>(*scale));
  MPTRT_FOR_EACH_AS(typename GradT::Index, i, n)
  out[i] = grad[i] * inv;
}

template <class GradT> struct RunUnscale {
  static Status run(const Context &c, const UnscaleParams &p, const KernelArgs &args) {
    if (p.numel == 0)
      return Status::ok();
    unscaleKernel<<<blocksFor(c, p.numel), kThreads, 0, streamOf(c)>>>(
        gradOf<GradT>(args.operands[0]), static_cast<const float *>(args.operands[1].data),
        static_cast<float *>(args.results[0].data), p.numel);
    return launched("unscale kernel");
  }
};

//===----------------------------------------------------------------------===//
// clip_by_norm: out = grad * c, c = min(f32(1 / (norm + 1e-6f)) *
// f32(max_norm), 1) (NaN stays NaN).
//===----------------------------------------------------------------------===//

template <class GradT>
__global__ void clipByNormKernel(GradT grad, const float *norm, float maxNorm, float *out,
                                 int64_t n) {
  const float denom = *norm + 1e-6f;
  const float coef = (1.0f / denom) * maxNorm;
  const float c = coef > 1.0f ? 1.0f : coef;
  MPTRT_FOR_EACH_AS(typename GradT::Index, i, n)
  out[i] = grad[i] * c;
}

template <class GradT> struct RunClipByNorm {
  static Status run(const Context &c, const ClipByNormParams &p, const KernelArgs &args) {
    if (p.numel == 0)
      return Status::ok();
    clipByNormKernel<<<blocksFor(c, p.numel), kThreads, 0, streamOf(c)>>>(
        gradOf<GradT>(args.operands[0]), static_cast<const float *>(args.operands[1].data),
        static_cast<float>(p.maxNorm), static_cast<float *>(args.results[0].data), p.numel);
    return launched("clip_by_norm kernel");
  }
};

//===----------------------------------------------------------------------===//
// all_finite, global_norm, amax over the decoder's fixed blocks.
//
// The block table (operand, begin, end per block, in operand then element
// order) goes to device memory once, at prepare. The operands' addresses
// are only known at run, so each launch takes up to kMaxTensors of them by
// value (a kernel parameter: nothing to copy or allocate) and covers the
// blocks of those operands. Per-block results go to the workspace; one
// thread then combines them in block order and writes the 0-d result.
//===----------------------------------------------------------------------===//

constexpr int kMaxTensors = 64;

struct TensorList {
  const void *data[kMaxTensors];
  DType dtype[kMaxTensors];
};

struct DeviceBlock {
  int64_t begin, end;
  int64_t operand;
};

/// The bit test of cpu hasNonFinite: an all-ones exponent (f8E4M3FN: its
/// NaN, S.1111.111).
__device__ inline bool nonFinite(DType dtype, const void *base, int64_t i) {
  switch (dtype) {
  case DType::F32:
    return (static_cast<const uint32_t *>(base)[i] & 0x7F800000u) == 0x7F800000u;
  case DType::F16:
    return (static_cast<const uint16_t *>(base)[i] & 0x7C00u) == 0x7C00u;
  case DType::BF16:
    return (static_cast<const uint16_t *>(base)[i] & 0x7F80u) == 0x7F80u;
  case DType::F8E4M3FN:
    return (static_cast<const uint8_t *>(base)[i] & 0x7Fu) == 0x7Fu;
  case DType::F8E5M2:
    return (static_cast<const uint8_t *>(base)[i] & 0x7Cu) == 0x7Cu;
  default:
    return false; // the decoder admits float operands only
  }
}

/// Threads per CUDA block of the all_finite and amax block kernels (one CUDA
/// block per table block); a power of two for the max tree.
constexpr int kReduceThreads = 256;

/// flag[b] = 1 if table block b has a non-finite element.
__global__ void allFiniteBlocksKernel(TensorList list, int64_t opBegin, const DeviceBlock *table,
                                      int64_t blockBegin, uint8_t *flag) {
  const int64_t b = blockBegin + blockIdx.x;
  const DeviceBlock blk = table[b];
  const int k = static_cast<int>(blk.operand - opBegin);
  int bad = 0;
  for (int64_t i = blk.begin + threadIdx.x; i < blk.end; i += blockDim.x)
    bad |= nonFinite(list.dtype[k], list.data[k], i) ? 1 : 0;
  bad = __syncthreads_or(bad);
  if (threadIdx.x == 0)
    flag[b] = bad ? 1 : 0;
}

/// partial[b] = max |x| over table block b ignoring NaNs, flag[b] = 1 if it
/// has a NaN. The maximum of non-NaN values does not depend on the order.
__global__ void amaxBlocksKernel(TensorList list, int64_t opBegin, const DeviceBlock *table,
                                 int64_t blockBegin, float *partial, uint8_t *flag) {
  __shared__ float best[kReduceThreads];
  const int64_t b = blockBegin + blockIdx.x;
  const DeviceBlock blk = table[b];
  const int k = static_cast<int>(blk.operand - opBegin);
  float m = 0.0f;
  int nan = 0;
  for (int64_t i = blk.begin + threadIdx.x; i < blk.end; i += blockDim.x) {
    const float a = fabsf(loadF32(list.dtype[k], list.data[k], i));
    nan |= a != a ? 1 : 0;
    m = a > m ? a : m;
  }
  best[threadIdx.x] = m;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      const float other = best[threadIdx.x + half];
      best[threadIdx.x] = other > best[threadIdx.x] ? other : best[threadIdx.x];
    }
    __syncthreads();
  }
  nan = __syncthreads_or(nan);
  if (threadIdx.x == 0) {
    partial[b] = best[0];
    flag[b] = nan ? 1 : 0;
  }
}

/// partial[b] = the sum of the squares of table block b, in double, in
/// element order (the CPU's sum): one thread per block.
__global__ void sumSquaresBlocksKernel(TensorList list, int64_t opBegin, const DeviceBlock *table,
                                       int64_t blockBegin, int64_t blockEnd, double *partial) {
  const int64_t b = blockBegin + blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (b >= blockEnd)
    return;
  const DeviceBlock blk = table[b];
  const int k = static_cast<int>(blk.operand - opBegin);
  double sum = 0;
  for (int64_t i = blk.begin; i < blk.end; ++i) {
    const double x = loadF32(list.dtype[k], list.data[k], i);
    sum += x * x;
  }
  partial[b] = sum;
}

__global__ void allFiniteFinishKernel(const uint8_t *flag, int64_t blocks, uint8_t *out) {
  uint8_t finite = 1;
  for (int64_t b = 0; b < blocks; ++b)
    if (flag[b])
      finite = 0;
  *out = finite;
}

__global__ void globalNormFinishKernel(const double *partial, int64_t blocks, float *out) {
  double total = 0;
  for (int64_t b = 0; b < blocks; ++b)
    total += partial[b];
  *out = static_cast<float>(sqrt(total));
}

// over_ranks (sharded state): the rank's count of non-finite blocks, or its
// f64 sum of squares, summed over the ranks, then finished.
__global__ void allFiniteCountKernel(const uint8_t *flag, int64_t blocks, double *count) {
  double bad = 0;
  for (int64_t b = 0; b < blocks; ++b)
    if (flag[b])
      bad = 1;
  *count = bad;
}

__global__ void finiteFromCountKernel(const double *count, uint8_t *out) {
  *out = *count == 0 ? 1 : 0;
}

__global__ void globalNormSumKernel(const double *partial, int64_t blocks, double *total) {
  double sum = 0;
  for (int64_t b = 0; b < blocks; ++b)
    sum += partial[b];
  *total = sum;
}

__global__ void sqrtToF32Kernel(const double *total, float *out) {
  *out = static_cast<float>(sqrt(*total));
}

__global__ void amaxFinishKernel(const float *partial, const uint8_t *flag, int64_t blocks,
                                 float *out) {
  float amax = 0.0f;
  bool nan = false;
  for (int64_t b = 0; b < blocks; ++b) {
    amax = amax < partial[b] ? partial[b] : amax; // std::max(amax, partial[b])
    nan |= flag[b] != 0;
  }
  *out = nan ? quietNaN() : amax;
}

enum class Reduce { AllFinite, GlobalNorm, Amax };

class MultiTensorKernel final : public PreparedKernel {
public:
  /// `coll`: with over_ranks in a world of several ranks, the collectives
  /// that combine the ranks' results.
  MultiTensorKernel(const Context &c, Reduce what, DeviceCollectives *coll = nullptr)
      : c_(c), what_(what), coll_(coll) {}
  ~MultiTensorKernel() override {
    if (table_)
      cudaFree(table_);
  }

  /// Uploads the block table and plans the launches.
  Status init(const MultiTensorParams &p) {
    blocks_ = static_cast<int64_t>(p.blocks.size());
    if (blocks_ == 0) {
      workspace_ = coll_ ? sizeof(double) : 0; // over the ranks: the f64 total
      return Status::ok();
    }
    std::vector<DeviceBlock> host(p.blocks.size());
    for (size_t b = 0; b < p.blocks.size(); ++b)
      host[b] = {p.blocks[b].begin, p.blocks[b].end, static_cast<int64_t>(p.blocks[b].operand)};
    const uint64_t bytes = host.size() * sizeof(DeviceBlock);
    MPTRT_CUDA_TRY(cudaMalloc(reinterpret_cast<void **>(&table_), bytes));
    MPTRT_CUDA_TRY(cudaMemcpy(table_, host.data(), bytes, cudaMemcpyHostToDevice));
    // A launch covers consecutive blocks whose operands span < kMaxTensors.
    for (size_t b = 0; b < p.blocks.size(); ++b) {
      const int64_t op = p.blocks[b].operand;
      if (launches_.empty() || op - launches_.back().opBegin >= kMaxTensors)
        launches_.push_back({op, op + 1, static_cast<int64_t>(b), static_cast<int64_t>(b)});
      Launch &l = launches_.back();
      l.opEnd = op + 1;
      l.blockEnd = static_cast<int64_t>(b) + 1;
    }
    // The workspace: 8 bytes of partial result and 1 flag byte per block,
    // and over the ranks an f64 total.
    flagOffset_ = (static_cast<uint64_t>(blocks_) * 8 + 255) / 256 * 256;
    totalOffset_ = (flagOffset_ + static_cast<uint64_t>(blocks_) + 255) / 256 * 256;
    workspace_ = coll_ ? totalOffset_ + sizeof(double) : flagOffset_ + blocks_;
    return Status::ok();
  }

  uint64_t workspaceBytes() const override { return workspace_; }

  Status run(const KernelArgs &args) override {
    cudaStream_t s = streamOf(c_);
    uint8_t *ws = static_cast<uint8_t *>(args.workspace);
    double *partialD = reinterpret_cast<double *>(ws);
    float *partialF = reinterpret_cast<float *>(ws);
    uint8_t *flag = ws ? ws + flagOffset_ : nullptr;
    for (const Launch &l : launches_) {
      TensorList list{};
      for (int64_t op = l.opBegin; op < l.opEnd; ++op) {
        list.data[op - l.opBegin] = args.operands[op].data;
        list.dtype[op - l.opBegin] = args.operands[op].desc->dtype;
      }
      const int64_t count = l.blockEnd - l.blockBegin;
      switch (what_) {
      case Reduce::AllFinite:
        allFiniteBlocksKernel<<<static_cast<unsigned>(count), kReduceThreads, 0, s>>>(
            list, l.opBegin, table_, l.blockBegin, flag);
        break;
      case Reduce::Amax:
        amaxBlocksKernel<<<static_cast<unsigned>(count), kReduceThreads, 0, s>>>(
            list, l.opBegin, table_, l.blockBegin, partialF, flag);
        break;
      case Reduce::GlobalNorm: {
        constexpr int kPerBlock = 128;
        const unsigned grid = static_cast<unsigned>((count + kPerBlock - 1) / kPerBlock);
        sumSquaresBlocksKernel<<<grid, kPerBlock, 0, s>>>(list, l.opBegin, table_, l.blockBegin,
                                                          l.blockEnd, partialD);
        break;
      }
      }
      MPTRT_TRY(launched("multi-tensor block kernel"));
    }
    void *result = args.results[0].data;
    if (coll_ && what_ != Reduce::Amax) {
      double *total = reinterpret_cast<double *>(ws + totalOffset_);
      if (what_ == Reduce::AllFinite)
        allFiniteCountKernel<<<1, 1, 0, s>>>(flag, blocks_, total);
      else
        globalNormSumKernel<<<1, 1, 0, s>>>(partialD, blocks_, total);
      MPTRT_TRY(launched("multi-tensor finish kernel"));
      MPTRT_TRY(coll_->allReduceSum(total, 1, c_.stream));
      if (what_ == Reduce::AllFinite)
        finiteFromCountKernel<<<1, 1, 0, s>>>(total, static_cast<uint8_t *>(result));
      else
        sqrtToF32Kernel<<<1, 1, 0, s>>>(total, static_cast<float *>(result));
      return launched("multi-tensor finish kernel");
    }
    switch (what_) {
    case Reduce::AllFinite:
      allFiniteFinishKernel<<<1, 1, 0, s>>>(flag, blocks_, static_cast<uint8_t *>(result));
      break;
    case Reduce::Amax:
      amaxFinishKernel<<<1, 1, 0, s>>>(partialF, flag, blocks_, static_cast<float *>(result));
      break;
    case Reduce::GlobalNorm:
      globalNormFinishKernel<<<1, 1, 0, s>>>(partialD, blocks_, static_cast<float *>(result));
      break;
    }
    return launched("multi-tensor finish kernel");
  }

private:
  struct Launch {
    int64_t opBegin, opEnd;       // operands [opBegin, opEnd), < kMaxTensors of them
    int64_t blockBegin, blockEnd; // their blocks
  };
  const Context &c_;
  Reduce what_;
  DeviceCollectives *coll_;
  DeviceBlock *table_ = nullptr;
  int64_t blocks_ = 0;
  std::vector<Launch> launches_;
  uint64_t flagOffset_ = 0, totalOffset_ = 0, workspace_ = 0;
};

Status prepareMultiTensor(const Context &c, Reduce what, const MultiTensorParams &p,
                          std::unique_ptr<PreparedKernel> *out) {
  DeviceCollectives *coll = nullptr;
  if (p.overRanks)
    MPTRT_TRY(deviceCollectives(c.deviceOrdinal, &coll));
  auto kernel = std::make_unique<MultiTensorKernel>(c, what, coll);
  MPTRT_TRY(kernel->init(p));
  *out = std::move(kernel);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// sgd_update (cpu runSgdUpdate): per element kernels/training/
// OptimizerMath.h's sgdElement. When finite is 0 every result gets its
// operand's bits.
//===----------------------------------------------------------------------===//

template <class GradT>
__global__ void sgdKernel(math::SgdStep a, const float *param, GradT grad, const float *buf,
                          const int64_t *stepPtr, const float *lrPtr, const uint8_t *finitePtr,
                          float *paramOut, float *bufOut, int64_t n) {
  const bool finite = *finitePtr != 0;
  a.first = *stepPtr == 0;
  a.negLr = static_cast<float>(-static_cast<double>(*lrPtr));
  MPTRT_FOR_EACH_AS(typename GradT::Index, k, n) {
    if (!finite) { // a skipped step: the bits, unless the result is the operand
      if (paramOut != param)
        reinterpret_cast<uint32_t *>(paramOut)[k] = reinterpret_cast<const uint32_t *>(param)[k];
      if (a.hasBuffer && bufOut != buf)
        reinterpret_cast<uint32_t *>(bufOut)[k] = reinterpret_cast<const uint32_t *>(buf)[k];
      continue;
    }
    paramOut[k] = math::sgdElement(a, param[k], grad[k], a.hasBuffer ? buf[k] : 0.0f,
                                   a.hasBuffer ? &bufOut[k] : nullptr);
  }
}

template <class GradT>
Status runSgdUpdate(const Context &c, const SgdParams &p, const KernelArgs &args) {
  if (p.numel == 0)
    return Status::ok();
  const size_t s = p.hasBuffer ? 3 : 2; // step, lr, finite
  math::SgdStep a{};
  a.decay = p.weightDecay != 0;
  a.hasBuffer = p.hasBuffer;
  a.nesterov = p.nesterov;
  a.wd = static_cast<float>(p.weightDecay);
  a.momentum = static_cast<float>(p.momentum);
  a.bufKeep = static_cast<float>(1.0 - p.dampening);
  sgdKernel<<<blocksFor(c, p.numel), kThreads, 0, streamOf(c)>>>(
      a, static_cast<const float *>(args.operands[0].data), gradOf<GradT>(args.operands[1]),
      p.hasBuffer ? static_cast<const float *>(args.operands[2].data) : nullptr,
      static_cast<const int64_t *>(args.operands[s].data),
      static_cast<const float *>(args.operands[s + 1].data),
      static_cast<const uint8_t *>(args.operands[s + 2].data),
      static_cast<float *>(args.results[0].data),
      p.hasBuffer ? static_cast<float *>(args.results[1].data) : nullptr, p.numel);
  return launched("sgd_update kernel");
}
template <class GradT> struct RunSgdUpdate {
  static Status run(const Context &c, const SgdParams &p, const KernelArgs &args) {
    return runSgdUpdate<GradT>(c, p, args);
  }
};

//===----------------------------------------------------------------------===//
// adamw_update (cpu runAdamWUpdate), t = step + 1: the scalars in double
// (bc1 = 1 - beta1^t, bc2 = 1 - beta2^t, step_size = lr / bc1), then per
// element OptimizerMath.h's adamwElement; w is stored as f32, or rounded
// into a bf16 master (nearest even, or stochastically with the Philox word
// of (seed, step, stream, k)). When finite is 0 every result gets its
// operand's bits.
//===----------------------------------------------------------------------===//

struct AdamWArgs {
  double beta1, beta2, weightDecay; // the Python scalars
  math::AdamWStep step;             // the f32 constants; the per-step ones set on the device
  uint32_t stream;                  // stochastic rounding's Philox stream
  int64_t elementOffset;            // a sharded update's first element in the whole
};

/// How the master weight is stored: f32, or bf16 rounded to nearest even
/// or stochastically (the CPU's numerics::f32ToBf16 / f32ToBf16Stochastic
/// with philox::roundingBits, the same header code, so the same bits).
enum class Master { F32, Bf16Nearest, Bf16Stochastic };

template <Master M, class GradT>
__global__ void adamwKernel(AdamWArgs a, const void *param, GradT grad, const float *expAvg,
                            const float *expAvgSq, const int64_t *stepPtr, const float *lrPtr,
                            const uint8_t *finitePtr, const int64_t *seedPtr, void *paramOut,
                            float *expAvgOut, float *expAvgSqOut, int64_t n) {
  const bool finite = *finitePtr != 0;
  const double lr = *lrPtr;
  const int64_t step = *stepPtr;
  const double t = static_cast<double>(step) + 1;
  const double biasCorrection1 = 1 - pow(a.beta1, t);
  const double biasCorrection2 = 1 - pow(a.beta2, t);
  const double stepSize = lr / biasCorrection1;
  math::AdamWStep st = a.step;
  st.decayFactor = static_cast<float>(1 - lr * a.weightDecay);
  st.bc2Sqrt = static_cast<float>(sqrt(biasCorrection2));
  st.negStepSize = static_cast<float>(-stepSize);
  const uint64_t seed = M == Master::Bf16Stochastic ? uint64_t(*seedPtr) : 0;
  MPTRT_FOR_EACH_AS(typename GradT::Index, k, n) {
    if (!finite) { // a skipped step: the bits, unless the result is the operand
      if (paramOut != param) {
        if (M == Master::F32)
          static_cast<uint32_t *>(paramOut)[k] = static_cast<const uint32_t *>(param)[k];
        else
          static_cast<uint16_t *>(paramOut)[k] = static_cast<const uint16_t *>(param)[k];
      }
      if (expAvgOut != expAvg)
        reinterpret_cast<uint32_t *>(expAvgOut)[k] = reinterpret_cast<const uint32_t *>(expAvg)[k];
      if (expAvgSqOut != expAvgSq)
        reinterpret_cast<uint32_t *>(expAvgSqOut)[k] =
            reinterpret_cast<const uint32_t *>(expAvgSq)[k];
      continue;
    }
    float w = M == Master::F32 ? static_cast<const float *>(param)[k]
                               : numerics::bf16ToF32(static_cast<const uint16_t *>(param)[k]);
    float m = expAvg[k], v = expAvgSq[k];
    math::adamwElement(st, grad[k], &w, &m, &v);
    if (M == Master::F32)
      static_cast<float *>(paramOut)[k] = w;
    else if (M == Master::Bf16Nearest)
      static_cast<uint16_t *>(paramOut)[k] = numerics::f32ToBf16(w);
    else
      static_cast<uint16_t *>(paramOut)[k] = numerics::f32ToBf16Stochastic(
          w, philox::roundingBits(seed, uint64_t(step), a.stream, a.elementOffset + int64_t(k)));
    expAvgOut[k] = m;
    expAvgSqOut[k] = v;
  }
}

template <class GradT>
Status runAdamWUpdate(const Context &c, const AdamWParams &p, const KernelArgs &args) {
  if (p.numel == 0)
    return Status::ok();
  AdamWArgs a;
  a.beta1 = p.beta1;
  a.beta2 = p.beta2;
  a.weightDecay = p.weightDecay;
  a.step = math::AdamWStep{};
  a.step.decay = p.weightDecay != 0;
  a.step.w1 = static_cast<float>(1 - p.beta1);
  a.step.smallWeight = std::fabs(a.step.w1) < 0.5f;
  a.step.w1Minus1 = a.step.w1 - 1.0f;
  a.step.beta2 = static_cast<float>(p.beta2);
  a.step.oneMinusBeta2 = static_cast<float>(1 - p.beta2);
  a.step.eps = static_cast<float>(p.eps);
  a.stream = p.stream;
  a.elementOffset = p.elementOffset;
  const GradT grad = gradOf<GradT>(args.operands[1]);
  const int64_t *seed =
      p.stochasticRounding ? static_cast<const int64_t *>(args.operands[7].data) : nullptr;
  auto launch = [&](auto kernel) {
    kernel<<<blocksFor(c, p.numel), kThreads, 0, streamOf(c)>>>(
        a, args.operands[0].data, grad, static_cast<const float *>(args.operands[2].data),
        static_cast<const float *>(args.operands[3].data),
        static_cast<const int64_t *>(args.operands[4].data),
        static_cast<const float *>(args.operands[5].data),
        static_cast<const uint8_t *>(args.operands[6].data), seed, args.results[0].data,
        static_cast<float *>(args.results[1].data), static_cast<float *>(args.results[2].data),
        p.numel);
  };
  if (!p.bf16Param)
    launch(adamwKernel<Master::F32, GradT>);
  else if (p.stochasticRounding)
    launch(adamwKernel<Master::Bf16Stochastic, GradT>);
  else
    launch(adamwKernel<Master::Bf16Nearest, GradT>);
  return launched("adamw_update kernel");
}
template <class GradT> struct RunAdamWUpdate {
  static Status run(const Context &c, const AdamWParams &p, const KernelArgs &args) {
    return runAdamWUpdate<GradT>(c, p, args);
  }
};

//===----------------------------------------------------------------------===//
// The 0-d kernels: one thread each, every operand read before any result is
// written (results may be their operands' bytes).
//===----------------------------------------------------------------------===//

/// update_loss_scale (PyTorch's _amp_update_scale_; TrainingMath.h).
__global__ void updateLossScaleKernel(LossScaleParams p, const float *scalePtr,
                                      const int64_t *trackerPtr, const uint8_t *finitePtr,
                                      float *scaleOut, int64_t *trackerOut) {
  float scale = *scalePtr;
  int64_t tracker = *trackerPtr;
  math::updateLossScale(p, *finitePtr != 0, &scale, &tracker);
  *scaleOut = scale;
  *trackerOut = tracker;
}

Status runUpdateLossScale(const Context &c, const LossScaleParams &p, const KernelArgs &args) {
  updateLossScaleKernel<<<1, 1, 0, streamOf(c)>>>(
      p, static_cast<const float *>(args.operands[0].data),
      static_cast<const int64_t *>(args.operands[1].data),
      static_cast<const uint8_t *>(args.operands[2].data),
      static_cast<float *>(args.results[0].data), static_cast<int64_t *>(args.results[1].data));
  return launched("update_loss_scale kernel");
}

/// lr_schedule, in double, rounded once to f32 (cpu runLrSchedule).
__global__ void lrScheduleKernel(LrScheduleParams p, const int64_t *stepPtr, float *out) {
  const double lr = math::lrAt(p, *stepPtr, [](double v) { return cos(v); });
  *out = static_cast<float>(lr);
}

Status runLrSchedule(const Context &c, const LrScheduleParams &p, const KernelArgs &args) {
  lrScheduleKernel<<<1, 1, 0, streamOf(c)>>>(p, static_cast<const int64_t *>(args.operands[0].data),
                                             static_cast<float *>(args.results[0].data));
  return launched("lr_schedule kernel");
}

/// advance_step: count + 1 (wrapping), or count when finite is given and 0.
__global__ void advanceStepKernel(const int64_t *countPtr, const uint8_t *finitePtr, int64_t *out) {
  const int64_t count = *countPtr;
  const bool advance = finitePtr == nullptr || *finitePtr != 0;
  *out = advance ? static_cast<int64_t>(static_cast<uint64_t>(count) + 1) : count;
}

Status runAdvanceStep(const Context &c, const AdvanceStepParams &p, const KernelArgs &args) {
  advanceStepKernel<<<1, 1, 0, streamOf(c)>>>(
      static_cast<const int64_t *>(args.operands[0].data),
      p.hasFinite ? static_cast<const uint8_t *>(args.operands[1].data) : nullptr,
      static_cast<int64_t *>(args.results[0].data));
  return launched("advance_step kernel");
}

/// update_fp8_scale (cpu runUpdateFp8Scale): the history shifts from its
/// end (memmove order, so history' may be history's bytes), amax goes in
/// front, and scale' = ldexp(f32(fp8_max) / max(history'), -margin) unless
/// that max is 0, NaN or infinite or the quotient is not finite (with
/// most_recent, history'[0] stands for the max).
__global__ void updateFp8ScaleKernel(int64_t history, int64_t window, float fp8Max, int margin,
                                     const float *hist, const float *scalePtr, const float *amaxPtr,
                                     float *histOut, float *scaleOut) {
  const float scale = *scalePtr;
  const float amax = *amaxPtr;
  for (int64_t i = history - 1; i >= 1; --i)
    histOut[i] = hist[i - 1];
  histOut[0] = amax;
  float a = 0.0f;
  bool nan = false;
  for (int64_t i = 0; i < window; ++i) {
    nan |= histOut[i] != histOut[i];
    a = histOut[i] > a ? histOut[i] : a;
  }
  float next = scale;
  if (!nan && isFiniteF32(a) && a != 0.0f) {
    const float candidate = ldexpf(fp8Max / a, -margin);
    if (isFiniteF32(candidate) && candidate != 0.0f)
      next = candidate;
  }
  *scaleOut = next;
}

Status runUpdateFp8Scale(const Context &c, const Fp8ScaleParams &p, const KernelArgs &args) {
  updateFp8ScaleKernel<<<1, 1, 0, streamOf(c)>>>(
      p.history, p.mostRecent ? 1 : p.history, static_cast<float>(p.fp8Max),
      static_cast<int>(p.margin), static_cast<const float *>(args.operands[0].data),
      static_cast<const float *>(args.operands[1].data),
      static_cast<const float *>(args.operands[2].data), static_cast<float *>(args.results[0].data),
      static_cast<float *>(args.results[1].data));
  return launched("update_fp8_scale kernel");
}

} // namespace

namespace {

/// Decodes, then chooses `Run`'s kernel for the gradient operand
/// `gradOperand`'s dtype (runForGrad).
template <typename Params, template <class> class Run>
Status prepareForGrad(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out,
                      Status (*decode)(const KernelView &, Params *), size_t gradOperand) {
  Params p;
  MPTRT_TRY(decode(v, &p));
  const RunFn<Params> run = runForGrad<Params, Run>(v.operand(gradOperand).dtype, p.numel);
  *out = std::make_unique<ParamsKernel<Params>>(c, std::move(p), run);
  return Status::ok();
}

} // namespace

Status prepareScaleLoss(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ScaleLossParams>(c, v, out, decodeScaleLoss, runScaleLoss);
}
Status prepareUnscale(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareForGrad<UnscaleParams, RunUnscale>(c, v, out, decodeUnscale, 0);
}
Status prepareAllFinite(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  MultiTensorParams p;
  MPTRT_TRY(decodeAllFinite(v, &p));
  return prepareMultiTensor(c, Reduce::AllFinite, p, out);
}
Status prepareGlobalNorm(const Context &c, const KernelView &v,
                         std::unique_ptr<PreparedKernel> *out) {
  MultiTensorParams p;
  MPTRT_TRY(decodeGlobalNorm(v, &p));
  return prepareMultiTensor(c, Reduce::GlobalNorm, p, out);
}
Status prepareClipByNorm(const Context &c, const KernelView &v,
                         std::unique_ptr<PreparedKernel> *out) {
  return prepareForGrad<ClipByNormParams, RunClipByNorm>(c, v, out, decodeClipByNorm, 0);
}
Status prepareSgdUpdate(const Context &c, const KernelView &v,
                        std::unique_ptr<PreparedKernel> *out) {
  return prepareForGrad<SgdParams, RunSgdUpdate>(c, v, out, decodeSgdUpdate, 1);
}
Status prepareAdamWUpdate(const Context &c, const KernelView &v,
                          std::unique_ptr<PreparedKernel> *out) {
  return prepareForGrad<AdamWParams, RunAdamWUpdate>(c, v, out, decodeAdamWUpdate, 1);
}
Status prepareUpdateLossScale(const Context &c, const KernelView &v,
                              std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LossScaleParams>(c, v, out, decodeUpdateLossScale, runUpdateLossScale);
}
Status prepareLrSchedule(const Context &c, const KernelView &v,
                         std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<LrScheduleParams>(c, v, out, decodeLrSchedule, runLrSchedule);
}
Status prepareAdvanceStep(const Context &c, const KernelView &v,
                          std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<AdvanceStepParams>(c, v, out, decodeAdvanceStep, runAdvanceStep);
}
Status prepareAmax(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  AmaxParams p;
  MPTRT_TRY(decodeAmax(v, &p));
  return prepareMultiTensor(c, Reduce::Amax, p.blocks, out);
}
Status prepareUpdateFp8Scale(const Context &c, const KernelView &v,
                             std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<Fp8ScaleParams>(c, v, out, decodeUpdateFp8Scale, runUpdateFp8Scale);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
