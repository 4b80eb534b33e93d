//===- ContractionKernels.cpp - matmul, gemm and conv on the CPU ---------===//
//
// All three reduce to OpenBLAS sgemm in float32: operands stored in bf16,
// f16 or fp8 are widened to float32 first (exactly), the products are
// accumulated in float32 by sgemm (which uses every core), and the float32
// result is rounded once into the output dtype.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Parallel.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// Elements [offset, offset + n) of `t` as float32: the tensor itself if it
/// is f32, else a widened copy in `scratch`.
const float *asF32(const TensorArg &t, int64_t offset, int64_t n, std::vector<float> &scratch) {
  const DType dtype = t.desc->dtype;
  if (dtype == DType::F32)
    return static_cast<const float *>(t.data) + offset;
  scratch.resize(std::max<int64_t>(n, 1));
  parallelFor(n, 1 << 16, [&](int64_t b, int64_t e) {
    loadF32(dtype, elementPtr(t.data, dtype, offset + b), e - b, scratch.data() + b);
  });
  return scratch.data();
}

/// Where a float32 result of n elements at `offset` is computed: directly in
/// the output if it is f32, else in `scratch` (then stored by finishF32).
float *outputF32(const TensorArg &t, int64_t offset, int64_t n, std::vector<float> &scratch) {
  if (t.desc->dtype == DType::F32)
    return static_cast<float *>(t.data) + offset;
  scratch.resize(std::max<int64_t>(n, 1));
  return scratch.data();
}

/// Rounds a float32 result computed by outputF32 into the output dtype.
void finishF32(const TensorArg &t, int64_t offset, int64_t n, const float *y) {
  const DType dtype = t.desc->dtype;
  if (dtype == DType::F32)
    return;
  parallelFor(n, 1 << 16, [&](int64_t b, int64_t e) {
    storeF32(y + b, e - b, dtype, elementPtr(t.data, dtype, offset + b));
  });
}

/// C[M, N] = A[M, K] * B[K, N] (row-major, float32 accumulate), with
/// optional transposed operands; handles the empty cases BLAS rejects.
void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha,
           const float *A, const float *B, float beta, float *C) {
  if (M == 0 || N == 0)
    return;
  if (K == 0) {
    for (int64_t i = 0; i < M * N; ++i)
      C[i] = beta == 0.0f ? 0.0f : beta * C[i];
    return;
  }
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<blasint>(M),
              static_cast<blasint>(N), static_cast<blasint>(K), alpha, A,
              static_cast<blasint>(transA ? M : K), B, static_cast<blasint>(transB ? K : N),
              beta, C, static_cast<blasint>(N));
}

//===----------------------------------------------------------------------===//
// matmul: one sgemm per (broadcast) batch.
//===----------------------------------------------------------------------===//

