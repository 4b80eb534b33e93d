//===- PrecisionRewrite.cpp - apply a precision plan ----------------------===//
//
// Applies the decisions of PrecisionPropagation.cpp in one walk in program
// order: every operand is converted from its source (the value before any
// inserted cast) to the type its user needs, through one cast per producer
// and type that all users share; results take their op's compute type. Casts
// of constants fold. Casts a previous run inserted are looked through, so a
// pair of them becomes one cast (or none) and the old ones are erased.
//
//===----------------------------------------------------------------------===//
#include "PrecisionPlan.h"

#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace mpt::precision {
namespace {

class Rewriter {
public:
  Rewriter(PrecisionPlan &plan, bool keepIOTypes)
      : plan(plan), keepIOTypes(keepIOTypes), ctx(plan.func.getContext()),
        builder(ctx), f32(Float32Type::get(ctx)),
        fp8(Float8E4M3FNType::get(ctx)) {}

  RewriteStats run() {
    Block &entry = plan.func.getBody().front();
    // Reuse the scales of quantizes a previous run inserted.
    for (OpRecord &rec : plan.records)
      if (rec.kind == OpKind::Inserted)
        if (auto quantize = dyn_cast<QuantizeOp>(rec.op))
          scales.try_emplace(source(quantize.getInput()), quantize.getScale());
    for (BlockArgument arg : entry.getArguments())
      if (auto name = plan.func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                             kFP8ScaleAttrName))
        scaleNames.insert(name.getValue());

    for (OpRecord &rec : plan.records) {
      switch (rec.kind) {
      case OpKind::Policy:
        rewritePolicyOp(rec);
        break;
      case OpKind::Fixed:
      case OpKind::Unknown:
        keepOperandTypes(rec.op);
        break;
      case OpKind::Return:
        rewriteReturn(rec.op);
        break;
      case OpKind::Inserted:
      case OpKind::Source:
      case OpKind::Ignored:
        break;
      }
    }
    // Earlier inserted casts are now unused; erase them, users first.
    for (OpRecord &rec : llvm::reverse(plan.records))
      if (rec.kind == OpKind::Inserted && rec.op->use_empty()) {
        rec.op->erase();
        rec.op = nullptr;
        ++stats.staleCastsRemoved;
      }
    addScaleArguments();
    if (!keepIOTypes)
      retypeInputs();
    eraseUnusedScales();
    updateFunctionType();
    return stats;
  }

private:
  /// Looks through casts that a pass inserted.
  Value source(Value value) {
    while (Operation *def = value.getDefiningOp()) {
      const OpRecord *rec = plan.find(def);
      if (!rec || rec->kind != OpKind::Inserted)
        break;
      value = def->getOperand(0);
    }
    return value;
  }

  /// Puts the builder right after the definition of `value`; conversions
  /// of block arguments go to the block's start, in creation order.
  void setInsertionPointAfterDef(Value value) {
    if (Operation *def = value.getDefiningOp()) {
      builder.setInsertionPointAfter(def);
      return;
    }
    Block *block = cast<BlockArgument>(value).getOwner();
    Operation *&last = lastArgConversion[block];
    if (last)
      builder.setInsertionPointAfter(last);
    else
      builder.setInsertionPointToStart(block);
  }

  /// `type` with element type `element`; memoized, since every retyped
  /// value would otherwise go through the context's type uniquer.
  Type retype(Type type, Type element) {
    if (elementTypeOf(type) == element)
      return type;
    auto [it, inserted] = retyped.try_emplace({type, element}, Type());
    if (inserted)
      it->second = withElementType(type, element);
    return it->second;
  }

  /// Records `op` as the latest conversion of a block argument.
  void noteConversion(Value source, Operation *op) {
    if (auto arg = dyn_cast<BlockArgument>(source))
      lastArgConversion[arg.getOwner()] = op;
  }

