//===- ContractionKernels.cpp - matmul, gemm and conv on the CPU ---------===//
//
// All three reduce to OpenBLAS sgemm in float32: operands stored in bf16,
// f16 or fp8 are widened to float32 first (exactly), the products are
// accumulated in float32 by sgemm, and the float32 result is rounded once
// into the output dtype.
//
// Threads: OpenBLAS is set to one thread, and the runtime's pool
// (Parallel.h) spreads the work instead, so the two never compete for the
// cores: a large product is cut into blocks of rows, one sgemm call each
// (cut only where that is bit-exact, see rowCutUnit); a conv's groups and a
// matmul's batches are spread over the threads when each is large enough.
//
//===----------------------------------------------------------------------===//
#include "cpu/Convert.h"
#include "cpu/CpuKernels.h"
#include "cpu/Gemm.h"
#include "cpu/Parallel.h"

#ifdef MPTRT_HAVE_BLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {
namespace cpu {

namespace {

/// Elements [offset, offset + n) of `t` as float32: the tensor itself if it
/// is f32, else a widened copy in `scratch` (n floats, from prepare).
const float *asF32(const TensorArg &t, int64_t offset, int64_t n, float *scratch) {
  const DType dtype = t.desc->dtype;
  if (dtype == DType::F32)
    return static_cast<const float *>(t.data) + offset;
  parallelFor(n, grainForCost(1), [&](int64_t b, int64_t e) {
    loadF32(dtype, elementPtr(t.data, dtype, offset + b), e - b, scratch + b);
  });
  return scratch;
}

/// Where a float32 result of n elements at `offset` is computed: directly in
/// the output if it is f32, else in `scratch` (then stored by finishF32).
float *outputF32(const TensorArg &t, int64_t offset, float *scratch) {
  if (t.desc->dtype == DType::F32)
    return static_cast<float *>(t.data) + offset;
  return scratch;
}

/// Rounds a float32 result computed by outputF32 into the output dtype.
void finishF32(const TensorArg &t, int64_t offset, int64_t n, const float *y) {
  const DType dtype = t.desc->dtype;
  if (dtype == DType::F32)
    return;
  parallelFor(n, grainForCost(1), [&](int64_t b, int64_t e) {
    storeF32(y + b, e - b, dtype, elementPtr(t.data, dtype, offset + b));
  });
}

/// relu on elements [offset, offset + n) of an output finishF32 has
/// written: on the rounded values, so the bits are an unfused relu's
/// (x < 0 ? 0 : x; a -0 stays -0).
void reluInPlace(const TensorArg &t, int64_t offset, int64_t n) {
  const DType dtype = t.desc->dtype;
  if (dtype == DType::F32) {
    float *y = static_cast<float *>(t.data) + offset;
    parallelFor(n, grainForCost(1), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        y[i] = y[i] < 0.0f ? 0.0f : y[i];
    });
    return;
  }
  parallelFor(n, grainForCost(2), [&](int64_t b, int64_t e) {
    float block[kBlock];
    for (int64_t i = b; i < e; i += kBlock) {
      const int64_t m = std::min<int64_t>(kBlock, e - i);
      void *at = elementPtr(t.data, dtype, offset + i);
      loadF32(dtype, at, m, block);
      for (int64_t j = 0; j < m; ++j)
        block[j] = block[j] < 0.0f ? 0.0f : block[j];
      storeF32(block, m, dtype, at);
    }
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// sgemm, cut into blocks of rows over the pool (declared in Gemm.h).
//===----------------------------------------------------------------------===//

namespace {

/// Rows [m0, m1) of C = alpha * op(A) op(B) + beta * C, where op(A) is
/// [M, K] and C is [M, N] (row-major): one cblas_sgemm call.
void sgemmRows(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha,
               const float *A, const float *B, float beta, float *C, int64_t m0, int64_t m1) {
#ifndef MPTRT_HAVE_BLAS
  // No BLAS in this build (runtime/CMakeLists.txt: a host with only a C++
  // compiler, CMake and the CUDA toolkit): a plain loop, float32 products
  // summed in order of k. Correct, and slow; the CPU backend's probe says so.
  for (int64_t i = m0; i < m1; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k)
        acc += (transA ? A[k * M + i] : A[i * K + k]) * (transB ? B[j * K + k] : B[k * N + j]);
      float &c = C[i * N + j];
      c = beta == 0.0f ? alpha * acc : alpha * acc + beta * c;
    }
#else
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m1 - m0), static_cast<blasint>(N), static_cast<blasint>(K),
              alpha, transA ? A + m0 : A + m0 * K, static_cast<blasint>(transA ? M : K), B,
              static_cast<blasint>(transB ? K : N), beta, C + m0 * N, static_cast<blasint>(N));
#endif
}

#ifdef MPTRT_HAVE_BLAS
/// Whether cutting products at multiples of `unit` rows gives the very bits
/// of one call, on probe products with every transpose, beta 0 and 1, a
/// partial last row group, two or more blocks of K and an odd N.
bool rowCutsAreExact(int64_t unit) {
  const int64_t M = 3 * unit + 5, N = 67, K = 700;
  std::vector<float> a(M * K), b(K * N), c0(M * N), c1(M * N), cInit(M * N);
  uint32_t state = 12345;
  auto next = [&state] { // deterministic values in [-1, 1)
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(static_cast<int32_t>(state)) * (1.0f / 2147483648.0f);
  };
  for (float &v : a)
    v = next();
  for (float &v : b)
    v = next();
  for (float &v : cInit)
    v = next();
  for (int variant = 0; variant < 8; ++variant) {
    const bool transA = variant & 1, transB = variant & 2;
    const float beta = (variant & 4) ? 1.0f : 0.0f;
    c0 = cInit;
    sgemmRows(transA, transB, M, N, K, 0.75f, a.data(), b.data(), beta, c0.data(), 0, M);
    for (int64_t cut = unit; cut < M; cut += unit) {
      c1 = cInit;
      sgemmRows(transA, transB, M, N, K, 0.75f, a.data(), b.data(), beta, c1.data(), 0, cut);
      sgemmRows(transA, transB, M, N, K, 0.75f, a.data(), b.data(), beta, c1.data(), cut, M);
      if (std::memcmp(c0.data(), c1.data(), c0.size() * sizeof(float)) != 0)
        return false;
    }
  }
  return true;
}
#endif

} // namespace

/// Rows per block when a product is cut over the threads, or 0 to never
/// cut. OpenBLAS's kernels compute rows of a row-major C in groups of a
/// fixed size and round a partial group differently, so only cuts at
/// multiples of that size reproduce one call's bits; it depends on the
/// CPU's kernel, so the first use measures it. (Cutting columns is never
/// exact.) Also switches OpenBLAS to one thread.
int64_t rowCutUnit() {
  static const int64_t unit = []() -> int64_t {
#ifndef MPTRT_HAVE_BLAS
    // The plain loop computes each row alone, in the same order: any cut
    // gives one call's bits.
    return numThreads() < 2 ? 0 : 1;
#endif
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(1);
    if (numThreads() < 2)
      return 0;
    for (int64_t u : {4, 8, 12, 16, 24, 32, 48, 64, 96})
      if (rowCutsAreExact(u))
        return u;
#endif
    // Another BLAS may thread itself; leave it alone.
    return 0;
  }();
  return unit;
}

void sgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
           const float *B, float beta, float *C, bool mayCut) {
  if (M == 0 || N == 0)
    return;
  if (K == 0) {
    for (int64_t i = 0; i < M * N; ++i)
      C[i] = beta == 0.0f ? 0.0f : beta * C[i];
    return;
  }
  const int64_t unit = rowCutUnit();
  if (!mayCut || unit == 0 || M < 2 * unit) {
    sgemmRows(transA, transB, M, N, K, alpha, A, B, beta, C, 0, M);
    return;
  }
  // Blocks of `unit` rows; the last chunk also takes the M % unit rows left.
  const int64_t blocks = M / unit;
  parallelFor(blocks, grainForCost(unit * N * K / kMacsPerElementOp + kSgemmCallCost),
              [&](int64_t begin, int64_t end) {
                sgemmRows(transA, transB, M, N, K, alpha, A, B, beta, C, begin * unit,
                          end == blocks ? M : end * unit);
              });
}

