//===- ContractionKernels.cu - matmul and gemm through cuBLASLt -----------===//
//
// The CPU backend widens A and B to float32, multiplies with sgemm (float32
// accumulation) into a float32 Y, applies gemm's bias and activation there,
// and rounds Y once into the result's dtype (cpu/ContractionKernels.cpp).
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
namespace {

Status cublasStatus(cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(std::string("cuBLASLt: ") + what + " failed (status " +
                       std::to_string(static_cast<int>(s)) + ")");
}

#define MPTRT_LT_TRY(call)                                                     \
  do {                                                                         \
    cublasStatus_t mptrtLtStatus = (call);                                     \
    if (mptrtLtStatus != CUBLAS_STATUS_SUCCESS)                                \
      return cublasStatus(mptrtLtStatus, #call);                               \
  } while (0)

/// The cuBLASLt type of a dtype cuBLASLt takes directly, or false.
bool ltType(DType d, cudaDataType_t *out) {
  switch (d) {
  case DType::F32: *out = CUDA_R_32F; return true;
  case DType::BF16: *out = CUDA_R_16BF; return true;
  case DType::F16: *out = CUDA_R_16F; return true;
  default: return false;
  }
}

/// Workspace pieces, 256-byte aligned, in a fixed order.
struct Carve {
  uint64_t used = 0;
  uint64_t take(uint64_t bytes) {
    used = (used + 255) / 256 * 256;
    const uint64_t at = used;
    used += bytes;
    return at;
  }
};

/// One cuBLASLt product D[rows N, cols M] (column-major) = op(B) op(A), i.e.
/// the row-major Y[M, N] = op(A)[M, K] op(B)[K, N], in float32, possibly
/// batched with constant strides. Owns its descriptors.
class LtProduct {
public:
  LtProduct() = default;
  LtProduct(const LtProduct &) = delete;
  LtProduct &operator=(const LtProduct &) = delete;
  ~LtProduct() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (d_) cublasLtMatrixLayoutDestroy(d_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
  }

  /// `type` is the operands' cuBLASLt type; strides are in elements
  /// (0: the same matrix for every batch); `alignment` the smallest
  /// alignment in bytes any operand pointer will have.
  Status init(const Context &c, cudaDataType_t type, bool transA, bool transB, int64_t M,
              int64_t N, int64_t K, int64_t batch, int64_t strideA, int64_t strideB,
              uint32_t alignment) {
    MPTRT_LT_TRY(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // Column-major: cuBLAS's first operand is our B, its second our A.
    const cublasOperation_t opFirst = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opSecond = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    MPTRT_LT_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst,
                                                sizeof opFirst));
    MPTRT_LT_TRY(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond,
                                                sizeof opSecond));
    const uint64_t firstRows = transB ? K : N, firstCols = transB ? N : K;
    const uint64_t secondRows = transA ? M : K, secondCols = transA ? K : M;
    MPTRT_LT_TRY(cublasLtMatrixLayoutCreate(&b_, type, firstRows, firstCols, firstRows));
    MPTRT_LT_TRY(cublasLtMatrixLayoutCreate(&a_, type, secondRows, secondCols, secondRows));
    MPTRT_LT_TRY(cublasLtMatrixLayoutCreate(&d_, CUDA_R_32F, N, M, N));
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
      const int64_t strideD = M * N;
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(b_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                    &count, sizeof count));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(
          b_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strideB, sizeof strideB));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(a_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                    &count, sizeof count));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(
          a_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strideA, sizeof strideA));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(d_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                    &count, sizeof count));
      MPTRT_LT_TRY(cublasLtMatrixLayoutSetAttribute(
          d_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strideD, sizeof strideD));
    }
    MPTRT_LT_TRY(cublasLtMatmulPreferenceCreate(&pref_));
    const uint64_t wsBytes = c.ltWorkspaceBytes;
    MPTRT_LT_TRY(cublasLtMatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes));
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      MPTRT_LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref_, attr, &alignment,
                                                        sizeof alignment));
    cublasLtMatmulHeuristicResult_t result = {};
    int found = 0;
    MPTRT_LT_TRY(cublasLtMatmulAlgoGetHeuristic(reinterpret_cast<cublasLtHandle_t>(c.lt), desc_,
                                                b_, a_, d_, d_, pref_, 1, &result, &found));
    if (found < 1)
      return Status::error("cuBLASLt has no algorithm for this product (" + std::to_string(M) +
                           "x" + std::to_string(K) + " by " + std::to_string(K) + "x" +
                           std::to_string(N) + ", batch " + std::to_string(batch) + ")");
    algo_ = result.algo;
    return Status::ok();
  }

  /// Enqueues D = alpha * op(A) op(B) + beta * D.
  Status run(const Context &c, const void *A, const void *B, float *D, float alpha,
             float beta) const {
    MPTRT_LT_TRY(cublasLtMatmul(reinterpret_cast<cublasLtHandle_t>(c.lt), desc_, &alpha, B, b_,
                                A, a_, &beta, D, d_, D, d_, &algo_, c.ltWorkspace,
                                c.ltWorkspaceBytes, streamOf(c)));
    return Status::ok();
  }

