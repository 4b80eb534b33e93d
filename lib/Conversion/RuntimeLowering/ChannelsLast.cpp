//===- ChannelsLast.cpp - NHWC activations for convolution chains ---------===//
//
// Finds the convolution chains of a function and stores their activations
// channels last, with transposes at the chains' edges only. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mpt {
#define GEN_PASS_DEF_MPTCHANNELSLAST
#include "mpt/Conversion/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;
namespace rtir = mpt::rt;

namespace {

/// The activation operands and results of a layout-aware kernel (false for
/// any other op); a chain joins through these alone.
bool activationSlots(Operation *op, SmallVectorImpl<unsigned> &operands,
                     SmallVectorImpl<unsigned> &results) {
  operands.clear();
  results.clear();
  if (isa<rtir::ConvOp, rtir::ConvGradInputOp>(op)) {
    operands.push_back(0);
    results.push_back(0);
  } else if (isa<rtir::ConvGradWeightOp>(op)) {
    operands.append({0, 1});
  } else if (isa<rtir::BatchNormOp, rtir::BatchNormTrainOp>(op)) {
    operands.push_back(0);
    if (op->getNumOperands() == 6)
      operands.push_back(5);
    results.push_back(0);
  } else if (isa<rtir::BatchNormGradOp>(op)) {
    operands.append({0, 2});
    if (op->getNumOperands() == 4)
      operands.push_back(3);
    results.push_back(0);
  } else {
    return false;
  }
  return true;
}

bool isConvolution(Operation *op) {
  return isa<rtir::ConvOp, rtir::ConvGradInputOp, rtir::ConvGradWeightOp>(op);
}

/// 4-D: [N, C, H, W].
bool isImage(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 4;
}

/// An elementwise kernel whose operands and results all have one 4-D shape:
/// layout does not matter to it.
bool isLayoutFree(Operation *op) {
  static const llvm::StringSet<> kinds = {
      "mptrt.relu", "mptrt.clip",       "mptrt.leaky_relu",
      "mptrt.gelu", "mptrt.sigmoid",    "mptrt.tanh",
      "mptrt.exp",  "mptrt.neg",        "mptrt.abs",
      "mptrt.sqrt", "mptrt.hard_swish", "mptrt.hard_sigmoid",
      "mptrt.elu",  "mptrt.cast",       "mptrt.add",
      "mptrt.sub",  "mptrt.mul",        "mptrt.div",
      "mptrt.max",  "mptrt.min",        "mptrt.unary_grad",
      "mptrt.copy"};
  if (!kinds.contains(op->getName().getStringRef()) || op->getNumResults() != 1)
    return false;
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (!isImage(op->getResult(0)))
    return false;
  for (Value v : op->getOperands())
    if (!isImage(v) || shapeOf(v) != shapeOf(op->getResult(0)))
      return false;
  return true;
}

/// [N, C, H, W] -> [N, H, W, C] of the same element type.
RankedTensorType channelsLastType(Type t) {
  auto type = cast<RankedTensorType>(t);
  ArrayRef<int64_t> s = type.getShape();
  return RankedTensorType::get({s[0], s[2], s[3], s[1]}, type.getElementType());
}

struct ChannelsLastPass
    : public mpt::impl::MPTChannelsLastBase<ChannelsLastPass> {
  void runOnOperation() override {
    bool broken;
    Block *body = loweringBody(getOperation(), broken);
    if (!body)
      return broken ? signalPassFailure() : void();

    // The chains: from every 2-D convolution's activations, through the
    // kernels that join them (their activations) and the layout-free ones.
    llvm::SetVector<Value> chain;
    SmallVector<Value> work;
    auto reach = [&](Operation *op, Value through) {
      SmallVector<unsigned> operands, results;
      if (activationSlots(op, operands, results)) {
        bool joins = false;
        for (unsigned i : operands)
          joins = joins || op->getOperand(i) == through;
        for (unsigned i : results)
          joins = joins || op->getResult(i) == through;
        if (!joins)
          return;
        for (unsigned i : operands)
          work.push_back(op->getOperand(i));
        for (unsigned i : results)
          work.push_back(op->getResult(i));
      } else if (isLayoutFree(op)) {
        for (Value v : op->getOperands())
          work.push_back(v);
        work.push_back(op->getResult(0));
      }
    };
    for (Operation &op : *body) {
      SmallVector<unsigned> operands, results;
      if (!isConvolution(&op) || !activationSlots(&op, operands, results))
        continue;
      bool images = true;
      for (unsigned i : operands)
        images = images && isImage(op.getOperand(i));
      for (unsigned i : results)
        images = images && isImage(op.getResult(i));
      if (!images)
        continue; // 1-D and 3-D convolutions keep their layout
      for (unsigned i : operands)
        work.push_back(op.getOperand(i));
      for (unsigned i : results)
        work.push_back(op.getResult(i));
    }
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!isImage(v) || !chain.insert(v))
        continue;
      if (Operation *def = v.getDefiningOp())
        reach(def, v);
      for (Operation *user : v.getUsers())
        reach(user, v);
    }
    if (chain.empty())
      return;

    // The kernels inside a chain: every activation (or every value, for a
    // layout-free kernel) is in it. Decided before any type changes.
    llvm::DenseSet<Operation *> insideOps;
    for (Operation &op : *body) {
      SmallVector<unsigned> operands, results;
      if (activationSlots(&op, operands, results)) {
        if (!results.empty() ? chain.contains(op.getResult(results[0]))
                             : chain.contains(op.getOperand(operands[0])))
          insideOps.insert(&op);
      } else if (isLayoutFree(&op) && chain.contains(op.getResult(0))) {
        insideOps.insert(&op);
      }
    }
    auto inside = [&](Operation *op) { return insideOps.contains(op); };
    OpBuilder b(&getContext());
    const auto intoLast = b.getDenseI64ArrayAttr({0, 2, 3, 1});
    const auto intoFirst = b.getDenseI64ArrayAttr({0, 3, 1, 2});
    for (Value v : chain) {
      Operation *def = v.getDefiningOp();
      const bool madeInside = def && inside(def);
      // Who reads v channels first (outside the chain) or channels last.
      SmallVector<OpOperand *> outsideUses, insideUses;
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        SmallVector<unsigned> operands, results;
        bool asActivation = inside(user);
        if (asActivation && activationSlots(user, operands, results))
          asActivation = llvm::is_contained(operands, use.getOperandNumber());
        (asActivation ? insideUses : outsideUses).push_back(&use);
      }
      if (madeInside) {
        const Type first = v.getType();
        v.setType(channelsLastType(first));
        if (!outsideUses.empty()) {
          b.setInsertionPointAfterValue(v);
          Value back = rtir::TransposeOp::create(b, v.getLoc(), first, v,
                                                 intoFirst, nullptr);
          for (OpOperand *use : outsideUses)
            use->set(back);
        }
      } else if (!insideUses.empty()) {
        b.setInsertionPointAfterValue(v);
        Value last = rtir::TransposeOp::create(
            b, v.getLoc(), channelsLastType(v.getType()), v, intoLast, nullptr);
        for (OpOperand *use : insideUses)
          use->set(last);
      }
    }
    for (Operation &op : *body) {
      SmallVector<unsigned> operands, results;
      if (!activationSlots(&op, operands, results) || !inside(&op))
        continue;
      op.setAttr("layout", rtir::LayoutAttr::get(&getContext(), Layout::nhwc));
    }
  }
};

} // namespace
