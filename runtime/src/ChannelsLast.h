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
// keep their layout). A backend with a channels-last kernel of its own
// (Backend::prepareChannelsLastKernel: the batch norms on the CPU and on
// CUDA, oneDNN's convolutions in the CPU's fast mode, cuDNN's on CUDA)
// runs that instead.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_CHANNELSLAST_H
#define MPTRT_SRC_CHANNELSLAST_H

#include "Backend.h"
#include "ops/KernelView.h"

#include <deque>
#include <memory>
#include <vector>

namespace mptrt {
namespace rt {

/// Whether `kernel` has `layout = nhwc`.
bool isChannelsLast(const plan::Kernel &kernel);

/// A channels-last kernel's channels-first form: the kernel without its
/// `layout`, its activations' types channels first ([N, C, spatial...]),
/// its other tensors' as they are. Decoders read a native channels-last
/// kernel's parameters from it; the adapter runs it between transposes.
class ChannelsFirstForm {
public:
  /// Fails, naming the kind, when `last` lacks the operands or results its
  /// layout reads or has an activation of rank below 3.
  Status build(const KernelView &last);

  /// The form, valid while this object lives.
  KernelView view() const { return KernelView(kernel_, operands_, results_); }
  /// The activation operands and results (ChannelsLastSlots.h).
  const std::vector<size_t> &actOperands() const { return actOperands_; }
  const std::vector<size_t> &actResults() const { return actResults_; }

private:
  plan::Kernel kernel_;
  std::deque<TensorDesc> descs_; // the activations' channels-first types; stable addresses
  std::vector<const TensorDesc *> operands_, results_;
  std::vector<size_t> actOperands_, actResults_;
};

/// The channels-last kernel `view` prepared on `backend`: the backend's own
/// channels-last kernel where it has one, else its channels-first form
/// between transposes.
Status prepareChannelsLast(Backend &backend, const KernelView &view,
                           std::unique_ptr<PreparedKernel> *out);

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_CHANNELSLAST_H
