//===- ChannelsLast.h - conv and batch norm on channels-last activations --===//
//
// The compiler may store a convolution chain's activations channels last
// (`layout = nhwc` on conv, conv_grad_input, conv_grad_weight, batch_norm,
// batch_norm_train and batch_norm_grad: [N, spatial..., C] instead of
// [N, C, spatial...]; mpt-channels-last, docs/lowering.md). The kernel
// means what its channels-first form means. Where a backend has no
// channels-last kernel of its own, the model runs it as that form between
// transposes: each channels-last operand transposed into the workspace,
// the channels-first kernel, each result transposed back, all through the
// backend's own `transpose` kernel, so the bits are the channels-first
// kernel's on every backend (the reference semantics of a layout the
// compiler chose; weights, scales and statistics are not activations and
// keep their layout).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CHANNELSLAST_H
#define MPTRT_SRC_CHANNELSLAST_H

#include "Backend.h"
#include "ops/KernelView.h"

#include <memory>

namespace mptrt {
namespace rt {

/// Whether `kernel` has `layout = nhwc`.
bool isChannelsLast(const plan::Kernel &kernel);

/// The channels-last kernel `view` as its channels-first form between
/// transposes, prepared on `backend`.
Status prepareChannelsLast(Backend &backend, const KernelView &view,
                           std::unique_ptr<PreparedKernel> *out);

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CHANNELSLAST_H
