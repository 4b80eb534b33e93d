//===- RefOpsDataMovement.cpp - shape and data movement ops ---------------===//
//
// reshape, flatten, squeeze, unsqueeze, expand, transpose, concat, split,
// slice, gather, trilu, and the gradients gather_grad and slice_grad.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

using namespace mlir;

namespace mpt::ref {
namespace {

/// Same elements in the result type's shape: reshape, flatten, squeeze,
/// unsqueeze (the interpreter applies the shape).
LogicalResult reshape(Operation *, ArrayRef<RefTensor> operands,
                      std::vector<RefTensor> &results) {
  results.push_back(operands[0]);
  return success();
}

LogicalResult expand(Operation *op, ArrayRef<RefTensor> operands,
                     std::vector<RefTensor> &results) {
  std::optional<RefTensor> out = broadcastTo(operands[0], resultShape(op, 0));
  if (!out)
    return fail(op, "input does not broadcast to the result shape");
  results.push_back(std::move(*out));
  return success();
}

/// Output dim i is input dim perm[i] (reversed axes by default).
LogicalResult transpose(Operation *op, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0];
  std::vector<int64_t> perm(x.rank());
  for (int64_t i = 0; i < x.rank(); ++i)
    perm[i] = x.rank() - 1 - i;
  perm = optionalIntListAttr(op, "perm").value_or(perm);
  if (static_cast<int64_t>(perm.size()) != x.rank())
    return fail(op, "perm does not match the rank");
  std::vector<int64_t> shape(x.rank()), inStrides = stridesOf(x.shape);
  for (int64_t i = 0; i < x.rank(); ++i)
    shape[i] = x.shape[perm[i]];
  RefTensor y(shape);
  int64_t flat = 0;
  forEachIndex(shape, [&](ArrayRef<int64_t> index) {
    int64_t source = 0;
    for (int64_t i = 0; i < x.rank(); ++i)
      source += index[i] * inStrides[perm[i]];
    y.data[flat++] = x.data[source];
  });
  results.push_back(std::move(y));
  return success();
}

LogicalResult concat(Operation *op, ArrayRef<RefTensor> operands,
                     std::vector<RefTensor> &results) {
  std::vector<int64_t> shape = resultShape(op, 0);
  std::optional<int64_t> axis =
      normalizeAxis(intAttr(op, "axis", 0), static_cast<int64_t>(shape.size()));
  if (!axis)
    return fail(op, "axis out of range");
  auto [outer, dim, inner] = splitAtAxis(shape, *axis);
  RefTensor y(shape);
  int64_t offset = 0;
  for (const RefTensor &x : operands) {
    int64_t xDim = x.shape[*axis];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(x.data.begin() + o * xDim * inner, xDim * inner,
                  y.data.begin() + (o * dim + offset) * inner);
    offset += xDim;
  }
  if (offset != dim)
    return fail(op, "inputs do not fill the concatenated axis");
  results.push_back(std::move(y));
  return success();
}

/// Pieces along `axis` of the result types' sizes.
LogicalResult split(Operation *op, ArrayRef<RefTensor> operands,
                    std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0];
  std::optional<int64_t> axis = normalizeAxis(intAttr(op, "axis", 0), x.rank());
  if (!axis)
    return fail(op, "axis out of range");
  auto [outer, dim, inner] = splitAtAxis(x.shape, *axis);
  int64_t offset = 0;
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    RefTensor y(resultShape(op, r));
    int64_t yDim = y.shape[*axis];
    if (offset + yDim > dim)
      return fail(op, "pieces exceed the split axis");
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(x.data.begin() + (o * dim + offset) * inner, yDim * inner,
                  y.data.begin() + o * yDim * inner);
    offset += yDim;
    results.push_back(std::move(y));
  }
  return success();
}

/// For every element of a slice of `input` (in row-major order), calls
/// fn(sliceFlat, inputFlat). The slice's shape is `sliced`.
LogicalResult forEachSliced(Operation *op, ArrayRef<int64_t> input,
                            ArrayRef<int64_t> sliced,
                            llvm::function_ref<void(int64_t, int64_t)> fn) {
  auto starts = optionalIntListAttr(op, "starts");
  auto ends = optionalIntListAttr(op, "ends");
  std::vector<int64_t> steps =
      optionalIntListAttr(op, "steps")
          .value_or(std::vector<int64_t>(input.size(), 1));
  if (!starts || !ends || starts->size() != input.size() ||
      ends->size() != input.size() || steps.size() != input.size() ||
      sliced.size() != input.size())
    return fail(op, "starts, ends and steps need one entry per axis");
  for (size_t axis = 0; axis < input.size(); ++axis) {
    int64_t start = (*starts)[axis], end = (*ends)[axis], step = steps[axis];
    if (step == 0)
      return fail(op, "step 0");
    int64_t count = step > 0 ? (end - start + step - 1) / step
                             : (start - end - step - 1) / -step;
    if (std::max<int64_t>(count, 0) != sliced[axis])
      return fail(op, "slice of axis " + Twine(axis) + " has " +
                          Twine(std::max<int64_t>(count, 0)) +
                          " elements, the sliced type " + Twine(sliced[axis]));
  }
  std::vector<int64_t> inStrides = stridesOf(input);
  int64_t flat = 0;
  forEachIndex(sliced, [&](ArrayRef<int64_t> index) {
    int64_t source = 0;
    for (size_t axis = 0; axis < input.size(); ++axis)
      source += ((*starts)[axis] + index[axis] * steps[axis]) * inStrides[axis];
    fn(flat++, source);
  });
  return success();
}

