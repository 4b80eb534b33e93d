//===- ShapeImport.cpp - constants, casts, shape and data movement --------===//
//
// ONNX passes shapes, axes and sizes as tensors. The importer folds the
// exporters' shape arithmetic as it builds (NodeContext::create folds each
// op), reads the resulting constants, and emits ops whose result types are
// static.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"
#include "mpt/Dialect/MPT/IR/GradientUtils.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace mpt::onnx_import {
namespace {

RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

LogicalResult importConstant(NodeContext &c) {
  DenseElementsAttr value;
  Builder &b = c.b;
  if (c.hasAttr("value")) {
    auto t = c.getTensor("value");
    if (failed(t))
      return failure();
    value = *t;
  } else if (c.hasAttr("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                   c.getFloat("value_float", 0));
  } else if (c.hasAttr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                                   c.getInt("value_int", 0));
  } else if (const auto *a = c.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getF32Type()),
        ArrayRef(v));
  } else if (c.hasAttr("value_ints")) {
    SmallVector<int64_t> v = c.getInts("value_ints");
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, b.getI64Type()),
        ArrayRef(v));
  } else {
    return c.unsupported("a Constant that is not a dense numeric tensor");
  }
  c.setResults(ConstantOp::create(c.b, c.loc, value).getResult());
  return success();
}

LogicalResult importIdentity(NodeContext &c) {
  c.setResults(c.input(0));
  return success();
}

LogicalResult importCast(NodeContext &c) {
  int64_t to = c.getInt("to", 0);
  Type element = convertElementType(to, c.b.getContext());
  if (!element)
    return c.unsupported(Twine("cast to ") + elementTypeName(to));
  if (c.opset >= 19 && c.getInt("saturate", 1) == 0 &&
      isa<Float8E4M3FNType, Float8E5M2Type>(element))
    return c.unsupported("non-saturating casts to FP8");
  c.setResults(c.createTyped<CastOp>(
      withShape(c.inputType(0), c.inputType(0).getShape()).clone(element),
      {c.input(0)}));
  return success();
}

/// Dropout-12+: `ratio` and `training_mode` are inputs, which must be
/// compile-time constants; training_mode = true imports a training-mode
/// dropout, to which --build-training-step adds the seed and step.
LogicalResult importDropout(NodeContext &c) {
  float ratio = 0.5f;
  bool training = false;
  if (c.hasInput(1)) {
    auto r = c.constantScalar(1, "ratio");
    if (failed(r))
      return failure();
    ratio = static_cast<float>(*r);
  }
  if (c.hasInput(2)) {
    auto t = c.constantScalar(2, "training_mode");
    if (failed(t))
      return failure();
    training = *t != 0;
  }
  if (ratio < 0.0f || ratio >= 1.0f)
    return c.emitError() << "ratio must be in [0, 1), got " << ratio;
  SmallVector<NamedAttribute> attrs = {
      c.named("ratio", c.b.getF32FloatAttr(ratio)),
      c.named("training", c.b.getBoolAttr(training))};
  // ONNX's `seed` attribute is not used: a training-mode dropout draws from
  // the train_step's `train.seed` state (--build-training-step), so one
  // seed sets every dropout of the model.
  auto type = c.inputType(0);
  c.setResults(c.createTyped<DropoutOp>({type, type.clone(c.b.getI1Type())},
                                        {c.input(0)}, attrs));
  return success();
}

/// Dropout-7 to -11: an inference-only op with `ratio` as an attribute.
LogicalResult importDropout7(NodeContext &c) {
  auto type = c.inputType(0);
  c.setResults(c.createTyped<DropoutOp>(
      {type, type.clone(c.b.getI1Type())}, {c.input(0)},
      {c.named("ratio", c.b.getF32FloatAttr(c.getFloat("ratio", 0.5f)))}));
  return success();
}

