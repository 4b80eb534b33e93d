//===- DataMovement.cpp - decoders for copies, reshapes and indexing -----===//
#include "ops/DecodeUtil.h"
#include "ops/OpParams.h"

#include "mptrt/Philox.h"

namespace mptrt {
namespace rt {

namespace {

Status expectSameDType(const KernelView &v, size_t operand, size_t result) {
  if (v.operand(operand).dtype != v.result(result).dtype)
    return v.error(resultLabel(v, result) + " must have the element type of " +
                   operandLabel(v, operand));
  return Status::ok();
}

/// reshape and expand may still carry ONNX's i64 shape operand; the result
/// type holds the shape, so it is accepted and ignored.
Status checkShapeOperand(const KernelView &v) {
  if (v.numOperands() == 2 && (v.operand(1).dtype != DType::I64 || v.operand(1).rank() != 1))
    return v.error(operandLabel(v, 1) + " (the shape) must be a 1-D i64 tensor");
  return Status::ok();
}

} // namespace

Status decodeCopy(const KernelView &v, CopyParams *p) {
  const bool takesShape = v.kind() == "reshape";
  MPTRT_TRY(v.expectCounts(1, takesShape ? 2 : 1, 1, 1));
  MPTRT_TRY(checkShapeOperand(v));
  if (v.kind() == "flatten")
    MPTRT_TRY(v.allowOnly({"axis"}));
  else if (v.kind() == "squeeze" || v.kind() == "unsqueeze")
    MPTRT_TRY(v.allowOnly({"axes"}));
  else
    MPTRT_TRY(v.allowOnly({}));
  MPTRT_TRY(expectSameDType(v, 0, 0));
  if (v.operand(0).numel != v.result(0).numel)
    return v.error(resultLabel(v, 0) + " must have as many elements as " + operandLabel(v, 0));
  p->bytes = v.result(0).bytes;
  return Status::ok();
}

Status decodeDropout(const KernelView &v, DropoutParams *p) {
  MPTRT_TRY(v.expectCounts(1, 3, 1, 2));
  MPTRT_TRY(v.allowOnly({"ratio", "training", "stream"}));
  MPTRT_TRY(expectFloatOperand(v, 0));
  MPTRT_TRY(expectFloatResult(v, 0));
  double ratio;
  bool training;
  int64_t stream;
  MPTRT_TRY(v.getFloat("ratio", 0.5, &ratio));
  MPTRT_TRY(v.getBool("training", false, &training));
  MPTRT_TRY(v.getInt("stream", 0, &stream));
  if (!(ratio >= 0.0 && ratio <= 1.0))
    return v.error("attribute 'ratio' must be in [0, 1], got " + std::to_string(ratio));
  if (stream < 0 || stream > int64_t(0xffffffff))
    return v.error("attribute 'stream' must be in [0, 2^32), got " + std::to_string(stream));
  const bool seeded = v.numOperands() == 3;
  if (v.numOperands() == 2)
    return v.error("dropout takes the input alone or the input, the seed and the step");
  if (seeded && !training)
    return v.error("the seed and step operands are only meaningful in training mode");
  if (training && ratio != 0.0 && !seeded)
    return v.error("training-mode dropout (ratio " + std::to_string(ratio) +
                   ") needs the seed and step operands (x, seed, step) that "
                   "--build-training-step adds");
  if (seeded)
    for (size_t i : {size_t(1), size_t(2)})
      if (v.operand(i).dtype != DType::I64 || v.operand(i).rank() != 0)
        return v.error(operandLabel(v, i) + (i == 1 ? " (the seed)" : " (the step)") +
                       " must be a 0-d i64");
  MPTRT_TRY(expectResultShape(v, 0, v.operand(0).shape));
  p->numel = v.operand(0).numel;
  p->hasMask = v.numResults() == 2;
  if (p->hasMask) {
    if (v.result(1).dtype != DType::I1)
      return v.error(resultLabel(v, 1) + " (the mask) must be i1");
    MPTRT_TRY(expectResultShape(v, 1, v.operand(0).shape));
  }
  p->draw = training && ratio != 0.0;
  if (p->draw) {
    if (p->numel > philox::kMaxStreamElements)
      return v.error("training-mode dropout covers at most 2^34 elements per tensor");
    p->threshold = philox::dropThreshold(ratio);
    p->scale = ratio >= 1.0 ? 0.0f : static_cast<float>(1.0 / (1.0 - ratio));
    p->stream = static_cast<uint32_t>(stream);
    // This rank's draws: in a data-parallel world, the elements of its rows
    // of the global batch.
    MPTRT_TRY(rankElementOffset(v, p->numel, &p->elementOffset));
  }
  return Status::ok();
}

Status decodeTranspose(const KernelView &v, TransposeParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"perm"}));
  MPTRT_TRY(expectSameDType(v, 0, 0));
  const TensorDesc &x = v.operand(0);
  const int rank = x.rank();
  std::vector<int64_t> perm(rank);
  for (int i = 0; i < rank; ++i)
    perm[i] = rank - 1 - i; // ONNX's default: reverse the axes
  MPTRT_TRY(v.getInts("perm", perm, &perm));
  if (perm.size() != size_t(rank))
    return v.error("attribute 'perm' needs " + std::to_string(rank) + " values");
  bool seen[kMaxRank] = {};
  std::vector<int64_t> expected(rank);
  p->rank = rank;
  for (int i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]])
      return v.error("attribute 'perm' " + shapeString(perm) + " is not a permutation");
    seen[perm[i]] = true;
    expected[i] = x.shape[perm[i]];
    p->outShape[i] = expected[i];
    p->inStride[i] = x.stride(static_cast<int>(perm[i]));
  }
  MPTRT_TRY(expectResultShape(v, 0, expected));
  p->elementSize = x.elementSize();
  p->numel = x.numel;
  return Status::ok();
}