private:
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_ = {};
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

__global__ void widenKernel(DType dtype, const void *in, float *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = loadF32(dtype, in, i);
}

__global__ void storeKernel(const float *in, DType dtype, void *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    storeF32(dtype, out, i, in[i]);
}

/// Widens `in` (`n` elements of `dtype`) into float32 `out`.
Status widen(const Context &c, DType dtype, const void *in, float *out, int64_t n) {
  if (n == 0)
    return Status::ok();
  widenKernel<<<blocksFor(c, n), kThreads, 0, streamOf(c)>>>(dtype, in, out, n);
  return launched("widen kernel");
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
  uint64_t aWs = 0, bWs = 0;  // workspace offsets of the widened copies

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
    MPTRT_TRY(widen(c, a.desc->dtype, a.data, wa, a.desc->numel));
    MPTRT_TRY(widen(c, b.desc->dtype, b.data, wb, b.desc->numel));
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
    const bool strided = constantStride(p_.aOffset, &strideA) &&
                         constantStride(p_.bOffset, &strideB);
    // The batches' pointers: 64-byte aligned bases plus the offsets.
    const uint32_t align =
        std::min(alignmentOf(p_.aOffset, elem), alignmentOf(p_.bOffset, elem));
    perBatch_ = !strided && p_.batch > 1;
    return product_.init(c_, ops_.type, false, false, p_.M, p_.N, p_.K,
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
    case Activation::None: break;
    case Activation::Relu: v = v < 0.0f ? 0.0f : v; break;
    case Activation::Gelu: v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); break;
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
    return product_.init(c_, ops_.type, p_.transA, p_.transB, p_.M, p_.N, p_.K, 1, 0, 0, 64);
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

} // namespace

Status prepareMatMul(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  MatMulParams p;
  MPTRT_TRY(decodeMatMul(v, &p));
  auto k = std::make_unique<MatMulKernel>(c, std::move(p));
  MPTRT_TRY(k->prepare(v));
  *out = std::move(k);
  return Status::ok();
}

Status prepareGemm(const Context &c, const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  GemmParams p;
  MPTRT_TRY(decodeGemm(v, &p));
  auto k = std::make_unique<GemmKernel>(c, std::move(p));
  MPTRT_TRY(k->prepare(v));
  *out = std::move(k);
  return Status::ok();
}

// The FP8 contractions are the CPU backend's reference only for now: the
// cuBLASLt FP8 path (A/B scale pointers, TN layout, split accumulation in
// the backward pass) is issue 14's GPU part. The plan is decoded first, so
// a malformed kernel gets its own message.
Status prepareScaledMatMul(const Context &, const KernelView &v,
                           std::unique_ptr<PreparedKernel> *) {
  MatMulParams p;
  MPTRT_TRY(decodeScaledMatMul(v, &p));
  return v.error("scaled_matmul (FP8) is not implemented on CUDA yet; run this plan on the "
                 "CPU backend");
}

Status prepareScaledGemm(const Context &, const KernelView &v,
                         std::unique_ptr<PreparedKernel> *) {
  GemmParams p;
  MPTRT_TRY(decodeScaledGemm(v, &p));
  return v.error("scaled_gemm (FP8) is not implemented on CUDA yet; run this plan on the "
                 "CPU backend");
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