LogicalResult importReshape(NodeContext &c) {
  auto shape = c.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  auto input = c.inputType(0);
  bool allowZero = c.getInt("allowzero", 0) != 0;
  SmallVector<int64_t> dims;
  int64_t known = 1, inferAt = -1;
  for (auto [i, d] : llvm::enumerate(*shape)) {
    if (d == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= input.getRank())
        return c.emitError()
               << "shape entry " << i << " is 0 but the input has no such axis";
      d = input.getDimSize(i);
    }
    if (d == -1) {
      if (inferAt >= 0)
        return c.emitError() << "shape has more than one -1";
      inferAt = i;
      dims.push_back(1);
      continue;
    }
    if (d < -1)
      return c.emitError() << "shape entry " << i << " is " << d;
    dims.push_back(d);
    if (llvm::MulOverflow(known, d, known))
      return c.emitError() << "cannot reshape " << input
                           << ": the shape's element count overflows int64";
  }
  if (inferAt >= 0) {
    if (known == 0 || input.getNumElements() % known != 0)
      return c.emitError() << "cannot infer the -1 in shape for " << input;
    dims[inferAt] = input.getNumElements() / known;
  }
  if (ShapedType::getNumElements(dims) != input.getNumElements())
    return c.emitError() << "cannot reshape " << input << " into "
                         << withShape(input, dims);
  c.setResults(c.createTyped<ReshapeOp>(withShape(input, dims), {c.input(0)}));
  return success();
}

LogicalResult importTranspose(NodeContext &c) {
  SmallVector<int64_t> perm = c.getInts("perm");
  int64_t rank = c.inputType(0).getRank();
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  return c.produce<TransposeOp>(
      {c.input(0)}, {c.named("perm", c.b.getDenseI64ArrayAttr(perm))});
}

LogicalResult importFlatten(NodeContext &c) {
  int64_t rank = c.inputType(0).getRank();
  int64_t axis = c.getInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return c.emitError() << "axis " << c.getInt("axis", 1)
                         << " is out of range for rank " << rank;
  return c.produce<FlattenOp>({c.input(0)},
                              {c.named("axis", c.b.getI64IntegerAttr(axis))});
}

/// Squeeze/Unsqueeze axes: an attribute before opset 13, an input from 13.
FailureOr<SmallVector<int64_t>> squeezeAxes(NodeContext &c) {
  if (c.opset < 13)
    return c.getInts("axes");
  if (!c.hasInput(1))
    return SmallVector<int64_t>{};
  return c.constantInts(1, "axes");
}

LogicalResult importSqueeze(NodeContext &c) {
  auto axes = squeezeAxes(c);
  if (failed(axes))
    return failure();
  auto input = c.inputType(0);
  if (axes->empty()) {
    for (int64_t i = 0; i < input.getRank(); ++i)
      if (input.getDimSize(i) == 1)
        axes->push_back(i);
  }
  for (int64_t &a : *axes) {
    auto n = c.axis(a, input.getRank());
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(*axes);
  return c.produce<SqueezeOp>(
      {c.input(0)}, {c.named("axes", c.b.getDenseI64ArrayAttr(*axes))});
}

LogicalResult importUnsqueeze(NodeContext &c) {
  auto axes = squeezeAxes(c);
  if (failed(axes))
    return failure();
  int64_t outRank = c.inputType(0).getRank() + axes->size();
  for (int64_t &a : *axes) {
    auto n = c.axis(a, outRank);
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(*axes);
  return c.produce<UnsqueezeOp>(
      {c.input(0)}, {c.named("axes", c.b.getDenseI64ArrayAttr(*axes))});
}

LogicalResult importConcat(NodeContext &c) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i))
      inputs.push_back(c.input(i));
  if (inputs.empty())
    return c.emitError() << "has no inputs";
  auto axis = c.axis(c.getInt("axis", 0), c.inputType(0).getRank());
  if (failed(axis))
    return failure();
  return c.produce<ConcatOp>(inputs,
                             {c.named("axis", c.b.getI64IntegerAttr(*axis))});
}

