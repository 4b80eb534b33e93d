//===- ContractionKernels.cu - matmul and gemm through cuBLASLt -----------===//
//
// The CPU backend widens A and B to float32, multiplies with sgemm (float32
// accumulation) into a float32 Y, applies gemm's bias and activation there,
// and rounds Y once into the result's dtype (kernels/contraction/ContractionKernels.cpp).
// The CUDA kernels keep that structure:
//
//   - A and B go to cuBLASLt as they are when both are f32, both bf16 or
//     both f16; otherwise (fp8, mixed dtypes) a cast kernel widens them to
//     float32 in the workspace first, exactly;
//   - cuBLASLt multiplies with CUBLAS_COMPUTE_32F (float32 accumulation, no
//     TF32) into a float32 Y: the result itself when it is f32, else the
//     workspace;
//   - gemm's C is first broadcast into Y as beta * C (then cuBLASLt adds
//     with beta = 1), and its activation runs on the float32 Y;
//   - one kernel rounds Y into the result's dtype (Device.cuh's storeF32).
//
// So every element is rounded once, as on the CPU; only the order of the
// float32 sums inside the GEMM differs (cuBLASLt's blocking vs OpenBLAS's).
// The algorithm is chosen once, at prepare, by cuBLASLt's heuristic with the
// backend's 32 MiB workspace; run() only enqueues. Batches of a matmul whose
// operands advance by a constant stride run as one strided-batched call,
// other broadcast patterns as one call per batch.
//
//===----------------------------------------------------------------------===//
#include "cuda/CudaKernels.h"
#include "cuda/Device.cuh"

#include <cublasLt.h>

#include <algorithm>

