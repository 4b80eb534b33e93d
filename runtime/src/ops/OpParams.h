//===- OpParams.h - decoded kernels, shared by every backend ------*- C++ -*-===//
//
// Each kernel kind has a decoder that checks a plan kernel (operand and
// result counts, dtypes, shapes, attributes) and turns it into a plain
// parameter struct with the loop bounds a backend needs. Backends only
// implement kernels over these structs, so a plan is checked the same way
// whichever device runs it. docs/runtime.md lists the kinds and attributes.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_OPS_OPPARAMS_H
#define MPTRT_SRC_OPS_OPPARAMS_H

#include "Status.h"
#include "TensorDesc.h"
#include "mptrt/Numerics.h"
#include "ops/KernelView.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

inline constexpr int kMaxRank = static_cast<int>(plan::kMaxRank);

//===----------------------------------------------------------------------===//
// Broadcasting.
//===----------------------------------------------------------------------===//

/// Up to three inputs broadcast (numpy rules) to one output shape: for each
/// input, its element stride along each output axis (0 where broadcast).
struct BroadcastIndex {
  int rank = 0;
  int numInputs = 0;
  int64_t outShape[kMaxRank] = {};
  int64_t strides[3][kMaxRank] = {};
  bool sameShape[3] = {}; // input i has exactly the output's shape
  int64_t numel = 1;
};

/// Fills `bc` for `inputs` broadcast to `out`; fails unless every input is
/// broadcastable to `out`, and (if `exact`) `out` is exactly their
/// broadcast shape.
Status makeBroadcast(const std::vector<const TensorDesc *> &inputs, const TensorDesc &out,
                     bool exact, BroadcastIndex *bc);

//===----------------------------------------------------------------------===//
// Elementwise.
//===----------------------------------------------------------------------===//

/// The elementwise unary functions (mptrt/generated/UnaryKinds.def).
enum class UnaryOp {
#define MPTRT_UNARY_FUNCTION(Name, ...) Name,
#include "mptrt/generated/UnaryKinds.def"
};

/// The unary kernel kinds (UnaryKinds.def's kernels).
struct UnaryParams {
  UnaryOp op = UnaryOp::Relu;
  bool integer = false; // i32/i64 in and out (relu, neg, abs, clip); i1 for not
  float alpha = 0.01f;  // leaky_relu, and a function's float parameters
  float beta = 0, gamma = 0;
  double clipMin = 0, clipMax = 0;
  bool hasMin = false, hasMax = false;
};
Status decodeUnary(const KernelView &v, UnaryParams *p);

/// Reads the float parameters `op`'s record declares (UnaryKinds.def's
/// MPTRT_UNARY_PARAM rows: alpha, beta, gamma) into the slots of those
/// names, each with the record's default when absent; the other slots keep
/// their values.
Status readUnaryParams(const KernelView &v, UnaryOp op, float *alpha, float *beta, float *gamma);

/// The elementwise binary kinds: X(Name, kind) for each, in order.
// clang-format off
#define MPTRT_BINARY_OPS(X)                                                    \
  X(Add, add)                                                                  \
  X(Sub, sub)                                                                  \
  X(Mul, mul)                                                                  \
  X(Div, div)                                                                  \
  X(Pow, pow)                                                                  \
  X(Max, max)                                                                  \
  X(Min, min)                                                                  \
  X(Equal, equal)                                                              \
  X(Less, less)                                                                \
  X(Greater, greater)
// clang-format on

enum class BinaryOp {
#define MPTRT_BINARY_ENUM(Name, kind) Name,
  MPTRT_BINARY_OPS(MPTRT_BINARY_ENUM)
#undef MPTRT_BINARY_ENUM
};

/// add sub mul div pow max min (arithmetic) and equal less greater (to i1).
struct BinaryParams {
  BinaryOp op = BinaryOp::Add;
  bool integer = false; // computed in int64 (else in float32)
  BroadcastIndex bc;
};
Status decodeBinary(const KernelView &v, BinaryParams *p);

/// where(condition, x, y); x, y and the result share one dtype.
struct WhereParams {
  BroadcastIndex bc;
  int64_t elementSize = 4;
};
Status decodeWhere(const KernelView &v, WhereParams *p);

/// cast: any dtype to any dtype. `saturate` clamps float -> fp8 overflow to
/// the largest finite value instead of APFloat's NaN / inf.
struct CastParams {
  bool saturate = false;
  int64_t numel = 0;
};
Status decodeCast(const KernelView &v, CastParams *p);