LogicalResult slice(Operation *op, ArrayRef<RefTensor> operands,
                    std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0];
  RefTensor y(resultShape(op, 0));
  if (failed(forEachSliced(op, x.shape, y.shape, [&](int64_t yi, int64_t xi) {
        y.data[yi] = x.data[xi];
      })))
    return failure();
  results.push_back(std::move(y));
  return success();
}

/// dy -> dx: zeros with dy written where the forward slice read.
LogicalResult sliceGrad(Operation *op, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  const RefTensor &dy = operands[0];
  RefTensor dx(resultShape(op, 0));
  if (failed(forEachSliced(op, dx.shape, dy.shape, [&](int64_t yi, int64_t xi) {
        dx.data[xi] = dy.data[yi];
      })))
    return failure();
  results.push_back(std::move(dx));
  return success();
}

/// For data [D..., d_axis, ...] gathered at `indices`, calls
/// fn(outFlat, dataFlat) in output order. Negative indices count from the
/// end; out-of-range ones fail.
LogicalResult forEachGathered(Operation *op, ArrayRef<int64_t> data,
                              const RefTensor &indices,
                              llvm::function_ref<void(int64_t, int64_t)> fn) {
  std::optional<int64_t> axis =
      normalizeAxis(intAttr(op, "axis", 0), static_cast<int64_t>(data.size()));
  if (!axis)
    return fail(op, "axis out of range");
  auto [outer, dim, inner] = splitAtAxis(data, *axis);
  int64_t count = indices.numElements();
  for (int64_t j = 0; j < count; ++j) {
    int64_t index = static_cast<int64_t>(indices.data[j]);
    if (index < -dim || index >= dim)
      return fail(op, "index " + Twine(index) + " outside [-" + Twine(dim) +
                          ", " + Twine(dim) + ")");
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      int64_t index = static_cast<int64_t>(indices.data[j]);
      if (index < 0)
        index += dim;
      for (int64_t in = 0; in < inner; ++in)
        fn((o * count + j) * inner + in, (o * dim + index) * inner + in);
    }
  return success();
}

LogicalResult gather(Operation *op, ArrayRef<RefTensor> operands,
                     std::vector<RefTensor> &results) {
  const RefTensor &data = operands[0];
  RefTensor y(resultShape(op, 0));
  if (failed(forEachGathered(
          op, data.shape, operands[1],
          [&](int64_t yi, int64_t di) { y.data[yi] = data.data[di]; })))
    return failure();
  results.push_back(std::move(y));
  return success();
}

/// indices, dy -> ddata: scatter-add in index order.
LogicalResult gatherGrad(Operation *op, ArrayRef<RefTensor> operands,
                         std::vector<RefTensor> &results) {
  const RefTensor &dy = operands[1];
  RefTensor ddata(resultShape(op, 0));
  if (failed(forEachGathered(
          op, ddata.shape, operands[0],
          [&](int64_t yi, int64_t di) { ddata.data[di] += dy.data[yi]; })))
    return failure();
  results.push_back(std::move(ddata));
  return success();
}

/// Keeps column - row >= k (upper) or <= k (lower) of the last two axes.
LogicalResult trilu(Operation *op, ArrayRef<RefTensor> operands,
                    std::vector<RefTensor> &results) {
  RefTensor y = operands[0];
  if (y.rank() < 2)
    return fail(op, "input must have rank 2 or more");
  bool upper = boolAttr(op, "upper", true);
  int64_t k = intAttr(op, "k", 0);
  int64_t rows = y.shape[y.rank() - 2], cols = y.shape[y.rank() - 1];
  for (int64_t i = 0; i < y.numElements(); ++i) {
    int64_t col = i % cols, row = (i / cols) % rows;
    if (upper ? col - row < k : col - row > k)
      y.data[i] = 0.0;
  }
  results.push_back(std::move(y));
  return success();
}

} // namespace

void addDataMovementOps(RefOpTable &table) {
  table["mpt.reshape"] = reshape;
  table["mpt.flatten"] = reshape;
  table["mpt.squeeze"] = reshape;
  table["mpt.unsqueeze"] = reshape;
  table["mpt.expand"] = expand;
  table["mpt.transpose"] = transpose;
  table["mpt.concat"] = concat;
  table["mpt.split"] = split;
  table["mpt.slice"] = slice;
  table["mpt.gather"] = gather;
  table["mpt.trilu"] = trilu;
  table["mpt.slice_grad"] = sliceGrad;
  table["mpt.gather_grad"] = gatherGrad;
}

} // namespace mpt::ref