namespace mptrt {
namespace rt {
namespace cuda {
static __global__ void widenKernel(DType dtype, const void *in, float *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = loadF32(dtype, in, i);
}

Status widenToF32(const Context &c, DType dtype, const void *in, float *out, int64_t n) {
  if (n == 0)
    return Status::ok();
  widenKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(dtype, in, out, n);
  return launched("widen kernel");
}

namespace {

Status cublasStatus(cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(std::string("cuBLASLt: ") + what + " failed (" + cublasLtGetStatusName(s) +
                       ")");
}

#define MPTRT_LT_TRY(call)                                                                         \
  do {                                                                                             \
    cublasStatus_t mptrtLtStatus = (call);                                                         \
    if (mptrtLtStatus != CUBLAS_STATUS_SUCCESS)                                                    \
      return cublasStatus(mptrtLtStatus, #call);                                                   \
  } while (0)

/// The cuBLASLt type of a dtype cuBLASLt takes directly, or false.
bool ltType(DType d, cudaDataType_t *out) {
  switch (d) {
  case DType::F32:
    *out = CUDA_R_32F;
    return true;
  case DType::BF16:
    *out = CUDA_R_16BF;
    return true;
  case DType::F16:
    *out = CUDA_R_16F;
    return true;
  default:
    return false;
  }
}

/// How a product is scaled beyond cuBLASLt's host alpha and beta.
enum class Scaling {
  None,        // alpha and beta are host floats
  Fp8,         // FP8 A and B: the A and B scale pointers (device floats) multiply the product
  DeviceAlpha, // alpha and beta are device floats (CUBLASLT_POINTER_MODE_DEVICE)
};

/// One cuBLASLt product D[rows N, cols M] (column-major) = op(B) op(A), i.e.
/// the row-major Y[M, N] = op(A)[M, K] op(B)[K, N], in float32, possibly
/// batched with constant strides. Owns its descriptors.
class LtProduct {
public:
  LtProduct() = default;
  LtProduct(const LtProduct &) = delete;
  LtProduct &operator=(const LtProduct &) = delete;
  ~LtProduct() { reset(); }

  /// Destroys the descriptors (a failed init may be retried another way).
  void reset() {
    if (pref_)
      cublasLtMatmulPreferenceDestroy(pref_);
    if (a_)
      cublasLtMatrixLayoutDestroy(a_);
    if (b_)
      cublasLtMatrixLayoutDestroy(b_);
    if (d_)
      cublasLtMatrixLayoutDestroy(d_);
    if (desc_)
      cublasLtMatmulDescDestroy(desc_);
    pref_ = nullptr;
    a_ = b_ = d_ = nullptr;
    desc_ = nullptr;
  }

  /// `typeA` and `typeB` are the operands' cuBLASLt types; strides are in
  /// elements (0: the same matrix for every batch); `alignment` the smallest
  /// alignment in bytes any operand pointer will have.
  Status init(const Context &c, cudaDataType_t typeA, cudaDataType_t typeB, bool transA,
              bool transB, int64_t M, int64_t N, int64_t K, int64_t batch, int64_t strideA,
              int64_t strideB, uint32_t alignment, Scaling scaling = Scaling::None) {
    reset();
    MPTRT_LT_TRY(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // Column-major: cuBLAS's first operand is our B, its second our A.
    const cublasOperation_t opFirst = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opSecond = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    MPTRT_LT_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst,
                                                sizeof opFirst));
    MPTRT_LT_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond,
                                                sizeof opSecond));
    if (scaling == Scaling::DeviceAlpha) {
      const cublasLtPointerMode_t mode = CUBLASLT_POINTER_MODE_DEVICE;
      MPTRT_LT_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode,
                                                  sizeof mode));
    }
    if (scaling == Scaling::Fp8) {
      // Precise accumulation: partial sums are promoted into float32
      // registers as the GEMM goes (no CUBLASLT_MATMUL_DESC_FAST_ACCUM).
      const int8_t fastAccum = 0;
      MPTRT_LT_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                  &fastAccum, sizeof fastAccum));
      // The heuristic sees a scaled product; run() sets the real pointers.
      MPTRT_TRY(setScales(static_cast<const float *>(c.ltWorkspace),
                          static_cast<const float *>(c.ltWorkspace)));
    }
    const uint64_t firstRows = transB ? K : N, firstCols = transB ? N : K;
    const uint64_t secondRows = transA ? M : K, secondCols = transA ? K : M;
    MPTRT_LT_TRY(cublasLtMatrixLayoutCreate(&b_, typeB, firstRows, firstCols, firstRows));
    MPTRT_LT_TRY(cublasLtMatrixLayoutCreate(&a_, typeA, secondRows, secondCols, secondRows));
    MPTRT_LT_TRY(cublasLtMatrixLayoutCreate(&d_, CUDA_R_32F, N, M, N));
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
      const int64_t strideD = M * N;
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(b_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                    sizeof count));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(b_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                    &strideB, sizeof strideB));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(a_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                    sizeof count));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(a_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                    &strideA, sizeof strideA));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(d_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                    sizeof count));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(d_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                    &strideD, sizeof strideD));
    }
    MPTRT_LT_TRY(cublasLtMatmulPreferenceCreate(&pref_));
    const uint64_t wsBytes = c.ltWorkspaceBytes;
    MPTRT_LT_TRY(cublasLtMatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes));
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      MPTRT_LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref_, attr, &alignment, sizeof alignment));
    cublasLtMatmulHeuristicResult_t results[kMaxAlgos] = {};
    int found = 0;
    MPTRT_LT_TRY(cublasLtMatmulAlgoGetHeuristic(reinterpret_cast<cublasLtHandle_t>(c.lt), desc_, b_,
                                                a_, d_, d_, pref_, kMaxAlgos, results, &found));
    algoCount_ = 0;
    chosen_ = 0;
    for (int i = 0; i < found; ++i)
      if (results[i].state == CUBLAS_STATUS_SUCCESS)
        algos_[algoCount_++] = results[i].algo;
    if (algoCount_ == 0)
      return Status::error("cuBLASLt has no algorithm for this product (" + std::to_string(M) +
                           "x" + std::to_string(K) + " by " + std::to_string(K) + "x" +
                           std::to_string(N) + ", batch " + std::to_string(batch) + ")");
    return Status::ok();
  }

  /// Scaling::Fp8: the device floats that multiply our A and our B (cuBLAS's
  /// second and first operand) before the float32 product.
  Status setScales(const float *scaleA, const float *scaleB) {
    MPTRT_LT_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                &scaleA, sizeof scaleA));
    MPTRT_LT_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                &scaleB, sizeof scaleB));
    return Status::ok();
  }

  /// Enqueues D = alpha * op(A) op(B) + beta * D (host alpha and beta).
  Status run(const Context &c, const void *A, const void *B, float *D, float alpha,
             float beta) const {
    return runWith(c, A, B, D, &alpha, &beta);
  }

  /// The same with alpha and beta where the scaling says: device pointers
  /// for Scaling::DeviceAlpha, host pointers otherwise.
  Status runWith(const Context &c, const void *A, const void *B, float *D, const float *alpha,
                 const float *beta) const {
    // The heuristic's candidates in its order of preference, from the one
    // that ran last: cuBLASLt checks some requirements (pointer alignment,
    // FP8 layouts) only here, and answers NOT_SUPPORTED without enqueueing
    // anything, so the next candidate may still run.
    cublasStatus_t status = CUBLAS_STATUS_NOT_SUPPORTED;
    int tried = 0;
    for (int i = chosen_; i < algoCount_; ++i, ++tried) {
      status =
          cublasLtMatmul(reinterpret_cast<cublasLtHandle_t>(c.lt), desc_, alpha, B, b_, A, a_, beta,
                         D, d_, D, d_, &algos_[i], c.ltWorkspace, c.ltWorkspaceBytes, streamOf(c));
      if (status != CUBLAS_STATUS_NOT_SUPPORTED) {
        chosen_ = i;
        break;
      }
    }
    if (status != CUBLAS_STATUS_SUCCESS)
      return cublasStatus(status, ("cublasLtMatmul (" + std::to_string(tried + 1) + " of " +
                                   std::to_string(algoCount_) + " candidate algorithms tried)")
                                      .c_str());
    return Status::ok();
  }

