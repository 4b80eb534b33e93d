//===- MPTOps.cpp - mpt op type inference and verifiers -------------------===//
//
// Result-type inference and the cross-field verifiers of each op. Folders
// and canonicalization patterns live in MPTFolds.cpp.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/ShapeRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mpt;

namespace {
RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Output size of one pooled or convolved spatial axis.
std::optional<int64_t> windowedSize(int64_t in, int64_t kernel, int64_t stride,
                                    int64_t padBegin, int64_t padEnd,
                                    int64_t dilation, bool ceilMode) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = in + padBegin + padEnd - span;
  if (room < 0 || stride <= 0)
    return std::nullopt;
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  // A window may not start inside the end padding (PyTorch, ONNX-19 rule).
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

/// Shared shape rule for conv and pooling: (N, C, spatial...) windows.
LogicalResult inferWindowed(std::optional<Location> loc, RankedTensorType input,
                            int64_t outChannels, ArrayRef<int64_t> kernel,
                            ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                            ArrayRef<int64_t> dilations, bool ceilMode,
                            SmallVectorImpl<Type> &types) {
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1)
    return emitOptionalError(loc, "expects an input of rank >= 3 (N, C, ...)");
  if (static_cast<int64_t>(kernel.size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial)
    return emitOptionalError(loc, "expects kernel, strides and dilations of ",
                             spatial, " entries and pads of ", 2 * spatial);
  SmallVector<int64_t> shape = {input.getDimSize(0), outChannels};
  for (int64_t i = 0; i < spatial; ++i) {
    auto size =
        windowedSize(input.getDimSize(i + 2), kernel[i], strides[i], pads[i],
                     pads[i + spatial], dilations[i], ceilMode);
    if (!size)
      return emitOptionalError(loc, "window does not fit spatial axis ", i);
    shape.push_back(*size);
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range [0, " << rank << ")";
  return success();
}

/// Whether the two operands of a contraction may be multiplied: one element
/// type, or two FP8 types (E5M2 gradients against E4M3 weights).
LogicalResult checkContractionOperands(std::optional<Location> loc, Value a,
                                       Value b) {
  Type ta = tensorType(a).getElementType(), tb = tensorType(b).getElementType();
  auto isFP8 = [](Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); };
  if (ta != tb && !(isFP8(ta) && isFP8(tb)))
    return emitOptionalError(loc,
                             "contraction operands must have one element "
                             "type (or both be FP8), got ",
                             ta, " and ", tb);
  return success();
}

/// A contraction's stated result may have any float element type: the FP32
/// accumulator is rounded once into it. The shape must be the inferred one.
bool contractionResultCompatible(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != 1 || actual.size() != 1)
    return false;
  auto a = dyn_cast<RankedTensorType>(inferred.front());
  auto b = dyn_cast<RankedTensorType>(actual.front());
  return a && b && a.getShape() == b.getShape() &&
         isa<FloatType>(b.getElementType());
}

/// Both FP8 scales or neither.
LogicalResult verifyScales(Operation *op, Value first, Value second) {
  if (static_cast<bool>(first) != static_cast<bool>(second))
    return op->emitOpError("takes both FP8 scales or neither");
  return success();
}

/// A contraction's FP8 scales: its trailing operand groups from ODS group
/// `firstScaleGroup` on, both present or neither.
template <typename OpTy>
OperandRange trailingFP8Scales(OpTy op, unsigned firstScaleGroup) {
  unsigned start = op.getODSOperandIndexAndLength(firstScaleGroup).first;
  return op->getOperands().drop_front(start);
}

/// Sets a contraction's two FP8 scales, or clears both when `scales` is
/// empty. Each range is fetched after the previous edit, because changing
/// one operand group moves the ones after it.
template <typename OpTy>
LogicalResult setFP8ScalePair(OpTy op, MutableOperandRange (OpTy::*first)(),
                              MutableOperandRange (OpTy::*second)(),
                              ValueRange scales) {
  if (scales.empty()) {
    (op.*second)().clear();
    (op.*first)().clear();
    return success();
  }
  if (scales.size() != 2)
    return failure();
  (op.*first)().assign(scales[0]);
  (op.*second)().assign(scales[1]);
  return success();
}