Status runMatMul(const MatMulParams &p, const KernelArgs &args) {
  const TensorArg &a = args.operands[0], &b = args.operands[1], &y = args.results[0];
  const int64_t aSize = p.M * p.K, bSize = p.K * p.N, ySize = p.M * p.N;
  std::vector<float> aBuf, bBuf, yBuf;
  for (int64_t n = 0; n < p.batch; ++n) {
    const float *A = asF32(a, p.aOffset[n], aSize, aBuf);
    const float *B = asF32(b, p.bOffset[n], bSize, bBuf);
    float *Y = outputF32(y, n * ySize, ySize, yBuf);
    sgemm(false, false, p.M, p.N, p.K, 1.0f, A, B, 0.0f, Y);
    finishF32(y, n * ySize, ySize, Y);
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gemm with its bias / activation epilogue:
//   Y = act(alpha * op(A) op(B) + beta * C)
// C is broadcast into Y first, so sgemm accumulates onto it with beta = 1.
//===----------------------------------------------------------------------===//

void applyActivation(Activation act, float *y, int64_t n) {
  switch (act) {
  case Activation::None:
    return;
  case Activation::Relu:
    for (int64_t i = 0; i < n; ++i)
      y[i] = y[i] < 0.0f ? 0.0f : y[i];
    return;
  case Activation::Gelu:
    for (int64_t i = 0; i < n; ++i)
      y[i] = 0.5f * y[i] * (1.0f + std::erf(y[i] * 0.70710678118654752f));
    return;
  case Activation::GeluTanh:
    for (int64_t i = 0; i < n; ++i) {
      float v = y[i];
      y[i] = 0.5f * v * (1.0f + std::tanh(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    }
    return;
  }
}

Status runGemmBiasActivation(const GemmParams &p, const KernelArgs &args) {
  const TensorArg &a = args.operands[0], &b = args.operands[1], &y = args.results[0];
  std::vector<float> aBuf, bBuf, cBuf, yBuf;
  const float *A = asF32(a, 0, p.M * p.K, aBuf);
  const float *B = asF32(b, 0, p.K * p.N, bBuf);
  float *Y = outputF32(y, 0, p.M * p.N, yBuf);
  float beta = 0.0f;
  if (p.hasC && p.beta != 0.0f) {
    const TensorArg &c = args.operands[2];
    const float *C = asF32(c, 0, c.desc->numel, cBuf);
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j)
        Y[i * p.N + j] = p.beta * C[i * p.cRowStride + j * p.cColStride];
    beta = 1.0f;
  }
  sgemm(p.transA, p.transB, p.M, p.N, p.K, p.alpha, A, B, beta, Y);
  parallelFor(p.M * p.N, 1 << 15,
              [&](int64_t s, int64_t e) { applyActivation(p.activation, Y + s, e - s); });
  finishF32(y, 0, p.M * p.N, Y);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// conv: im2col + sgemm per image and group.
//
// For image n and group g, column row r = (c, k_0, ..., k_s) (c within the
// group's C/group channels, k the kernel position) and column o (an output
// position) holds x[n, g*Cg + c, o*stride - padBegin + k*dilation], or 0 in
// the padding. Then Y[n, g*Mg:(g+1)*Mg, :] = W_g[Mg, Cg*K] * col[Cg*K, O].
//===----------------------------------------------------------------------===//

/// Fills col[Cg * kernelSize, outSize] from x's channels [c0, c0 + Cg).
///
/// Each column row is filled one run of the innermost output axis at a
/// time: for output positions o along the last axis the input position is
/// p = o * stride + first (first = k * dilation - padBegin), so the run is
/// zeros for o < lo, x values for lo <= o < hi, zeros after, with
/// lo = ceil(-first / stride) and hi = ceil((in - first) / stride) clamped
/// to [0, out].
void im2col(const ConvParams &p, const float *x, int64_t c0, int64_t Cg, float *col) {
  const int nsp = p.spatialRank;
  const int last = nsp - 1;
  const int64_t runLength = p.out[last];
  const int64_t runs = p.outSize / std::max<int64_t>(runLength, 1);
  const int64_t stride = p.strides[last], inLast = p.in[last];
  parallelFor(Cg * p.kernelSize, 16, [&](int64_t rowBegin, int64_t rowEnd) {
    for (int64_t row = rowBegin; row < rowEnd; ++row) {
      const int64_t c = row / p.kernelSize;
      int64_t k[kMaxRank];  // kernel position of this row
      for (int64_t rest = row % p.kernelSize, d = nsp - 1; d >= 0; --d) {
        k[d] = rest % p.kernel[d];
        rest /= p.kernel[d];
      }
      const float *plane = x + (c0 + c) * p.inSize;
      const int64_t first = k[last] * p.dilations[last] - p.padsBegin[last];
      const int64_t lo = std::min(runLength, std::max<int64_t>(0, (-first + stride - 1) / stride));
      const int64_t hi =
          std::max(lo, std::min(runLength, (inLast - first + stride - 1) / stride));
      float *dst = col + row * p.outSize;
      int64_t o[kMaxRank] = {};  // output position on the outer axes
      for (int64_t r = 0; r < runs; ++r, dst += runLength) {
        // Offset of this run's input row, if it lies inside on every outer axis.
        int64_t offset = 0;
        bool inside = true;
        for (int d = 0; d < last; ++d) {
          const int64_t pos = o[d] * p.strides[d] - p.padsBegin[d] + k[d] * p.dilations[d];
          inside = inside && pos >= 0 && pos < p.in[d];
          offset = offset * p.in[d] + pos;
        }
        if (!inside) {
          std::fill(dst, dst + runLength, 0.0f);
        } else {
          const float *src = plane + offset * inLast;
          std::fill(dst, dst + lo, 0.0f);
          for (int64_t i = lo; i < hi; ++i)
            dst[i] = src[i * stride + first];
          std::fill(dst + hi, dst + runLength, 0.0f);
        }
        for (int d = last - 1; d >= 0; --d) {
          if (++o[d] < p.out[d])
            break;
          o[d] = 0;
        }
      }
    }
  });
}

Status runConv(const ConvParams &p, const KernelArgs &args) {
  const TensorArg &x = args.operands[0], &w = args.operands[1], &y = args.results[0];
  const int64_t Cg = p.C / p.group, Mg = p.M / p.group;
  const int64_t rows = Cg * p.kernelSize;  // im2col rows = GEMM depth
  std::vector<float> wBuf, bBuf, xBuf, yBuf;
  const float *W = asF32(w, 0, p.M * rows, wBuf);
  const float *bias = p.hasBias ? asF32(args.operands[2], 0, p.M, bBuf) : nullptr;
  // The im2col workspace can dwarf the tensors (rows * outSize floats);
  // fail cleanly rather than throw if it cannot be had.
  if (p.outSize != 0 && rows > (int64_t{1} << 44) / p.outSize)
    return Status::error("the im2col workspace (" + std::to_string(rows) + " x " +
                         std::to_string(p.outSize) + " floats) is too large");
  std::unique_ptr<float[]> colBuffer(
      new (std::nothrow) float[static_cast<size_t>(std::max<int64_t>(rows * p.outSize, 1))]);
  if (!colBuffer)
    return Status::error("cannot allocate the im2col workspace (" +
                         std::to_string(rows * p.outSize * 4) + " bytes)");
  float *col = colBuffer.get();
  for (int64_t n = 0; n < p.N; ++n) {
    const float *X = asF32(x, n * p.C * p.inSize, p.C * p.inSize, xBuf);
    float *Y = outputF32(y, n * p.M * p.outSize, p.M * p.outSize, yBuf);
    for (int64_t g = 0; g < p.group; ++g) {
      im2col(p, X, g * Cg, Cg, col);
      sgemm(false, false, Mg, p.outSize, rows, 1.0f, W + g * Mg * rows, col, 0.0f,
            Y + g * Mg * p.outSize);
    }
    if (bias)
      for (int64_t m = 0; m < p.M; ++m)
        for (int64_t o = 0; o < p.outSize; ++o)
          Y[m * p.outSize + o] += bias[m];
    finishF32(y, n * p.M * p.outSize, p.M * p.outSize, Y);
  }
  return Status::ok();
}

} // namespace

Status prepareMatMul(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<MatMulParams>(v, out, decodeMatMul, runMatMul);
}
Status prepareGemm(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<GemmParams>(v, out, decodeGemm, runGemmBiasActivation);
}
Status prepareConv(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  return prepareWith<ConvParams>(v, out, decodeConv, runConv);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