private:
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  static constexpr int kMaxAlgos = 8;
  cublasLtMatmulAlgo_t algos_[kMaxAlgos] = {};
  int algoCount_ = 0;
  mutable int chosen_ = 0; // the first candidate that ran
};

/// The largest power of two <= 64 dividing every byte offset.
uint32_t alignmentOf(const std::vector<int64_t> &offsets, int64_t elementSize) {
  uint32_t align = 64;
  for (int64_t o : offsets)
    while (align > 1 && (o * elementSize) % align != 0)
      align /= 2;
  return align;
}

/// A constant stride s with offsets[n] == n * s, or false.
bool constantStride(const std::vector<int64_t> &offsets, int64_t *stride) {
  *stride = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
  for (size_t n = 0; n < offsets.size(); ++n)
    if (offsets[n] != static_cast<int64_t>(n) * *stride)
      return false;
  return true;
}

__global__ void storeKernel(const float *in, DType dtype, void *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    storeF32(dtype, out, i, in[i]);
}

/// Rounds float32 `in` into `out` of `dtype`.
Status store(const Context &c, const float *in, DType dtype, void *out, int64_t n) {
  if (n == 0)
    return Status::ok();
  storeKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(in, dtype, out, n);
  return launched("store kernel");
}

/// How a contraction hands A and B to cuBLASLt: as they are when both have
/// one dtype cuBLASLt takes, else widened to float32 in the workspace.
struct Operands {
  bool direct = true;
  cudaDataType_t type = CUDA_R_32F;
  uint64_t aWs = 0, bWs = 0; // workspace offsets of the widened copies

  void plan(const KernelView &v, Carve &carve) {
    const DType at = v.operand(0).dtype, bt = v.operand(1).dtype;
    direct = at == bt && ltType(at, &type);
    if (direct)
      return;
    type = CUDA_R_32F;
    aWs = carve.take(uint64_t(v.operand(0).numel) * 4);
    bWs = carve.take(uint64_t(v.operand(1).numel) * 4);
  }
  /// Bytes per element of what cuBLASLt reads.
  int64_t elementSize(const KernelView &v) const {
    return direct ? static_cast<int64_t>(plan::dtypeSize(v.operand(0).dtype)) : 4;
  }
  /// The pointers to multiply, widening first if needed.
  Status prepareRun(const Context &c, const KernelArgs &args, const void **A,
                    const void **B) const {
    const TensorArg &a = args.operands[0], &b = args.operands[1];
    if (direct) {
      *A = a.data;
      *B = b.data;
      return Status::ok();
    }
    auto *ws = static_cast<uint8_t *>(args.workspace);
    float *wa = reinterpret_cast<float *>(ws + aWs), *wb = reinterpret_cast<float *>(ws + bWs);
    MPTRT_TRY(widenToF32(c, a.desc->dtype, a.data, wa, a.desc->numel));
    MPTRT_TRY(widenToF32(c, b.desc->dtype, b.data, wb, b.desc->numel));
    *A = wa;
    *B = wb;
    return Status::ok();
  }
};

//===----------------------------------------------------------------------===//
// matmul.
//===----------------------------------------------------------------------===//

class MatMulKernel final : public PreparedKernel {
public:
  MatMulKernel(const Context &c, MatMulParams p) : c_(c), p_(std::move(p)) {}

  Status prepare(const KernelView &v) {
    const DType yt = v.result(0).dtype;
    Carve carve;
    ops_.plan(v, carve);
    elem_ = ops_.elementSize(v);
    const int64_t elem = elem_;
    yF32_ = yt == DType::F32;
    if (!yF32_)
      yWs_ = carve.take(uint64_t(p_.batch * p_.M * p_.N) * 4);
    workspace_ = carve.used;
    int64_t strideA = 0, strideB = 0;
    const bool strided =
        constantStride(p_.aOffset, &strideA) && constantStride(p_.bOffset, &strideB);
    // The batches' pointers: 64-byte aligned bases plus the offsets.
    const uint32_t align = std::min(alignmentOf(p_.aOffset, elem), alignmentOf(p_.bOffset, elem));
    perBatch_ = !strided && p_.batch > 1;
    return product_.init(c_, ops_.type, ops_.type, false, false, p_.M, p_.N, p_.K,
                         perBatch_ ? 1 : p_.batch, strideA, strideB, align);
  }