Status decodeConcat(const KernelView &v, ConcatParams *p) {
  MPTRT_TRY(v.expectCounts(1, SIZE_MAX, 1, 1));
  MPTRT_TRY(v.allowOnly({"axis"}));
  const TensorDesc &out = v.result(0);
  int64_t axis = 0;
  MPTRT_TRY(v.getRequiredInt("axis", &axis));
  MPTRT_TRY(normalizeAxis(v, axis, out.rank(), &axis));
  std::vector<int64_t> expected = v.operand(0).shape;
  if (expected.size() != size_t(out.rank()))
    return v.error(operandLabel(v, 0) + " must have the result's rank");
  expected[axis] = 0;
  for (size_t i = 0; i < v.numOperands(); ++i) {
    const TensorDesc &in = v.operand(i);
    MPTRT_TRY(expectSameDType(v, i, 0));
    if (in.rank() != out.rank())
      return v.error(operandLabel(v, i) + " must have the result's rank");
    for (int d = 0; d < in.rank(); ++d)
      if (d != axis && in.shape[d] != out.shape[d])
        return v.error(operandLabel(v, i) + " differs from the result off the axis");
    expected[axis] += in.shape[axis];
    p->dims.push_back(in.shape[axis]);
  }
  MPTRT_TRY(expectResultShape(v, 0, expected));
  p->outer = product(out.shape, 0, axis);
  p->inner = product(out.shape, axis + 1, out.shape.size());
  p->elementSize = out.elementSize();
  return Status::ok();
}

Status decodeSplit(const KernelView &v, SplitParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, SIZE_MAX));
  MPTRT_TRY(v.allowOnly({"axis", "sizes"}));
  const TensorDesc &in = v.operand(0);
  int64_t axis = 0;
  MPTRT_TRY(v.getInt("axis", 0, &axis));
  MPTRT_TRY(normalizeAxis(v, axis, in.rank(), &axis));
  p->dim = in.shape[axis];
  if (v.has("sizes")) {
    MPTRT_TRY(v.getInts("sizes", {}, &p->sizes));
  } else {
    const int64_t n = static_cast<int64_t>(v.numResults());
    if (p->dim % n != 0)
      return v.error("without 'sizes', axis size " + std::to_string(p->dim) +
                     " must divide evenly into " + std::to_string(n) + " results");
    p->sizes.assign(n, p->dim / n);
  }
  if (p->sizes.size() != v.numResults())
    return v.error("attribute 'sizes' needs one value per result");
  int64_t total = 0;
  for (size_t i = 0; i < p->sizes.size(); ++i) {
    if (p->sizes[i] < 0)
      return v.error("attribute 'sizes' has a negative value");
    total += p->sizes[i];
    std::vector<int64_t> expected = in.shape;
    expected[axis] = p->sizes[i];
    MPTRT_TRY(expectSameDType(v, 0, i));
    MPTRT_TRY(expectResultShape(v, i, expected));
  }
  if (total != p->dim)
    return v.error("attribute 'sizes' adds up to " + std::to_string(total) +
                   ", not the axis size " + std::to_string(p->dim));
  p->outer = product(in.shape, 0, axis);
  p->inner = product(in.shape, axis + 1, in.shape.size());
  p->elementSize = in.elementSize();
  return Status::ok();
}

