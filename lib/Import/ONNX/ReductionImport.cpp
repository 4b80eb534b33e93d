//===- ReductionImport.cpp - the Reduce* ops ------------------------------===//
//
// The reductions moved `axes` from an attribute to an optional input
// (ReduceSum at opset 13, the others at 18); both forms import to the same
// op with sorted, non-negative axes. ReduceSum, ReduceMean, ReduceMax and
// ReduceL2 are ops of their own; the others are built from them, so that
// they train with those ops' gradients and accumulate as they do (FP32):
//   ReduceMin(x)       = -reduce_max(-x)
//   ReduceSumSquare(x) = reduce_sum(x * x)
//   ReduceL1(x)        = reduce_sum(|x|)
//   ReduceLogSum(x)    = log(reduce_sum(x))
//   ReduceLogSumExp(x) = log(reduce_sum(exp(x - m))) + m, m = reduce_max(x)
//                        (kept dims; exact for any finite x, where the
//                        plain form overflows)
//   ReduceProd(x)      = products of halves of x's reduced elements, exact
//                        and with mul's gradient
//   ArgMax / ArgMin    = the first (or last) index along the axis where x
//                        equals its reduce_max (or min): a reduction of
//                        where(x == m, index, sentinel) in int64
//   GlobalMaxPool      = reduce_max over the spatial axes, kept
//   Hardmax            = where(index == ArgMax(kept), 1, 0)
//   CumSum             = reduce_sum over j of x[.., j, ..] * T[j, i], T the
//                        0/1 triangle of the exclusive and reverse
//                        attributes (L^2 products for an axis of L)
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"
#include "mpt/Dialect/MPT/IR/GradientUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace mpt::onnx_import {
namespace {

/// A reduction of `x` over the normalised `axes`.
template <typename OpTy>
FailureOr<Value> reduce(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                        bool keepdims) {
  return c.create1<OpTy>({x}, {c.named("axes", c.b.getDenseI64ArrayAttr(axes)),
                               c.named("keepdims", c.b.getBoolAttr(keepdims))});
}

/// OpTy over `axes`, or one of the composed reductions.
template <typename OpTy> struct Reduction {
  static FailureOr<Value> build(NodeContext &c, ArrayRef<int64_t> axes,
                                bool keepdims) {
    return reduce<OpTy>(c, c.input(0), axes, keepdims);
  }
};

struct ReduceMin {
  static FailureOr<Value> build(NodeContext &c, ArrayRef<int64_t> axes,
                                bool keepdims) {
    auto negated = c.create1<NegOp>({c.input(0)});
    if (failed(negated))
      return failure();
    auto max = reduce<ReduceMaxOp>(c, *negated, axes, keepdims);
    if (failed(max))
      return failure();
    return c.create1<NegOp>({*max});
  }
};

struct ReduceSumSquare {
  static FailureOr<Value> build(NodeContext &c, ArrayRef<int64_t> axes,
                                bool keepdims) {
    auto square = c.create1<MulOp>({c.input(0), c.input(0)});
    if (failed(square))
      return failure();
    return reduce<ReduceSumOp>(c, *square, axes, keepdims);
  }
};

struct ReduceL1 {
  static FailureOr<Value> build(NodeContext &c, ArrayRef<int64_t> axes,
                                bool keepdims) {
    auto magnitude = c.create1<AbsOp>({c.input(0)});
    if (failed(magnitude))
      return failure();
    return reduce<ReduceSumOp>(c, *magnitude, axes, keepdims);
  }
};

struct ReduceLogSum {
  static FailureOr<Value> build(NodeContext &c, ArrayRef<int64_t> axes,
                                bool keepdims) {
    auto sum = reduce<ReduceSumOp>(c, c.input(0), axes, keepdims);
    if (failed(sum))
      return failure();
    return c.create1<LogOp>({*sum});
  }
};

struct ReduceLogSumExp {
  static FailureOr<Value> build(NodeContext &c, ArrayRef<int64_t> axes,
                                bool keepdims) {
    auto shift = reduce<ReduceMaxOp>(c, c.input(0), axes, /*keepdims=*/true);
    if (failed(shift))
      return failure();
    auto centred = c.create1<SubOp>({c.input(0), *shift});
    if (failed(centred))
      return failure();
    auto exp = c.create1<ExpOp>({*centred});
    if (failed(exp))
      return failure();
    auto sum = reduce<ReduceSumOp>(c, *exp, axes, keepdims);
    if (failed(sum))
      return failure();
    auto log = c.create1<LogOp>({*sum});
    if (failed(log))
      return failure();
    Value m = *shift;
    if (!keepdims) {
      auto dropped = reduce<ReduceMaxOp>(c, c.input(0), axes, false);
      if (failed(dropped))
        return failure();
      m = *dropped;
    }
    return c.create1<AddOp>({*log, m});
  }
};

/// ReduceProd as products of halves: the reduced axes moved last and
/// flattened into one axis of L, then while L > 1 its first half times its
/// second (an odd L gets a one concatenated). That is L - 1 exact
/// products in log2(L) muls, which train with mul's gradient, correct where
/// x holds zeros (unlike exp(sum(log |x|))).
struct ReduceProd {
  static FailureOr<Value> build(NodeContext &c, ArrayRef<int64_t> axesIn,
                                bool keepdims) {
    auto type = c.inputType(0);
    const int64_t rank = type.getRank();
    Type element = type.getElementType();
    SmallVector<int64_t> axes(axesIn);
    if (axes.empty())
      axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    SmallVector<int64_t> perm, rows, result;
    int64_t length = 1;
    for (int64_t d = 0; d < rank; ++d) {
      bool reduced = llvm::is_contained(axes, d);
      if (reduced) {
        length *= type.getDimSize(d);
      } else {
        perm.push_back(d);
        rows.push_back(type.getDimSize(d));
      }
      if (!reduced || keepdims)
        result.push_back(reduced ? 1 : type.getDimSize(d));
    }
    auto resultType = RankedTensorType::get(result, element);
    if (length == 0)
      return grad::splat(c.b, c.loc, resultType, 1.0);
    llvm::append_range(perm, axes);
    auto moved = c.create1<TransposeOp>(
        {c.input(0)}, {c.named("perm", c.b.getDenseI64ArrayAttr(perm))});
    if (failed(moved))
      return failure();
    SmallVector<int64_t> shape(rows);
    shape.push_back(length);
    Value x = c.createTyped<ReshapeOp>(RankedTensorType::get(shape, element),
                                       {*moved})[0];
    const int64_t last = rows.size();
    while (length > 1) {
      if (length % 2) {
        SmallVector<int64_t> oneShape(rows);
        oneShape.push_back(1);
        Value one = grad::splat(c.b, c.loc,
                                RankedTensorType::get(oneShape, element), 1.0);
        auto padded = c.create1<ConcatOp>(
            {x, one}, {c.named("axis", c.b.getI64IntegerAttr(last))});
        if (failed(padded))
          return failure();
        x = *padded;
        ++length;
      }
      SmallVector<int64_t> starts(last + 1, 0), ends(rows), steps(last + 1, 1);
      ends.push_back(length / 2);
      auto low = c.slice(x, starts, ends, steps);
      starts.back() = length / 2;
      ends.back() = length;
      auto high = c.slice(x, starts, ends, steps);
      if (failed(low) || failed(high))
        return failure();
      auto product = c.create1<MulOp>({*low, *high});
      if (failed(product))
        return failure();
      x = *product;
      length /= 2;
    }
    return c.createTyped<ReshapeOp>(resultType, {x})[0];
  }
};

template <typename Builder>
LogicalResult buildReduce(NodeContext &c, SmallVector<int64_t> axes) {
  int64_t rank = c.inputType(0).getRank();
  if (axes.empty() && c.getInt("noop_with_empty_axes", 0) != 0) {
    c.setResults(c.input(0));
    return success();
  }
  for (int64_t &a : axes) {
    auto n = c.axis(a, rank);
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  auto result = Builder::build(c, axes, c.getInt("keepdims", 1) != 0);
  if (failed(result))
    return failure();
  c.setResults(*result);
  return success();
}

template <typename Builder> LogicalResult importAxesAttr(NodeContext &c) {
  return buildReduce<Builder>(c, c.getInts("axes"));
}

template <typename Builder> LogicalResult importAxesInput(NodeContext &c) {
  SmallVector<int64_t> axes;
  if (c.hasInput(1)) {
    auto values = c.constantInts(1, "axes");
    if (failed(values))
      return failure();
    axes = *values;
  }
  return buildReduce<Builder>(c, axes);
}

template <typename Builder>
void addReduce(OpImporterTable &t, StringRef name, int64_t inputSince) {
  t.add(name, {1, importAxesAttr<Builder>});
  t.add(name, {inputSince, importAxesInput<Builder>, /*constantInputs=*/0b10});
}

/// The index along `axis` (of a tensor of `rank`) as an int64 constant
/// shaped to broadcast along it: 0, 1, ... or, with `negate`, 0, -1, ...
Value indexAlong(NodeContext &c, int64_t axis, int64_t rank, int64_t length,
                 bool negate) {
  SmallVector<int64_t> shape(rank, 1), positions;
  shape[axis] = length;
  for (int64_t i = 0; i < length; ++i)
    positions.push_back(negate ? -i : i);
  return c.constantI64(shape, positions);
}

/// The first (or with `last` the last) index along `axis` where x equals
/// its maximum (with `isMax`) or minimum.
FailureOr<Value> buildArg(NodeContext &c, Value x, bool isMax, int64_t axis,
                          bool keepdims, bool last) {
  auto type = cast<RankedTensorType>(x.getType());
  const int64_t length = type.getDimSize(axis);
  if (!isMax) {
    auto negated = c.create1<NegOp>({x});
    if (failed(negated))
      return failure();
    x = *negated;
  }
  auto extreme = reduce<ReduceMaxOp>(c, x, {axis}, /*keepdims=*/true);
  if (failed(extreme))
    return failure();
  auto hit = c.create1<EqualOp>({x, *extreme});
  if (failed(hit))
    return failure();
  // The first index is the max of -index (sentinel -length), the last the
  // max of index (sentinel -1).
  Value index = indexAlong(c, axis, type.getRank(), length, !last);
  Value sentinel =
      grad::scalar(c.b, c.loc, last ? -1.0 : -(double)length, c.b.getI64Type());
  auto candidates = c.create1<WhereOp>({*hit, index, sentinel});
  if (failed(candidates))
    return failure();
  auto picked = reduce<ReduceMaxOp>(c, *candidates, {axis}, keepdims);
  if (failed(picked) || last)
    return picked;
  return c.create1<NegOp>({*picked});
}

/// ArgMax (IsMax) or ArgMin: the first index along `axis` where x equals
/// its maximum (minimum), or the last with select_last_index. The indices
/// are an int64 constant along the axis; elsewhere a sentinel outside the
/// range loses the reduction that picks the index.
template <bool IsMax> LogicalResult importArg(NodeContext &c) {
  auto type = c.inputType(0);
  auto axis = c.axis(c.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  auto arg = buildArg(c, c.input(0), IsMax, *axis, c.getInt("keepdims", 1) != 0,
                      c.getInt("select_last_index", 0) != 0);
  if (failed(arg))
    return failure();
  c.setResults(*arg);
  return success();
}

/// Hardmax: 1 at the first maximum along `axis`, 0 elsewhere.
LogicalResult importHardmax(NodeContext &c) {
  auto type = c.inputType(0);
  auto axis = c.axis(c.getInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  auto arg = buildArg(c, c.input(0), /*isMax=*/true, *axis,
                      /*keepdims=*/true, /*last=*/false);
  if (failed(arg))
    return failure();
  Value index =
      indexAlong(c, *axis, type.getRank(), type.getDimSize(*axis), false);
  auto hot = c.create1<EqualOp>({index, *arg});
  if (failed(hot))
    return failure();
  Type element = type.getElementType();
  return c.produce<WhereOp>({*hot, grad::scalar(c.b, c.loc, 1.0, element),
                             grad::scalar(c.b, c.loc, 0.0, element)});
}

/// The largest k TopK unrolls into.
constexpr int64_t kMaxTopK = 256;

/// TopK(x, k): k rounds of argmax along `axis` over the elements not yet
/// taken (the first index among equal ones, as ONNX orders ties), each
/// value read back with a one-hot max, so that its gradient reaches exactly
/// the element taken. `largest = 0` ranks the negated input. The output is
/// sorted whatever `sorted` says (any order is allowed when it is 0).
LogicalResult importTopK(NodeContext &c) {
  auto type = c.inputType(0);
  auto axis = c.axis(c.getInt("axis", -1), type.getRank());
  if (failed(axis))
    return failure();
  auto kValues = c.constantInts(1, "k");
  if (failed(kValues))
    return failure();
  if (kValues->size() != 1)
    return c.emitError() << "k must hold one value, got " << kValues->size();
  const int64_t k = kValues->front(), length = type.getDimSize(*axis);
  if (k < 1 || k > length)
    return c.emitError() << "k must be in [1, " << length << "], got " << k;
  if (k > kMaxTopK)
    return c.unsupported("k = " + Twine(k) + " (TopK unrolls at most " +
                         Twine(kMaxTopK) + " rounds)");

  Value x = c.input(0);
  Value ranked = x;
  if (c.getInt("largest", 1) == 0) {
    auto negated = c.create1<NegOp>({x});
    if (failed(negated))
      return failure();
    ranked = *negated;
  }
  Type element = type.getElementType();
  double lowest = isa<FloatType>(element)
                      ? -std::numeric_limits<double>::infinity()
                      : -std::ldexp(1.0, element.getIntOrFloatBitWidth() - 1);
  Value floor = grad::scalar(c.b, c.loc, lowest, element);
  Value index = indexAlong(c, *axis, type.getRank(), length, false);
  SmallVector<Value> values, indices;
  Value taken;
  for (int64_t round = 0; round < k; ++round) {
    // The elements taken rank lowest; among equal ones, an untaken one
    // wins (a taken element equal to the floor can still tie).
    Value candidates = ranked;
    if (taken) {
      auto masked = c.create1<WhereOp>({taken, floor, ranked});
      if (failed(masked))
        return failure();
      candidates = *masked;
    }
    auto extreme = reduce<ReduceMaxOp>(c, candidates, {*axis}, true);
    if (failed(extreme))
      return failure();
    auto hit = c.create1<EqualOp>({candidates, *extreme});
    if (failed(hit))
      return failure();
    if (taken) {
      auto untaken = c.create1<WhereOp>(
          {taken, grad::scalar(c.b, c.loc, 0.0, c.b.getI1Type()), *hit});
      if (failed(untaken))
        return failure();
      hit = untaken;
    }
    // The first index among the hits: the max of -index, sentinel -length.
    Value negIndex = indexAlong(c, *axis, type.getRank(), length, true);
    auto picked = c.create1<WhereOp>(
        {*hit, negIndex,
         grad::scalar(c.b, c.loc, -(double)length, c.b.getI64Type())});
    if (failed(picked))
      return failure();
    auto best = reduce<ReduceMaxOp>(c, *picked, {*axis}, true);
    if (failed(best))
      return failure();
    auto at = c.create1<NegOp>({*best});
    if (failed(at))
      return failure();
    auto hot = c.create1<EqualOp>({index, *at});
    if (failed(hot))
      return failure();
    auto only = c.create1<WhereOp>({*hot, x, floor});
    if (failed(only))
      return failure();
    auto value = reduce<ReduceMaxOp>(c, *only, {*axis}, true);
    if (failed(value))
      return failure();
    values.push_back(*value);
    indices.push_back(*at);
    if (!taken) {
      taken = *hot;
    } else {
      auto either = c.create1<WhereOp>({taken, taken, *hot});
      if (failed(either))
        return failure();
      taken = *either;
    }
  }
  auto concat = [&](ArrayRef<Value> parts) -> FailureOr<Value> {
    if (parts.size() == 1)
      return parts.front();
    return c.create1<ConcatOp>(parts,
                               {c.named("axis", c.b.getI64IntegerAttr(*axis))});
  };
  auto v = concat(values), i = concat(indices);
  if (failed(v) || failed(i))
    return failure();
  c.setResults({*v, *i});
  return success();
}

/// The largest axis CumSum expands into its L x L products.
constexpr int64_t kMaxCumSumLength = 4096;

/// CumSum(x, axis): out[.., i, ..] = sum over j of x[.., j, ..] * T[j, i]
/// with T[j, i] = 1 where j <= i (j < i exclusive; j >= i, j > i reversed):
/// x with an axis inserted after `axis`, times T broadcast, summed over
/// `axis`. Integers sum exactly; floats accumulate in FP32 (reduce_sum).
LogicalResult importCumSum(NodeContext &c) {
  auto type = c.inputType(0);
  auto axisValue = c.constantScalar(1, "axis");
  if (failed(axisValue))
    return failure();
  auto axis = c.axis(static_cast<int64_t>(*axisValue), type.getRank());
  if (failed(axis))
    return failure();
  const int64_t length = type.getDimSize(*axis), rank = type.getRank();
  if (length > kMaxCumSumLength)
    return c.unsupported("an axis of " + Twine(length) +
                         " elements (CumSum expands at most " +
                         Twine(kMaxCumSumLength) + " into its products)");
  bool exclusive = c.getInt("exclusive", 0) != 0;
  bool reverse = c.getInt("reverse", 0) != 0;
  SmallVector<int64_t> shape(rank + 1, 1);
  shape[*axis] = length;
  shape[*axis + 1] = length;
  Type element = type.getElementType();
  SmallVector<double> triangle;
  for (int64_t j = 0; j < length; ++j)
    for (int64_t i = 0; i < length; ++i) {
      bool in =
          reverse ? (exclusive ? j > i : j >= i) : (exclusive ? j < i : j <= i);
      triangle.push_back(in ? 1.0 : 0.0);
    }
  Value mask =
      ConstantOp::create(
          c.b, c.loc,
          DenseElementsAttr::get(RankedTensorType::get(shape, c.b.getF32Type()),
                                 ArrayRef<float>(SmallVector<float>(
                                     triangle.begin(), triangle.end()))))
          .getResult();
  if (element != c.b.getF32Type())
    mask =
        c.createTyped<CastOp>(RankedTensorType::get(shape, element), {mask})[0];
  SmallVector<int64_t> expanded(type.getShape());
  expanded.insert(expanded.begin() + *axis + 1, 1);
  Value column = c.createTyped<ReshapeOp>(
      RankedTensorType::get(expanded, element), {c.input(0)})[0];
  auto products = c.create1<MulOp>({column, mask});
  if (failed(products))
    return failure();
  auto sum = reduce<ReduceSumOp>(c, *products, {*axis}, /*keepdims=*/false);
  if (failed(sum))
    return failure();
  c.setResults(*sum);
  return success();
}

LogicalResult importGlobalMaxPool(NodeContext &c) {
  if (c.inputType(0).getRank() < 3)
    return c.emitError() << "input " << c.inputType(0)
                         << " has no spatial axes (rank < 3)";
  SmallVector<int64_t> axes;
  for (int64_t a = 2; a < c.inputType(0).getRank(); ++a)
    axes.push_back(a);
  auto result = reduce<ReduceMaxOp>(c, c.input(0), axes, /*keepdims=*/true);
  if (failed(result))
    return failure();
  c.setResults(*result);
  return success();
}

} // namespace

void registerReductionImporters(OpImporterTable &t) {
  addReduce<Reduction<ReduceSumOp>>(t, "ReduceSum", 13);
  addReduce<Reduction<ReduceMeanOp>>(t, "ReduceMean", 18);
  addReduce<Reduction<ReduceMaxOp>>(t, "ReduceMax", 18);
  addReduce<Reduction<ReduceL2Op>>(t, "ReduceL2", 18);
  addReduce<ReduceMin>(t, "ReduceMin", 18);
  addReduce<ReduceSumSquare>(t, "ReduceSumSquare", 18);
  addReduce<ReduceL1>(t, "ReduceL1", 18);
  addReduce<ReduceLogSum>(t, "ReduceLogSum", 18);
  addReduce<ReduceLogSumExp>(t, "ReduceLogSumExp", 18);
  addReduce<ReduceProd>(t, "ReduceProd", 18);
  t.add("ArgMax", {1, importArg<true>});
  t.add("ArgMin", {1, importArg<false>});
  t.add("GlobalMaxPool", {1, importGlobalMaxPool});
  t.add("Hardmax", {13, importHardmax});
  t.add("CumSum", {11, importCumSum, /*constantInputs=*/0b10});
  t.add("TopK", {10, importTopK, /*constantInputs=*/0b10});
}

} // namespace mpt::onnx_import
