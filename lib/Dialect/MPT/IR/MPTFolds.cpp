//===- MPTFolds.cpp - mpt folders and canonicalization patterns -----------===//
//
// These reduce the shape arithmetic that ONNX exporters emit
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Constant chains,
// Identity) to static ops. Folding is limited to small constants: data
// movement of real weights is left to the runtime.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;
using namespace mpt;

namespace {

/// Replaces `op` by a new NewOp built from `args` that keeps op's phase,
/// read before the rewriter erases op.
template <typename NewOp, typename... Args>
NewOp replaceKeepingPhase(PatternRewriter &rewriter, Operation *op,
                          Args &&...args) {
  auto replacement =
      NewOp::create(rewriter, op->getLoc(), std::forward<Args>(args)...);
  inheritPhase(op, replacement);
  rewriter.replaceOp(op, replacement->getResults());
  return replacement;
}
constexpr int64_t kFoldLimit = 1 << 16;

DenseElementsAttr smallConstant(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || (!dense.isSplat() && dense.getNumElements() > kFoldLimit))
    return {};
  return dense;
}

/// Row-major strides of a shape.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Builds a constant of `type` whose element n is source[indexOf(n)], where
/// indexOf maps a result multi-index to a flat source index.
template <typename IndexFn>
DenseElementsAttr gatherElements(DenseElementsAttr source,
                                 RankedTensorType type, IndexFn indexOf) {
  if (type.getNumElements() > kFoldLimit)
    return {};
  if (source.isSplat())
    return DenseElementsAttr::get(type, source.getSplatValue<Attribute>());
  auto values = llvm::to_vector(source.getValues<Attribute>());
  SmallVector<Attribute> out;
  out.reserve(type.getNumElements());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t n = 0, e = type.getNumElements(); n < e; ++n) {
    out.push_back(values[indexOf(index)]);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::get(type, out);
}

/// Folds any op that only reinterprets the shape of a constant.
OpFoldResult foldReshapeLike(Value input, Type resultType, Attribute constant) {
  if (input.getType() == resultType)
    return input;
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(constant))
    return dense.reshape(cast<ShapedType>(resultType));
  return {};
}

/// Rounds `value` to nearest even into `to`. Conversions into the FP8 types
/// saturate, as mpt.cast defines them (and as the runtime's `cast` with
/// `saturate = 1` does): anything beyond the largest finite value, infinity
/// included, becomes that value with its sign; NaN stays NaN.
APFloat convertFloat(APFloat value, FloatType to) {
  const llvm::fltSemantics &semantics = to.getFloatSemantics();
  if (isa<Float8E4M3FNType, Float8E5M2Type>(to) && !value.isNaN()) {
    APFloat largest = APFloat::getLargest(semantics, value.isNegative());
    bool lost;
    APFloat wide = value, limit = largest;
    wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    limit.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    if (abs(wide).compare(abs(limit)) == APFloat::cmpGreaterThan)
      return largest;
  }
  bool lost;
  value.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
  return value;
}

/// Whether every value of float type `from` is exact in float type `to`.
bool isExactWidening(Type from, Type to) {
  auto f = dyn_cast<FloatType>(from), t = dyn_cast<FloatType>(to);
  return f && t &&
         APFloat::isRepresentableBy(f.getFloatSemantics(),
                                    t.getFloatSemantics());
}

/// cast{inserted}(cast{inserted}(x)) -> cast{inserted}(x), or x, when the
/// inner cast is exact. Casts the user wrote are never touched.
struct FoldInsertedCastPair : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<CastOp>();
    if (!op.getInserted() || !inner || !inner.getInserted() ||
        !isExactWidening(inner.getInput().getType().getElementType(),
                         inner.getType().getElementType()))
      return failure();
    if (inner.getInput().getType() == op.getType()) {
      rewriter.replaceOp(op, inner.getInput());
      return success();
    }
    replaceKeepingPhase<CastOp>(rewriter, op, op.getType(), inner.getInput(),
                                /*inserted=*/true);
    return success();
  }
};

/// Drops the ONNX shape operand of an op whose result type holds the shape.
template <typename OpTy> struct DropShapeOperand : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!op.getShape())
      return failure();
    replaceKeepingPhase<OpTy>(rewriter, op, op.getType(), op.getInput(),
                              /*shape=*/Value());
    return success();
  }
};