/// The role of operand `index` of a contraction whose ODS operand groups are
/// (x, y, [bias], [x_scale], [y_scale]): the bias has the result's type and
/// the scales are FP32.
template <typename OpTy>
PrecisionRole contractionOperandRole(OpTy op, unsigned index,
                                     unsigned firstScaleGroup,
                                     std::optional<unsigned> biasGroup) {
  if (biasGroup) {
    auto [start, length] = op.getODSOperandIndexAndLength(*biasGroup);
    if (index >= start && index < start + length)
      return PrecisionRole::Output;
  }
  unsigned firstScale = op.getODSOperandIndexAndLength(firstScaleGroup).first;
  return index >= firstScale ? PrecisionRole::F32 : PrecisionRole::Compute;
}

/// A loss's result: 0-d unless reduction is none, then the labels' shape.
LogicalResult inferLoss(std::optional<Location> loc, RankedTensorType scores,
                        RankedTensorType labels, Value weights,
                        Reduction reduction, SmallVectorImpl<Type> &types) {
  if (scores.getRank() < 2 || labels.getRank() != scores.getRank() - 1)
    return emitOptionalError(loc,
                             "expects scores (N, C, d...) and labels "
                             "(N, d...), got ",
                             scores, " and ", labels);
  for (int64_t i = 0; i < labels.getRank(); ++i)
    if (labels.getDimSize(i) != scores.getDimSize(i == 0 ? 0 : i + 1))
      return emitOptionalError(loc, "labels ", labels, " do not match scores ",
                               scores);
  if (weights &&
      tensorType(weights).getShape() != ArrayRef<int64_t>{scores.getDimSize(1)})
    return emitOptionalError(loc, "weights must have shape (C)");
  Type element = scores.getElementType();
  if (reduction == Reduction::none)
    types.push_back(RankedTensorType::get(labels.getShape(), element));
  else
    types.push_back(RankedTensorType::get({}, element));
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// Elementwise.
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  if (tensorType(adaptor.getX()).getElementType() !=
      tensorType(adaptor.getY()).getElementType())
    return emitOptionalError(loc, "x and y must have the same element type");
  return inferBroadcastResult(loc, adaptor.getOperands(), nullptr, types);
}

LogicalResult DropoutOp::verify() {
  float ratio = getRatio().convertToFloat();
  if (ratio < 0.0f || ratio >= 1.0f)
    return emitOpError("ratio must be in [0, 1), got ") << ratio;
  if (getMask().getType().getShape() != getInput().getType().getShape() ||
      getOutput().getType() != getInput().getType())
    return emitOpError("output and mask must have the input's shape");
  if (!getRng().empty() && getRng().size() != 2)
    return emitOpError("rng must be empty or (seed, step), got ")
           << getRng().size() << " operands";
  if (!getRng().empty() && !getTraining())
    return emitOpError("the seed and step operands need training = true");
  if (getRng().empty() != !getStream())
    return emitOpError("a stream id goes with the seed and step operands");
  if (auto stream = getStreamAttr();
      stream && (stream.getInt() < 0 || stream.getInt() > 0xffffffffll))
    return emitOpError("stream must be in [0, 2^32), got ") << stream.getInt();
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions and pooling.
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (failed(checkContractionOperands(loc, adaptor.getLhs(), adaptor.getRhs())))
    return failure();
  auto lhs = tensorType(adaptor.getLhs()), rhs = tensorType(adaptor.getRhs());
  if (lhs.getRank() < 1 || rhs.getRank() < 1)
    return emitOptionalError(loc, "matmul operands must have rank >= 1");
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  bool vecLhs = a.size() == 1, vecRhs = b.size() == 1;
  if (vecLhs)
    a.insert(a.begin(), 1);
  if (vecRhs)
    b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return emitOptionalError(loc, "contracting dimensions differ: ", lhs,
                             " and ", rhs);
  auto batch =
      broadcastShapes(ArrayRef(a).drop_back(2), ArrayRef(b).drop_back(2));
  if (!batch)
    return emitOptionalError(
        loc, "batch dimensions are not broadcastable: ", lhs, " and ", rhs);
  SmallVector<int64_t> shape(*batch);
  if (!vecLhs)
    shape.push_back(a[a.size() - 2]);
  if (!vecRhs)
    shape.push_back(b.back());
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

bool MatMulOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return contractionResultCompatible(l, r);
}

LogicalResult MatMulOp::verify() {
  return verifyScales(*this, getLhsScale(), getRhsScale());
}