  /// A name for the tensor `value`: the parameter or input name, or the
  /// node name of its producer.
  std::string tensorName(Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      for (StringRef attr : {kParamAttrName, kInputAttrName})
        if (auto name = plan.func.getArgAttrOfType<StringAttr>(
                arg.getArgNumber(), attr))
          return name.getValue().str();
      return ("arg" + Twine(arg.getArgNumber())).str();
    }
    Operation *def = value.getDefiningOp();
    std::string name = onnxNodeName(def->getLoc()).str();
    if (name.empty())
      name = def->getName().getStringRef().str();
    if (def->getNumResults() > 1)
      name += ":" + std::to_string(cast<OpResult>(value).getResultNumber());
    return name;
  }

  /// The FP8 scale of `value`: a new function argument the first time.
  Value scaleOf(Value value) {
    auto [it, inserted] = scales.try_emplace(value, Value());
    if (!inserted)
      return it->second;
    std::string base = tensorName(value), name = base;
    for (unsigned n = 1; !scaleNames.insert(name).second; ++n)
      name = base + "#" + std::to_string(n);
    // A block argument now; the signature is updated once at the end (one
    // insertArgument per scale would rebuild it every time).
    auto type = RankedTensorType::get({}, f32);
    it->second = plan.func.getBody().front().addArgument(type, value.getLoc());
    newScaleAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(kFP8ScaleAttrName, builder.getStringAttr(name))));
    ++stats.scaleArguments;
    return it->second;
  }

  /// The scale an FP8 operand was (or will be) quantized with: the user's
  /// own if the user quantized it.
  Value scaleFor(Value value) {
    if (auto quantize = value.getDefiningOp<QuantizeOp>())
      return quantize.getScale();
    return scaleOf(value);
  }

  /// `value` (a source) converted to element type `element`: the value
  /// itself, or the one cast of it to that type.
  Value convert(Value value, Type element) {
    if (elementTypeOf(value.getType()) == element)
      return value;
    auto [it, inserted] = converted.try_emplace({value, element}, Value());
    if (!inserted)
      return it->second;
    setInsertionPointAfterDef(value);
    Type type = retype(value.getType(), element);
    Location loc = value.getLoc();
    Value result;
    if (element == fp8) {
      result = QuantizeOp::create(builder, loc, type, value, scaleOf(value),
                                  /*inserted=*/true);
      ++stats.quantizesInserted;
    } else {
      result = builder.createOrFold<CastOp>(loc, type, value,
                                            /*inserted=*/true);
      if (isa<CastOp>(result.getDefiningOp())) {
        ++stats.castsInserted;
        newCasts.insert(result.getDefiningOp());
      } else {
        ++stats.constantsConverted;
      }
    }
    noteConversion(value, result.getDefiningOp());
    it->second = result;
    return result;
  }

  void rewritePolicyOp(OpRecord &rec) {
    Operation *op = rec.op;
    Type compute;
    switch (rec.decision) {
    case Decision::Low:
      compute = plan.lowType;
      break;
    case Decision::F32:
    case Decision::None:
      compute = f32;
      break;
    case Decision::MatchInputs:
      compute = commonInputType(rec);
      break;
    }
    Type result = rec.resultElementType ? rec.resultElementType : compute;
    // Scales a previous fp8 run attached are re-derived below.
    if (rec.hasScales)
      (void)rec.policy.setFP8Scales({});
    SmallVector<Value> fp8Scales;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = source(operand.get());
      if (!isFloatLike(value.getType()))
        continue;
      Type element;
      switch (rec.policy.getOperandPrecisionRole(operand.getOperandNumber())) {
      case PrecisionRole::Compute:
        element = rec.fp8Operands ? fp8 : compute;
        if (rec.fp8Operands)
          fp8Scales.push_back(scaleFor(value));
        break;
      case PrecisionRole::Output:
        element = result;
        break;
      case PrecisionRole::F32:
        element = f32;
        break;
      }
      operand.set(convert(value, element));
    }
    if (rec.fp8Operands)
      (void)rec.policy.setFP8Scales(fp8Scales);
    for (OpResult r : op->getResults()) {
      if (!isFloatLike(r.getType()))
        continue;
      Type element = rec.policy.getResultPrecisionRole(r.getResultNumber()) ==
                             PrecisionRole::F32
                         ? f32
                         : result;
      r.setType(retype(r.getType(), element));
    }
  }

  /// Whether `value` (a source) is a graph input, a parameter or a constant,
  /// which converts to any type without a kernel of its own to change.
  bool isFree(Value value) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg.getOwner() == &plan.func.getBody().front();
    const OpRecord *rec = plan.find(value.getDefiningOp());
    return rec && rec->kind == OpKind::Source;
  }

  /// The type a `clear` op without float results reads its inputs in: the
  /// common type of its computed inputs if they agree (constants and graph
  /// inputs convert to it), else FP32.
  Type commonInputType(OpRecord &rec) {
    Type common;
    for (OpOperand &operand : rec.op->getOpOperands()) {
      Value value = source(operand.get());
      if (!isFloatLike(value.getType()) || isFree(value) ||
          rec.policy.getOperandPrecisionRole(operand.getOperandNumber()) ==
              PrecisionRole::F32)
        continue;
      Type element = elementTypeOf(value.getType());
      if (common && common != element)
        return f32;
      common = element;
    }
    return common ? common : f32;
  }

  /// Fixed and unknown ops read their operands in the types they had.
  void keepOperandTypes(Operation *op) {
    ArrayRef<Type> kept = plan.keptOperandTypes[op];
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = source(operand.get());
      if (isFloatLike(value.getType()))
        operand.set(
            convert(value, elementTypeOf(kept[operand.getOperandNumber()])));
    }
  }

  void rewriteReturn(Operation *op) {
    if (keepIOTypes) {
      keepOperandTypes(op);
      return;
    }
    // The outputs take the types their producers ended with.
    for (OpOperand &operand : op->getOpOperands())
      operand.set(source(operand.get()));
  }

  /// keep-io-types=false: a graph input whose every use is one inserted
  /// cast takes that cast's type.
  void retypeInputs() {
    for (BlockArgument arg : plan.func.getArguments()) {
      if (!plan.func.getArgAttr(arg.getArgNumber(), kInputAttrName) ||
          !isFloatLike(arg.getType()) || !arg.hasOneUse())
        continue;
      Operation *user = arg.getUses().begin()->getOwner();
      if (!newCasts.contains(user))
        continue;
      arg.setType(user->getResult(0).getType());
      user->getResult(0).replaceAllUsesWith(arg);
      user->erase();
      --stats.castsInserted;
      ++stats.retypedInputs;
    }
  }

  /// Puts the scale arguments added to the entry block into the signature.
  void addScaleArguments() {
    if (newScaleAttrs.empty())
      return;
    SmallVector<DictionaryAttr> attrs;
    plan.func.getAllArgAttrs(attrs);
    attrs.resize(plan.func.getNumArguments());
    llvm::append_range(attrs, newScaleAttrs);
    plan.func.setFunctionType(
        FunctionType::get(ctx, plan.func.getBody().front().getArgumentTypes(),
                          plan.func.getResultTypes()));
    plan.func.setAllArgAttrs(attrs);
  }

  /// Scales of quantizes that are gone.
  void eraseUnusedScales() {
    llvm::BitVector unused(plan.func.getNumArguments());
    for (BlockArgument arg : plan.func.getArguments())
      if (arg.use_empty() &&
          plan.func.getArgAttr(arg.getArgNumber(), kFP8ScaleAttrName))
        unused.set(arg.getArgNumber());
    if (unused.any())
      (void)plan.func.eraseArguments(unused);
  }

  void updateFunctionType() {
    Block &entry = plan.func.getBody().front();
    SmallVector<Type> results;
    if (auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator()))
      results = llvm::to_vector(ret.getOperandTypes());
    else
      results = llvm::to_vector(plan.func.getResultTypes());
    for (auto [before, after] : llvm::zip(plan.func.getResultTypes(), results))
      stats.retypedOutputs += before != after;
    plan.func.setFunctionType(
        FunctionType::get(ctx, entry.getArgumentTypes(), results));
  }

  PrecisionPlan &plan;
  bool keepIOTypes;
  MLIRContext *ctx;
  OpBuilder builder;
  Type f32, fp8;
  RewriteStats stats;
  DenseMap<std::pair<Value, Type>, Value> converted;
  DenseMap<Value, Value> scales;
  llvm::StringSet<> scaleNames;
  llvm::SmallPtrSet<Operation *, 16> newCasts;
  DenseMap<Block *, Operation *> lastArgConversion;
  DenseMap<std::pair<Type, Type>, Type> retyped;
  SmallVector<DictionaryAttr> newScaleAttrs;
};

} // namespace

RewriteStats applyPrecisionPlan(PrecisionPlan &plan, bool keepIOTypes) {
  return Rewriter(plan, keepIOTypes).run();
}

} // namespace mpt::precision