/// reshape(reshape(x)) -> reshape(x).
struct ReshapeOfReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    replaceKeepingPhase<ReshapeOp>(rewriter, op, op.getType(), inner.getInput(),
                                   /*shape=*/Value());
    return success();
  }
};

/// An inference-mode dropout is the identity with an all-true mask.
struct RemoveInferenceDropout : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getTraining() && !op.getRatio().isZero())
      return failure();
    auto maskType = op.getMask().getType();
    Value mask = ConstantOp::create(
        rewriter, op.getLoc(),
        DenseElementsAttr::get(maskType, rewriter.getBoolAttr(true)));
    rewriter.replaceOp(op, {op.getInput(), mask});
    return success();
  }
};
} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult IdentityOp::fold(FoldAdaptor) { return getInput(); }

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  auto dense = smallConstant(adaptor.getInput());
  if (!dense)
    return {};
  Type to = getOutput().getType().getElementType();
  Type from = dense.getElementType();
  auto resultType = getOutput().getType();
  // Integer <-> integer and integer -> float are exact for shape values;
  // float -> float rounds to nearest even, float -> integer truncates.
  if (auto toInt = dyn_cast<IntegerType>(to)) {
    SmallVector<APInt> out;
    unsigned width = toInt.getWidth();
    for (Attribute a : dense.getValues<Attribute>()) {
      // Everything goes through int64: shape values fit, and bool is 0/1.
      int64_t v;
      if (auto i = dyn_cast<IntegerAttr>(a)) {
        v = from.isInteger(1)
                ? static_cast<int64_t>(i.getValue().getZExtValue())
                : i.getValue().getSExtValue();
      } else {
        APFloat f = cast<FloatAttr>(a).getValue();
        APSInt asInt(64, /*isUnsigned=*/false);
        bool exact;
        f.convertToInteger(asInt, APFloat::rmTowardZero, &exact);
        v = f.isZero() ? 0 : (width == 1 ? 1 : asInt.getExtValue());
      }
      if (width == 1)
        v = v != 0;
      out.push_back(APInt(width, static_cast<uint64_t>(v),
                          /*isSigned=*/width > 1,
                          /*implicitTrunc=*/true));
    }
    return DenseElementsAttr::get(resultType, out);
  }
  auto toFloat = cast<FloatType>(to);
  SmallVector<APFloat> out;
  for (Attribute a : dense.getValues<Attribute>()) {
    if (auto i = dyn_cast<IntegerAttr>(a)) {
      // Through double (exact for shape values), then one rounding.
      APFloat f(APFloat::IEEEdouble());
      f.convertFromAPInt(i.getValue(), /*isSigned=*/!from.isInteger(1),
                         APFloat::rmNearestTiesToEven);
      out.push_back(convertFloat(f, toFloat));
    } else {
      out.push_back(convertFloat(cast<FloatAttr>(a).getValue(), toFloat));
    }
  }
  return DenseElementsAttr::get(resultType, out);
}

void CastOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<FoldInsertedCastPair>(context);
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  auto dense =
      dyn_cast_or_null<DenseIntElementsAttr>(smallConstant(adaptor.getInput()));
  if (!dense)
    return {};
  return dense.mapValues(dense.getElementType(),
                         [](const APInt &v) { return -v; });
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  auto dense =
      dyn_cast_or_null<DenseIntElementsAttr>(smallConstant(adaptor.getInput()));
  if (!dense)
    return {};
  return dense.mapValues(dense.getElementType(),
                         [](const APInt &v) { return ~v; });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  auto cond = smallConstant(adaptor.getCondition());
  if (!cond)
    return {};
  if (cond.isSplat()) {
    Value chosen = cond.getSplatValue<bool>() ? getX() : getY();
    if (chosen.getType() == getType())
      return chosen;
  }
  return foldWhereOp(*this, adaptor.getCondition(), adaptor.getX(),
                     adaptor.getY());
}

namespace {

/// A splat float constant equal to `value` (to float precision).
bool isSplat(Value v, double value) {
  DenseFPElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat())
    return false;
  double got = attr.getSplatValue<APFloat>().convertToDouble();
  return std::fabs(got - value) <= 1e-6 * std::fabs(value);
}

/// The operand of a commutative binary op that is not `known`, if the other
/// one is; null otherwise.
template <typename BinOp>
Value otherOperand(BinOp op, llvm::function_ref<bool(Value)> known) {
  if (known(op.getRhs()))
    return op.getLhs();
  if (known(op.getLhs()))
    return op.getRhs();
  return nullptr;
}