/// quantize: x (any float), scale (0-d f32) -> y (f8E4M3FN or f8E5M2), the
/// same shape: y = saturate(rne(f32(x) * scale)).
struct QuantizeParams {
  int64_t numel = 0;
};
Status decodeQuantize(const KernelView &v, QuantizeParams *p);

//===----------------------------------------------------------------------===//
// Contractions.
//===----------------------------------------------------------------------===//

/// numpy matmul: [..., M, K] x [..., K, N] -> [..., M, N] with batch
/// broadcasting; a 1-D lhs is [1, K] and a 1-D rhs [K, 1] (dropped again).
struct MatMulParams {
  int64_t M = 0, N = 0, K = 0;
  int64_t batch = 1;
  std::vector<int64_t> aOffset, bOffset; // element offset of each batch's A and B
  bool scaled = false;                   // scaled_matmul: operands 2, 3 are the FP8 scales
};
Status decodeMatMul(const KernelView &v, MatMulParams *p);
/// scaled_matmul: FP8 lhs and rhs, f32 0-d scales; the product is
/// multiplied by f32(1/lhs_scale) * f32(1/rhs_scale) before rounding.
Status decodeScaledMatMul(const KernelView &v, MatMulParams *p);

enum class Activation { None, Relu, Gelu, GeluTanh };

/// gemm: Y = act(alpha * op(A) * op(B) + beta * C), C broadcast to [M, N].
struct GemmParams {
  int64_t M = 0, N = 0, K = 0;
  bool transA = false, transB = false;
  float alpha = 1, beta = 1;
  bool hasC = false;
  int64_t cRowStride = 0, cColStride = 0; // C's element strides (0: broadcast)
  Activation activation = Activation::None;
  bool scaled = false;     // scaled_gemm
  size_t scaleOperand = 0; // scaled_gemm: A's scale, then B's
};
Status decodeGemm(const KernelView &v, GemmParams *p);
/// scaled_gemm: FP8 A and B, optional C, then the f32 0-d scales of A and
/// B; alpha op(A) op(B) is multiplied by f32(1/a_scale) * f32(1/b_scale).
Status decodeScaledGemm(const KernelView &v, GemmParams *p);

/// conv: N-d grouped convolution, NC[spatial], weight [M, C/group, k...].
struct ConvParams {
  int64_t N = 0, C = 0, M = 0, group = 1;
  int spatialRank = 0;
  std::vector<int64_t> in, out, kernel, strides, padsBegin, dilations;
  bool hasBias = false;
  // conv's fused epilogue (mpt-fuse-conv-relu): relu after the bias and the
  // rounding into the result's dtype (x < 0 ? 0 : x, as relu does).
  bool relu = false;
  int64_t inSize = 1, outSize = 1, kernelSize = 1; // spatial products
};
Status decodeConv(const KernelView &v, ConvParams *p);
/// conv's window attributes and shapes for input `x` and weight `w` (the
/// labels name them in messages): fills `p` except hasBias, and the output
/// shape [N, M, o...]. Shared with conv_grad_input / conv_grad_weight.
Status decodeConvWindow(const KernelView &v, const TensorDesc &x, const std::string &xLabel,
                        const TensorDesc &w, const std::string &wLabel, ConvParams *p,
                        std::vector<int64_t> *outShape);

//===----------------------------------------------------------------------===//
// Pooling.
//===----------------------------------------------------------------------===//

enum class PoolKind { Max, Average, GlobalAverage };

struct PoolParams {
  PoolKind kind = PoolKind::Max;
  bool integer = false; // max_pool over i32/i64
  int64_t N = 0, C = 0;
  int spatialRank = 0;
  std::vector<int64_t> in, out, kernel, strides, padsBegin, padsEnd, dilations;
  bool countIncludePad = false;
  int64_t inSize = 1, outSize = 1;
  // The input and result stored channels last, [N, spatial..., C]: set by a
  // backend's own channels-last kernel, never by the decoder (as
  // BatchNormParams::channelsLast).
  bool channelsLast = false;
};
Status decodePool(const KernelView &v, PoolParams *p);
/// The window attributes of a `kind` pool over input `x` (`inputLabel` names
/// it in messages): fills `p` except `integer`, and the output shape.
/// Shared with max_pool_grad / average_pool_grad.
Status decodePoolWindow(const KernelView &v, PoolKind kind, const TensorDesc &x,
                        const std::string &inputLabel, PoolParams *p,
                        std::vector<int64_t> *outShape);

//===----------------------------------------------------------------------===//
// Normalisation and softmax.
//===----------------------------------------------------------------------===//

