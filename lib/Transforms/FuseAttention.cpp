//===- FuseAttention.cpp - the --fuse-attention pass ----------------------===//
//
// Replaces matmul(softmax(mask(scale * matmul(Q, K^T))), V) with one
// mpt.attention. The match starts at the second matmul and walks up its
// probabilities operand; every value between the two matmuls must have one
// use, since those ops are erased. Passes.td's description lists the forms
// recognised.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Dialect/MPT/IR/ShapeRules.h"
#include "mpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <functional>
#include <optional>

namespace mpt {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "mpt/Transforms/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;

namespace {

/// A mask fill at or below this removes a key as -inf does: any finite
/// score added to it rounds back to it in FP32.
constexpr double kMaskFillLimit = -1e30;

RankedTensorType tensorTypeOf(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

/// The value of a float constant with every element equal, or nothing.
std::optional<double> splatValue(Value v) {
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// `v` with multiplications and divisions by a splat constant peeled off
/// (those that keep `v`'s shape); `scale` is multiplied by what was peeled.
/// With `singleUse`, a peeled op's result must have one use, and the op
/// goes into `erased`.
Value peelScale(Value v, double &scale, bool singleUse,
                llvm::SetVector<Operation *> &erased) {
  while (Operation *def = v.getDefiningOp()) {
    if (singleUse && !v.hasOneUse())
      break;
    Value inner;
    double factor = 0;
    if (auto mul = dyn_cast<MulOp>(def)) {
      if (auto c = splatValue(mul.getRhs())) {
        inner = mul.getLhs();
        factor = *c;
      } else if (auto c = splatValue(mul.getLhs())) {
        inner = mul.getRhs();
        factor = *c;
      }
    } else if (auto div = dyn_cast<DivOp>(def)) {
      if (auto c = splatValue(div.getRhs()); c && *c != 0) {
        inner = div.getLhs();
        factor = 1.0 / *c;
      }
    }
    if (!inner || inner.getType() != v.getType() || !std::isfinite(factor))
      break;
    scale *= factor;
    if (singleUse)
      erased.insert(def);
    v = inner;
  }
  return v;
}

/// Whether a gradient could flow from a parameter into `v`: a walk up its
/// producers that stops at integer and boolean values.
bool dependsOnParameter(Value v) {
  llvm::SmallVector<Value> work = {v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    auto type = tensorTypeOf(x);
    if (type && !isa<FloatType>(type.getElementType()))
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!func || func.getArgAttr(arg.getArgNumber(), kParamAttrName))
        return true;
      continue;
    }
    for (Value operand : x.getDefiningOp()->getOperands())
      work.push_back(operand);
  }
  return false;
}

/// What the scores' mask resolved to: the unmasked scores and a way to
/// build the additive mask (null when there is none).
struct MaskMatch {
  Value scores;
  std::function<Value(OpBuilder &, Location)> build;
};

std::optional<MaskMatch> matchMask(Value scores,
                                   llvm::SetVector<Operation *> &erased) {
  Operation *def = scores.getDefiningOp();
  if (!def || !scores.hasOneUse())
    return MaskMatch{scores, nullptr};
  auto sameShape = [&](Value inner) {
    return inner.getType() == scores.getType();
  };
  if (auto where = dyn_cast<WhereOp>(def)) {
    // where(c, fill, s) keeps s where c is false; where(c, s, fill) where
    // it is true.
    for (bool fillFirst : {true, false}) {
      Value fillValue = fillFirst ? where.getX() : where.getY();
      Value inner = fillFirst ? where.getY() : where.getX();
      std::optional<double> fill = splatValue(fillValue);
      if (!fill || !(*fill <= kMaskFillLimit) || !sameShape(inner))
        continue;
      erased.insert(def);
      Value condition = where.getCondition();
      double f = *fill;
      return MaskMatch{
          inner, [condition, f, fillFirst](OpBuilder &b, Location loc) {
            Type f32 = b.getF32Type();
            Value fillC = grad::scalar(b, loc, f, f32);
            Value zero = grad::scalar(b, loc, 0.0, f32);
            auto type =
                RankedTensorType::get(tensorTypeOf(condition).getShape(), f32);
            return WhereOp::create(b, loc, type, condition,
                                   fillFirst ? fillC : zero,
                                   fillFirst ? zero : fillC)
                .getResult();
          }};
    }
    return std::nullopt;
  }
  if (auto add = dyn_cast<AddOp>(def)) {
    // The scores side is the one that leads to a matmul once scales are
    // peeled; the other is the mask.
    for (bool scoresFirst : {true, false}) {
      Value inner = scoresFirst ? add.getLhs() : add.getRhs();
      Value mask = scoresFirst ? add.getRhs() : add.getLhs();
      double ignored = 1;
      llvm::SetVector<Operation *> scratch;
      if (!sameShape(inner) ||
          !peelScale(inner, ignored, true, scratch).getDefiningOp<MatMulOp>())
        continue;
      if (!isa<FloatType>(tensorTypeOf(mask).getElementType()) ||
          dependsOnParameter(mask))
        return std::nullopt;
      erased.insert(def);
      return MaskMatch{inner, [mask](OpBuilder &, Location) { return mask; }};
    }
    return std::nullopt;
  }
  return MaskMatch{scores, nullptr};
}

/// `kt` ([..., D, Tk]) as [..., Tk, D]: a transpose's permutation absorbs
/// the swap, anything else gets a transpose of its last two axes.
Value keyFromTransposed(OpBuilder &b, Location loc, Value kt) {
  if (auto t = kt.getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> perm(t.getPerm());
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
      return t.getInput();
    SmallVector<int64_t> shape(tensorTypeOf(kt).getShape());
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    return TransposeOp::create(
        b, loc, RankedTensorType::get(shape, tensorTypeOf(kt).getElementType()),
        t.getInput(), b.getDenseI64ArrayAttr(perm));
  }
  return grad::transposeLastTwo(b, loc, kt);
}

/// Fuses the attention that ends at `root` (the probabilities-times-V
/// matmul); false if `root` is not one.
bool fuse(MatMulOp root, llvm::SetVector<Operation *> &maybeDead) {
  if (root.getLhsScale() || !root.getLhs().hasOneUse())
    return false;
  llvm::SetVector<Operation *> erased;
  Value probsValue = root.getLhs();
  // Attention dropout that drops nothing (ratio 0, or inference), as
  // training-mode exports of p = 0 models write it: the identity.
  if (auto dropout = probsValue.getDefiningOp<DropoutOp>()) {
    if ((dropout.getTraining() && dropout.getRatio().convertToDouble() != 0) ||
        !dropout.getMask().use_empty() || !dropout.getInput().hasOneUse())
      return false;
    erased.insert(dropout);
    probsValue = dropout.getInput();
  }
  auto softmax = probsValue.getDefiningOp<SoftmaxOp>();
  if (!softmax)
    return false;
  RankedTensorType probs = softmax.getType();
  int64_t rank = probs.getRank();
  if (rank < 2 || static_cast<int64_t>(softmax.getAxis()) != rank - 1)
    return false;

  erased.insert(softmax);
  std::optional<MaskMatch> mask = matchMask(softmax.getInput(), erased);
  if (!mask)
    return false;
  double scale = 1;
  Value product = peelScale(mask->scores, scale, true, erased);
  auto qk = product.getDefiningOp<MatMulOp>();
  if (!qk || !product.hasOneUse() || qk.getLhsScale())
    return false;
  erased.insert(qk);
  Value q = peelScale(qk.getLhs(), scale, false, erased);
  Value kt = peelScale(qk.getRhs(), scale, false, erased);
  Value v = root.getRhs();

  // One element type, one rank and the same leading axes: no batch
  // broadcasting inside the fused op.
  auto qType = tensorTypeOf(q), ktType = tensorTypeOf(kt),
       vType = tensorTypeOf(v);
  if (!qType || !ktType || !vType || qType.getRank() != rank ||
      ktType.getRank() != rank || vType.getRank() != rank ||
      qType.getElementType() != ktType.getElementType() ||
      qType.getElementType() != vType.getElementType() ||
      qType.getShape().drop_back(2) != ktType.getShape().drop_back(2) ||
      qType.getShape().drop_back(2) != vType.getShape().drop_back(2) ||
      probs.getShape().drop_back(2) != qType.getShape().drop_back(2) ||
      !std::isfinite(scale))
    return false;

  OpBuilder b(root);
  Location loc = root.getLoc();
  Value key = keyFromTransposed(b, loc, kt);
  Value additive = mask->build ? mask->build(b, loc) : Value();
  auto attention =
      AttentionOp::create(b, loc, q, key, v, additive,
                          b.getF32FloatAttr(static_cast<float>(scale)));
  root.getOutput().replaceAllUsesWith(attention.getOutput());
  root->erase();
  // The scaled Q and K^T, the old transpose and the mask's producers die
  // with the ops in `erased` when nothing else uses them.
  for (Operation *op : erased)
    maybeDead.insert(op);
  return true;
}

struct FuseAttentionPass
    : public mpt::impl::FuseAttentionPassBase<FuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::SmallVector<MatMulOp> roots;
    getOperation().walk([&](MatMulOp op) { roots.push_back(op); });
    llvm::SetVector<Operation *> maybeDead;
    for (MatMulOp root : roots) {
      // An earlier fusion may have erased this matmul (it was the Q K^T of
      // another match); those are in maybeDead.
      if (maybeDead.contains(root))
        continue;
      if (fuse(root, maybeDead))
        ++numFused;
    }
    // Erase what the fusions left unused, producers after consumers.
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation *op : maybeDead) {
        if (op && op->getBlock() && op->use_empty() && isPure(op)) {
          // Its operands' producers may die with it.
          for (Value operand : op->getOperands())
            if (Operation *def = operand.getDefiningOp())
              maybeDead.insert(def);
          op->erase();
          maybeDead.remove(op);
          changed = true;
          break;
        }
      }
    }
  }
};

} // namespace