  uint64_t workspaceBytes() const override { return workspace_; }

  Status run(const KernelArgs &args) override {
    const TensorArg &y = args.results[0];
    auto *ws = static_cast<uint8_t *>(args.workspace);
    const void *A = nullptr, *B = nullptr;
    MPTRT_TRY(ops_.prepareRun(c_, args, &A, &B));
    const int64_t elem = elem_;
    float *Y = yF32_ ? static_cast<float *>(y.data) : reinterpret_cast<float *>(ws + yWs_);
    const int64_t ySize = p_.M * p_.N;
    if (p_.M > 0 && p_.N > 0 && p_.batch > 0) {
      if (p_.K == 0) {
        MPTRT_CUDA_TRY(cudaMemsetAsync(Y, 0, uint64_t(p_.batch * ySize) * 4, streamOf(c_)));
      } else if (perBatch_) {
        for (int64_t n = 0; n < p_.batch; ++n)
          MPTRT_TRY(product_.run(c_, static_cast<const uint8_t *>(A) + p_.aOffset[n] * elem,
                                 static_cast<const uint8_t *>(B) + p_.bOffset[n] * elem,
                                 Y + n * ySize, 1.0f, 0.0f));
      } else {
        MPTRT_TRY(product_.run(c_, A, B, Y, 1.0f, 0.0f));
      }
    }
    if (!yF32_)
      MPTRT_TRY(store(c_, Y, y.desc->dtype, y.data, p_.batch * ySize));
    return Status::ok();
  }

private:
  const Context &c_;
  MatMulParams p_;
  LtProduct product_;
  Operands ops_;
  int64_t elem_ = 4;
  bool yF32_ = true, perBatch_ = false;
  uint64_t yWs_ = 0, workspace_ = 0;
};

//===----------------------------------------------------------------------===//
// gemm: Y = act(alpha * op(A) op(B) + beta * C).
//===----------------------------------------------------------------------===//

/// Y[i, j] = beta * C[i * rowStride + j * colStride] (C widened on the fly).
__global__ void broadcastCKernel(DType ct, const void *C, int64_t rowStride, int64_t colStride,
                                 float beta, float *Y, int64_t M, int64_t N) {
  const int64_t n = M * N;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / N, col = i % N;
    Y[i] = beta * loadF32(ct, C, r * rowStride + col * colStride);
  }
}

/// The activation on float32 Y, then the rounding into the result.
__global__ void activationStoreKernel(Activation act, const float *Y, DType yt, void *out,
                                      int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float v = Y[i];
    switch (act) {
    case Activation::None:
      break;
    case Activation::Relu:
      v = v < 0.0f ? 0.0f : v;
      break;
    case Activation::Gelu:
      v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
      break;
    case Activation::GeluTanh:
      v = 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
      break;
    }
    storeF32(yt, out, i, v);
  }
}

class GemmKernel final : public PreparedKernel {
public:
  GemmKernel(const Context &c, GemmParams p) : c_(c), p_(std::move(p)) {}

  Status prepare(const KernelView &v) {
    const DType yt = v.result(0).dtype;
    Carve carve;
    ops_.plan(v, carve);
    // Y in float32 is needed unless the result is f32 and nothing follows.
    yDirect_ = yt == DType::F32 && p_.activation == Activation::None;
    if (!yDirect_)
      yWs_ = carve.take(uint64_t(p_.M * p_.N) * 4);
    workspace_ = carve.used;
    return product_.init(c_, ops_.type, ops_.type, p_.transA, p_.transB, p_.M, p_.N, p_.K, 1, 0, 0,
                         64);
  }

  uint64_t workspaceBytes() const override { return workspace_; }

  Status run(const KernelArgs &args) override {
    const TensorArg &y = args.results[0];
    auto *ws = static_cast<uint8_t *>(args.workspace);
    const void *A = nullptr, *B = nullptr;
    MPTRT_TRY(ops_.prepareRun(c_, args, &A, &B));
    float *Y = yDirect_ ? static_cast<float *>(y.data) : reinterpret_cast<float *>(ws + yWs_);
    const int64_t n = p_.M * p_.N;
    if (n == 0)
      return Status::ok();
    float beta = 0.0f;
    if (p_.hasC && p_.beta != 0.0f) {
      const TensorArg &cArg = args.operands[2];
      broadcastCKernel<<<blocksFor(c_, n), kThreads, 0, streamOf(c_)>>>(
          cArg.desc->dtype, cArg.data, p_.cRowStride, p_.cColStride, p_.beta, Y, p_.M, p_.N);
      MPTRT_TRY(launched("gemm bias kernel"));
      beta = 1.0f;
    }
    if (p_.K > 0)
      MPTRT_TRY(product_.run(c_, A, B, Y, p_.alpha, beta));
    else if (beta == 0.0f)
      MPTRT_CUDA_TRY(cudaMemsetAsync(Y, 0, uint64_t(n) * 4, streamOf(c_)));
    if (!yDirect_) {
      activationStoreKernel<<<blocksFor(c_, n), kThreads, 0, streamOf(c_)>>>(
          p_.activation, Y, y.desc->dtype, y.data, n);
      MPTRT_TRY(launched("gemm activation kernel"));
    }
    return Status::ok();
  }

private:
  const Context &c_;
  GemmParams p_;
  LtProduct product_;
  Operands ops_;
  bool yDirect_ = true;
  uint64_t yWs_ = 0, workspace_ = 0;
};

