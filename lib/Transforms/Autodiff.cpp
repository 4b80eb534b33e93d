//===- Autodiff.cpp - reverse-mode gradients of mpt functions -------------===//
//
// 1. Activity: an op is active when a float operand depends on a `wrt`
//    value (forward walk) and one of its results reaches the loss (backward
//    walk). Only active ops need rules.
// 2. The reverse walk visits active ops from last to first. Each result's
//    gradient contributions are kept as built; a rule asks for the sum in
//    the type it computes in (`resultGrad`), and the engine adds them in
//    FP32 and rounds once. Rules never see more than one contribution.
// 3. A `wrt` value's gradient is the FP32 sum of its contributions.
//
//===----------------------------------------------------------------------===//
#include "mpt/Transforms/Autodiff.h"

#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

namespace mpt {
namespace {

class Engine final : public GradientBuilder {
public:
  Engine(OpBuilder &b, FP8GradientScales *fp8) : b(b), fp8(fp8) {}

  // GradientBuilder.
  OpBuilder &builder() override { return b; }
  Operation *op() override { return current; }
  Value resultGrad(unsigned index, Type elementType) override {
    return sum(current->getResult(index), elementType);
  }
  Value resultGradOrZero(unsigned index, Type elementType) override {
    Value result = current->getResult(index);
    if (Value g = sum(result, elementType))
      return g;
    auto type = cast<RankedTensorType>(result.getType());
    return grad::zeros(b, current->getLoc(),
                       elementType ? type.clone(elementType) : type);
  }
  FailureOr<std::pair<Value, Value>>
  quantizedResultGrad(unsigned index, Type fp8Type) override {
    Value result = current->getResult(index);
    auto key = std::make_pair(result, fp8Type);
    if (auto it = quantized.find(key); it != quantized.end())
      return it->second;
    Value g = sum(result, b.getF32Type());
    if (!g)
      return std::make_pair(Value(), Value());
    if (!fp8)
      return current->emitOpError(
                 "needs a scale for its FP8 gradient; only "
                 "--build-training-step keeps FP8 gradient scales"),
             failure();
    FailureOr<Value> scale = fp8->scaleFor(b, result, g, fp8Type);
    if (failed(scale))
      return failure();
    auto type = cast<RankedTensorType>(g.getType()).clone(fp8Type);
    Value q = QuantizeOp::create(b, current->getLoc(), type, g, *scale,
                                 /*inserted=*/true)
                  .getResult();
    return quantized[key] = std::make_pair(q, *scale);
  }
  bool needsGrad(unsigned index) override {
    Value operand = current->getOperand(index);
    return varied.contains(operand) &&
           cast<GradientOpInterface>(current).isDifferentiableOperand(index);
  }
  void addOperandGrad(unsigned index, Value g) override {
    if (g)
      contributions[current->getOperand(index)].push_back(g);
  }

  FailureOr<SmallVector<Value>> run(Value loss, ValueRange wrt, Value seed);

private:
  /// The contributions to `v`'s gradient summed in FP32 and rounded once
  /// into `elementType` (default: `v`'s); null when there are none.
  Value sum(Value v, Type elementType);
  void markVaried(Block &block, ValueRange wrt);
  void markUseful(Block &block, Value loss);

  OpBuilder &b;
  FP8GradientScales *fp8;
  Operation *current = nullptr;
  DenseSet<Value> varied;       // depends on a wrt value
  DenseSet<Operation *> useful; // some result reaches the loss
  llvm::MapVector<Value, SmallVector<Value, 2>> contributions;
  DenseMap<std::pair<Value, Type>, Value> sums;
  DenseMap<std::pair<Value, Type>, std::pair<Value, Value>> quantized;
};

Value Engine::sum(Value v, Type elementType) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!elementType)
    elementType = type.getElementType();
  auto it = contributions.find(v);
  if (it == contributions.end() || it->second.empty())
    return {};
  auto key = std::make_pair(v, elementType);
  if (Value cached = sums.lookup(key))
    return cached;
  ArrayRef<Value> parts = it->second;
  Location loc = v.getLoc();
  Value total;
  if (parts.size() == 1) {
    total = grad::castTo(b, loc, parts[0], elementType);
  } else {
    Type f32 = b.getF32Type();
    total = grad::castTo(b, loc, parts[0], f32);
    for (Value part : parts.drop_front())
      total = AddOp::create(b, loc, total, grad::castTo(b, loc, part, f32))
                  .getResult();
    total = grad::castTo(b, loc, total, elementType);
  }
  // Later contributions would be missed, so the sum is final once asked for;
  // the reverse walk guarantees that every user has run by then.
  sums[key] = total;
  return total;
}

