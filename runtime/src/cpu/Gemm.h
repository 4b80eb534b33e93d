//===- Gemm.h - sgemm over the pool, and im2col ------------------*- C++ -*-===//
//
// The float32 building blocks of the contraction kernels, shared by conv
// (ContractionKernels.cpp, which defines them) and its gradients
// (ConvGradKernels.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CPU_GEMM_H
#define MPTRT_SRC_CPU_GEMM_H

#include "ops/OpParams.h"

#include <cstdint>

namespace mptrt {
namespace rt {
namespace cpu {

/// Cost, in element operations (Parallel.h), of one multiply-add inside
/// sgemm: it runs at tens of GFLOP/s per core, ~30x a plain loop.
inline constexpr int64_t kMacsPerElementOp = 32;
/// Fixed cost of one cblas_sgemm call (packing set-up, dispatch).
inline constexpr int64_t kSgemmCallCost = 1000;

/// Rows per block when sgemm cuts a product over the threads, or 0 to never
/// cut; the first call measures it and switches OpenBLAS to one thread.
int64_t rowCutUnit();

/// C[M, N] = alpha * op(A)[M, K] * op(B)[K, N] + beta * C (row-major, float32
/// accumulate); handles the empty cases BLAS rejects. A large product is
/// cut into blocks of rows, run over the pool, unless `mayCut` is false
/// (the caller is already spreading its work over the threads). The bits
/// do not depend on the thread count.
void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           const float *B, float beta, float *C, bool mayCut = true);

/// Fills col[Cg * kernelSize, outSize] from x's channels [c0, c0 + Cg) (one
/// image, float32): row (c, k...) and column o hold
/// x[c0 + c, o * stride - padBegin + k * dilation], or 0 in the padding.
void im2col(const ConvParams &p, const float *x, int64_t c0, int64_t Cg, float *col);

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CPU_GEMM_H