//===----------------------------------------------------------------------===//
// scaled_matmul and scaled_gemm: FP8 A and B, f32 0-d scales sa and sb, and
//   Y = alpha * f32(1/sa) * f32(1/sb) * op(A) op(B) (+ beta * C for gemm).
//
// The CPU kernel widens A and B exactly, multiplies in float32 and applies
// S = alpha * (f32(1/sa) * f32(1/sb)) as sgemm's alpha. Here one thread
// computes that same S, in that order (IEEE division and products: the build
// contracts nothing into FMAs), into the workspace, and cuBLASLt's FP8 GEMM
// gets it as the scale of A, with 1 as the scale of B and a host alpha of 1:
// the factor that multiplies the float32 sum is the CPU's bit for bit,
// whatever order cuBLASLt multiplies alpha and the two scales in.
//
// cuBLASLt's FP8 GEMMs want the "TN" layout: column-major op(A) transposed
// and op(B) not, that is, in our row-major terms, A as [M, K] and B as
// [N, K], K contiguous in both. An operand stored the other way is copied,
// transposed, into the workspace first (transposeBytesKernel). The
// accumulation is the precise one (no fast accumulation: partial sums go to
// float32 registers as the GEMM proceeds); the plan does not say which
// products are a forward and which a backward pass, so none gets
// Transformer Engine's fast-accumulation forward.
//
// Where cuBLASLt has no FP8 algorithm (E5M2 times E5M2, which it does not
// take; K or the transposed rows not a multiple of 16 bytes; a GPU before
// sm_89), A and B are widened to float32 (exactly) as for matmul, and S goes
// to a float32 GEMM as a device-pointer alpha. Either way the only
// difference from the CPU is the order of the float32 sums, and on Hopper
// the FP8 tensor cores' own adds between promotions (about 14 bits kept).
//===----------------------------------------------------------------------===//

bool ltFp8Type(DType d, cudaDataType_t *out) {
  switch (d) {
  case DType::F8E4M3FN:
    *out = CUDA_R_8F_E4M3;
    return true;
  case DType::F8E5M2:
    *out = CUDA_R_8F_E5M2;
    return true;
  default:
    return false;
  }
}

/// The cuBLASLt types of an FP8 A and B that cuBLASLt multiplies (not
/// E5M2 x E5M2); false for any other pair.
bool ltFp8Pair(const KernelView &v, cudaDataType_t *a, cudaDataType_t *b) {
  return ltFp8Type(v.operand(0).dtype, a) && ltFp8Type(v.operand(1).dtype, b) &&
         !(*a == CUDA_R_8F_E5M2 && *b == CUDA_R_8F_E5M2);
}

// Where fp8ScalesKernel writes each of its three floats, 16 bytes apart so
// that each is as aligned as cuBLASLt's own scalars would be.
constexpr int kScaleOfA = 0, kScaleOfB = 4, kBetaSlot = 8, kScaleFloats = 12;

/// out = {alpha * (f32(1/sa) * f32(1/sb)), 1, beta} at those slots: the
/// scale of A (FP8 path) or alpha (fallback), the scale of B, and beta
/// (fallback).

__global__ void fp8ScalesKernel(const float *sa, const float *sb, float alpha, float beta,
                                float *out) {
  out[kScaleOfA] = alpha * ((1.0f / *sa) * (1.0f / *sb));
  out[kScaleOfB] = 1.0f;
  out[kBetaSlot] = beta;
}

constexpr int kTile = 32;

/// `count` byte matrices [rows, cols] (row-major, one after the other) into
/// [cols, rows]. One 32 x 32 tile per block through shared memory, so reads
/// and writes are both coalesced; blocks are (32, 8) threads, each thread
/// moving 4 bytes of its tile column. Grid: (ceil(cols / 32), ceil(rows /
/// 32), count).
__global__ void transposeBytesKernel(const uint8_t *in, uint8_t *out, int64_t rows, int64_t cols) {
  __shared__ uint8_t tile[kTile][kTile + 1];
  const int64_t mat = int64_t(blockIdx.z) * rows * cols;
  const int64_t c0 = int64_t(blockIdx.x) * kTile, r0 = int64_t(blockIdx.y) * kTile;
  for (int dy = threadIdx.y; dy < kTile; dy += blockDim.y) {
    const int64_t r = r0 + dy, col = c0 + threadIdx.x;
    if (r < rows && col < cols)
      tile[dy][threadIdx.x] = in[mat + r * cols + col];
  }
  __syncthreads();
  for (int dy = threadIdx.y; dy < kTile; dy += blockDim.y) {
    const int64_t outRow = c0 + dy, outCol = r0 + threadIdx.x; // out is [cols, rows]
    if (outRow < cols && outCol < rows)
      out[mat + outRow * rows + outCol] = tile[threadIdx.x][dy];
  }
}