LogicalResult importSplit(NodeContext &c) {
  auto input = c.inputType(0);
  auto axis = c.axis(c.getInt("axis", 0), input.getRank());
  if (failed(axis))
    return failure();
  int64_t dim = input.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  if (c.opset < 13) {
    sizes = c.getInts("split");
  } else if (c.hasInput(1)) {
    auto s = c.constantInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  if (sizes.empty()) {
    int64_t pieces = c.opset >= 18 && c.hasAttr("num_outputs")
                         ? c.getInt("num_outputs", 1)
                         : c.numOutputs();
    if (pieces < 1)
      return c.emitError() << "needs at least one output";
    // Equal pieces; from opset 18 the last may be smaller.
    int64_t chunk = (dim + pieces - 1) / pieces;
    if (c.opset < 18 && dim % pieces != 0)
      return c.emitError() << "cannot split axis of size " << dim << " into "
                           << pieces << " equal pieces";
    for (int64_t i = 0, left = dim; i < pieces; ++i, left -= chunk)
      sizes.push_back(std::min(chunk, std::max<int64_t>(left, 0)));
  }
  return c.produce<SplitOp>(
      {c.input(0)}, {c.named("axis", c.b.getI64IntegerAttr(*axis)),
                     c.named("sizes", c.b.getDenseI64ArrayAttr(sizes))});
}

/// Normalises ONNX slice parameters into one clamped entry per axis.
LogicalResult buildSlice(NodeContext &c, ArrayRef<int64_t> starts,
                         ArrayRef<int64_t> ends, SmallVector<int64_t> axes,
                         SmallVector<int64_t> steps) {
  auto input = c.inputType(0);
  int64_t rank = input.getRank();
  if (axes.empty())
    for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return c.emitError() << "starts, ends, axes and steps differ in length";
  SmallVector<int64_t> s(rank, 0), e(input.getShape()), st(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto axis = c.axis(axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return c.emitError() << "axis " << *axis << " is sliced twice";
    seen[*axis] = true;
    int64_t dim = input.getDimSize(*axis), step = steps[i];
    if (step == 0)
      return c.emitError() << "step of axis " << *axis << " is 0";
    int64_t lo = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t hi = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      lo = std::clamp<int64_t>(lo, 0, dim);
      hi = std::clamp<int64_t>(hi, lo, dim);
    } else {
      lo = std::clamp<int64_t>(lo, 0, std::max<int64_t>(dim - 1, 0));
      hi = std::clamp<int64_t>(hi, -1, lo);
      if (dim == 0)
        hi = lo = 0, step = 1;
    }
    s[*axis] = lo;
    e[*axis] = hi;
    st[*axis] = step;
  }
  auto sliced = c.slice(c.input(0), s, e, st);
  if (failed(sliced))
    return failure();
  c.setResults(*sliced);
  return success();
}

/// Pad as the ops MPT has, so that it trains and runs on every backend
/// with their gradients: negative pads crop first (one slice), then each
/// padded axis becomes a concat of [before, x, after], where the pieces
/// are a constant (mode constant), the edge slice expanded (edge), or the
/// mirrored slice without the edge (reflect, a slice of step -1).
LogicalResult buildPad(NodeContext &c, StringRef mode, ArrayRef<int64_t> pads,
                       ArrayRef<int64_t> axesIn, double value) {
  auto type = c.inputType(0);
  int64_t rank = type.getRank();
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return c.unsupported("mode '" + mode +
                         "' (constant, reflect and edge are)");
  SmallVector<int64_t> axes;
  if (axesIn.empty())
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  for (int64_t a : axesIn) {
    auto axis = c.axis(a, rank);
    if (failed(axis))
      return failure();
    axes.push_back(*axis);
  }
  if (pads.size() != 2 * axes.size())
    return c.emitError() << "pads has " << pads.size() << " values; "
                         << 2 * axes.size() << " expected";
  SmallVector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    before[axes[i]] = pads[i];
    after[axes[i]] = pads[i + axes.size()];
  }

  Value x = c.input(0);
  ArrayRef<int64_t> shape = type.getShape();
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; })) {
    SmallVector<int64_t> s(rank), e(rank), st(rank, 1);
    for (int64_t d = 0; d < rank; ++d) {
      s[d] = std::min(std::max<int64_t>(-before[d], 0), shape[d]);
      e[d] = std::max(shape[d] - std::max<int64_t>(-after[d], 0), s[d]);
    }
    auto cropped = c.slice(x, s, e, st);
    if (failed(cropped))
      return failure();
    x = *cropped;
  }

  Type element = type.getElementType();
  for (int64_t d = 0; d < rank; ++d) {
    int64_t lo = std::max<int64_t>(before[d], 0);
    int64_t hi = std::max<int64_t>(after[d], 0);
    if (lo == 0 && hi == 0)
      continue;
    auto cur = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> curShape(cur.getShape());
    int64_t dim = curShape[d];
    if (mode != "constant" && dim == 0)
      return c.emitError() << "cannot pad an empty axis " << d << " in mode '"
                           << mode << "'";
    if (mode == "reflect" && std::max(lo, hi) > dim - 1)
      return c.unsupported(
          "reflect pads of more than the axis size - 1 (axis " + Twine(d) +
          ": size " + Twine(dim) + ")");
    // The piece of `count` elements before (or after) x along d.
    auto piece = [&](int64_t count, bool first) -> FailureOr<Value> {
      SmallVector<int64_t> pieceShape = curShape;
      pieceShape[d] = count;
      auto pieceType = RankedTensorType::get(pieceShape, element);
      if (mode == "constant")
        return grad::splat(c.b, c.loc, pieceType, value);
      SmallVector<int64_t> s(rank, 0), e(curShape), st(rank, 1);
      if (mode == "edge") {
        s[d] = first ? 0 : dim - 1;
        e[d] = s[d] + 1;
        auto edge = c.slice(x, s, e, st);
        if (failed(edge))
          return failure();
        return c.createTyped<ExpandOp>(pieceType, {*edge}).front();
      }
      // reflect: x[count], ..., x[1] before; x[dim-2], ..., x[dim-1-count]
      // after.
      s[d] = first ? count : dim - 2;
      e[d] = s[d] - count;
      st[d] = -1;
      return c.slice(x, s, e, st);
    };
    SmallVector<Value> parts;
    if (lo > 0) {
      auto p = piece(lo, true);
      if (failed(p))
        return failure();
      parts.push_back(*p);
    }
    parts.push_back(x);
    if (hi > 0) {
      auto p = piece(hi, false);
      if (failed(p))
        return failure();
      parts.push_back(*p);
    }
    auto joined =
        c.create1<ConcatOp>(parts, {c.named("axis", c.b.getI64IntegerAttr(d))});
    if (failed(joined))
      return failure();
    x = *joined;
  }
  c.setResults(x);
  return success();
}