PrecisionRole MatMulOp::getOperandPrecisionRole(unsigned index) {
  return contractionOperandRole(*this, index, /*firstScaleGroup=*/2,
                                /*biasGroup=*/std::nullopt);
}

bool MatMulOp::supportsWideResult() { return true; }

bool MatMulOp::acceptsFP8Operands() { return true; }

OperandRange MatMulOp::getFP8Scales() { return trailingFP8Scales(*this, 2); }

LogicalResult MatMulOp::setFP8Scales(ValueRange scales) {
  return setFP8ScalePair(*this, &MatMulOp::getLhsScaleMutable,
                         &MatMulOp::getRhsScaleMutable, scales);
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  if (failed(checkContractionOperands(loc, adaptor.getA(), adaptor.getB())))
    return failure();
  auto a = tensorType(adaptor.getA()), b = tensorType(adaptor.getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOptionalError(loc, "gemm operands must be 2-D");
  int64_t m = a.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t k = a.getDimSize(adaptor.getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(adaptor.getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(adaptor.getTransB() ? 0 : 1);
  if (k != kb)
    return emitOptionalError(loc, "contracting dimensions differ: ", k, " and ",
                             kb);
  if (Value c = adaptor.getC()) {
    auto bc = broadcastShapes({m, n}, tensorType(c).getShape());
    if (!bc || *bc != SmallVector<int64_t>{m, n})
      return emitOptionalError(loc, "C ", c.getType(),
                               " does not broadcast to (", m, ", ", n, ")");
  }
  types.push_back(RankedTensorType::get({m, n}, a.getElementType()));
  return success();
}

bool GemmOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return contractionResultCompatible(l, r);
}

LogicalResult GemmOp::verify() {
  return verifyScales(*this, getAScale(), getBScale());
}

PrecisionRole GemmOp::getOperandPrecisionRole(unsigned index) {
  return contractionOperandRole(*this, index, /*firstScaleGroup=*/3,
                                /*biasGroup=*/2);
}

bool GemmOp::supportsWideResult() { return true; }

bool GemmOp::acceptsFP8Operands() { return true; }

OperandRange GemmOp::getFP8Scales() { return trailingFP8Scales(*this, 3); }

LogicalResult GemmOp::setFP8Scales(ValueRange scales) {
  return setFP8ScalePair(*this, &GemmOp::getAScaleMutable,
                         &GemmOp::getBScaleMutable, scales);
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  if (failed(checkContractionOperands(loc, adaptor.getInput(),
                                      adaptor.getWeight())))
    return failure();
  auto input = tensorType(adaptor.getInput());
  auto weight = tensorType(adaptor.getWeight());
  int64_t group = adaptor.getGroup();
  if (weight.getRank() != input.getRank())
    return emitOptionalError(loc, "weight rank must equal input rank");
  if (group < 1 || input.getDimSize(1) != weight.getDimSize(1) * group ||
      weight.getDimSize(0) % group != 0)
    return emitOptionalError(loc, "channels do not match: input ", input,
                             ", weight ", weight, ", group ", group);
  if (Value bias = adaptor.getBias())
    if (tensorType(bias).getShape() != ArrayRef<int64_t>{weight.getDimSize(0)})
      return emitOptionalError(loc, "bias must have shape (M)");
  return inferWindowed(loc, input, weight.getDimSize(0),
                       weight.getShape().drop_front(2), adaptor.getStrides(),
                       adaptor.getPads(), adaptor.getDilations(),
                       /*ceilMode=*/false, types);
}

bool ConvOp::isCompatibleReturnTypes(TypeRange l, TypeRange r) {
  return contractionResultCompatible(l, r);
}

LogicalResult ConvOp::verify() {
  return verifyScales(*this, getInputScale(), getWeightScale());
}

PrecisionRole ConvOp::getOperandPrecisionRole(unsigned index) {
  return contractionOperandRole(*this, index, /*firstScaleGroup=*/3,
                                /*biasGroup=*/2);
}

bool ConvOp::supportsWideResult() { return true; }

bool ConvOp::acceptsFP8Operands() { return true; }

OperandRange ConvOp::getFP8Scales() { return trailingFP8Scales(*this, 3); }

LogicalResult ConvOp::setFP8Scales(ValueRange scales) {
  return setFP8ScalePair(*this, &ConvOp::getInputScaleMutable,
                         &ConvOp::getWeightScaleMutable, scales);
}

LogicalResult MaxPoolOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  return inferWindowed(loc, input, input.getDimSize(1),
                       adaptor.getKernelShape(), adaptor.getStrides(),
                       adaptor.getPads(), adaptor.getDilations(),
                       adaptor.getCeilMode(), types);
}

LogicalResult AveragePoolOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  SmallVector<int64_t> ones(adaptor.getKernelShape().size(), 1);
  return inferWindowed(loc, input, input.getDimSize(1),
                       adaptor.getKernelShape(), adaptor.getStrides(),
                       adaptor.getPads(), ones, adaptor.getCeilMode(), types);
}

