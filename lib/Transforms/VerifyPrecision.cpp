//===- VerifyPrecision.cpp - the --verify-precision pass ------------------===//
//
// Checks the invariants precision assignment promises, from each op's
// declared policy (never from op names), and fails with a diagnostic at the
// offending op.
//
//===----------------------------------------------------------------------===//
#include "PrecisionPlan.h"

#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mpt {
#define GEN_PASS_DEF_VERIFYPRECISIONPASS
#include "mpt/Transforms/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;
using namespace mpt::precision;

namespace {

/// Whether the user forced `op` into low precision on purpose.
bool forcedLow(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(kPrecisionAttrName);
  return attr && attr.getValue() == "low";
}

struct VerifyPrecisionPass
    : public mpt::impl::VerifyPrecisionPassBase<VerifyPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    bool ok = true;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      ok &= succeeded(verifyParameters(func));
      func.walk([&](Operation *op) {
        if (auto policy = dyn_cast<PrecisionPolicyOpInterface>(op))
          ok &= succeeded(verifyOp(policy));
        ok &= succeeded(verifyCastsOf(op->getResults()));
      });
      if (!func.isExternal())
        ok &= succeeded(verifyCastsOf(func.getArguments()));
    }
    if (!ok)
      signalPassFailure();
  }

  LogicalResult verifyParameters(func::FuncOp func) {
    LogicalResult result = success();
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto name = func.getArgAttrOfType<StringAttr>(i, kParamAttrName);
      Type type = func.getArgumentTypes()[i];
      if (!name || !isBelowF32(type))
        continue;
      func.emitError() << "parameter '" << name.getValue() << "' is " << type
                       << "; parameters must stay FP32 masters";
      result = failure();
    }
    return result;
  }

  LogicalResult verifyOp(PrecisionPolicyOpInterface policy) {
    Operation *op = policy;
    bool requireF32 =
        policy.getPrecisionCategory() == PrecisionCategory::RequireF32 &&
        !forcedLow(op);
    for (OpOperand &operand : op->getOpOperands()) {
      Type type = operand.get().getType();
      if (!isBelowF32(type))
        continue;
      bool pinned = policy.getOperandPrecisionRole(
                        operand.getOperandNumber()) == PrecisionRole::F32;
      if (pinned)
        return op->emitOpError("keeps operand #")
               << operand.getOperandNumber() << " in FP32, but it is " << type;
      if (requireF32)
        return op->emitOpError("must run in FP32, but operand #")
               << operand.getOperandNumber() << " is " << type;
    }
    for (OpResult result : op->getResults()) {
      Type type = result.getType();
      if (!isBelowF32(type))
        continue;
      bool pinned = policy.getResultPrecisionRole(result.getResultNumber()) ==
                    PrecisionRole::F32;
      if (pinned)
        return op->emitOpError("keeps result #")
               << result.getResultNumber() << " in FP32, but it is " << type;
      if (requireF32)
        return op->emitOpError("must run in FP32, but result #")
               << result.getResultNumber() << " is " << type;
    }
    if (Type acc = policy.getAccumulationType(); acc && isBelowF32(acc))
      return op->emitOpError("accumulates in ")
             << acc << "; reductions must accumulate in FP32";
    return success();
  }

  /// One inserted conversion per producer and type, and none of another.
  LogicalResult verifyCastsOf(ValueRange values) {
    LogicalResult result = success();
    for (Value value : values) {
      // Inserted conversions of `value`, in program order.
      SmallVector<Operation *, 4> conversions;
      for (Operation *user : value.getUsers())
        if (isa<CastOp, QuantizeOp>(user) && user->hasAttr("inserted"))
          conversions.push_back(user);
      if (llvm::all_equal(llvm::map_range(
              conversions, [](Operation *op) { return op->getBlock(); })))
        llvm::sort(conversions, [](Operation *a, Operation *b) {
          return a->isBeforeInBlock(b);
        });
      SmallVector<std::pair<Type, Operation *>, 4> seen;
      for (Operation *user : conversions) {
        Type type = user->getResult(0).getType();
        auto it = llvm::find_if(seen, [&](auto &entry) {
          return entry.first == type && entry.second != user;
        });
        if (it != seen.end()) {
          InFlightDiagnostic diag = user->emitError()
                                    << "second inserted conversion of one "
                                       "producer to "
                                    << type;
          diag.attachNote(it->second->getLoc()) << "first one here";
          result = failure();
          continue;
        }
        seen.push_back({type, user});
        Operation *def = value.getDefiningOp();
        if (def && isa<CastOp>(def) && def->hasAttr("inserted")) {
          user->emitError()
              << "inserted conversion of an inserted cast; convert the "
                 "producer once instead";
          result = failure();
        }
      }
    }
    return result;
  }
};

} // namespace