/// Transposes `count` [rows, cols] FP8 matrices into `out`.
Status transposeBytes(const Context &c, const void *in, void *out, int64_t count, int64_t rows,
                      int64_t cols) {
  if (count == 0 || rows == 0 || cols == 0)
    return Status::ok();
  if (count > 65535)
    return Status::error("scaled contraction: more than 65535 matrices to transpose");
  const dim3 grid(unsigned((cols + kTile - 1) / kTile), unsigned((rows + kTile - 1) / kTile),
                  unsigned(count));
  transposeBytesKernel<<<grid, dim3(kTile, 8), 0, streamOf(c)>>>(
      static_cast<const uint8_t *>(in), static_cast<uint8_t *>(out), rows, cols);
  return launched("fp8 transpose kernel");
}

/// What a scaled contraction hands cuBLASLt, decided at prepare: the FP8
/// operands (transposed into the workspace where the TN layout needs it),
/// or float32 copies.
struct ScaledOperands {
  bool fp8 = false;
  uint64_t scalesWs = 0;             // kScaleFloats: fp8ScalesKernel's
  bool copyA = false, copyB = false; // fp8: transposed copies
  uint64_t aWs = 0, bWs = 0;         // the copies (fp8, transposed) or float32 widenings
  // fp8: the copies' source matrices, [rows, cols] each.
  int64_t aCount = 0, aRows = 0, aCols = 0, bCount = 0, bRows = 0, bCols = 0;

  /// FP8: A (or B) copied transposed, `count` [rows, cols] byte matrices,
  /// into the workspace.
  void planTransposedA(int64_t count, int64_t rows, int64_t cols, Carve &carve) {
    copyA = true;
    aCount = count;
    aRows = rows;
    aCols = cols;
    aWs = carve.take(uint64_t(count * rows * cols));
  }
  void planTransposedB(int64_t count, int64_t rows, int64_t cols, Carve &carve) {
    copyB = true;
    bCount = count;
    bRows = rows;
    bCols = cols;
    bWs = carve.take(uint64_t(count * rows * cols));
  }

  /// The float32 fallback: A and B widened into the workspace.
  void planWidened(const KernelView &v, Carve &carve) {
    aWs = carve.take(uint64_t(v.operand(0).numel) * 4);
    bWs = carve.take(uint64_t(v.operand(1).numel) * 4);
  }

  /// The scale, A and B pointers of one run.
  Status prepareRun(const Context &c, const KernelArgs &args, size_t scale0, float alpha,
                    float beta, const float **scales, const void **A, const void **B) const {
    auto *ws = static_cast<uint8_t *>(args.workspace);
    float *s = reinterpret_cast<float *>(ws + scalesWs);
    fp8ScalesKernel<<<1, 1, 0, streamOf(c)>>>(
        static_cast<const float *>(args.operands[scale0].data),
        static_cast<const float *>(args.operands[scale0 + 1].data), alpha, beta, s);
    MPTRT_TRY(launched("fp8 scales kernel"));
    *scales = s;
    const TensorArg &a = args.operands[0], &b = args.operands[1];
    *A = a.data;
    *B = b.data;
    if (!fp8) {
      float *wa = reinterpret_cast<float *>(ws + aWs), *wb = reinterpret_cast<float *>(ws + bWs);
      MPTRT_TRY(widenToF32(c, a.desc->dtype, a.data, wa, a.desc->numel));
      MPTRT_TRY(widenToF32(c, b.desc->dtype, b.data, wb, b.desc->numel));
      *A = wa;
      *B = wb;
      return Status::ok();
    }
    if (copyA) {
      MPTRT_TRY(transposeBytes(c, a.data, ws + aWs, aCount, aRows, aCols));
      *A = ws + aWs;
    }
    if (copyB) {
      MPTRT_TRY(transposeBytes(c, b.data, ws + bWs, bCount, bRows, bCols));
      *B = ws + bWs;
    }
    return Status::ok();
  }
};

class ScaledMatMulKernel final : public PreparedKernel {
public:
  ScaledMatMulKernel(const Context &c, MatMulParams p) : c_(c), p_(std::move(p)) {}

