//===- NormalizationImport.cpp - norms, softmax and losses ----------------===//
#include "NodeImporter.h"
#include "mpt/Dialect/MPT/IR/GradientUtils.h"

using namespace mlir;

namespace mpt::onnx_import {
namespace {

/// BatchNormalization. Before opset 9 the `spatial` attribute may ask for
/// statistics per element rather than per channel, which MPT does not
/// have; before opset 7, `is_test` = 0 is training mode (the outputs are
/// those of opset 14's, Y and the running mean and variance). With
/// --batch-norm-training every node is in training mode.
LogicalResult importBatchNorm(NodeContext &c) {
  if (c.opset < 9 && c.getInt("spatial", 1) != 1)
    return c.unsupported("spatial = 0 (statistics per element)");
  bool training = c.batchNormTraining;
  if (c.opset >= 14)
    training |= c.getInt("training_mode", 0) != 0;
  else if (c.opset < 7)
    training |= c.getInt("is_test", 0) == 0;
  else if (c.opset < 9)
    training |= c.numOutputs() > 1;
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

/// GroupNormalization and InstanceNormalization as layer_norm: x (N, C,
/// ...) reshaped to (N, G, C / G x spatial) and normalised over its last
/// axis (with a scale of ones), then the affine: per channel (scale and
/// bias of C: InstanceNormalization, GroupNormalization-21) after the
/// reshape back, or per group (of G: GroupNormalization-18) before it.
LogicalResult buildGroupNorm(NodeContext &c, int64_t groups, bool perChannel) {
  auto type = c.inputType(0);
  if (type.getRank() < 2)
    return c.emitError() << "input " << type << " has no channel axis";
  const int64_t n = type.getDimSize(0), channels = type.getDimSize(1);
  if (groups < 1 || channels % groups != 0)
    return c.emitError() << groups << " groups do not divide " << channels
                         << " channels";
  const int64_t perGroup = type.getNumElements() / (n * groups);
  const int64_t affine = perChannel ? channels : groups;
  for (unsigned i : {1u, 2u})
    if (c.inputType(i).getNumElements() != affine ||
        c.inputType(i).getRank() != 1)
      return c.emitError() << (i == 1 ? "scale " : "bias ") << c.inputType(i)
                           << " should hold " << affine << " values (one per "
                           << (perChannel ? "channel" : "group") << ")";
  Type element = type.getElementType();
  auto grouped = RankedTensorType::get({n, groups, perGroup}, element);
  Value x = c.createTyped<ReshapeOp>(grouped, {c.input(0)})[0];
  Value ones =
      grad::splat(c.b, c.loc, RankedTensorType::get({perGroup}, element), 1.0);
  auto normalised = c.create<LayerNormOp>(
      {x, ones},
      {c.named("axis", c.b.getI64IntegerAttr(2)),
       c.named("epsilon", c.b.getF32FloatAttr(c.getFloat("epsilon", 1e-5f)))});
  if (failed(normalised))
    return failure();
  Value y = normalised->front();
  // The scale and bias as (affine, 1, ...) against y's axes from 1 on.
  auto affineShape = [&](int64_t rank) {
    SmallVector<int64_t> shape(rank, 1);
    shape[0] = affine;
    return shape;
  };
  auto applyAffine = [&](Value v, int64_t trailing) -> FailureOr<Value> {
    auto shape = affineShape(trailing);
    Value scale = c.createTyped<ReshapeOp>(
        RankedTensorType::get(shape, c.inputType(1).getElementType()),
        {c.input(1)})[0];
    Value bias = c.createTyped<ReshapeOp>(
        RankedTensorType::get(shape, c.inputType(2).getElementType()),
        {c.input(2)})[0];
    auto scaled = c.create1<MulOp>({v, scale});
    if (failed(scaled))
      return failure();
    return c.create1<AddOp>({*scaled, bias});
  };
  if (!perChannel) {
    auto affined = applyAffine(y, 2);
    if (failed(affined))
      return failure();
    y = *affined;
  }
  y = c.createTyped<ReshapeOp>(type, {y})[0];
  if (perChannel) {
    auto affined = applyAffine(y, type.getRank() - 1);
    if (failed(affined))
      return failure();
    y = *affined;
  }
  c.setResults(y);
  return success();
}

LogicalResult importInstanceNorm(NodeContext &c) {
  return buildGroupNorm(c, c.inputType(0).getDimSize(1), /*perChannel=*/true);
}

LogicalResult importGroupNorm18(NodeContext &c) {
  return buildGroupNorm(c, c.getInt("num_groups", 0), /*perChannel=*/false);
}

LogicalResult importGroupNorm21(NodeContext &c) {
  if (c.getInt("stash_type", 1) != 1)
    return c.unsupported("stash_type other than 1 (float32)");
  return buildGroupNorm(c, c.getInt("num_groups", 0), /*perChannel=*/true);
}

/// MeanVarianceNormalization: (x - m) / (sqrt(mean((x - m)^2)) + 1e-9),
/// m = mean(x) over `axes` (default 0, 2, 3), as ONNX's function body
/// defines it (which writes the variance as E[x^2] - E[x]^2).
LogicalResult importMeanVarianceNorm(NodeContext &c) {
  auto type = c.inputType(0);
  SmallVector<int64_t> axes = c.getInts("axes");
  if (!c.hasAttr("axes"))
    axes = {0, 2, 3};
  for (int64_t &a : axes) {
    auto n = c.axis(a, type.getRank());
    if (failed(n))
      return failure();
    a = *n;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  auto mean = [&](Value v) {
    return c.create1<ReduceMeanOp>(
        {v}, {c.named("axes", c.b.getDenseI64ArrayAttr(axes)),
              c.named("keepdims", c.b.getBoolAttr(true))});
  };
  auto m = mean(c.input(0));
  if (failed(m))
    return failure();
  auto centred = c.create1<SubOp>({c.input(0), *m});
  if (failed(centred))
    return failure();
  auto square = c.create1<MulOp>({*centred, *centred});
  if (failed(square))
    return failure();
  auto variance = mean(*square);
  if (failed(variance))
    return failure();
  auto deviation = c.create1<SqrtOp>({*variance});
  if (failed(deviation))
    return failure();
  auto guarded = c.create1<AddOp>(
      {*deviation, grad::scalar(c.b, c.loc, 1e-9, type.getElementType())});
  if (failed(guarded))
    return failure();
  return c.produce<DivOp>({*centred, *guarded});
}

} // namespace

void registerNormalizationImporters(OpImporterTable &t) {
  t.add("BatchNormalization", {6, importBatchNorm});
  t.add("LayerNormalization", {17, importLayerNorm});
  t.add("InstanceNormalization", {6, importInstanceNorm});
  t.add("GroupNormalization", {18, importGroupNorm18});
  t.add("MeanVarianceNormalization", {9, importMeanVarianceNorm});
  t.add("GroupNormalization", {21, importGroupNorm21});
}

} // namespace mpt::onnx_import