LogicalResult GlobalAveragePoolOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  if (input.getRank() < 3)
    return emitOptionalError(loc, "expects an input of rank >= 3 (N, C, ...)");
  SmallVector<int64_t> shape(input.getRank(), 1);
  shape[0] = input.getDimSize(0);
  shape[1] = input.getDimSize(1);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax, losses.
//===----------------------------------------------------------------------===//

static LogicalResult checkChannelVectors(std::optional<Location> loc,
                                         RankedTensorType input,
                                         ValueRange vectors) {
  if (input.getRank() < 2)
    return emitOptionalError(loc, "expects an input of rank >= 2 (N, C, ...)");
  for (Value v : vectors)
    if (tensorType(v).getShape() != ArrayRef<int64_t>{input.getDimSize(1)})
      return emitOptionalError(loc, "per-channel operand ", v.getType(),
                               " must have shape (", input.getDimSize(1), ")");
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  if (failed(
          checkChannelVectors(loc, input, adaptor.getOperands().drop_front())))
    return failure();
  types.push_back(input);
  return success();
}

// Batch normalisation keeps its statistics and affine parameters in FP32; only
// the data path follows the surrounding precision.
PrecisionRole BatchNormOp::getOperandPrecisionRole(unsigned index) {
  return index == 0 ? PrecisionRole::Compute : PrecisionRole::F32;
}

PrecisionRole BatchNormTrainOp::getOperandPrecisionRole(unsigned index) {
  return index == 0 ? PrecisionRole::Compute : PrecisionRole::F32;
}

PrecisionRole BatchNormTrainOp::getResultPrecisionRole(unsigned index) {
  return index == 0 ? PrecisionRole::Compute : PrecisionRole::F32;
}

LogicalResult BatchNormTrainOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  if (failed(
          checkChannelVectors(loc, input, adaptor.getOperands().drop_front())))
    return failure();
  types.push_back(input);
  types.push_back(adaptor.getRunningMean().getType());
  types.push_back(adaptor.getRunningVar().getType());
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range [0, ",
                             input.getRank(), ")");
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  for (Value v : {adaptor.getScale(), adaptor.getBias()}) {
    if (!v)
      continue;
    auto bc = broadcastShapes(normalized, tensorType(v).getShape());
    if (!bc || ArrayRef<int64_t>(*bc) != normalized)
      return emitOptionalError(loc, "scale and bias must broadcast to the "
                                    "normalised shape");
  }
  SmallVector<int64_t> stats(input.getShape());
  for (int64_t i = axis; i < input.getRank(); ++i)
    stats[i] = 1;
  auto statType = RankedTensorType::get(stats, Float32Type::get(ctx));
  types.append({input, statType, statType});
  return success();
}

// The mean and inverse standard deviation are always FP32.
LogicalResult AttentionOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto q = tensorType(adaptor.getQuery());
  auto k = tensorType(adaptor.getKey());
  auto v = tensorType(adaptor.getValue());
  if (q.getElementType() != k.getElementType() ||
      q.getElementType() != v.getElementType())
    return emitOptionalError(loc, "query, key and value must have one element "
                                  "type");
  int64_t rank = q.getRank();
  if (rank < 2 || k.getRank() != rank || v.getRank() != rank)
    return emitOptionalError(loc, "query, key and value must have one rank, "
                                  "at least 2");
  ArrayRef<int64_t> batch = q.getShape().drop_back(2);
  if (k.getShape().drop_back(2) != batch || v.getShape().drop_back(2) != batch)
    return emitOptionalError(loc, "query, key and value must have the same "
                                  "leading axes");
  int64_t tq = q.getDimSize(rank - 2), tk = k.getDimSize(rank - 2);
  if (k.getDimSize(rank - 1) != q.getDimSize(rank - 1))
    return emitOptionalError(loc, "key must have the query's last axis (",
                             q.getDimSize(rank - 1), ")");
  if (v.getDimSize(rank - 2) != tk)
    return emitOptionalError(loc, "value must have as many rows as key (", tk,
                             ")");
  SmallVector<int64_t> scores(batch);
  scores.append({tq, tk});
  if (Value mask = adaptor.getMask()) {
    auto bc = broadcastShapes(scores, tensorType(mask).getShape());
    if (!bc || ArrayRef<int64_t>(*bc) != ArrayRef<int64_t>(scores))
      return emitOptionalError(loc, "mask must broadcast to the scores' shape "
                                    "[..., Tq, Tk]");
  }
  SmallVector<int64_t> out(batch);
  out.append({tq, v.getDimSize(rank - 1)});
  SmallVector<int64_t> rows(batch);
  rows.push_back(tq);
  types.push_back(RankedTensorType::get(out, q.getElementType()));
  types.push_back(RankedTensorType::get(rows, Float32Type::get(ctx)));
  return success();
}