/// batch_norm / batch_norm_train over x [N, C, ...].
struct BatchNormParams {
  bool training = false;
  int64_t N = 0, C = 0, inner = 1;
  float epsilon = 1e-5f, momentum = 0.9f;
  bool updateRunningStats = false; // batch_norm_train with 3 results
  // The fused epilogue (mpt-fuse-batch-norm): operand 5, added once the
  // normalised value is rounded to the output's dtype; then relu.
  bool residual = false, relu = false;
  // The activations (x, y, the residual) stored channels last, [N, inner,
  // C]: set by a backend's own channels-last kernel, which decodes its
  // channels-first form (ChannelsLast.h), never by the decoder.
  bool channelsLast = false;
};
Status decodeBatchNorm(const KernelView &v, BatchNormParams *p);
/// An error unless the kernel's `layout` is nchw (its default): the model
/// gives a conv or batch norm kernel with layout nhwc to the backend's own
/// channels-last kernel, or runs its channels-first form between
/// transposes (ChannelsLast.h); never to a channels-first kernel as it is.
Status expectChannelsFirst(const KernelView &v);
/// A batch norm or conv kernel's `activation` epilogue: none, or relu
/// (`*relu`).
Status decodeNormActivation(const KernelView &v, bool *relu);

/// layer_norm: normalise each of `outer` rows of `inner` elements.
struct LayerNormParams {
  int64_t outer = 1, inner = 1;
  float epsilon = 1e-5f;
  bool hasBias = false;
  bool scaleIsScalar = false, biasIsScalar = false;
  bool hasStats = false; // results mean and inv_std_dev present
};
Status decodeLayerNorm(const KernelView &v, LayerNormParams *p);

/// softmax / log_softmax along one axis: [outer, dim, inner].
struct SoftmaxParams {
  bool log = false;
  int64_t outer = 1, dim = 1, inner = 1;
};
Status decodeSoftmax(const KernelView &v, SoftmaxParams *p);

//===----------------------------------------------------------------------===//
// Attention.
//===----------------------------------------------------------------------===//

/// attention and attention_grad over `batch` independent problems (the
/// leading axes, `batchShape`): query [Tq, D], key [Tk, D], value [Tk, Dv],
/// the output [Tq, Dv] and the log-sum-exp [Tq]. The optional additive mask
/// (maskNumel elements) broadcasts to [batch..., Tq, Tk]: element (b, i, j)
/// is at maskOffset(b) + i * maskRowStride + j * maskColStride, with stride
/// 0 along a broadcast axis.
struct AttentionParams {
  int64_t batch = 1, tq = 0, tk = 0, d = 0, dv = 0;
  float scale = 1.0f;
  bool hasMask = false;
  int64_t maskNumel = 0;
  int batchRank = 0;
  int64_t batchShape[kMaxRank] = {};
  int64_t maskBatchStrides[kMaxRank] = {};
  int64_t maskRowStride = 0, maskColStride = 0;

  /// The offset of problem b's [Tq, Tk] mask window.
  MPTRT_HOST_DEVICE int64_t maskOffset(int64_t b) const {
    int64_t offset = 0;
    for (int a = batchRank - 1; a >= 0; --a) {
      offset += (b % batchShape[a]) * maskBatchStrides[a];
      b /= batchShape[a];
    }
    return offset;
  }
};
/// attention: operands (query, key, value[, mask]), results (output,
/// logsumexp).
Status decodeAttention(const KernelView &v, AttentionParams *p);
/// attention_grad: operands (query, key, value, output, logsumexp, grad[,
/// mask]), results (query_grad, key_grad, value_grad).
Status decodeAttentionGrad(const KernelView &v, AttentionParams *p);

//===----------------------------------------------------------------------===//
// Reductions and losses.
//===----------------------------------------------------------------------===//

enum class ReduceOp { Sum, Mean, Max, L2 };

struct ReduceParams {
  ReduceOp op = ReduceOp::Sum;
  bool integer = false;
  int rank = 0;
  int64_t inShape[kMaxRank] = {};
  int64_t outStride[kMaxRank] = {}; // output stride per input axis; 0 if reduced
  int64_t outNumel = 1;
  int64_t reducedCount = 1; // input elements per output element
};
Status decodeReduce(const KernelView &v, ReduceParams *p);

enum class Reduction { None, Sum, Mean };

/// What the losses and their gradients share: the layout of the scores, the
/// reduction and the label rules.
struct LossCommon {
  bool fromLogits = true;      // softmax_cross_entropy_loss[_grad]; false: nll_loss[_grad]
  int64_t N = 0, C = 0, D = 1; // D: product of the trailing dims
  Reduction reduction = Reduction::Mean;
  bool hasIgnoreIndex = false;
  int64_t ignoreIndex = 0;
  bool hasWeights = false;
};
/// Reads the attributes every loss kernel takes: reduction, ignore_index.
Status decodeLossAttributes(const KernelView &v, LossCommon *p);

