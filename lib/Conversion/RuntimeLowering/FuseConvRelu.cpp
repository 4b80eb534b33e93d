//===- FuseConvRelu.cpp - relu into conv kernels --------------------------===//
//
// Gives conv kernels their fused relu on mptrt IR. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

namespace mpt {
#define GEN_PASS_DEF_MPTFUSECONVRELU
#include "mpt/Conversion/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;
namespace rtir = mpt::rt;

namespace {

/// relu(conv(x, w, b)) -> conv{activation = relu}(x, w, b).
bool fuseRelu(rtir::ReluOp relu) {
  return foldRelu(relu, [](Operation *def) {
    auto conv = dyn_cast<rtir::ConvOp>(def);
    if (!conv ||
        conv.getActivation().value_or(Activation::none) != Activation::none)
      return false;
    conv.setActivation(Activation::relu);
    return true;
  });
}

struct FuseConvReluPass
    : public mpt::impl::MPTFuseConvReluBase<FuseConvReluPass> {
  void runOnOperation() override {
    bool broken;
    Block *body = loweringBody(getOperation(), broken);
    if (!body)
      return broken ? signalPassFailure() : void();
    SmallVector<rtir::ReluOp> relus(body->getOps<rtir::ReluOp>());
    for (rtir::ReluOp relu : relus)
      fuseRelu(relu);
  }
};

} // namespace