PrecisionRole AttentionOp::getOperandPrecisionRole(unsigned index) {
  return index < 3 ? PrecisionRole::Compute : PrecisionRole::F32; // the mask
}

PrecisionRole AttentionOp::getResultPrecisionRole(unsigned index) {
  return index == 0 ? PrecisionRole::Compute : PrecisionRole::F32;
}

PrecisionRole LayerNormOp::getResultPrecisionRole(unsigned index) {
  return index == 0 ? PrecisionRole::Compute : PrecisionRole::F32;
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType().getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType().getRank());
}

LogicalResult SoftmaxCrossEntropyLossOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  auto scores = tensorType(adaptor.getScores());
  if (failed(inferLoss(loc, scores, tensorType(adaptor.getLabels()),
                       adaptor.getWeights(), adaptor.getReduction(), types)))
    return failure();
  types.push_back(scores);
  return success();
}

LogicalResult NegativeLogLikelihoodLossOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  return inferLoss(loc, tensorType(adaptor.getInput()),
                   tensorType(adaptor.getTarget()), adaptor.getWeight(),
                   adaptor.getReduction(), types);
}

//===----------------------------------------------------------------------===//
// Shape and data movement.
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getOutput().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << in << " (" << in.getNumElements() << " elements) to " << out
           << " (" << out.getNumElements() << ")";
  DenseIntElementsAttr shape;
  if (getShape() && matchPattern(getShape(), m_Constant(&shape))) {
    if (shape.getNumElements() != out.getRank())
      return emitOpError("shape operand has ")
             << shape.getNumElements() << " entries for a result of rank "
             << out.getRank();
    for (auto [i, v] : llvm::enumerate(shape.getValues<int64_t>()))
      if (v > 0 && v != out.getDimSize(i))
        return emitOpError("shape operand entry ")
               << i << " is " << v << " but the result has "
               << out.getDimSize(i);
  }
  return success();
}

