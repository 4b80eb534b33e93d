//===- ChannelsLast.cpp - NHWC activations for convolution chains ---------===//
//
// Finds the convolution chains of a function and stores their activations
// channels last, with transposes at the chains' edges only. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"
#include "mptrt/ChannelsLastSlots.h"

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
/// any other op; mptrt/ChannelsLastSlots.h, the runtime adapter's table); a
/// chain joins through these alone.
bool activationSlots(Operation *op, std::vector<size_t> &operands,
                     std::vector<size_t> &results) {
  if (!isa<rtir::KernelOpInterface>(op))
    return false;
  return mptrt::channelsLastSlots(op->getName().stripDialect(),
                                  op->getNumOperands(), &operands, &results);
}

bool isConvolution(Operation *op) {
  return isa<rtir::ConvOp, rtir::ConvGradInputOp, rtir::ConvGradWeightOp>(op);
}

/// 4-D: [N, C, H, W].
bool isImage(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 4;
}

/// The kinds whose every result element is computed from the elements at
/// the same index of its operands (given one shape): the kernel schema's
/// elementwise families.
bool isElementwiseKind(StringRef kind) {
  static const llvm::StringSet<> kinds = [] {
    llvm::StringSet<> set;
    auto add = [&](const char *kind, std::string_view family) {
      if (family == "Unary" || family == "Binary" || family == "UnaryGrad" ||
          family == "Cast" || family == "Copy")
        set.insert(kind);
    };
#define MPTRT_KERNEL(kind, family, minOps, maxOps, minRes, maxRes)             \
  add(#kind, #family);
#define MPTRT_ATTR(kind, name, type, required)
#include "mptrt/KernelSchema.def"
    return set;
  }();
  return kinds.contains(kind);
}

/// An elementwise kernel whose operands and results all have one 4-D shape:
/// layout does not matter to it.
bool isLayoutFree(Operation *op) {
  if (!isa<rtir::KernelOpInterface>(op) || op->getNumResults() != 1 ||
      !isElementwiseKind(op->getName().stripDialect()))
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
      std::vector<size_t> operands, results;
      if (activationSlots(op, operands, results)) {
        bool joins = false;
        for (size_t i : operands)
          joins = joins || op->getOperand(i) == through;
        for (size_t i : results)
          joins = joins || op->getResult(i) == through;
        if (!joins)
          return;
        for (size_t i : operands)
          work.push_back(op->getOperand(i));
        for (size_t i : results)
          work.push_back(op->getResult(i));
      } else if (isLayoutFree(op)) {
        for (Value v : op->getOperands())
          work.push_back(v);
        work.push_back(op->getResult(0));
      }
    };
    for (Operation &op : *body) {
      std::vector<size_t> operands, results;
      if (!isConvolution(&op) || !activationSlots(&op, operands, results))
        continue;
      bool images = true;
      for (size_t i : operands)
        images = images && isImage(op.getOperand(i));
      for (size_t i : results)
        images = images && isImage(op.getResult(i));
      if (!images)
        continue; // 1-D and 3-D convolutions keep their layout
      for (size_t i : operands)
        work.push_back(op.getOperand(i));
      for (size_t i : results)
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
      std::vector<size_t> operands, results;
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
        std::vector<size_t> operands, results;
        bool asActivation = inside(user);
        if (asActivation && activationSlots(user, operands, results))
          asActivation =
              llvm::is_contained(operands, size_t(use.getOperandNumber()));
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
      std::vector<size_t> operands, results;
      if (!activationSlots(&op, operands, results) || !inside(&op))
        continue;
      op.setAttr("layout", rtir::LayoutAttr::get(&getContext(), Layout::nhwc));
    }
  }
};

} // namespace
