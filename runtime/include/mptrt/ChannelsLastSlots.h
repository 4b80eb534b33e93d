//===- ChannelsLastSlots.h - which tensors a layout changes ------*- C++ -*-===//
//
// The kernels that take `layout = nhwc` and which of their operands and
// results are activations ([N, C, spatial...] channels first, [N,
// spatial..., C] channels last); their weights, scales and statistics keep
// their layout. One table for the compiler's mpt-channels-last (which
// chains activations through these slots) and the runtime's adapter
// (which transposes exactly these): plain C++, header-only.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_CHANNELSLASTSLOTS_H
#define MPTRT_CHANNELSLASTSLOTS_H

#include <cstddef>
#include <string_view>
#include <vector>

namespace mptrt {

/// The activation operands and results of kernel `kind` with `numOperands`
/// operands; false for a kind without a channels-last form.
inline bool channelsLastSlots(std::string_view kind, size_t numOperands,
                              std::vector<size_t> *operands, std::vector<size_t> *results) {
  operands->clear();
  results->clear();
  if (kind == "conv" || kind == "conv_grad_input") {
    *operands = {0};
    *results = {0};
  } else if (kind == "conv_grad_weight") {
    *operands = {0, 1};
  } else if (kind == "batch_norm" || kind == "batch_norm_train") {
    *operands = {0};
    if (numOperands == 6)
      operands->push_back(5); // the residual
    *results = {0};
  } else if (kind == "batch_norm_grad") {
    *operands = {0, 2};
    if (numOperands == 4)
      operands->push_back(3); // the forward output of a fused relu
    *results = {0};
  } else if (kind == "max_pool" || kind == "average_pool" || kind == "global_average_pool" ||
             kind == "average_pool_grad") {
    *operands = {0};
    *results = {0};
  } else if (kind == "max_pool_grad") {
    *operands = {0, 1}; // the forward input and the output's gradient
    *results = {0};
  } else {
    return false;
  }
  return true;
}

} // namespace mptrt

#endif // MPTRT_CHANNELSLASTSLOTS_H
