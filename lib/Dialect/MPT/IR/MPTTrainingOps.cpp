//===- MPTTrainingOps.cpp - verifiers of the backward and training ops ----===//
#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mpt;

LogicalResult UnaryGradOp::verify() {
  StringRef kind = stringifyUnaryGradKind(getKind());
  if ((getMinAttr() || getMaxAttr()) && getKind() != UnaryGradKind::clip)
    return emitOpError("only kind 'clip' takes 'min' and 'max'");
  // beta and gamma belong to the functions that declare them.
  static const std::pair<llvm::StringLiteral, llvm::StringLiteral> params[] = {
#define MPTRT_UNARY_PARAM(Name, kind, param, value) {#kind, #param},
#include "mptrt/generated/UnaryKinds.def"
  };
  for (auto [param, attr] :
       {std::pair<StringRef, Attribute>{"beta", getBetaAttr()},
        std::pair<StringRef, Attribute>{"gamma", getGammaAttr()}}) {
    bool declared = llvm::any_of(params, [&](const auto &row) {
      return row.first == kind && row.second == param;
    });
    if (attr && !declared)
      return emitOpError("kind '") << kind << "' takes no '" << param << "'";
  }
  return success();
}

LogicalResult SGDUpdateOp::verify() {
  bool hasMomentum = !getMomentum().isZero();
  if (hasMomentum != static_cast<bool>(getMomentumBuffer()))
    return emitOpError(
        "takes a momentum buffer exactly when 'momentum' is nonzero");
  if (static_cast<bool>(getMomentumBuffer()) !=
      static_cast<bool>(getNewMomentumBuffer()))
    return emitOpError(
        "returns a new momentum buffer exactly when it takes one");
  if (getMomentumBuffer() &&
      getMomentumBuffer().getType() != getParam().getType())
    return emitOpError("momentum buffer type differs from the parameter's");
  if (getGrad().getType() != getParam().getType() ||
      getNewParam().getType() != getParam().getType())
    return emitOpError(
        "parameter, gradient and new parameter must have one type");
  if (getNesterov() && !hasMomentum)
    return emitOpError("nesterov needs a nonzero momentum");
  return success();
}

LogicalResult AdamWUpdateOp::verify() {
  if (getStochasticRounding() != static_cast<bool>(getSeed()))
    return emitOpError(
        "takes a seed exactly when 'stochastic_rounding' is set");
  if (getStochasticRounding() &&
      !cast<ShapedType>(getParam().getType()).getElementType().isBF16())
    return emitOpError("rounds stochastically only into a bf16 parameter, not ")
           << getParam().getType();
  if (getStream() && !getStochasticRounding())
    return emitOpError("has a 'stream' only with 'stochastic_rounding'");
  if (getSharded() && !getStochasticRounding())
    return emitOpError("is 'sharded' only with 'stochastic_rounding' (the "
                       "flag offsets the draws)");
  if (getStream() && static_cast<int64_t>(*getStream()) > int64_t(0xffffffff))
    return emitOpError("'stream' must be in [0, 2^32)");
  auto shape = cast<ShapedType>(getParam().getType()).getShape();
  for (Value v : {getGrad(), getExpAvg(), getExpAvgSq()})
    if (cast<ShapedType>(v.getType()).getShape() != shape)
      return emitOpError(
          "gradient and moments must have the parameter's shape");
  return success();
}

LogicalResult LRScheduleOp::verify() {
  if (static_cast<int64_t>(getWarmupSteps()) < 0 ||
      static_cast<int64_t>(getTotalSteps()) < 0)
    return emitOpError("step counts must not be negative");
  return success();
}

LogicalResult UpdateFP8ScaleOp::verify() {
  if (!(getFp8Max().convertToDouble() > 0))
    return emitOpError("fp8_max must be positive");
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one operand");
  if (getInputs().getTypes() != getOutputs().getTypes())
    return emitOpError("must return one result of its operand's type for each "
                       "operand");
  return success();
}

LogicalResult AllReduceOp::buildGradient(GradientBuilder &gb) {
  // Every rank's loss reads the same result: d(sum of the ranks' losses) /
  // d(this rank's operand) is the mean (the sum) over the ranks of the
  // result's gradient.
  SmallVector<unsigned> needed;
  SmallVector<Value> grads;
  SmallVector<Type> types;
  for (unsigned i = 0, e = getNumOperands(); i < e; ++i)
    if (gb.needsGrad(i)) {
      needed.push_back(i);
      grads.push_back(gb.resultGrad(i));
      types.push_back(grads.back().getType());
    }
  if (needed.empty())
    return success();
  auto back = AllReduceOp::create(gb.builder(), gb.loc(), types, grads,
                                  getReduceInF32Attr(), getSumAttr());
  for (auto [i, g] : llvm::zip(needed, back.getOutputs()))
    gb.addOperandGrad(i, g);
  return success();
}

/// The elements of one rank's shard of a tensor of `numElements` over
/// `worldSize` ranks.
static int64_t shardElements(int64_t numElements, int64_t worldSize) {
  return (numElements + worldSize - 1) / worldSize;
}

/// Checks that each of `shards` is the 1-D shard, over `worldSize` ranks, of
/// the tensor of the same position in `whole`, with its element type.
static LogicalResult verifyShards(Operation *op, int64_t worldSize,
                                  TypeRange whole, TypeRange shards) {
  if (worldSize < 1)
    return op->emitOpError("world_size must be at least 1; got ") << worldSize;
  if (whole.empty())
    return op->emitOpError("needs at least one operand");
  if (whole.size() != shards.size())
    return op->emitOpError("must have as many results as operands");
  for (auto [index, pair] : llvm::enumerate(llvm::zip(whole, shards))) {
    auto full = cast<RankedTensorType>(std::get<0>(pair));
    auto shard = cast<RankedTensorType>(std::get<1>(pair));
    if (!full.hasStaticShape())
      return op->emitOpError("needs static shapes; #")
             << index << " is " << full;
    auto expected =
        RankedTensorType::get({shardElements(full.getNumElements(), worldSize)},
                              full.getElementType());
    if (shard != expected)
      return op->emitOpError("#")
             << index << ": the shard of " << full << " over " << worldSize
             << " ranks is " << expected << "; got " << shard;
  }
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  return verifyShards(*this, getWorldSize(), getInputs().getTypes(),
                      getOutputs().getTypes());
}

Type ReduceScatterOp::getAccumulationType() {
  if (getReduceInF32())
    return Float32Type::get(getContext());
  return elementTypeOf(getOutputs().front().getType());
}

LogicalResult AllGatherOp::verify() {
  return verifyShards(*this, getWorldSize(), getOutputs().getTypes(),
                      getInputs().getTypes());
}

LogicalResult ShardOp::verify() {
  Type whole = getInput().getType(), shard = getOutput().getType();
  return verifyShards(*this, getWorldSize(), ArrayRef<Type>(whole),
                      ArrayRef<Type>(shard));
}

Type AllReduceOp::getAccumulationType() {
  if (getReduceInF32())
    return Float32Type::get(getContext());
  return elementTypeOf(getOutputs().front().getType());
}
