//===- NormalizationImport.cpp - norms, softmax and losses ----------------===//
#include "NodeImporter.h"

using namespace mlir;

namespace mpt::onnx_import {
namespace {

LogicalResult importBatchNorm(NodeContext &c) {
  bool training = c.opset >= 14 && c.getInt("training_mode", 0) != 0;
  auto eps =
      c.named("epsilon", c.b.getF32FloatAttr(c.getFloat("epsilon", 1e-5f)));
  SmallVector<Value> operands;
  for (unsigned i = 0; i < 5; ++i)
    operands.push_back(c.input(i));
  if (training) {
    if (c.outputWanted(3) || c.outputWanted(4))
      return c.unsupported("the saved mean / variance outputs");
    return c.produce<BatchNormTrainOp>(
        operands,
        {eps, c.named("momentum",
                      c.b.getF32FloatAttr(c.getFloat("momentum", 0.9f)))});
  }
  for (unsigned i = 1; i < c.numOutputs(); ++i)
    if (c.outputWanted(i))
      return c.unsupported("statistics outputs of inference-mode "
                           "BatchNormalization");
  return c.produce<BatchNormOp>(operands, {eps});
}

LogicalResult importLayerNorm(NodeContext &c) {
  if (c.getInt("stash_type", 1) != 1)
    return c.unsupported("stash_type other than 1 (float32)");
  auto axis = c.axis(c.getInt("axis", -1), c.inputType(0).getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return c.produce<LayerNormOp>(
      operands,
      {c.named("axis", c.b.getI64IntegerAttr(*axis)),
       c.named("epsilon", c.b.getF32FloatAttr(c.getFloat("epsilon", 1e-5f)))});
}

template <typename OpTy> LogicalResult importSoftmax(NodeContext &c) {
  auto axis = c.axis(c.getInt("axis", -1), c.inputType(0).getRank());
  if (failed(axis))
    return failure();
  return c.produce<OpTy>({c.input(0)},
                         {c.named("axis", c.b.getI64IntegerAttr(*axis))});
}

SmallVector<NamedAttribute> lossAttrs(NodeContext &c) {
  SmallVector<NamedAttribute> attrs = {c.named(
      "reduction", c.b.getStringAttr(c.getString("reduction", "mean")))};
  if (c.hasAttr("ignore_index"))
    attrs.push_back(c.named(
        "ignore_index", c.b.getI64IntegerAttr(c.getInt("ignore_index", 0))));
  return attrs;
}

template <typename OpTy> LogicalResult importLoss(NodeContext &c) {
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return c.produce<OpTy>(operands, lossAttrs(c));
}

} // namespace

void registerNormalizationImporters(OpImporterTable &t) {
  t.add("BatchNormalization", {9, importBatchNorm});
  t.add("LayerNormalization", {17, importLayerNorm});
  t.add("Softmax", {13, importSoftmax<SoftmaxOp>});
  t.add("LogSoftmax", {13, importSoftmax<LogSoftmaxOp>});
  t.add("SoftmaxCrossEntropyLoss", {12, importLoss<SoftmaxCrossEntropyLossOp>});
  t.add("NegativeLogLikelihoodLoss",
        {12, importLoss<NegativeLogLikelihoodLossOp>});
}

} // namespace mpt::onnx_import