Status decodeSliceWindow(const KernelView &v, const TensorDesc &x, SliceParams *p,
                         std::vector<int64_t> *sliced) {
  const int rank = x.rank();
  std::vector<int64_t> starts, ends, steps;
  MPTRT_TRY(v.getRequiredInts("starts", &starts));
  MPTRT_TRY(v.getRequiredInts("ends", &ends));
  MPTRT_TRY(v.getInts("steps", std::vector<int64_t>(rank, 1), &steps));
  if (starts.size() != size_t(rank) || ends.size() != size_t(rank) || steps.size() != size_t(rank))
    return v.error("starts, ends and steps need one value per axis (" + std::to_string(rank) + ")");
  sliced->assign(rank, 0);
  p->rank = rank;
  for (int d = 0; d < rank; ++d) {
    const int64_t s = starts[d], e = ends[d], st = steps[d], dim = x.shape[d];
    const std::string axis = "axis " + std::to_string(d) + ": ";
    if (st == 0)
      return v.error(axis + "step must not be 0");
    if (st > 0 && !(0 <= s && s <= e && e <= dim))
      return v.error(axis + "a positive step needs 0 <= start <= end <= dim; got start " +
                     std::to_string(s) + ", end " + std::to_string(e));
    if (st < 0 && !(-1 <= e && e <= s && s < dim))
      return v.error(axis + "a negative step needs -1 <= end <= start < dim; got start " +
                     std::to_string(s) + ", end " + std::to_string(e));
    // The count in unsigned arithmetic (a step may be any int64, even
    // INT64_MIN); a step past the span reads one element, and is stored as
    // +-1 so that the kernels' index arithmetic stays within the tensor.
    const uint64_t span = static_cast<uint64_t>(st > 0 ? e - s : s - e);
    const uint64_t magnitude =
        st > 0 ? static_cast<uint64_t>(st) : uint64_t(0) - static_cast<uint64_t>(st);
    const int64_t count = span == 0 ? 0 : static_cast<int64_t>(1 + (span - 1) / magnitude);
    (*sliced)[d] = count;
    p->outShape[d] = count;
    p->start[d] = s;
    p->step[d] = count > 1 ? st : (st > 0 ? 1 : -1);
    p->inStride[d] = x.stride(d);
  }
  p->elementSize = x.elementSize();
  return Status::ok();
}

Status decodeSlice(const KernelView &v, SliceParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"starts", "ends", "steps"}));
  MPTRT_TRY(expectSameDType(v, 0, 0));
  std::vector<int64_t> expected;
  MPTRT_TRY(decodeSliceWindow(v, v.operand(0), p, &expected));
  MPTRT_TRY(expectResultShape(v, 0, expected));
  p->numel = v.result(0).numel;
  return Status::ok();
}

Status decodeGather(const KernelView &v, GatherParams *p) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({"axis"}));
  MPTRT_TRY(expectSameDType(v, 0, 0));
  MPTRT_TRY(expectIndexOperand(v, 1));
  const TensorDesc &data = v.operand(0), &indices = v.operand(1);
  if (data.rank() < 1)
    return v.error(operandLabel(v, 0) + " must have rank >= 1");
  int64_t axis = 0;
  MPTRT_TRY(v.getInt("axis", 0, &axis));
  MPTRT_TRY(normalizeAxis(v, axis, data.rank(), &axis));
  std::vector<int64_t> expected(data.shape.begin(), data.shape.begin() + axis);
  expected.insert(expected.end(), indices.shape.begin(), indices.shape.end());
  expected.insert(expected.end(), data.shape.begin() + axis + 1, data.shape.end());
  MPTRT_TRY(expectResultShape(v, 0, expected));
  p->outer = product(data.shape, 0, axis);
  p->axisDim = data.shape[axis];
  p->inner = product(data.shape, axis + 1, data.shape.size());
  p->numIndices = indices.numel;
  p->elementSize = data.elementSize();
  return Status::ok();
}

Status decodeExpand(const KernelView &v, ExpandParams *p) {
  MPTRT_TRY(v.expectCounts(1, 2, 1, 1));
  MPTRT_TRY(checkShapeOperand(v));
  MPTRT_TRY(v.allowOnly({}));
  MPTRT_TRY(expectSameDType(v, 0, 0));
  p->elementSize = v.result(0).elementSize();
  return makeBroadcast({&v.operand(0)}, v.result(0), /*exact=*/false, &p->bc);
}

Status decodeTrilu(const KernelView &v, TriluParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"upper", "k"}));
  MPTRT_TRY(expectSameDType(v, 0, 0));
  const TensorDesc &x = v.operand(0);
  if (x.rank() < 2)
    return v.error(operandLabel(v, 0) + " must have rank >= 2");
  MPTRT_TRY(expectResultShape(v, 0, x.shape));
  MPTRT_TRY(v.getBool("upper", true, &p->upper));
  MPTRT_TRY(v.getInt("k", 0, &p->k));
  p->rows = x.shape[x.rank() - 2];
  p->cols = x.shape[x.rank() - 1];
  p->batch = product(x.shape, 0, x.shape.size() - 2);
  p->elementSize = x.elementSize();
  return Status::ok();
}

Status decodeFill(const KernelView &v, FillParams *p) {
  MPTRT_TRY(v.expectCounts(0, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"value"}));
  if (v.numOperands() == 1 && (v.operand(0).dtype != DType::I64 || v.operand(0).rank() != 1))
    return v.error(operandLabel(v, 0) + " (the shape) must be a 1-D i64 tensor");
  p->isInt = v.has("value") && !isFloat(v.result(0));
  if (p->isInt) {
    double asFloat;
    MPTRT_TRY(v.getFloat("value", 0, &asFloat));
    // An int attribute keeps its exact value; a float one truncates.
    int64_t asInt = 0;
    if (v.getInt("value", 0, &asInt))
      p->intValue = asInt;
    else if (asFloat >= -9.2e18 && asFloat <= 9.2e18)
      p->intValue = static_cast<int64_t>(asFloat);
    else
      return v.error("attribute 'value' does not fit the integer result");
  } else {
    MPTRT_TRY(v.getFloat("value", 0, &p->value));
  }
  p->numel = v.result(0).numel;
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