/// Pad-2: pads and value are attributes.
LogicalResult importPad2(NodeContext &c) {
  return buildPad(c, c.getString("mode", "constant"), c.getInts("pads"), {},
                  c.getFloat("value", 0.0f));
}

/// Pad-11+: pads, constant_value and (from 18) axes are constant inputs.
LogicalResult importPad11(NodeContext &c) {
  auto pads = c.constantInts(1, "pads");
  if (failed(pads))
    return failure();
  double value = 0;
  if (c.hasInput(2)) {
    auto v = c.constantScalar(2, "constant_value");
    if (failed(v))
      return failure();
    value = *v;
  }
  SmallVector<int64_t> axes;
  if (c.hasInput(3)) {
    auto a = c.constantInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  return buildPad(c, c.getString("mode", "constant"), *pads, axes, value);
}

LogicalResult importSlice1(NodeContext &c) {
  return buildSlice(c, c.getInts("starts"), c.getInts("ends"),
                    c.getInts("axes"), {});
}

LogicalResult importSlice10(NodeContext &c) {
  auto starts = c.constantInts(1, "starts");
  auto ends = c.constantInts(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (c.hasInput(3)) {
    auto a = c.constantInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  if (c.hasInput(4)) {
    auto s = c.constantInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  }
  return buildSlice(c, *starts, *ends, axes, steps);
}

LogicalResult importGather(NodeContext &c) {
  auto axis = c.axis(c.getInt("axis", 0), c.inputType(0).getRank());
  if (failed(axis))
    return failure();
  return c.produce<GatherOp>({c.input(0), c.input(1)},
                             {c.named("axis", c.b.getI64IntegerAttr(*axis))});
}

LogicalResult importExpand(NodeContext &c) {
  auto shape = c.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  auto input = c.inputType(0);
  auto out = broadcastShapes(input.getShape(), *shape);
  if (!out || !checkShape(*out).empty())
    return c.emitError() << "cannot broadcast " << input << " with shape ["
                         << llvm::make_range(shape->begin(), shape->end())
                         << "]"
                         << (out ? ": in the result, " + checkShape(*out) : "");
  c.setResults(c.createTyped<ExpandOp>(withShape(input, *out), {c.input(0)}));
  return success();
}

LogicalResult importTrilu(NodeContext &c) {
  int64_t k = 0;
  if (c.hasInput(1)) {
    auto v = c.constantScalar(1, "k");
    if (failed(v))
      return failure();
    k = static_cast<int64_t>(*v);
  }
  return c.produce<TriluOp>(
      {c.input(0)},
      {c.named("upper", c.b.getBoolAttr(c.getInt("upper", 1) != 0)),
       c.named("k", c.b.getI64IntegerAttr(k))});
}

LogicalResult importRange(NodeContext &c) {
  auto start = c.constantScalar(0, "start");
  auto limit = c.constantScalar(1, "limit");
  auto delta = c.constantScalar(2, "delta");
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  if (*delta == 0)
    return c.emitError() << "delta is 0";
  const double steps = std::ceil((*limit - *start) / *delta);
  if (!(steps < 0x1p62)) // also NaN
    return c.emitError() << "start " << *start << ", limit " << *limit
                         << " and delta " << *delta << " give " << steps
                         << " elements";
  int64_t count = std::max<int64_t>(0, static_cast<int64_t>(steps));
  auto type = RankedTensorType::get({count}, c.inputType(0).getElementType());
  c.setResults(
      c.createTyped<RangeOp>(type, {c.input(0), c.input(1), c.input(2)}));
  return success();
}

LogicalResult importShape(NodeContext &c) {
  int64_t rank = c.inputType(0).getRank();
  auto clampDim = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t start = clampDim(c.getInt("start", 0));
  int64_t end = clampDim(c.getInt("end", rank));
  end = std::max(start, end);
  return c.produce<ShapeOp>({c.input(0)},
                            {c.named("start", c.b.getI64IntegerAttr(start)),
                             c.named("end", c.b.getI64IntegerAttr(end))});
}

/// Size: the element count, a constant (shapes are static).
LogicalResult importSize(NodeContext &c) {
  auto type = RankedTensorType::get({}, c.b.getI64Type());
  c.setResults(ConstantOp::create(c.b, c.loc,
                                  DenseElementsAttr::get(
                                      type, c.inputType(0).getNumElements()))
                   .getResult());
  return success();
}

/// EyeLike: a constant of x's 2-d shape (x's values are not read), ones on
/// the k-th diagonal and zeros elsewhere, of x's element type or `dtype`.
LogicalResult importEyeLike(NodeContext &c) {
  auto type = c.inputType(0);
  if (type.getRank() != 2)
    return c.emitError() << "input " << type << " is not 2-d";
  Type element = type.getElementType();
  if (c.hasAttr("dtype")) {
    int64_t dtype = c.getInt("dtype", 0);
    element = convertElementType(dtype, c.b.getContext());
    if (!element)
      return c.unsupported(Twine("dtype ") + elementTypeName(dtype));
  }
  auto valueOf = [&](bool one) -> Attribute {
    if (auto f = dyn_cast<FloatType>(element))
      return FloatAttr::get(f, one ? 1.0 : 0.0);
    return IntegerAttr::get(element, one ? 1 : 0);
  };
  const int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  const int64_t k = c.getInt("k", 0);
  Attribute zero = valueOf(false), one = valueOf(true);
  SmallVector<Attribute> values(rows * cols, zero);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols)
      values[i * cols + i + k] = one;
  c.setResults(ConstantOp::create(
                   c.b, c.loc,
                   DenseElementsAttr::get(
                       RankedTensorType::get({rows, cols}, element), values))
                   .getResult());
  return success();
}

/// Tile(x, repeats): x (d0, d1, ...) reshaped to (1, d0, 1, d1, ...),
/// expanded to (r0, d0, r1, d1, ...) and reshaped to (r0 d0, r1 d1, ...):
/// the copies of each axis outermost, as Tile orders them; the gradient is
/// expand's, a sum over the copies.
LogicalResult importTile(NodeContext &c) {
  auto repeats = c.constantInts(1, "repeats");
  if (failed(repeats))
    return failure();
  auto type = c.inputType(0);
  if (static_cast<int64_t>(repeats->size()) != type.getRank())
    return c.emitError() << "repeats has " << repeats->size()
                         << " values for an input of rank " << type.getRank();
  SmallVector<int64_t> split, expanded, out;
  for (auto [d, r] : llvm::zip_equal(type.getShape(), *repeats)) {
    if (r < 0)
      return c.emitError() << "repeats holds " << r << " (negative)";
    split.append({1, d});
    expanded.append({r, d});
    out.push_back(r * d);
  }
  if (std::string bad = checkShape(out); !bad.empty())
    return c.emitError() << "the tiled shape is bad: " << bad;
  Value v = c.createTyped<ReshapeOp>(withShape(type, split), {c.input(0)})[0];
  v = c.createTyped<ExpandOp>(withShape(type, expanded), {v})[0];
  c.setResults(c.createTyped<ReshapeOp>(withShape(type, out), {v}));
  return success();
}

/// x reshaped to `split`, transposed by `perm`, reshaped to `out`.
LogicalResult rearrange(NodeContext &c, ArrayRef<int64_t> split,
                        ArrayRef<int64_t> perm, ArrayRef<int64_t> out) {
  auto type = c.inputType(0);
  Value v = c.createTyped<ReshapeOp>(withShape(type, split), {c.input(0)})[0];
  auto moved = c.create1<TransposeOp>(
      {v}, {c.named("perm", c.b.getDenseI64ArrayAttr(perm))});
  if (failed(moved))
    return failure();
  c.setResults(c.createTyped<ReshapeOp>(withShape(type, out), {*moved}));
  return success();
}

/// DepthToSpace (N, C, H, W) -> (N, C / b^2, H b, W b): blocks of the
/// channels, depth-column-row (DCR, the default) or column-row-depth (CRD)
/// ordered, move into the spatial axes.
LogicalResult importDepthToSpace(NodeContext &c) {
  auto type = c.inputType(0);
  int64_t b = c.getInt("blocksize", 0);
  std::string mode = c.getString("mode", "DCR");
  if (type.getRank() != 4)
    return c.emitError() << "input " << type << " is not 4-d (N, C, H, W)";
  if (mode != "DCR" && mode != "CRD")
    return c.emitError() << "mode must be DCR or CRD, not '" << mode << "'";
  int64_t n = type.getDimSize(0), ch = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  if (b < 1 || ch % (b * b) != 0)
    return c.emitError() << "blocksize " << b << " does not divide the " << ch
                         << " channels into blocks of b^2";
  int64_t d = ch / (b * b);
  SmallVector<int64_t> out = {n, d, h * b, w * b};
  if (mode == "DCR")
    return rearrange(c, {n, b, b, d, h, w}, {0, 3, 4, 1, 5, 2}, out);
  return rearrange(c, {n, d, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out);
}

/// SpaceToDepth, DepthToSpace's DCR inverse.
LogicalResult importSpaceToDepth(NodeContext &c) {
  auto type = c.inputType(0);
  int64_t b = c.getInt("blocksize", 0);
  if (type.getRank() != 4)
    return c.emitError() << "input " << type << " is not 4-d (N, C, H, W)";
  int64_t n = type.getDimSize(0), ch = type.getDimSize(1),
          h = type.getDimSize(2), w = type.getDimSize(3);
  if (b < 1 || h % b != 0 || w % b != 0)
    return c.emitError() << "blocksize " << b << " does not divide the " << h
                         << "x" << w << " spatial axes";
  return rearrange(c, {n, ch, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4},
                   {n, ch * b * b, h / b, w / b});
}

LogicalResult importConstantOfShape(NodeContext &c) {
  auto shape = c.constantInts(0, "shape");
  if (failed(shape))
    return failure();
  Attribute value = c.b.getF32FloatAttr(0.0f);
  if (c.hasAttr("value")) {
    auto t = c.getTensor("value");
    if (failed(t))
      return failure();
    if (t->getNumElements() != 1)
      return c.emitError() << "value must hold one element";
    value = t->getSplatValue<Attribute>();
  }
  if (std::string bad = checkShape(*shape); !bad.empty())
    return c.emitError() << "bad shape ["
                         << llvm::make_range(shape->begin(), shape->end())
                         << "]: " << bad;
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(value).getType());
  c.setResults(
      c.createTyped<ConstantOfShapeOp>(type, {}, {c.named("value", value)}));
  return success();
}

} // namespace

void registerShapeImporters(OpImporterTable &t) {
  t.add("Constant", {1, importConstant});
  t.add("Identity", {1, importIdentity});
  t.add("Cast", {6, importCast});
  t.add("Dropout", {7, importDropout7});
  t.add("Dropout", {12, importDropout, /*constantInputs=*/0b110});
  t.add("Reshape", {5, importReshape, /*constantInputs=*/0b10});
  t.add("Transpose", {1, importTranspose});
  t.add("Flatten", {1, importFlatten});
  t.add("Squeeze", {1, importSqueeze});
  t.add("Squeeze", {13, importSqueeze, 0b10});
  t.add("Unsqueeze", {1, importUnsqueeze});
  t.add("Unsqueeze", {13, importUnsqueeze, 0b10});
  t.add("Concat", {4, importConcat});
  t.add("Split", {2, importSplit});
  t.add("Split", {13, importSplit, 0b10});
  t.add("Slice", {1, importSlice1});
  t.add("Pad", {2, importPad2});
  t.add("Pad", {11, importPad11, /*constantInputs=*/0b1110});
  t.add("Slice", {10, importSlice10, 0b11110});
  t.add("Gather", {1, importGather});
  t.add("Expand", {8, importExpand, 0b10});
  t.add("Trilu", {14, importTrilu, 0b10});
  t.add("Range", {11, importRange, 0b111});
  t.add("Shape", {1, importShape});
  t.add("ConstantOfShape", {9, importConstantOfShape, 0b1});
  t.add("Size", {1, importSize});
  t.add("EyeLike", {9, importEyeLike});
  t.add("Tile", {6, importTile, /*constantInputs=*/0b10});
  t.add("DepthToSpace", {1, importDepthToSpace});
  t.add("SpaceToDepth", {1, importSpaceToDepth});
}

} // namespace mpt::onnx_import
