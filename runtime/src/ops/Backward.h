//===- Backward.h - decoded backward (gradient) kernels ----------*- C++ -*-===//
//
// The decoders of the training step's backward kernel kinds
// (docs/training.md, "Backward kernels"). Each checks a plan kernel and
// produces a parameter struct, like OpParams.h does for the forward kinds;
// where a backward kind takes the attributes of a forward one (softmax,
// pooling, conv) it decodes them into the forward kind's struct, so the two
// agree on every shape. A backward result's type gives the shape of the
// forward input it is the gradient of.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_OPS_BACKWARD_H
#define MPTRT_SRC_OPS_BACKWARD_H

#include "ops/OpParams.h"

#include <cstdint>
#include <vector>

namespace mptrt {
namespace rt {

/// unary_grad: x, dy -> dx = f'(x) * dy, elementwise; `kind` names f.
struct UnaryGradParams {
  UnaryOp op = UnaryOp::Relu; // never Neg or Not
  float alpha = 0.01f;        // leaky_relu, and a function's float parameters
  float beta = 0, gamma = 0;
  double clipMin = 0, clipMax = 0;
  bool hasMin = false, hasMax = false;
  int64_t numel = 0;
};
Status decodeUnaryGrad(const KernelView &v, UnaryGradParams *p);

/// softmax_grad: y, dy -> dx along one axis ([outer, dim, inner]); `log`
/// when y is a log-softmax output.
Status decodeSoftmaxGrad(const KernelView &v, SoftmaxParams *p);

/// layer_norm_grad: x, scale, mean, inv_std_dev, dy -> dx, dscale, dbias
/// over `outer` rows of `inner` elements.
struct LayerNormGradParams {
  int64_t outer = 1, inner = 1;
  bool scaleIsScalar = false; // one scale value for the whole row
};
Status decodeLayerNormGrad(const KernelView &v, LayerNormGradParams *p);

/// softmax_cross_entropy_loss_grad (log_prob, labels, [weights], dloss ->
/// dscores) and nll_loss_grad (target, [weight], dloss -> dinput), over
/// [N, C, d...] with D the product of the trailing dims.
struct LossGradParams : LossCommon {};
Status decodeLossGrad(const KernelView &v, LossGradParams *p);

/// gather_grad: indices, dy -> ddata: ddata[o, idx[i], n] += dy[o, i, n].
struct GatherGradParams {
  int64_t outer = 1, axisDim = 0, inner = 1, numIndices = 0;
};
Status decodeGatherGrad(const KernelView &v, GatherGradParams *p);

/// slice_grad: dy -> dx, dy written where the forward slice of dx's shape
/// read (SliceParams: outShape is dy's shape, inStride dx's strides).
Status decodeSliceGrad(const KernelView &v, SliceParams *p);

/// max_pool_grad (x, dy -> dx) and average_pool_grad (dy -> dx).
Status decodePoolGrad(const KernelView &v, PoolParams *p);

/// conv_grad_input (dy, weight -> dx) and conv_grad_weight (x, dy ->
/// dweight); ConvParams as conv's for the input and weight shapes.
Status decodeConvGrad(const KernelView &v, ConvParams *p);

/// batch_norm_grad: x [N, C, ...], scale [C], dy -> dx, dscale [C], dbias [C];
/// with `activation = relu`, operand 3 is the forward's relu output y and
/// the gradient reaching the batch norm is dy where y > 0, else 0.
struct BatchNormGradParams {
  int64_t N = 0, C = 0, inner = 1;
  float epsilon = 1e-5f;
  bool relu = false;
  bool channelsLast = false; // as BatchNormParams::channelsLast
};
Status decodeBatchNormGrad(const KernelView &v, BatchNormGradParams *p);

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_OPS_BACKWARD_H