/// softmax_cross_entropy_loss and nll_loss over scores [N, C, d...].
struct LossParams : LossCommon {
  bool hasLogProb = false; // second result of softmax_cross_entropy_loss
};
Status decodeLoss(const KernelView &v, LossParams *p);

//===----------------------------------------------------------------------===//
// Data movement.
//===----------------------------------------------------------------------===//

/// copy, identity, reshape, flatten, squeeze, unsqueeze: same bytes.
struct CopyParams {
  uint64_t bytes = 0;
};
Status decodeCopy(const KernelView &v, CopyParams *p);

/// dropout: x[, seed, step] -> y[, mask]. In inference (or with ratio 0) a
/// copy (converting float types) and an all-true mask; in training with a
/// ratio > 0, element i is kept when its Philox word (mptrt/Philox.h, drawn
/// from the seed and step operands and the `stream` attribute) is at least
/// `threshold`, and y = x * (kept ? scale : 0) with scale = 1 / (1 - ratio)
/// (0 for ratio 1).
struct DropoutParams {
  int64_t numel = 0;
  bool hasMask = false;
  bool draw = false;      // training mode with a ratio > 0
  uint64_t threshold = 0; // philox::dropThreshold(ratio)
  float scale = 1.0f;
  uint32_t stream = 0;
  /// Added to each element's index in its Philox draw: in a data-parallel
  /// run, rank r draws for elements r * numel + i, so that a batch-major
  /// tensor's masks are those one process draws for the global batch
  /// (set by decodeDropout from the process's rank; 0 in a world of one).
  int64_t elementOffset = 0;
};
Status decodeDropout(const KernelView &v, DropoutParams *p);

/// transpose: output axis i is input axis perm[i].
struct TransposeParams {
  int rank = 0;
  int64_t outShape[kMaxRank] = {};
  int64_t inStride[kMaxRank] = {}; // input element stride of output axis i
  int64_t elementSize = 4;
  int64_t numel = 0;
};
Status decodeTranspose(const KernelView &v, TransposeParams *p);

/// concat along `axis`: [outer, dim_i * inner] pieces.
struct ConcatParams {
  int64_t outer = 1, inner = 1, elementSize = 4;
  std::vector<int64_t> dims; // each operand's size along the axis
};
Status decodeConcat(const KernelView &v, ConcatParams *p);

/// split along `axis` into pieces of `sizes`.
struct SplitParams {
  int64_t outer = 1, inner = 1, elementSize = 4, dim = 0;
  std::vector<int64_t> sizes;
};
Status decodeSplit(const KernelView &v, SplitParams *p);

/// slice with one normalised start and step per axis.
struct SliceParams {
  int rank = 0;
  int64_t outShape[kMaxRank] = {};
  int64_t start[kMaxRank] = {};
  int64_t step[kMaxRank] = {};
  int64_t inStride[kMaxRank] = {};
  int64_t elementSize = 4;
  int64_t numel = 0;
};
Status decodeSlice(const KernelView &v, SliceParams *p);
/// The window part of slice and slice_grad: checks `starts`/`ends`/`steps`
/// against `x` (the sliced tensor), fills `p` but for `numel`, and gives the
/// slice's shape in `sliced`.
Status decodeSliceWindow(const KernelView &v, const TensorDesc &x, SliceParams *p,
                         std::vector<int64_t> *sliced);

/// gather along `axis`: out[o, i, n] = data[o, idx[i], n].
struct GatherParams {
  int64_t outer = 1, axisDim = 0, inner = 1, numIndices = 0, elementSize = 4;
};
Status decodeGather(const KernelView &v, GatherParams *p);

/// expand: broadcast the input to the result's shape.
struct ExpandParams {
  BroadcastIndex bc;
  int64_t elementSize = 4;
};
Status decodeExpand(const KernelView &v, ExpandParams *p);

/// trilu over the last two axes: keep j - i >= k (upper) or <= k (lower).
struct TriluParams {
  bool upper = true;
  int64_t k = 0;
  int64_t batch = 1, rows = 0, cols = 0, elementSize = 4;
};
Status decodeTrilu(const KernelView &v, TriluParams *p);

/// constant_of_shape: fill the result with one value.
struct FillParams {
  double value = 0;
  bool isInt = false;
  int64_t intValue = 0;
  int64_t numel = 0;
};
Status decodeFill(const KernelView &v, FillParams *p);

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_OPS_OPPARAMS_H