  Status prepare(const KernelView &v) {
    int64_t strideA = 0, strideB = 0;
    const bool strided =
        constantStride(p_.aOffset, &strideA) && constantStride(p_.bOffset, &strideB);
    perBatch_ = !strided && p_.batch > 1;
    const int64_t ltBatch = perBatch_ ? 1 : p_.batch;
    cudaDataType_t at, bt;
    const bool fp8Types = ltFp8Pair(v, &at, &bt);
    // FP8: A [M, K] is TN already; every [K, N] matrix of B is transposed
    // into [N, K] at the same offset, so the batches' offsets still hold.
    if (fp8Types && p_.K > 0 && p_.M > 0 && p_.N > 0) {
      Carve carve;
      plan(v, carve);
      ops_.planTransposedB(v.operand(1).numel / (p_.K * p_.N), p_.K, p_.N, carve);
      const uint32_t align = std::min(alignmentOf(p_.aOffset, 1), alignmentOf(p_.bOffset, 1));
      if (product_.init(c_, at, bt, false, true, p_.M, p_.N, p_.K, ltBatch, strideA, strideB, align,
                        Scaling::Fp8)) {
        ops_.fp8 = true;
        workspace_ = carve.used;
        return Status::ok();
      }
    }
    // The float32 fallback.
    ops_ = ScaledOperands();
    Carve carve;
    plan(v, carve);
    ops_.planWidened(v, carve);
    workspace_ = carve.used;
    const uint32_t align = std::min(alignmentOf(p_.aOffset, 4), alignmentOf(p_.bOffset, 4));
    return product_.init(c_, CUDA_R_32F, CUDA_R_32F, false, false, p_.M, p_.N, p_.K, ltBatch,
                         strideA, strideB, align, Scaling::DeviceAlpha);
  }

  uint64_t workspaceBytes() const override { return workspace_; }

  Status run(const KernelArgs &args) override {
    const TensorArg &y = args.results[0];
    auto *ws = static_cast<uint8_t *>(args.workspace);
    const float *scales = nullptr;
    const void *A = nullptr, *B = nullptr;
    MPTRT_TRY(ops_.prepareRun(c_, args, 2, 1.0f, 0.0f, &scales, &A, &B));
    float *Y = yF32_ ? static_cast<float *>(y.data) : reinterpret_cast<float *>(ws + yWs_);
    const int64_t ySize = p_.M * p_.N, elem = ops_.fp8 ? 1 : 4;
    const float one = 1.0f, zero = 0.0f;
    const float *alpha = ops_.fp8 ? &one : scales, *beta = ops_.fp8 ? &zero : scales + kBetaSlot;
    if (ops_.fp8)
      MPTRT_TRY(product_.setScales(scales + kScaleOfA, scales + kScaleOfB));
    if (p_.M > 0 && p_.N > 0 && p_.batch > 0) {
      if (p_.K == 0) {
        MPTRT_CUDA_TRY(cudaMemsetAsync(Y, 0, uint64_t(p_.batch * ySize) * 4, streamOf(c_)));
      } else if (perBatch_) {
        for (int64_t n = 0; n < p_.batch; ++n)
          MPTRT_TRY(product_.runWith(c_, static_cast<const uint8_t *>(A) + p_.aOffset[n] * elem,
                                     static_cast<const uint8_t *>(B) + p_.bOffset[n] * elem,
                                     Y + n * ySize, alpha, beta));
      } else {
        MPTRT_TRY(product_.runWith(c_, A, B, Y, alpha, beta));
      }
    }
    if (!yF32_)
      MPTRT_TRY(store(c_, Y, y.desc->dtype, y.data, p_.batch * ySize));
    return Status::ok();
  }

private:
  /// The pieces both paths share: the scales and a float32 Y.
  void plan(const KernelView &v, Carve &carve) {
    ops_.scalesWs = carve.take(kScaleFloats * sizeof(float));
    yF32_ = v.result(0).dtype == DType::F32;
    if (!yF32_)
      yWs_ = carve.take(uint64_t(p_.batch * p_.M * p_.N) * 4);
  }

  const Context &c_;
  MatMulParams p_;
  LtProduct product_;
  ScaledOperands ops_;
  bool yF32_ = true, perBatch_ = false;
  uint64_t yWs_ = 0, workspace_ = 0;
};

class ScaledGemmKernel final : public PreparedKernel {
public:
  ScaledGemmKernel(const Context &c, GemmParams p) : c_(c), p_(std::move(p)) {}

