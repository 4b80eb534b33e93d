//===- FuseEpilogues.cpp - kernel selection for contractions --------------===//
//
// Rewrites matmul/transpose/add/relu/gelu chains into the runtime's `gemm`
// kernel with its bias and activation epilogue. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mpt {
#define GEN_PASS_DEF_MPTFUSEEPILOGUES
#include "mpt/Conversion/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;

namespace {

/// The operands and attributes of a gemm without FP8 scales, to rebuild one
/// with changes. (Scaled gemms are left alone by every pattern.)
struct GemmConfig {
  Value a, b, c;
  float alpha = 1.0f, beta = 1.0f;
  bool transA = false, transB = false;
  Activation activation = Activation::none;

  static GemmConfig of(GemmOp op) {
    GemmConfig g;
    g.a = op.getA();
    g.b = op.getB();
    g.c = op.getC();
    g.alpha = op.getAlpha().convertToFloat();
    g.beta = op.getBeta().convertToFloat();
    g.transA = op.getTransA();
    g.transB = op.getTransB();
    g.activation = op.getActivation();
    return g;
  }

  GemmOp build(PatternRewriter &rewriter, Location loc, Type result) const {
    return GemmOp::create(rewriter, loc, result, a, b, c, APFloat(alpha),
                          APFloat(beta), transA, transB, activation);
  }
};

/// A gemm with no epilogue yet, reached directly or through one reshape
/// (both single-use, so rewriting them loses nothing).
struct PlainGemm {
  GemmOp gemm;
  ReshapeOp reshape; // null when the gemm is used directly

  static std::optional<PlainGemm> match(Value v, bool allowBias) {
    PlainGemm m{};
    if ((m.reshape = v.getDefiningOp<ReshapeOp>())) {
      if (!v.hasOneUse() || m.reshape.getShape())
        return std::nullopt;
      v = m.reshape.getInput();
    }
    m.gemm = v.getDefiningOp<GemmOp>();
    if (!m.gemm || !v.hasOneUse() ||
        m.gemm.getActivation() != Activation::none || m.gemm.getAScale())
      return std::nullopt;
    if (!allowBias && m.gemm.getC())
      return std::nullopt;
    return m;
  }

  /// Replaces `root` (the consumer being absorbed) by the new gemm, reshaped
  /// back if the match went through a reshape.
  void replace(PatternRewriter &rewriter, Operation *root,
               const GemmConfig &config) {
    Location loc = rewriter.getFusedLoc({gemm.getLoc(), root->getLoc()});
    GemmOp fused = config.build(rewriter, loc, gemm.getType());
    inheritPhase(gemm, inheritPhase(root, fused));
    Value result = fused.getResult();
    if (reshape)
      result =
          inheritPhase(reshape, ReshapeOp::create(rewriter, reshape.getLoc(),
                                                  reshape.getType(), result))
              .getResult();
    rewriter.replaceOp(root, result);
  }
};

/// matmul(x, w) with a 2-D w -> gemm, flattening x's leading dims.
struct MatMulToGemm : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op,
                                PatternRewriter &rewriter) const override {
    auto x = op.getLhs(), w = op.getRhs();
    auto xType = cast<RankedTensorType>(x.getType());
    auto wType = cast<RankedTensorType>(w.getType());
    auto outType = cast<RankedTensorType>(op.getType());
    if (wType.getRank() != 2 || xType.getRank() < 2 ||
        !xType.hasStaticShape() || !outType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs a 2-D rhs, static shapes");
    if (op.getLhsScale())
      return rewriter.notifyMatchFailure(op, "FP8 scaled matmuls stay as is");
    Location loc = op.getLoc();
    Value lhs = x;
    int64_t k = xType.getShape().back();
    int64_t m = 1;
    for (int64_t d : xType.getShape().drop_back())
      m *= d;
    if (xType.getRank() != 2)
      lhs = inheritPhase(
          op, ReshapeOp::create(
                  rewriter, loc,
                  RankedTensorType::get({m, k}, xType.getElementType()), x));
    GemmConfig config;
    config.a = lhs;
    config.b = w;
    auto gemmType = RankedTensorType::get({m, wType.getDimSize(1)},
                                          outType.getElementType());
    Value result =
        inheritPhase(op, config.build(rewriter, loc, gemmType)).getResult();
    if (gemmType != outType)
      result =
          inheritPhase(op, ReshapeOp::create(rewriter, loc, outType, result))
              .getResult();
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// gemm(transpose(a), b) / gemm(a, transpose(b)) with 2-D transposes ->
/// the gemm's trans flags.
struct TransposeIntoGemm : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op,
                                PatternRewriter &rewriter) const override {
    auto isSwap = [](Value v) -> Value {
      auto t = v.getDefiningOp<TransposeOp>();
      if (!t || t.getPerm() != ArrayRef<int64_t>{1, 0})
        return nullptr;
      return t.getInput();
    };
    if (op.getAScale())
      return rewriter.notifyMatchFailure(op, "FP8 scaled gemms stay as is");
    GemmConfig config = GemmConfig::of(op);
    bool changed = false;
    if (Value inner = isSwap(config.a)) {
      config.a = inner;
      config.transA = !config.transA;
      changed = true;
    }
    if (Value inner = isSwap(config.b)) {
      config.b = inner;
      config.transB = !config.transB;
      changed = true;
    }
    if (!changed)
      return rewriter.notifyMatchFailure(op, "no 2-D transpose operand");
    rewriter.replaceOp(op, inheritPhase(op, config.build(rewriter, op.getLoc(),
                                                         op.getType())));
    return success();
  }
};