namespace {

//===----------------------------------------------------------------------===//
// matmul: one sgemm per (broadcast) batch.
//===----------------------------------------------------------------------===//

using MatMulKernel = WithF32Copies<MatMulParams>;

/// Float32 copies of the whole of a and b and a float32 y, for those that
/// are not f32.
struct MatMulScratch {
  float *a, *b, *y;
};
MatMulScratch matMulScratch(const MatMulKernel &k, Scratch &s) {
  return {s.take<float>(k.operand[0]), s.take<float>(k.operand[1]), s.take<float>(k.result)};
}

/// A scaled contraction's dequantisation factor, as cuBLASLt applies its A
/// and B scale pointers: f32(1/a_scale) * f32(1/b_scale), rounded to f32.
float dequantFactor(const KernelArgs &args, size_t scale0) {
  float sa, sb;
  std::memcpy(&sa, args.operands[scale0].data, sizeof(float));
  std::memcpy(&sb, args.operands[scale0 + 1].data, sizeof(float));
  return (1.0f / sa) * (1.0f / sb);
}

Status runMatMul(const MatMulKernel &k, const KernelArgs &args) {
  const MatMulParams &p = k.p;
  // scaled_matmul: the FP8 operands widen exactly, sgemm accumulates in
  // f32, and its alpha is the dequantisation factor.
  const float alpha = p.scaled ? dequantFactor(args, 2) : 1.0f;
  const TensorArg &a = args.operands[0], &b = args.operands[1], &y = args.results[0];
  const int64_t aSize = p.M * p.K, bSize = p.K * p.N, ySize = p.M * p.N;
  Scratch scratch(args.workspace);
  const MatMulScratch ws = matMulScratch(k, scratch);
  // Each batch's A and B at their offsets in the (widened) operands.
  const float *A = asF32(a, 0, a.desc->numel, ws.a);
  const float *B = asF32(b, 0, b.desc->numel, ws.b);
  float *Y = outputF32(y, 0, ws.y);
  // Batches are spread over the threads when each is worth it; a lone
  // batch (or a run of them on one thread) may cut its sgemm instead.
  const int64_t batchCost =
      aSize + bSize + ySize + ySize * p.K / kMacsPerElementOp + kSgemmCallCost;
  parallelFor(p.batch, grainForCost(batchCost), [&](int64_t begin, int64_t end) {
    const bool alone = end - begin == p.batch;
    for (int64_t n = begin; n < end; ++n)
      sgemm(false, false, p.M, p.N, p.K, alpha, A + p.aOffset[n], B + p.bOffset[n], 0.0f,
            Y + n * ySize, alone);
  });
  finishF32(y, 0, p.batch * ySize, Y);
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

using GemmKernel = WithF32Copies<GemmParams>;

/// Float32 copies of A, B and C and a float32 Y, for those that are not f32.
struct GemmScratch {
  float *a, *b, *c, *y;
};
GemmScratch gemmScratch(const GemmKernel &k, Scratch &s) {
  return {s.take<float>(k.operand[0]), s.take<float>(k.operand[1]),
          s.take<float>(k.p.hasC ? k.operand[2] : 0), s.take<float>(k.result)};
}

Status runGemmBiasActivation(const GemmKernel &k, const KernelArgs &args) {
  const GemmParams &p = k.p;
  const TensorArg &a = args.operands[0], &b = args.operands[1], &y = args.results[0];
  Scratch scratch(args.workspace);
  const GemmScratch ws = gemmScratch(k, scratch);
  const float *A = asF32(a, 0, p.M * p.K, ws.a);
  const float *B = asF32(b, 0, p.K * p.N, ws.b);
  float *Y = outputF32(y, 0, ws.y);
  float beta = 0.0f;
  if (p.hasC && p.beta != 0.0f) {
    const TensorArg &c = args.operands[2];
    const float *C = asF32(c, 0, c.desc->numel, ws.c);
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j)
        Y[i * p.N + j] = p.beta * C[i * p.cRowStride + j * p.cColStride];
    beta = 1.0f;
  }
  // scaled_gemm: alpha times the dequantisation factor (cuBLASLt's
  // alpha * scale_a * scale_b), then beta C is added in f32.
  const float alpha = p.scaled ? p.alpha * dequantFactor(args, p.scaleOperand) : p.alpha;
  sgemm(p.transA, p.transB, p.M, p.N, p.K, alpha, A, B, beta, Y);
  if (p.activation != Activation::None)
    parallelFor(p.M * p.N, grainForCost(p.activation == Activation::Relu ? 1 : 8),
                [&](int64_t s, int64_t e) { applyActivation(p.activation, Y + s, e - s); });
  finishF32(y, 0, p.M * p.N, Y);
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// conv: im2col + sgemm per image and group.
//
// For image n and group g, column row r = (c, k_0, ..., k_s) (c within the
// group's C/group channels, k the kernel position) and column o (an output
// position) holds x[n, g*Cg + c, o*stride - padBegin + k*dilation], or 0 in
// the padding. Then Y[n, g*Mg:(g+1)*Mg, :] = W_g[Mg, Cg*K] * col[Cg*K, O].
//===----------------------------------------------------------------------===//

/// im2col (declared in Gemm.h).
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
  // A row costs a copy of outSize floats plus its bounds arithmetic.
  const int64_t grain = grainForCost(p.outSize + 16);
  parallelFor(Cg * p.kernelSize, grain, [&](int64_t rowBegin, int64_t rowEnd) {
    for (int64_t row = rowBegin; row < rowEnd; ++row) {
      const int64_t c = row / p.kernelSize;
      int64_t k[kMaxRank]; // kernel position of this row
      for (int64_t rest = row % p.kernelSize, d = nsp - 1; d >= 0; --d) {
        k[d] = rest % p.kernel[d];
        rest /= p.kernel[d];
      }
      const float *plane = x + (c0 + c) * p.inSize;
      const int64_t first = k[last] * p.dilations[last] - p.padsBegin[last];
      const int64_t lo = std::min(runLength, std::max<int64_t>(0, (-first + stride - 1) / stride));
      const int64_t hi = std::max(lo, std::min(runLength, (inLast - first + stride - 1) / stride));
      float *dst = col + row * p.outSize;
      int64_t o[kMaxRank] = {}; // output position on the outer axes
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

namespace {

using ConvKernel = WithF32Copies<ConvParams>;

/// Whether conv spreads `units` units of work (one im2col + sgemm each)
/// over the threads, each with its own workspace: when there are enough to
/// share out evenly (depthwise convs have one per channel; a batch of
/// images, one per image). Otherwise each unit's im2col and sgemm are split.
bool convSpreads(const ConvParams &p, int64_t units) {
  const int64_t rows = p.C / p.group * p.kernelSize, Mg = p.M / p.group;
  const int64_t threads = numThreads();
  const int64_t unitGrain =
      grainForCost(rows * p.outSize + Mg * p.outSize * rows / kMacsPerElementOp + kSgemmCallCost);
  return threads > 1 && units >= 2 * unitGrain && (units % threads == 0 || units >= 4 * threads);
}

/// Images per step: all at once if spreading needs them (they are then
/// widened to float32 together), else one at a time.
int64_t convStep(const ConvParams &p) { return p.N > 1 && convSpreads(p, p.N * p.group) ? p.N : 1; }

/// Float32 copies of W, the bias and a step of images, a float32 step of Y
/// (for those that are not f32), and the im2col workspaces: one per chunk
/// when the units are spread over the threads, else one.
struct ConvScratch {
  float *w, *bias, *x, *y, *col;
};
ConvScratch convScratch(const ConvKernel &k, Scratch &s) {
  const ConvParams &p = k.p;
  const int64_t step = convStep(p);
  const int64_t rows = p.C / p.group * p.kernelSize;
  const int64_t slots = convSpreads(p, step * p.group) ? maxChunks() : 1;
  return {s.take<float>(k.operand[1]), s.take<float>(p.hasBias ? k.operand[2] : 0),
          s.take<float>(k.operand[0] ? step * p.C * p.inSize : 0),
          s.take<float>(k.result ? step * p.M * p.outSize : 0),
          s.take<float>(slots * rows * p.outSize)};
}

/// conv's decoder, and the im2col workspace's size checked at load.
Status decodeConvKernel(const KernelView &v, ConvKernel *k) {
  MPTRT_TRY((decodeWithF32Copies<ConvParams, decodeConv>(v, k)));
  const ConvParams &p = k->p;
  const int64_t rows = p.C / p.group * p.kernelSize;
  // The im2col workspace can dwarf the tensors (rows * outSize floats).
  if (p.outSize != 0 && rows > (int64_t{1} << 44) / p.outSize)
    return v.error("the im2col workspace (" + std::to_string(rows) + " x " +
                   std::to_string(p.outSize) + " floats) is too large");
  return Status::ok();
}

Status runConv(const ConvKernel &k, const KernelArgs &args) {
  const ConvParams &p = k.p;
  const TensorArg &x = args.operands[0], &w = args.operands[1], &y = args.results[0];
  const int64_t Cg = p.C / p.group, Mg = p.M / p.group;
  const int64_t rows = Cg * p.kernelSize; // im2col rows = GEMM depth
  Scratch scratch(args.workspace);
  const ConvScratch ws = convScratch(k, scratch);
  const float *W = asF32(w, 0, p.M * rows, ws.w);
  const float *bias = p.hasBias ? asF32(args.operands[2], 0, p.M, ws.bias) : nullptr;
  // The work comes in units of one im2col + sgemm per (image, group),
  // spread over the threads (each chunk with its own workspace) or not as
  // convSpreads decides.
  const int64_t unitGrain =
      grainForCost(rows * p.outSize + Mg * p.outSize * rows / kMacsPerElementOp + kSgemmCallCost);
  const int64_t step = convStep(p);
  const int64_t xSize = p.C * p.inSize, ySize = p.M * p.outSize;
  const int64_t colSize = rows * p.outSize;
  for (int64_t n0 = 0; n0 < p.N; n0 += step) {
    const float *X = asF32(x, n0 * xSize, step * xSize, ws.x);
    float *Y = outputF32(y, n0 * ySize, ws.y);
    auto runUnit = [&](int64_t unit, float *unitCol, bool mayCut) {
      const int64_t n = unit / p.group, g = unit % p.group;
      im2col(p, X + n * xSize, g * Cg, Cg, unitCol);
      sgemm(false, false, Mg, p.outSize, rows, 1.0f, W + g * Mg * rows, unitCol, 0.0f,
            Y + n * ySize + g * Mg * p.outSize, mayCut);
    };
    const int64_t units = step * p.group;
    if (convSpreads(p, units)) {
      parallelForChunks(units, unitGrain, [&](int64_t chunk, int64_t begin, int64_t end) {
        for (int64_t unit = begin; unit < end; ++unit)
          runUnit(unit, ws.col + chunk * colSize, /*mayCut=*/false);
      });
    } else {
      for (int64_t unit = 0; unit < units; ++unit)
        runUnit(unit, ws.col, /*mayCut=*/true);
    }
    if (bias)
      parallelFor(step * p.M, grainForCost(p.outSize), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) // row r: image r / M, channel r % M
          for (int64_t o = 0; o < p.outSize; ++o)
            Y[r * p.outSize + o] += bias[r % p.M];
      });
    finishF32(y, n0 * ySize, step * ySize, Y);
    if (p.relu)
      reluInPlace(y, n0 * ySize, step * ySize);
  }
  return Status::ok();
}

} // namespace

/// For tests (declared there): rows per block when sgemm cuts a product over
/// the threads; 0 if it never does.
int64_t sgemmRowCutUnit() { return rowCutUnit(); }

// Each also settles OpenBLAS's threads and the row cut (rowCutUnit) once,
// at load time rather than in the first run.
Status prepareMatMul(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  rowCutUnit();
  return prepareWith<MatMulKernel>(v, out, decodeWithF32Copies<MatMulParams, decodeMatMul>,
                                   runMatMul,
                                   scratchBytes<MatMulKernel, MatMulScratch, matMulScratch>);
}
Status prepareGemm(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  rowCutUnit();
  return prepareWith<GemmKernel>(v, out, decodeWithF32Copies<GemmParams, decodeGemm>,
                                 runGemmBiasActivation,
                                 scratchBytes<GemmKernel, GemmScratch, gemmScratch>);
}
Status prepareScaledMatMul(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  rowCutUnit();
  return prepareWith<MatMulKernel>(v, out, decodeWithF32Copies<MatMulParams, decodeScaledMatMul>,
                                   runMatMul,
                                   scratchBytes<MatMulKernel, MatMulScratch, matMulScratch>);
}
Status prepareScaledGemm(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  rowCutUnit();
  return prepareWith<GemmKernel>(v, out, decodeWithF32Copies<GemmParams, decodeScaledGemm>,
                                 runGemmBiasActivation,
                                 scratchBytes<GemmKernel, GemmScratch, gemmScratch>);
}
Status prepareConv(const KernelView &v, std::unique_ptr<PreparedKernel> *out) {
  rowCutUnit();
  return prepareWith<ConvKernel>(v, out, decodeConvKernel, runConv,
                                 scratchBytes<ConvKernel, ConvScratch, convScratch>);
}

} // namespace cpu
} // namespace rt
} // namespace mptrt
