//===- PrecisionPropagation.cpp - whole-graph precision decisions ---------===//
//
// Decides, for every op of a function, whether it computes in FP32 or in the
// mode's low-precision type. Two linear walks over the SSA graph:
//
// Forward (program order, so every producer is seen before its users): each
// float value gets a state: *free* (parameters, inputs, constants, and exact
// ops over free values only: they can be converted to any type), *low* or
// *f32*. `always-low` ops are low and `require-f32` ops f32. A `follow` or
// `clear` op is a low candidate when its inputs are low or free and one is
// low; an f32 input makes it f32, so f32 spreads downstream until a
// contraction.
//
// Backward (reverse program order, so every user is decided before its
// producer): each op looks at what its users need. A candidate stays low
// only if some user computes in low precision (it lies *between* low ops);
// a `clear` op also becomes low when every user needs low precision, since
// casting before an exact op costs less than after it. A contraction whose
// users include an FP32 op produces FP32 directly.
//
// docs/precision.md compares the rules with TF's four-colour painting and
// TVM's FOLLOW rule.
//
//===----------------------------------------------------------------------===//
#include "PrecisionPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace mpt::precision {

StringRef stringifyReason(Reason reason) {
  switch (reason) {
  case Reason::Category:
    return "category";
  case Reason::BetweenLowOps:
    return "between-low-ops";
  case Reason::FeedsLowOnly:
    return "feeds-low-only";
  case Reason::DownstreamOfF32:
    return "downstream-of-f32";
  case Reason::NoLowInput:
    return "no-low-input";
  case Reason::NoLowUser:
    return "no-low-user";
  case Reason::MatchesInputs:
    return "matches-inputs";
  case Reason::KeepFP32Type:
    return "override:keep-fp32";
  case Reason::ForceLowType:
    return "override:force-low";
  case Reason::KeepFP32Node:
    return "override:keep-fp32-nodes";
  case Reason::ForceLowNode:
    return "override:force-low-nodes";
  case Reason::Attribute:
    return "override:attribute";
  case Reason::FP16Range:
    return "fp16-range";
  case Reason::ProfileOverflow:
    return "profile:overflow";
  case Reason::ProfileUnderflow:
    return "profile:underflow";
  case Reason::ModeFP32:
    return "mode-fp32";
  case Reason::Source:
    return "source";
  case Reason::Fixed:
    return "fixed";
  case Reason::Unknown:
    return "unknown-op";
  case Reason::Output:
    return "output";
  }
  return "unknown";
}

namespace {

/// The forward state of a float value.
enum class State : uint8_t { Free, Low, F32 };

/// What a user needs of a value. `Quantized` is an FP8 contraction operand:
/// a low-precision user, but one that quantizes from any type, so it asks
/// for no bf16 copy.
enum class Demand : uint8_t { Neutral, Low, Quantized, F32 };

Demand demandOfType(Type type) {
  return isBelowF32(type) ? Demand::Low : Demand::F32;
}

bool hasFloatValues(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isFloatLike) ||
         llvm::any_of(op->getResultTypes(), isFloatLike);
}

/// Whether a constant holds a finite value beyond the FP16 range.
bool exceedsFP16(Attribute value) {
  auto dense = dyn_cast_or_null<DenseFPElementsAttr>(value);
  if (!dense)
    return false;
  auto beyond = [](const APFloat &v) {
    return v.isFinite() && std::abs(v.convertToDouble()) > kFP16Max;
  };
  if (dense.isSplat())
    return beyond(dense.getSplatValue<APFloat>());
  return llvm::any_of(dense.getValues<APFloat>(), beyond);
}

class Analysis {
public:
  Analysis(func::FuncOp func, const PlanOptions &options)
      : options(options), f32(Float32Type::get(func.getContext())) {
    plan.func = func;
    plan.mode = options.mode;
    plan.lowType = lowPrecisionType(func.getContext(), options.mode);
  }