/// add(gemm(a, b), bias) -> gemm(a, b, bias), also through a reshape.
struct BiasIntoGemm : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      Value g = op->getOperand(side), bias = op->getOperand(1 - side);
      auto m = PlainGemm::match(g, /*allowBias=*/false);
      if (!m || g.getType() != op.getType())
        continue;
      auto biasType = cast<RankedTensorType>(bias.getType());
      auto gemmType = cast<RankedTensorType>(m->gemm.getType());
      if (biasType.getElementType() != gemmType.getElementType())
        continue;
      // The bias must broadcast along the gemm's rows: [N], [1, N], [1] or
      // a scalar after leading 1s are dropped (through a reshape, only the
      // last axis is shared with the gemm result).
      ArrayRef<int64_t> shape = biasType.getShape();
      while (!shape.empty() && shape.front() == 1)
        shape = shape.drop_front();
      int64_t n = gemmType.getDimSize(1);
      if (shape.size() > 1 || (shape.size() == 1 && shape[0] != n))
        continue;
      if (biasType.getRank() > 2 || (m->reshape && biasType.getRank() == 2)) {
        auto reshaped = ReshapeOp::create(
            rewriter, bias.getLoc(),
            RankedTensorType::get(shape, biasType.getElementType()), bias);
        if (Operation *def = bias.getDefiningOp())
          inheritPhase(def, reshaped);
        bias = reshaped;
      }
      GemmConfig config = GemmConfig::of(m->gemm);
      config.c = bias;
      config.beta = 1.0f;
      m->replace(rewriter, op, config);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no gemm and row bias operands");
  }
};

/// relu/gelu(gemm) -> gemm with that activation, also through a reshape.
template <typename ActOp> struct ActivationIntoGemm : OpRewritePattern<ActOp> {
  using OpRewritePattern<ActOp>::OpRewritePattern;
  static Activation activationOf(ActOp op);
  LogicalResult matchAndRewrite(ActOp op,
                                PatternRewriter &rewriter) const override {
    auto m = PlainGemm::match(op.getInput(), /*allowBias=*/true);
    if (!m || op.getInput().getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "operand is not a plain gemm");
    GemmConfig config = GemmConfig::of(m->gemm);
    config.activation = activationOf(op);
    m->replace(rewriter, op, config);
    return success();
  }
};
template <> Activation ActivationIntoGemm<ReluOp>::activationOf(ReluOp) {
  return Activation::relu;
}
template <> Activation ActivationIntoGemm<GeluOp>::activationOf(GeluOp op) {
  return op.getApproximate() == GeluApproximate::tanh ? Activation::gelu_tanh
                                                      : Activation::gelu;
}

struct FuseEpiloguesPass
    : public mpt::impl::MPTFuseEpiloguesBase<FuseEpiloguesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // The exported erf GELU becomes one gelu (a mul canonicalization) so
    // that it can fuse into a gemm.
    MulOp::getCanonicalizationPatterns(patterns, &getContext());
    patterns.add<MatMulToGemm, TransposeIntoGemm, BiasIntoGemm,
                 ActivationIntoGemm<ReluOp>, ActivationIntoGemm<GeluOp>>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
