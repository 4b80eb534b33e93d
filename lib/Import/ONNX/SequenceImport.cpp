//===- SequenceImport.cpp - sequences known at import time ----------------===//
//
// ONNX sequences whose length and element shapes the importer can work out:
// the dynamo exporter without its optimizer writes torch.split and
// torch.chunk as SplitToSequence followed by SequenceAt at constant
// positions. A sequence never becomes an IR value: the importer keeps the
// tensors it holds (TensorSequence) and each sequence op picks, adds or
// joins them, so the graph the passes see has tensors only. Positions
// and split sizes must be compile-time constants; a sequence that is a
// graph input or output, or that reaches a non-sequence op, is reported
// unsupported.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

using namespace mlir;

namespace mpt::onnx_import {
namespace {

/// Input `i`, which must be a sequence.
FailureOr<TensorSequence> sequenceInput(NodeContext &c, unsigned i) {
  if (const TensorSequence *s = c.inputSequence(i))
    return *s;
  return c.emitError() << "input " << i << " is not a sequence", failure();
}

/// A position into a sequence of `size` tensors (negative counts from the
/// end); `insert` allows `size` itself (after the last).
FailureOr<int64_t> position(NodeContext &c, unsigned i, int64_t size,
                            bool insert) {
  auto values = c.constantInts(i, "position");
  if (failed(values))
    return failure();
  if (values->size() != 1)
    return c.emitError() << "position has " << values->size()
                         << " values; 1 expected",
           failure();
  int64_t p = values->front();
  const int64_t limit = insert ? size : size - 1;
  if (p < -size || p > limit)
    return c.emitError() << "position " << p << " is outside [" << -size << ", "
                         << limit << "] for a sequence of " << size
                         << " tensor(s)",
           failure();
  return p < 0 ? p + size : p;
}

/// SplitToSequence: the pieces of `split` sizes (a scalar: pieces of that
/// size, the last one shorter; absent: pieces of 1, whose axis goes with
/// keepdims = 0) along `axis`.
LogicalResult importSplitToSequence(NodeContext &c) {
  RankedTensorType type = c.inputType(0);
  auto axis = c.axis(c.getInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  const int64_t length = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (c.hasInput(1)) {
    auto split = c.constantInts(1, "split");
    if (failed(split))
      return failure();
    if (c.inputType(1).getRank() == 0) {
      const int64_t piece = split->front();
      if (piece <= 0)
        return c.emitError() << "split " << piece << " is not positive";
      for (int64_t start = 0; start < length; start += piece)
        sizes.push_back(std::min(piece, length - start));
    } else {
      sizes.assign(split->begin(), split->end());
      int64_t total = 0;
      for (int64_t s : sizes) {
        if (s < 0)
          return c.emitError() << "split has a negative size " << s;
        total += s;
      }
      if (total != length)
        return c.emitError() << "split sizes add up to " << total
                             << ", not axis " << *axis << "'s " << length;
    }
  } else {
    sizes.assign(length, 1);
    squeeze = c.getInt("keepdims", 1) == 0;
  }
  TensorSequence pieces;
  SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()),
      steps(type.getRank(), 1);
  int64_t start = 0;
  for (int64_t size : sizes) {
    starts[*axis] = start;
    ends[*axis] = start + size;
    auto piece = c.slice(c.input(0), starts, ends, steps);
    if (failed(piece))
      return failure();
    Value v = *piece;
    if (squeeze) {
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + *axis);
      v = c.createTyped<ReshapeOp>(type.clone(shape), {v})[0];
    }
    pieces.push_back(v);
    start += size;
  }
  c.setSequenceResult(std::move(pieces));
  return success();
}

LogicalResult importSequenceConstruct(NodeContext &c) {
  TensorSequence tensors;
  for (unsigned i = 0; i < c.numInputs(); ++i)
    tensors.push_back(c.input(i));
  c.setSequenceResult(std::move(tensors));
  return success();
}

LogicalResult importSequenceEmpty(NodeContext &c) {
  c.setSequenceResult({});
  return success();
}

LogicalResult importSequenceAt(NodeContext &c) {
  auto sequence = sequenceInput(c, 0);
  if (failed(sequence))
    return failure();
  auto p = position(c, 1, sequence->size(), /*insert=*/false);
  if (failed(p))
    return failure();
  c.setResults((*sequence)[*p]);
  return success();
}

LogicalResult importSequenceInsert(NodeContext &c) {
  auto sequence = sequenceInput(c, 0);
  if (failed(sequence))
    return failure();
  int64_t at = sequence->size();
  if (c.hasInput(2)) {
    auto p = position(c, 2, sequence->size(), /*insert=*/true);
    if (failed(p))
      return failure();
    at = *p;
  }
  sequence->insert(sequence->begin() + at, c.input(1));
  c.setSequenceResult(std::move(*sequence));
  return success();
}

LogicalResult importSequenceErase(NodeContext &c) {
  auto sequence = sequenceInput(c, 0);
  if (failed(sequence))
    return failure();
  if (sequence->empty())
    return c.emitError() << "the sequence is empty";
  int64_t at = sequence->size() - 1;
  if (c.hasInput(1)) {
    auto p = position(c, 1, sequence->size(), /*insert=*/false);
    if (failed(p))
      return failure();
    at = *p;
  }
  sequence->erase(sequence->begin() + at);
  c.setSequenceResult(std::move(*sequence));
  return success();
}

LogicalResult importSequenceLength(NodeContext &c) {
  auto sequence = sequenceInput(c, 0);
  if (failed(sequence))
    return failure();
  c.setResults(c.constantI64({}, {static_cast<int64_t>(sequence->size())}));
  return success();
}

/// ConcatFromSequence: the tensors joined along `axis`, or stacked along a
/// new one (new_axis = 1: each gets a unit axis there first).
LogicalResult importConcatFromSequence(NodeContext &c) {
  auto sequence = sequenceInput(c, 0);
  if (failed(sequence))
    return failure();
  if (sequence->empty())
    return c.emitError() << "the sequence is empty";
  RankedTensorType first = cast<RankedTensorType>(sequence->front().getType());
  const bool stack = c.getInt("new_axis", 0) != 0;
  auto axis = c.axis(c.getInt("axis", 0), first.getRank() + (stack ? 1 : 0));
  if (failed(axis))
    return failure();
  SmallVector<Value> parts;
  for (Value v : *sequence) {
    if (stack) {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.insert(shape.begin() + *axis, 1);
      v = c.createTyped<ReshapeOp>(type.clone(shape), {v})[0];
    }
    parts.push_back(v);
  }
  if (parts.size() == 1) {
    c.setResults(parts.front());
    return success();
  }
  return c.produce<ConcatOp>(parts,
                             {c.named("axis", c.b.getI64IntegerAttr(*axis))});
}

} // namespace

void registerSequenceImporters(OpImporterTable &t) {
  auto add = [&](StringRef op, int64_t since, ImportFn fn,
                 uint32_t constantInputs) {
    t.add(op, {since, fn, constantInputs, /*takesSequences=*/true});
  };
  add("SplitToSequence", 11, importSplitToSequence, 0b10);
  add("SequenceConstruct", 11, importSequenceConstruct, 0);
  add("SequenceEmpty", 11, importSequenceEmpty, 0);
  add("SequenceAt", 11, importSequenceAt, 0b10);
  add("SequenceInsert", 11, importSequenceInsert, 0b100);
  add("SequenceErase", 11, importSequenceErase, 0b10);
  add("SequenceLength", 11, importSequenceLength, 0);
  add("ConcatFromSequence", 11, importConcatFromSequence, 0);
}

} // namespace mpt::onnx_import
