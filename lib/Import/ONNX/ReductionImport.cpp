//===- ReductionImport.cpp - ReduceSum/Mean/Max/L2 ------------------------===//
//
// The reductions moved `axes` from an attribute to an optional input
// (ReduceSum at opset 13, the others at 18); both forms import to the same
// op with sorted, non-negative axes.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

using namespace mlir;

namespace mpt::onnx_import {
namespace {

template <typename OpTy>
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
  return c.produce<OpTy>(
      {c.input(0)},
      {c.named("axes", c.b.getDenseI64ArrayAttr(axes)),
       c.named("keepdims", c.b.getBoolAttr(c.getInt("keepdims", 1) != 0))});
}

template <typename OpTy> LogicalResult importAxesAttr(NodeContext &c) {
  return buildReduce<OpTy>(c, c.getInts("axes"));
}

template <typename OpTy> LogicalResult importAxesInput(NodeContext &c) {
  SmallVector<int64_t> axes;
  if (c.hasInput(1)) {
    auto values = c.constantInts(1, "axes");
    if (failed(values))
      return failure();
    axes = *values;
  }
  return buildReduce<OpTy>(c, axes);
}

template <typename OpTy>
void addReduce(OpImporterTable &t, StringRef name, int64_t inputSince) {
  t.add(name, {1, importAxesAttr<OpTy>});
  t.add(name, {inputSince, importAxesInput<OpTy>, /*constantInputs=*/0b10});
}

} // namespace

void registerReductionImporters(OpImporterTable &t) {
  addReduce<ReduceSumOp>(t, "ReduceSum", 13);
  addReduce<ReduceMeanOp>(t, "ReduceMean", 18);
  addReduce<ReduceMaxOp>(t, "ReduceMax", 18);
  addReduce<ReduceL2Op>(t, "ReduceL2", 18);
}

} // namespace mpt::onnx_import