/// The erf form of GELU as exporters spell it becomes one `gelu`: the
/// product of `x`, `0.5` and `erf(x / sqrt(2)) + 1`, grouped either way
/// (TorchScript writes `(x * (erf(..) + 1)) * 0.5`, the dynamo exporter
/// `x * ((erf(..) + 1) * 0.5)`), with the operands of each mul and add in
/// either order. One op computes in FP32 and rounds once, where five
/// low-precision ops round `1 + erf(..)` near 0 (see docs/parity.md), and
/// it can fuse into a gemm.
struct RecognizeErfGelu : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  /// `erf(x / sqrt(2)) + 1` for some x, single-use throughout: that x.
  static Value erfTermInput(Value v) {
    auto add = v.getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse())
      return nullptr;
    auto erf = otherOperand(add, [](Value c) {
                 return isSplat(c, 1.0);
               }).template getDefiningOp<ErfOp>();
    if (!erf || !erf->hasOneUse())
      return nullptr;
    auto div = erf.getInput().getDefiningOp<DivOp>();
    if (!div || !div->hasOneUse() || !isSplat(div.getRhs(), std::sqrt(2.0)))
      return nullptr;
    return div.getLhs();
  }

  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    // The factors: each operand, or its two operands if it is a single-use
    // mul (x is used twice, by the div too, so it is never split).
    SmallVector<Value, 4> f;
    for (Value operand : {op.getLhs(), op.getRhs()}) {
      auto mul = operand.getDefiningOp<MulOp>();
      if (mul && mul->hasOneUse()) {
        f.push_back(mul.getLhs());
        f.push_back(mul.getRhs());
      } else {
        f.push_back(operand);
      }
    }
    if (f.size() != 3)
      return rewriter.notifyMatchFailure(op, "not a product of three factors");
    for (int half = 0; half < 3; ++half) {
      if (!isSplat(f[half], 0.5))
        continue;
      Value a = f[(half + 1) % 3], b = f[(half + 2) % 3];
      for (auto [term, x] : {std::pair(a, b), std::pair(b, a)}) {
        if (erfTermInput(term) != x || x.getType() != op.getType())
          continue;
        replaceKeepingPhase<GeluOp>(rewriter, op, op.getType(), x,
                                    GeluApproximate::none);
        return success();
      }
    }
    return rewriter.notifyMatchFailure(op, "not the erf form of GELU");
  }
};

} // namespace

void MulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<RecognizeErfGelu>(context);
}

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<RemoveInferenceDropout>(context);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getShape())
    return {};
  return foldReshapeLike(getInput(), getType(),
                         smallConstant(adaptor.getInput()));
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<DropShapeOperand<ReshapeOp>, ReshapeOfReshape>(context);
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getShape())
    return {};
  if (getInput().getType() == getType())
    return getInput();
  auto dense = smallConstant(adaptor.getInput());
  if (!dense)
    return {};
  auto inShape = getInput().getType().getShape();
  auto outType = getType();
  auto inStrides = stridesOf(inShape);
  size_t offset = outType.getRank() - inShape.size();
  return gatherElements(dense, outType, [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t i = 0; i < inShape.size(); ++i)
      flat += (inShape[i] == 1 ? 0 : index[offset + i]) * inStrides[i];
    return flat;
  });
}

void ExpandOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<DropShapeOperand<ExpandOp>>(context);
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  auto dense = smallConstant(adaptor.getInput());
  if (!dense)
    return {};
  auto inStrides = stridesOf(getInput().getType().getShape());
  return gatherElements(dense, getType(), [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t i = 0; i < perm.size(); ++i)
      flat += index[i] * inStrides[perm[i]];
    return flat;
  });
}