LogicalResult ExpandOp::verify() {
  auto in = getInput().getType(), out = getOutput().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("cannot change the element type");
  auto bc = broadcastShapes(in.getShape(), out.getShape());
  if (!bc || ArrayRef<int64_t>(*bc) != out.getShape())
    return emitOpError("cannot broadcast ") << in << " to " << out;
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return emitOptionalError(loc, "perm has ", perm.size(),
                             " entries for rank ", input.getRank());
  SmallVector<bool> seen(perm.size(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= input.getRank() || seen[p])
      return emitOptionalError(loc, "perm is not a permutation");
    seen[p] = true;
    shape.push_back(input.getDimSize(p));
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis > input.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range [0, ",
                             input.getRank(), "]");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < input.getRank(); ++i)
    (i < axis ? outer : inner) *= input.getDimSize(i);
  types.push_back(
      RankedTensorType::get({outer, inner}, input.getElementType()));
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  SmallVector<bool> drop(input.getRank(), false);
  for (int64_t axis : adaptor.getAxes()) {
    if (axis < 0 || axis >= input.getRank() || drop[axis])
      return emitOptionalError(loc, "squeeze axis ", axis,
                               " is out of range or repeated");
    if (input.getDimSize(axis) != 1)
      return emitOptionalError(loc, "cannot squeeze axis ", axis, " of size ",
                               input.getDimSize(axis));
    drop[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < input.getRank(); ++i)
    if (!drop[i])
      shape.push_back(input.getDimSize(i));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  int64_t rank = input.getRank() + adaptor.getAxes().size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : adaptor.getAxes()) {
    if (axis < 0 || axis >= rank || inserted[axis])
      return emitOptionalError(loc, "unsqueeze axis ", axis,
                               " is out of range or repeated");
    inserted[axis] = true;
  }
  SmallVector<int64_t> shape;
  auto dims = input.getShape();
  for (int64_t i = 0, j = 0; i < rank; ++i)
    shape.push_back(inserted[i] ? 1 : dims[j++]);
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "concat needs at least one input");
  auto first = tensorType(adaptor.getInputs().front());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= first.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range");
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : adaptor.getInputs()) {
    auto t = tensorType(v);
    if (t.getRank() != first.getRank())
      return emitOptionalError(loc, "concat inputs differ in rank");
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (i != axis && t.getDimSize(i) != first.getDimSize(i))
        return emitOptionalError(
            loc, "concat inputs differ off the axis: ", first, " and ", t);
    shape[axis] += t.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range");
  int64_t total = 0;
  for (int64_t size : adaptor.getSizes()) {
    if (size < 0)
      return emitOptionalError(loc, "split sizes must be non-negative");
    SmallVector<int64_t> shape(input.getShape());
    shape[axis] = size;
    types.push_back(RankedTensorType::get(shape, input.getElementType()));
    total += size;
  }
  if (total != input.getDimSize(axis))
    return emitOptionalError(loc, "split sizes sum to ", total, " but axis ",
                             axis, " has ", input.getDimSize(axis));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto input = tensorType(adaptor.getInput());
  auto starts = adaptor.getStarts(), ends = adaptor.getEnds(),
       steps = adaptor.getSteps();
  int64_t rank = input.getRank();
  if (static_cast<int64_t>(starts.size()) != rank ||
      static_cast<int64_t>(ends.size()) != rank ||
      static_cast<int64_t>(steps.size()) != rank)
    return emitOptionalError(loc,
                             "starts, ends and steps need one entry per "
                             "axis (",
                             rank, ")");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t dim = input.getDimSize(i), s = starts[i], e = ends[i],
            st = steps[i];
    bool ok =
        st > 0 ? (0 <= s && s <= e && e <= dim)
               : (st < 0 && -1 <= e && e <= s && s < std::max<int64_t>(dim, 1));
    if (!ok)
      return emitOptionalError(loc, "slice of axis ", i, " [", s, ", ", e,
                               ") step ", st, " is not normalised for size ",
                               dim);
    int64_t len = st > 0 ? (e - s + st - 1) / st : (s - e + (-st) - 1) / (-st);
    shape.push_back(std::max<int64_t>(len, 0));
  }
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto data = tensorType(adaptor.getData());
  auto indices = tensorType(adaptor.getIndices());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= data.getRank())
    return emitOptionalError(loc, "axis ", axis, " is out of range");
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  types.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult TriluOp::verify() {
  if (getInput().getType().getRank() < 2)
    return emitOpError("expects rank >= 2");
  return success();
}

LogicalResult RangeOp::verify() {
  for (Value v : {getStart(), getLimit(), getDelta()})
    if (tensorType(v).getRank() != 0)
      return emitOpError("start, limit and delta must be 0-d tensors");
  if (getOutput().getType().getRank() != 1 ||
      getOutput().getType().getElementType() !=
          getStart().getType().getElementType())
    return emitOpError("result must be 1-D of the operands' element type");
  return success();
}

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  int64_t rank = tensorType(adaptor.getInput()).getRank();
  int64_t start = static_cast<int64_t>(adaptor.getStart());
  int64_t end =
      adaptor.getEnd() ? static_cast<int64_t>(*adaptor.getEnd()) : rank;
  if (start < 0 || end > rank || start > end)
    return emitOptionalError(loc, "shape range [", start, ", ", end,
                             ") is not within rank ", rank);
  types.push_back(
      RankedTensorType::get({end - start}, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult ConstantOfShapeOp::verify() {
  Type valueType = getValue().getType();
  if (auto shaped = dyn_cast<ShapedType>(valueType))
    valueType = shaped.getElementType();
  if (valueType != getOutput().getType().getElementType())
    return emitOpError("value type ")
           << valueType << " differs from the result element type";
  return success();
}

#define GET_OP_CLASSES
#include "mpt/Dialect/MPT/IR/MPTOps.cpp.inc"