void Engine::markVaried(Block &block, ValueRange wrt) {
  for (Value v : wrt)
    varied.insert(v);
  for (Operation &op : block) {
    bool any = llvm::any_of(op.getOperands(),
                            [&](Value v) { return varied.contains(v); });
    if (!any)
      continue;
    for (Value r : op.getResults())
      if (isFloatLike(r.getType()))
        varied.insert(r);
  }
}

void Engine::markUseful(Block &block, Value loss) {
  DenseSet<Value> reaches = {loss};
  for (Operation &op : llvm::reverse(block)) {
    if (!llvm::any_of(op.getResults(),
                      [&](Value r) { return reaches.contains(r); }))
      continue;
    useful.insert(&op);
    for (Value operand : op.getOperands())
      reaches.insert(operand);
  }
}

FailureOr<SmallVector<Value>> Engine::run(Value loss, ValueRange wrt,
                                          Value seed) {
  Block *block = loss.getParentBlock();
  DenseSet<Operation *> before;
  for (Operation &op : *block)
    before.insert(&op);
  markVaried(*block, wrt);
  markUseful(*block, loss);
  if (!seed)
    seed =
        grad::scalar(b, loss.getLoc(), 1.0,
                     cast<RankedTensorType>(loss.getType()).getElementType());
  contributions[loss].push_back(seed);

  // The ops to differentiate, collected first: rules add ops to the block.
  SmallVector<Operation *> active;
  for (Operation &op : *block)
    if (useful.contains(&op) && !op.hasTrait<OpTrait::IsTerminator>() &&
        llvm::any_of(op.getOperands(),
                     [&](Value v) { return varied.contains(v); }))
      active.push_back(&op);

  for (Operation *op : llvm::reverse(active)) {
    bool hasGrad = llvm::any_of(op->getResults(), [&](Value r) {
      auto it = contributions.find(r);
      return it != contributions.end() && !it->second.empty();
    });
    if (!hasGrad)
      continue;
    auto rule = dyn_cast<GradientOpInterface>(op);
    if (!rule)
      return op->emitError("'") << op->getName()
                                << "' has no gradient rule, and it lies on the "
                                   "path from a trainable value "
                                   "to the loss";
    current = op;
    if (failed(rule.buildGradient(*this)))
      return op->emitError("while building the gradient of '")
             << op->getName() << "'";
    current = nullptr;
  }

  SmallVector<Value> grads;
  for (Value v : wrt)
    grads.push_back(sum(v, b.getF32Type()));
  // Whatever the rules built is the backward pass (they give it the
  // forward op's location, its ONNX node): mark it.
  for (Operation &op : *block)
    if (!before.contains(&op))
      markBackward(&op);
  return grads;
}

} // namespace

FailureOr<SmallVector<Value>> buildGradients(OpBuilder &b, Value loss,
                                             ValueRange wrt, Value seed,
                                             FP8GradientScales *fp8) {
  Engine engine(b, fp8);
  return engine.run(loss, wrt, seed);
}

LogicalResult appendGradients(func::FuncOp func, ArrayRef<unsigned> wrt) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  if (ret.getNumOperands() == 0)
    return func.emitError("has no result to differentiate");
  OpBuilder b(ret);
  SmallVector<Value> args;
  for (unsigned i : wrt)
    args.push_back(func.getArgument(i));
  auto grads = buildGradients(b, ret.getOperand(0), args);
  if (failed(grads))
    return failure();
  SmallVector<Value> results(ret.getOperands());
  for (auto [arg, g] : llvm::zip(args, *grads)) {
    auto type = cast<RankedTensorType>(arg.getType());
    results.push_back(
        g ? grad::castTo(b, ret.getLoc(), g, type.getElementType())
          : grad::zeros(b, ret.getLoc(), type));
  }
  ret->setOperands(results);
  func.setFunctionType(b.getFunctionType(func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  return success();
}

} // namespace mpt