OpFoldResult FlattenOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(getInput(), getType(),
                         smallConstant(adaptor.getInput()));
}
OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(getInput(), getType(),
                         smallConstant(adaptor.getInput()));
}
OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(getInput(), getType(),
                         smallConstant(adaptor.getInput()));
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1)
    return getInputs().front();
  SmallVector<DenseElementsAttr> parts;
  for (Attribute a : adaptor.getInputs()) {
    auto dense = smallConstant(a);
    if (!dense)
      return {};
    parts.push_back(dense);
  }
  auto type = getType();
  if (type.getNumElements() > kFoldLimit)
    return {};
  int64_t axis = static_cast<int64_t>(getAxis());
  // Outer = product of dims before the axis; each part contributes a
  // contiguous run of (its axis size * inner) elements per outer index.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < type.getRank(); ++i)
    (i < axis ? outer : (i > axis ? inner : outer)) *=
        (i == axis ? 1 : type.getDimSize(i));
  SmallVector<SmallVector<Attribute>> values;
  for (DenseElementsAttr p : parts) {
    auto pt = cast<RankedTensorType>(p.getType());
    if (p.isSplat())
      values.emplace_back(pt.getNumElements(), p.getSplatValue<Attribute>());
    else
      values.push_back(llvm::to_vector(p.getValues<Attribute>()));
  }
  SmallVector<Attribute> out;
  for (int64_t o = 0; o < outer; ++o)
    for (auto [p, vals] : llvm::zip(parts, values)) {
      int64_t run =
          cast<RankedTensorType>(p.getType()).getDimSize(axis) * inner;
      out.append(vals.begin() + o * run, vals.begin() + (o + 1) * run);
    }
  return DenseElementsAttr::get(type, out);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto dense = smallConstant(adaptor.getInput());
  if (!dense)
    return {};
  auto inStrides = stridesOf(getInput().getType().getShape());
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  return gatherElements(dense, getType(), [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (size_t i = 0; i < index.size(); ++i)
      flat += (starts[i] + index[i] * steps[i]) * inStrides[i];
    return flat;
  });
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto data = smallConstant(adaptor.getData());
  auto indices = dyn_cast_or_null<DenseIntElementsAttr>(
      smallConstant(adaptor.getIndices()));
  if (!data || !indices)
    return {};
  auto dataShape = getData().getType().getShape();
  auto dataStrides = stridesOf(dataShape);
  int64_t axis = static_cast<int64_t>(getAxis());
  int64_t indexRank = getIndices().getType().getRank();
  auto indexStrides = stridesOf(getIndices().getType().getShape());
  auto idx = llvm::to_vector(indices.getValues<int64_t>());
  for (int64_t &i : idx) {
    if (i < -dataShape[axis] || i >= dataShape[axis])
      return {};
    if (i < 0)
      i += dataShape[axis];
  }
  return gatherElements(data, getType(), [&](ArrayRef<int64_t> index) {
    int64_t flat = 0;
    for (int64_t i = 0; i < axis; ++i)
      flat += index[i] * dataStrides[i];
    int64_t which = 0;
    for (int64_t i = 0; i < indexRank; ++i)
      which += index[axis + i] * indexStrides[i];
    flat += idx[which] * dataStrides[axis];
    for (int64_t i = axis + 1; i < static_cast<int64_t>(dataShape.size()); ++i)
      flat += index[i + indexRank - 1] * dataStrides[i];
    return flat;
  });
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  auto type = getType();
  if (type.getNumElements() > kFoldLimit)
    return {};
  // Float ranges: start + i * delta, computed in double and rounded once.
  if (auto fstart = dyn_cast_or_null<DenseFPElementsAttr>(adaptor.getStart())) {
    auto fdelta = dyn_cast_or_null<DenseFPElementsAttr>(adaptor.getDelta());
    if (!fdelta)
      return {};
    double s = fstart.getSplatValue<APFloat>().convertToDouble();
    double d = fdelta.getSplatValue<APFloat>().convertToDouble();
    auto &semantics =
        cast<FloatType>(type.getElementType()).getFloatSemantics();
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      APFloat v(s + static_cast<double>(i) * d);
      bool lost;
      v.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
      out.push_back(v);
    }
    return DenseElementsAttr::get(type, out);
  }
  auto start = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getStart());
  auto delta = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getDelta());
  if (!start || !delta)
    return {};
  int64_t s = start.getSplatValue<APInt>().getSExtValue();
  int64_t d = delta.getSplatValue<APInt>().getSExtValue();
  unsigned width = type.getElementTypeBitWidth();
  SmallVector<APInt> out;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    out.push_back(APInt(width, static_cast<uint64_t>(s + i * d), true, true));
  return DenseElementsAttr::get(type, out);
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto dims = getInput().getType().getShape();
  int64_t start = static_cast<int64_t>(getStart());
  int64_t end = getEnd() ? static_cast<int64_t>(*getEnd())
                         : static_cast<int64_t>(dims.size());
  return DenseIntElementsAttr::get(getType(), dims.slice(start, end - start));
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  if (getShape())
    return {};
  Attribute value = getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    value = dense.getSplatValue<Attribute>();
  return DenseElementsAttr::get(getType(), value);
}
