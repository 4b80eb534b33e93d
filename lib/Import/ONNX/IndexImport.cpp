//===- IndexImport.cpp - gathers and scatters with constant indices -------===//
//
// GatherElements, GatherND, ScatterElements (and opset 9's Scatter),
// ScatterND and OneHot as the ops MPT has, so that they train and run on
// every backend with those ops' gradients:
//
//   - GatherElements and GatherND, with any indices: a gather of the
//     flattened data (its first k axes, for GatherND) at flat positions
//     computed from the indices with integer arithmetic;
//   - the scatters, when their indices are compile-time constants: the
//     importer computes, for each element of the result, which element of
//     the flattened updates it takes (a constant int64 map), gathers them,
//     gather(reshape(updates, [n]), map), and where(written, that, data)
//     keeps the elements that no index writes;
//   - OneHot: where(index == position, on, off) against a constant of the
//     positions 0..depth-1.
//
// This is how exporters write slice assignment (`y[..., 1:] = x[..., :-1]`
// in T5's shift of the labels: ScatterND over indices built from shapes,
// which the importer folds). A scatter's indices that depend on data are
// reported as such; so is a reduction other than "none".
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

using namespace mlir;

namespace mpt::onnx_import {
namespace {

/// The largest result a constant map is built for (its int64 map is 8 bytes
/// an element in the plan's constants).
constexpr int64_t kMaxMappedElements = int64_t(1) << 24;

RankedTensorType withShape(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

Value flat(NodeContext &c, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return c.createTyped<ReshapeOp>(withShape(type, {type.getNumElements()}),
                                  {v})[0];
}

/// A 0-d int64 constant.
Value i64Scalar(NodeContext &c, int64_t v) { return c.constantI64({}, {v}); }

/// Input `i` as int64 (indices may be int32, or any numeric type).
Value indicesAsI64(NodeContext &c, unsigned i) {
  auto type = c.inputType(i);
  if (type.getElementType() == c.b.getI64Type())
    return c.input(i);
  return c.createTyped<CastOp>(type.clone(c.b.getI64Type()), {c.input(i)})[0];
}

/// Indices along an axis of `dim` elements, computed at run time: `index`
/// with the negative ones counted from the end, and whether each lies
/// outside [-dim, dim).
struct WrappedIndex {
  Value index, outside;
};
FailureOr<WrappedIndex> wrapIndex(NodeContext &c, Value index, int64_t dim) {
  Value zero = i64Scalar(c, 0), size = i64Scalar(c, dim);
  auto negative = c.create1<LessOp>({index, zero});
  auto wrapped = c.create1<AddOp>({index, size});
  if (failed(negative) || failed(wrapped))
    return failure();
  auto normal = c.create1<WhereOp>({*negative, *wrapped, index});
  if (failed(normal))
    return failure();
  auto below = c.create1<LessOp>({*normal, zero});
  auto inside = c.create1<LessOp>({*normal, size});
  if (failed(below) || failed(inside))
    return failure();
  auto above = c.create1<NotOp>({*inside});
  if (failed(above))
    return failure();
  auto outside = c.create1<WhereOp>({*below, *below, *above});
  if (failed(outside))
    return failure();
  return WrappedIndex{*normal, *outside};
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// The result of shape `shape`: element i is source's flat element map[i]
/// where map[i] >= 0, and `keep`'s element i (a tensor of that shape)
/// elsewhere. Without `keep`, every map[i] is >= 0.
LogicalResult buildMapped(NodeContext &c, Value source, ArrayRef<int64_t> map,
                          ArrayRef<int64_t> shape, Value keep) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  auto resultType = withShape(sourceType, shape);
  bool anyWritten = llvm::any_of(map, [](int64_t m) { return m >= 0; });
  if (keep && !anyWritten) {
    c.setResults(keep);
    return success();
  }
  SmallVector<int64_t> indices(map.begin(), map.end());
  SmallVector<bool> written(map.size());
  for (auto [i, m] : llvm::enumerate(indices)) {
    written[i] = m >= 0;
    if (m < 0)
      m = 0; // any element: the select drops it
  }
  auto gathered = c.create1<GatherOp>(
      {flat(c, source), c.constantI64({(int64_t)indices.size()}, indices)},
      {c.named("axis", c.b.getI64IntegerAttr(0))});
  if (failed(gathered))
    return failure();
  Value result = *gathered;
  if (keep && !llvm::all_of(written, [](bool w) { return w; })) {
    auto maskType =
        RankedTensorType::get({(int64_t)written.size()}, c.b.getI1Type());
    Value mask = ConstantOp::create(c.b, c.loc,
                                    DenseElementsAttr::get(maskType, written))
                     .getResult();
    auto selected = c.create1<WhereOp>({mask, result, flat(c, keep)});
    if (failed(selected))
      return failure();
    result = *selected;
  }
  c.setResults(c.createTyped<ReshapeOp>(resultType, {result}));
  return success();
}

/// The indices (input 1), checked to be constant and small enough to map.
FailureOr<SmallVector<int64_t>> constantIndices(NodeContext &c,
                                                int64_t resultElements) {
  if (resultElements > kMaxMappedElements) {
    (void)c.unsupported("a result of " + Twine(resultElements) +
                        " elements (the constant-index form maps at most " +
                        Twine(kMaxMappedElements) + ")");
    return failure();
  }
  return c.constantInts(1, "indices");
}

LogicalResult checkReduction(NodeContext &c) {
  std::string reduction = c.getString("reduction", "none");
  if (reduction != "none")
    return c.unsupported("reduction '" + reduction + "' (only 'none' is)");
  return success();
}

/// Normalises index `v` into [0, dim), or reports it.
FailureOr<int64_t> indexInto(NodeContext &c, int64_t v, int64_t dim,
                             int64_t axis) {
  int64_t n = v < 0 ? v + dim : v;
  if (n < 0 || n >= dim) {
    c.emitError() << "index " << v << " is out of range for axis " << axis
                  << " of size " << dim;
    return failure();
  }
  return n;
}

/// For GatherElements and ScatterElements: for each element of `indices`
/// (shape `ishape`), the flat position in a tensor of shape `shape` it
/// addresses: its own coordinates, with the index along `axis`.
FailureOr<SmallVector<int64_t>> elementTargets(NodeContext &c,
                                               ArrayRef<int64_t> indices,
                                               ArrayRef<int64_t> ishape,
                                               ArrayRef<int64_t> shape,
                                               int64_t axis) {
  SmallVector<int64_t> istrides = stridesOf(ishape), strides = stridesOf(shape);
  SmallVector<int64_t> targets(indices.size());
  for (auto [i, v] : llvm::enumerate(indices)) {
    auto at = indexInto(c, v, shape[axis], axis);
    if (failed(at))
      return failure();
    int64_t target = 0, rest = i;
    for (size_t d = 0; d < ishape.size(); ++d) {
      int64_t coord = rest / istrides[d];
      rest %= istrides[d];
      target += ((int64_t)d == axis ? *at : coord) * strides[d];
    }
    targets[i] = target;
  }
  return targets;
}

/// GatherElements' and ScatterElements' indices: data's rank, and no
/// larger than data on the other axes.
LogicalResult checkElementIndices(NodeContext &c, RankedTensorType data,
                                  RankedTensorType indices, int64_t axis) {
  if (indices.getRank() != data.getRank())
    return c.emitError() << "indices " << indices << " and data " << data
                         << " differ in rank";
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && indices.getDimSize(d) > data.getDimSize(d))
      return c.emitError() << "indices " << indices << " is larger than data "
                           << data << " on axis " << d;
  return success();
}

/// GatherElements as one gather of the flattened data, whatever the
/// indices: the flat position of each element is its own coordinates' with
/// the index along `axis`, offsets[p] + index * stride, computed at run time
/// (and folded with constant indices). An index outside [-dim, dim) is sent
/// to position n, outside the flat data, so that the gather fails the run
/// as GatherElements would, instead of reading another row.
LogicalResult importGatherElements(NodeContext &c) {
  auto data = c.inputType(0), indexType = c.inputType(1);
  auto axis = c.axis(c.getInt("axis", 0), data.getRank());
  if (failed(axis))
    return failure();
  if (failed(checkElementIndices(c, data, indexType, *axis)))
    return failure();
  const int64_t n = data.getNumElements(), dim = data.getDimSize(*axis);
  SmallVector<int64_t> strides = stridesOf(data.getShape());
  // Each element's flat position with index 0 along the axis.
  auto offsets =
      elementTargets(c, SmallVector<int64_t>(indexType.getNumElements(), 0),
                     indexType.getShape(), data.getShape(), *axis);
  if (failed(offsets))
    return failure();
  auto index = wrapIndex(c, indicesAsI64(c, 1), dim);
  if (failed(index))
    return failure();
  auto scaled = c.create1<MulOp>({index->index, i64Scalar(c, strides[*axis])});
  if (failed(scaled))
    return failure();
  auto position = c.create1<AddOp>(
      {*scaled, c.constantI64(indexType.getShape(), *offsets)});
  if (failed(position))
    return failure();
  auto checked =
      c.create1<WhereOp>({index->outside, i64Scalar(c, n), *position});
  if (failed(checked))
    return failure();
  return c.produce<GatherOp>({flat(c, c.input(0)), *checked},
                             {c.named("axis", c.b.getI64IntegerAttr(0))});
}

LogicalResult importScatterElements(NodeContext &c) {
  if (failed(checkReduction(c)))
    return failure();
  auto data = c.inputType(0), indexType = c.inputType(1);
  auto updates = c.inputType(2);
  auto axis = c.axis(c.getInt("axis", 0), data.getRank());
  if (failed(axis))
    return failure();
  if (updates.getShape() != indexType.getShape())
    return c.emitError() << "updates " << updates << " and indices "
                         << indexType << " differ in shape";
  if (failed(checkElementIndices(c, data, indexType, *axis)))
    return failure();
  auto indices = constantIndices(c, data.getNumElements());
  if (failed(indices))
    return failure();
  auto targets =
      elementTargets(c, *indices, indexType.getShape(), data.getShape(), *axis);
  if (failed(targets))
    return failure();
  // Later updates win where two write one element.
  SmallVector<int64_t> map(data.getNumElements(), -1);
  for (auto [i, target] : llvm::enumerate(*targets))
    map[target] = i;
  return buildMapped(c, c.input(2), map, data.getShape(), c.input(0));
}

LogicalResult importScatterND(NodeContext &c) {
  if (failed(checkReduction(c)))
    return failure();
  auto data = c.inputType(0), indexType = c.inputType(1);
  auto updates = c.inputType(2);
  if (indexType.getRank() < 1)
    return c.emitError() << "indices " << indexType << " has rank 0";
  int64_t k = indexType.getShape().back(), r = data.getRank();
  if (k < 1 || k > r)
    return c.emitError() << "indices " << indexType << " index " << k
                         << " axes of data " << data;
  SmallVector<int64_t> expected(indexType.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(k));
  if (updates.getShape() != ArrayRef<int64_t>(expected))
    return c.emitError() << "updates " << updates << " should have shape ["
                         << llvm::make_range(expected.begin(), expected.end())
                         << "] for indices " << indexType << " into " << data;
  auto indices = constantIndices(c, data.getNumElements());
  if (failed(indices))
    return failure();
  SmallVector<int64_t> strides = stridesOf(data.getShape());
  int64_t slice = strides[k - 1]; // elements of data.shape[k:]
  int64_t count = indexType.getNumElements() / k;
  // Later updates win where two write one element.
  SmallVector<int64_t> map(data.getNumElements(), -1);
  for (int64_t n = 0; n < count; ++n) {
    int64_t base = 0;
    for (int64_t j = 0; j < k; ++j) {
      auto at = indexInto(c, (*indices)[n * k + j], data.getDimSize(j), j);
      if (failed(at))
        return failure();
      base += *at * strides[j];
    }
    for (int64_t s = 0; s < slice; ++s)
      map[base + s] = n * slice + s;
  }
  return buildMapped(c, c.input(2), map, data.getShape(), c.input(0));
}

/// GatherND with any indices: data's batch axes and the k indexed axes
/// after them become one, and the index tuples become flat positions: the
/// batch's offset (a constant) plus, over j, index[..., j] (wrapped when
/// negative) x the stride of axis j; one gather along axis 0 takes the
/// slices. An index outside its axis is sent outside the flattened axes, so
/// the run fails as GatherND would.
LogicalResult importGatherND(NodeContext &c) {
  auto data = c.inputType(0), indexType = c.inputType(1);
  const int64_t batch = c.getInt("batch_dims", 0);
  if (indexType.getRank() < 1)
    return c.emitError() << "indices " << indexType << " has rank 0";
  const int64_t k = indexType.getShape().back(), r = data.getRank();
  if (batch < 0 || batch >= indexType.getRank() || k < 1 || batch + k > r)
    return c.emitError() << "indices " << indexType << " index " << k
                         << " axes of data " << data << " after " << batch
                         << " batch axes";
  for (int64_t d = 0; d < batch; ++d)
    if (indexType.getDimSize(d) != data.getDimSize(d))
      return c.emitError() << "indices " << indexType << " and data " << data
                           << " differ on batch axis " << d;
  Value index = indicesAsI64(c, 1);
  int64_t leading = 1, batchCount = 1;
  for (int64_t j = 0; j < k; ++j)
    leading *= data.getDimSize(batch + j);
  for (int64_t d = 0; d < batch; ++d)
    batchCount *= data.getDimSize(d);
  Value position, outside;
  int64_t stride = leading;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t dim = data.getDimSize(batch + j);
    stride /= dim;
    auto part = c.create1<GatherOp>(
        {index, i64Scalar(c, j)},
        {c.named("axis", c.b.getI64IntegerAttr(indexType.getRank() - 1))});
    if (failed(part))
      return failure();
    auto wrapped = wrapIndex(c, *part, dim);
    if (failed(wrapped))
      return failure();
    auto scaled = c.create1<MulOp>({wrapped->index, i64Scalar(c, stride)});
    if (failed(scaled))
      return failure();
    if (!position) {
      position = *scaled;
      outside = wrapped->outside;
      continue;
    }
    auto sum = c.create1<AddOp>({position, *scaled});
    auto either = c.create1<WhereOp>({outside, outside, wrapped->outside});
    if (failed(sum) || failed(either))
      return failure();
    position = *sum;
    outside = *either;
  }
  if (batch > 0) {
    // Each tuple's batch offset: its batch coordinates' linear index x
    // the indexed axes' size.
    ArrayRef<int64_t> tupleShape = indexType.getShape().drop_back();
    int64_t perBatch = 1;
    for (int64_t d = batch; d < (int64_t)tupleShape.size(); ++d)
      perBatch *= tupleShape[d];
    SmallVector<int64_t> offsets;
    for (int64_t t = 0; t < batchCount * perBatch; ++t)
      offsets.push_back((t / perBatch) * leading);
    auto shifted =
        c.create1<AddOp>({position, c.constantI64(tupleShape, offsets)});
    if (failed(shifted))
      return failure();
    position = *shifted;
  }
  auto checked = c.create1<WhereOp>(
      {outside, i64Scalar(c, batchCount * leading), position});
  if (failed(checked))
    return failure();
  SmallVector<int64_t> folded = {batchCount * leading};
  llvm::append_range(folded, data.getShape().drop_front(batch + k));
  Value rows = c.createTyped<ReshapeOp>(
      RankedTensorType::get(folded, data.getElementType()), {c.input(0)})[0];
  return c.produce<GatherOp>({rows, *checked},
                             {c.named("axis", c.b.getI64IntegerAttr(0))});
}

/// OneHot(indices, depth, values): where(index == position, on, off), the
/// positions 0..depth-1 a constant along the new `axis`. Indices of any
/// numeric type are cast to int64; negative ones count from depth; off and
/// on are values[0] and values[1] (gathers, so values may be data).
LogicalResult importOneHot(NodeContext &c) {
  auto depthValue = c.constantScalar(1, "depth");
  if (failed(depthValue))
    return failure();
  int64_t depth = static_cast<int64_t>(*depthValue);
  if (depth < 1)
    return c.emitError() << "depth " << depth << " is not positive";
  auto indexType = c.inputType(0), valuesType = c.inputType(2);
  if (valuesType.getNumElements() != 2)
    return c.emitError() << "values " << valuesType
                         << " must hold 2 elements (off, on)";
  int64_t rank = indexType.getRank() + 1;
  auto axis = c.axis(c.getInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  auto i64 = c.b.getI64Type();
  // An index outside [-depth, depth) matches no position: its row is off.
  auto normal = wrapIndex(c, indicesAsI64(c, 0), depth);
  if (failed(normal))
    return failure();
  SmallVector<int64_t> expanded(indexType.getShape());
  expanded.insert(expanded.begin() + *axis, 1);
  Value column = c.createTyped<ReshapeOp>(RankedTensorType::get(expanded, i64),
                                          {normal->index})[0];
  SmallVector<int64_t> positionShape(rank, 1), positions;
  positionShape[*axis] = depth;
  for (int64_t i = 0; i < depth; ++i)
    positions.push_back(i);
  Value position = c.constantI64(positionShape, positions);
  auto hot = c.create1<EqualOp>({column, position});
  if (failed(hot))
    return failure();
  Value values = flat(c, c.input(2));
  auto off = c.create1<GatherOp>({values, i64Scalar(c, 0)},
                                 {c.named("axis", c.b.getI64IntegerAttr(0))});
  auto on = c.create1<GatherOp>({values, i64Scalar(c, 1)},
                                {c.named("axis", c.b.getI64IntegerAttr(0))});
  if (failed(off) || failed(on))
    return failure();
  return c.produce<WhereOp>({*hot, *on, *off});
}

} // namespace

void registerIndexImporters(OpImporterTable &t) {
  t.add("GatherElements", {11, importGatherElements, /*constantInputs=*/0b10});
  t.add("Scatter", {9, importScatterElements, 0b10});
  t.add("ScatterElements", {11, importScatterElements, 0b10});
  t.add("ScatterND", {11, importScatterND, 0b10});
  t.add("OneHot", {9, importOneHot, /*constantInputs=*/0b10});
  t.add("GatherND", {11, importGatherND});
}

} // namespace mpt::onnx_import