  Status prepare(const KernelView &v) {
    beta_ = p_.hasC && p_.beta != 0.0f ? 1.0f : 0.0f;
    cudaDataType_t at, bt;
    const bool fp8Types = ltFp8Pair(v, &at, &bt);
    // FP8: A must be [M, K] (a trans_a A, stored [K, M], is transposed) and
    // B [N, K] (a B stored [K, N], without trans_b, is transposed).
    if (fp8Types && p_.K > 0 && p_.M > 0 && p_.N > 0) {
      Carve carve;
      plan(v, carve);
      if (p_.transA)
        ops_.planTransposedA(1, p_.K, p_.M, carve);
      if (!p_.transB)
        ops_.planTransposedB(1, p_.K, p_.N, carve);
      if (product_.init(c_, at, bt, false, true, p_.M, p_.N, p_.K, 1, 0, 0, 64, Scaling::Fp8)) {
        ops_.fp8 = true;
        workspace_ = carve.used;
        return Status::ok();
      }
    }
    ops_ = ScaledOperands();
    Carve carve;
    plan(v, carve);
    ops_.planWidened(v, carve);
    workspace_ = carve.used;
    return product_.init(c_, CUDA_R_32F, CUDA_R_32F, p_.transA, p_.transB, p_.M, p_.N, p_.K, 1, 0,
                         0, 64, Scaling::DeviceAlpha);
  }

  uint64_t workspaceBytes() const override { return workspace_; }

  Status run(const KernelArgs &args) override {
    const TensorArg &y = args.results[0];
    auto *ws = static_cast<uint8_t *>(args.workspace);
    const float *scales = nullptr;
    const void *A = nullptr, *B = nullptr;
    MPTRT_TRY(ops_.prepareRun(c_, args, p_.scaleOperand, p_.alpha, beta_, &scales, &A, &B));
    float *Y = yF32_ ? static_cast<float *>(y.data) : reinterpret_cast<float *>(ws + yWs_);
    const int64_t n = p_.M * p_.N;
    if (n == 0)
      return Status::ok();
    if (beta_ != 0.0f) {
      const TensorArg &cArg = args.operands[2];
      broadcastCKernel<<<blocksFor(c_, n), kThreads, 0, streamOf(c_)>>>(
          cArg.desc->dtype, cArg.data, p_.cRowStride, p_.cColStride, p_.beta, Y, p_.M, p_.N);
      MPTRT_TRY(launched("scaled gemm bias kernel"));
    }
    if (p_.K > 0) {
      const float one = 1.0f;
      if (ops_.fp8) {
        MPTRT_TRY(product_.setScales(scales + kScaleOfA, scales + kScaleOfB));
        MPTRT_TRY(product_.runWith(c_, A, B, Y, &one, &beta_));
      } else {
        MPTRT_TRY(product_.runWith(c_, A, B, Y, scales + kScaleOfA, scales + kBetaSlot));
      }
    } else if (beta_ == 0.0f) {
      MPTRT_CUDA_TRY(cudaMemsetAsync(Y, 0, uint64_t(n) * 4, streamOf(c_)));
    }
    if (!yF32_)
      MPTRT_TRY(store(c_, Y, y.desc->dtype, y.data, n));
    return Status::ok();
  }

private:
  void plan(const KernelView &v, Carve &carve) {
    ops_.scalesWs = carve.take(kScaleFloats * sizeof(float));
    yF32_ = v.result(0).dtype == DType::F32;
    if (!yF32_)
      yWs_ = carve.take(uint64_t(p_.M * p_.N) * 4);
  }

  const Context &c_;
  GemmParams p_;
  LtProduct product_;
  ScaledOperands ops_;
  float beta_ = 0.0f; // cuBLASLt's beta: 1 when beta * C is in Y first
  bool yF32_ = true;
  uint64_t yWs_ = 0, workspace_ = 0;
};

} // namespace

namespace {
/// Decodes the kernel's parameters with `decode`, then makes and prepares a
/// `Kernel` over them.
template <typename Kernel, typename Params>
Status prepareContraction(const Context &c, const KernelView &v,
                          std::unique_ptr<PreparedKernel> *out,
                          Status (*decode)(const KernelView &, Params *)) {
  Params p;
  MPTRT_TRY(decode(v, &p));
  auto k = std::make_unique<Kernel>(c, std::move(p));
  MPTRT_TRY(k->prepare(v));
  *out = std::move(k);
  return Status::ok();
}
} // namespace

Status prepareMatMul(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareContraction<MatMulKernel>(c, v, out, decodeMatMul);
}

Status prepareGemm(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareContraction<GemmKernel>(c, v, out, decodeGemm);
}

Status prepareScaledMatMul(const Context &c, const KernelView &v,
                           std::unique_ptr<PreparedKernel> *out) {
  return prepareContraction<ScaledMatMulKernel>(c, v, out, decodeScaledMatMul);
}

Status prepareScaledGemm(const Context &c, const KernelView &v,
                         std::unique_ptr<PreparedKernel> *out) {
  return prepareContraction<ScaledGemmKernel>(c, v, out, decodeScaledGemm);
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