  FailureOr<PrecisionPlan> run() {
    collect();
    for (OpRecord &rec : plan.records)
      if (failed(classify(rec)))
        return failure();
    for (OpRecord &rec : plan.records)
      forward(rec);
    for (OpRecord &rec : llvm::reverse(plan.records))
      backward(rec);
    return std::move(plan);
  }

private:
  /// Numbers every op of the function in pre-order, which is program order
  /// for the values the ops define.
  void collect() {
    entryBlock = &plan.func.getBody().front();
    plan.func.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
      plan.index[op] = plan.records.size();
      OpRecord rec;
      rec.op = op;
      plan.records.push_back(rec);
    });
  }

  void keepOperandTypes(Operation *op) {
    plan.keptOperandTypes[op] = llvm::to_vector<2>(op->getOperandTypes());
  }

  /// Whether `operand` of a policy op takes part in its compute type: a
  /// float operand whose role is not `f32`.
  static bool isComputeOperand(PrecisionPolicyOpInterface policy,
                               OpOperand &operand) {
    return isFloatLike(operand.get().getType()) &&
           policy.getOperandPrecisionRole(operand.getOperandNumber()) !=
               PrecisionRole::F32;
  }

  /// Whether `result` of a policy op takes its compute type.
  static bool isComputeResult(PrecisionPolicyOpInterface policy,
                              OpResult result) {
    return isFloatLike(result.getType()) &&
           policy.getResultPrecisionRole(result.getResultNumber()) !=
               PrecisionRole::F32;
  }

  LogicalResult classify(OpRecord &rec) {
    Operation *op = rec.op;
    if (isa<func::ReturnOp>(op) && op->getBlock() == entryBlock) {
      rec.kind = OpKind::Return;
      rec.reason = Reason::Output;
      keepOperandTypes(op);
      return success();
    }
    if (!hasFloatValues(op)) {
      rec.kind = OpKind::Ignored;
      return success();
    }
    rec.policy = dyn_cast<PrecisionPolicyOpInterface>(op);
    if (!rec.policy) {
      rec.kind = OpKind::Unknown;
      rec.reason = Reason::Unknown;
      keepOperandTypes(op);
      return success();
    }
    rec.category = rec.policy.getPrecisionCategory();
    if (rec.category == PrecisionCategory::Fixed) {
      // Passes mark what they insert; a user's conversion keeps its types.
      rec.kind = op->hasAttr("inserted") && op->getNumOperands() >= 1 &&
                         isFloatLike(op->getOperand(0).getType())
                     ? OpKind::Inserted
                     : OpKind::Fixed;
      rec.reason = Reason::Fixed;
      keepOperandTypes(op);
      return success();
    }
    if (llvm::none_of(op->getOpOperands(), [&](OpOperand &operand) {
          return isComputeOperand(rec.policy, operand);
        })) {
      rec.kind = OpKind::Source;
      rec.reason = Reason::Source;
      if (options.mode == PrecisionMode::FP16 && op->getNumResults() == 1) {
        Attribute value;
        rec.large = matchPattern(op->getResult(0), m_Constant(&value)) &&
                    exceedsFP16(value);
      }
      return success();
    }
    if (hasUserFP8Scales(rec)) {
      // The user quantized this contraction's operands: keep it as written.
      rec.kind = OpKind::Fixed;
      rec.reason = Reason::Fixed;
      keepOperandTypes(op);
      return success();
    }
    rec.kind = OpKind::Policy;
    rec.reason = Reason::Category;
    if (options.overrides) {
      std::optional<PrecisionOverrides::Override> override;
      if (failed(options.overrides->lookup(op, override)))
        return failure();
      if (override) {
        rec.category = override->category;
        rec.reason = override->reason;
        overridden.insert(op);
      }
    }
    return success();
  }

  /// Whether an op carries FP8 scales that a pass did not attach: some
  /// scaled operand is not the result of an inserted quantize.
  bool hasUserFP8Scales(OpRecord &rec) {
    if (!rec.policy.acceptsFP8Operands())
      return false;
    bool scaled = false, allInserted = true;
    for (OpOperand &operand : rec.op->getOpOperands()) {
      if (!isFloatLike(operand.get().getType()))
        continue;
      switch (rec.policy.getOperandPrecisionRole(operand.getOperandNumber())) {
      case PrecisionRole::F32:
        scaled = true;
        break;
      case PrecisionRole::Compute: {
        OpRecord *producer = producerOf(operand.get());
        allInserted &= producer && producer->kind == OpKind::Inserted;
        break;
      }
      case PrecisionRole::Output:
        break;
      }
    }
    rec.hasScales = scaled;
    return scaled && !allInserted;
  }

  /// The record of the op defining `value`, or null.
  OpRecord *producerOf(Value value) {
    Operation *def = value.getDefiningOp();
    if (!def)
      return nullptr;
    auto it = plan.index.find(def);
    return it == plan.index.end() ? nullptr : &plan.records[it->second];
  }

  /// Looks through casts that a pass inserted; sets `producer` to the
  /// record of the source's defining op (null for a block argument).
  Value source(Value value, OpRecord *&producer) {
    producer = producerOf(value);
    while (producer && producer->kind == OpKind::Inserted) {
      value = producer->op->getOperand(0);
      producer = producerOf(value);
    }
    return value;
  }

  /// The forward state of a float value (decisions are tentative until the
  /// backward walk, which keeps every low candidate that a user relies on).
  State stateOf(Value value, bool &large) {
    OpRecord *producer;
    value = source(value, producer);
    large = false;
    auto result = dyn_cast<OpResult>(value);
    if (!result)
      return cast<BlockArgument>(value).getOwner() == entryBlock ? State::Free
                                                                 : State::F32;
    OpRecord &rec = *producer;
    large = rec.large;
    switch (rec.kind) {
    case OpKind::Source:
      return State::Free;
    case OpKind::Policy:
      if (!isComputeResult(rec.policy, result))
        return State::F32;
      if (rec.decision == Decision::Low)
        return State::Low;
      return rec.freeInputs ? State::Free : State::F32;
    case OpKind::Fixed:
      // A conversion from integers (a mask, an index) is as free as a
      // constant; from floats it has the type the user gave it.
      if (llvm::none_of(rec.op->getOperandTypes(), isFloatLike))
        return State::Free;
      [[fallthrough]];
    default:
      return isBelowF32(value.getType()) ? State::Low : State::F32;
    }
  }

  void forward(OpRecord &rec) {
    if (rec.kind != OpKind::Policy)
      return;
    if (options.mode == PrecisionMode::FP32) {
      rec.decision = Decision::F32;
      rec.reason = Reason::ModeFP32;
      return;
    }
    bool anyLow = false, anyF32 = false, anyLarge = false;
    for (OpOperand &operand : rec.op->getOpOperands()) {
      if (!isComputeOperand(rec.policy, operand))
        continue;
      bool large;
      switch (stateOf(operand.get(), large)) {
      case State::Low:
        anyLow = true;
        break;
      case State::F32:
        anyF32 = true;
        break;
      case State::Free:
        break;
      }
      anyLarge |= large;
    }
    rec.lowInputs = anyLow && !anyF32;
    rec.freeInputs = !anyLow && !anyF32;
    // A value beyond the FP16 range stays beyond it through data movement
    // and elementwise arithmetic (as far as anything is known).
    rec.large = anyLarge && (rec.category == PrecisionCategory::Clear ||
                             rec.category == PrecisionCategory::Follow);

    // Measured values (--precision-profile) that reach the FP16 range, or
    // flush to zero in it, keep the op that made them in FP32; values
    // beyond the range then keep their readers in FP32 as below.
    if (options.profile && options.mode == PrecisionMode::FP16 &&
        !overridden.contains(rec.op) &&
        rec.category != PrecisionCategory::RequireF32) {
      auto verdict =
          options.profile->fp16Verdict(onnxNodeName(rec.op->getLoc()));
      if (verdict != PrecisionProfile::Verdict::Fits) {
        const auto *range =
            options.profile->find(onnxNodeName(rec.op->getLoc()));
        rec.measuredMaxAbs = range->maxAbs;
        rec.measuredFlush = range->count ? range->flushed / range->count : 0;
        rec.decision = Decision::F32;
        rec.freeInputs = false;
        if (verdict == PrecisionProfile::Verdict::Overflows) {
          rec.reason = Reason::ProfileOverflow;
          rec.large = true;
        } else {
          rec.reason = Reason::ProfileUnderflow;
        }
        return;
      }
    }
    // Values known to exceed the FP16 range keep every op they touch in
    // FP32, unless the user forced the op.
    if (anyLarge && options.mode == PrecisionMode::FP16 &&
        !overridden.contains(rec.op) &&
        rec.category != PrecisionCategory::RequireF32) {
      rec.decision = Decision::F32;
      rec.reason = Reason::FP16Range;
      rec.freeInputs = false;
      return;
    }
    switch (rec.category) {
    case PrecisionCategory::AlwaysLow:
      rec.decision = Decision::Low;
      return;
    case PrecisionCategory::RequireF32:
    case PrecisionCategory::Fixed:
      rec.decision = Decision::F32;
      rec.freeInputs = false;
      return;
    case PrecisionCategory::Follow:
    case PrecisionCategory::Clear:
      break;
    }
    bool floatResults = llvm::any_of(rec.op->getResults(), [&](OpResult r) {
      return isComputeResult(rec.policy, r);
    });
    if (rec.category == PrecisionCategory::Clear && !floatResults) {
      rec.decision = Decision::MatchInputs;
      rec.reason = Reason::MatchesInputs;
      return;
    }
    // Rounding arithmetic over free values only (weight preprocessing)
    // stays FP32; its result is still free for its users to convert.
    rec.decision = rec.lowInputs ? Decision::Low : Decision::F32;
  }

  /// What `use` needs of the value it reads, from the decision of its
  /// user `rec`.
  Demand demandOf(OpOperand &use, OpRecord &rec) {
    Operation *user = rec.op;
    unsigned number = use.getOperandNumber();
    switch (rec.kind) {
    case OpKind::Policy: {
      if (rec.decision == Decision::MatchInputs ||
          rec.decision == Decision::None)
        return Demand::Neutral;
      switch (rec.policy.getOperandPrecisionRole(number)) {
      case PrecisionRole::F32:
        return Demand::F32;
      case PrecisionRole::Output:
        if (rec.resultElementType)
          return demandOfType(rec.resultElementType);
        break;
      case PrecisionRole::Compute:
        if (rec.fp8Operands)
          return Demand::Quantized;
        break;
      }
      return rec.decision == Decision::Low ? Demand::Low : Demand::F32;
    }
    case OpKind::Return:
      if (!options.keepIOTypes)
        return Demand::Neutral;
      return demandOfType(plan.keptOperandTypes[user][number]);
    case OpKind::Fixed:
    case OpKind::Unknown:
      return demandOfType(plan.keptOperandTypes[user][number]);
    case OpKind::Inserted:
    case OpKind::Source:
    case OpKind::Ignored:
      return Demand::Neutral;
    }
    return Demand::F32;
  }

  /// What the users of an op's results need, together.
  struct Demands {
    bool low = false, quantized = false, f32 = false;
  };

  /// Collects the demands on `value`, looking through inserted casts.
  void collectDemands(Value value, Demands &demands) {
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      auto it = plan.index.find(user);
      if (it == plan.index.end()) {
        demands.f32 = true;
        continue;
      }
      OpRecord &rec = plan.records[it->second];
      if (rec.kind == OpKind::Inserted) {
        collectDemands(user->getResult(0), demands);
        continue;
      }
      switch (demandOf(use, rec)) {
      case Demand::Low:
        demands.low = true;
        break;
      case Demand::Quantized:
        demands.quantized = true;
        break;
      case Demand::F32:
        demands.f32 = true;
        break;
      case Demand::Neutral:
        break;
      }
    }
  }

  void backward(OpRecord &rec) {
    if (rec.kind != OpKind::Policy || rec.reason == Reason::FP16Range ||
        rec.reason == Reason::ProfileOverflow ||
        rec.reason == Reason::ProfileUnderflow ||
        rec.reason == Reason::ModeFP32)
      return;
    if (rec.category == PrecisionCategory::RequireF32 ||
        rec.decision == Decision::MatchInputs)
      return;
    Demands demands;
    for (OpResult result : rec.op->getResults())
      if (isComputeResult(rec.policy, result))
        collectDemands(result, demands);

    if (rec.category == PrecisionCategory::AlwaysLow) {
      // The FP32 accumulator goes straight to FP32 users: no bf16 round
      // trip, and one cast down for the low users if there are any.
      if (demands.f32 && rec.policy.supportsWideResult())
        rec.resultElementType = f32;
      rec.fp8Operands =
          options.mode == PrecisionMode::FP8 && rec.policy.acceptsFP8Operands();
      return;
    }
    // Between low-precision ops: low inputs, and a user computing low.
    if (rec.lowInputs && (demands.low || demands.quantized)) {
      rec.decision = Decision::Low;
      rec.reason = Reason::BetweenLowOps;
      return;
    }
    // An exact op whose every user rounds to low precision anyway: convert
    // before it, where the data is no larger than after.
    if (rec.category == PrecisionCategory::Clear && demands.low &&
        !demands.f32) {
      rec.decision = Decision::Low;
      rec.reason = Reason::FeedsLowOnly;
      return;
    }
    rec.decision = Decision::F32;
    rec.reason = rec.lowInputs    ? Reason::NoLowUser
                 : rec.freeInputs ? Reason::NoLowInput
                                  : Reason::DownstreamOfF32;
  }

  const PlanOptions &options;
  Type f32;
  PrecisionPlan plan;
  Block *entryBlock = nullptr;
  /// Ops whose category an override set.
  llvm::SmallPtrSet<Operation *, 8> overridden;
};

} // namespace

FailureOr<PrecisionPlan> analyzePrecision(func::FuncOp func,
                                          const PlanOptions &options) {
  return Analysis(func, options).run();
}

} // namespace mpt::precision
