//===- AssignBindings.cpp - names and writers for a function's interface --===//
//
// Every argument becomes a named input or parameter and every result a named
// output written by a kernel. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "llvm/ADT/StringSet.h"

namespace mpt {
#define GEN_PASS_DEF_MPTASSIGNBINDINGS
#include "mpt/Conversion/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;

namespace {

struct AssignBindingsPass
    : public mpt::impl::MPTAssignBindingsBase<AssignBindingsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool broken;
    if (!loweringBody(func, broken))
      return broken ? signalPassFailure() : void();
    if (failed(nameArguments(func)) || failed(nameResults(func)))
      return signalPassFailure();
    giveResultsWriters(func);
  }

  /// Names must be unique within a kind: the runtime binds by name.
  static LogicalResult claim(llvm::StringSet<> &names, StringRef name,
                             StringRef kind, Location loc) {
    if (names.insert(name).second)
      return success();
    return emitError(loc) << "two " << kind << "s are named '" << name
                          << "'; the runtime binds them by name",
           failure();
  }

  static std::string freshName(llvm::StringSet<> &names, StringRef stem,
                               unsigned index) {
    std::string name = (stem + Twine(index)).str();
    while (names.contains(name))
      name += "_";
    return name;
  }

  LogicalResult nameArguments(func::FuncOp func) {
    llvm::StringSet<> inputs, params;
    SmallVector<unsigned> unnamed;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      Location loc = func.getArgument(i).getLoc();
      if (auto name = func.getArgAttrOfType<StringAttr>(i, kParamAttrName)) {
        if (failed(claim(params, name.getValue(), "parameter", loc)))
          return failure();
      } else if (auto name =
                     func.getArgAttrOfType<StringAttr>(i, kInputAttrName)) {
        if (failed(claim(inputs, name.getValue(), "input", loc)))
          return failure();
      } else {
        unnamed.push_back(i);
      }
    }
    for (unsigned i : unnamed) {
      std::string name = freshName(inputs, "input", i);
      inputs.insert(name);
      func.setArgAttr(i, kInputAttrName,
                      StringAttr::get(func.getContext(), name));
    }
    return success();
  }

  LogicalResult nameResults(func::FuncOp func) {
    llvm::StringSet<> outputs;
    SmallVector<unsigned> unnamed;
    llvm::StringSet<> params, updated;
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, kParamAttrName))
        params.insert(name.getValue());
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      if (auto name =
              func.getResultAttrOfType<StringAttr>(i, kUpdatesAttrName)) {
        if (!params.contains(name.getValue()))
          return func.emitError()
                     << "result " << i << " updates '" << name.getValue()
                     << "', which is not a parameter of the function",
                 failure();
        if (failed(claim(updated, name.getValue(), "update of parameter",
                         func.getLoc())))
          return failure();
        continue;
      }
      if (auto name =
              func.getResultAttrOfType<StringAttr>(i, kOutputAttrName)) {
        if (failed(claim(outputs, name.getValue(), "output", func.getLoc())))
          return failure();
      } else {
        unnamed.push_back(i);
      }
    }
    for (unsigned i : unnamed) {
      std::string name = freshName(outputs, "output", i);
      outputs.insert(name);
      func.setResultAttr(i, kOutputAttrName,
                         StringAttr::get(func.getContext(), name));
    }
    return success();
  }

  /// An argument, a constant or a value returned twice has no kernel of its
  /// own writing the output buffer: copy it. An argument is copied at the
  /// start, before a training step's updates may overwrite a parameter.
  static Value copyOf(OpBuilder &builder, Value v) {
    auto copy = rt::IdentityOp::create(builder, v.getLoc(), v.getType(), v,
                                       /*offsets=*/nullptr);
    if (Operation *def = v.getDefiningOp())
      inheritPhase(def, copy);
    return copy.getResult();
  }

  static void giveResultsWriters(func::FuncOp func) {
    Block &body = func.getBody().front();
    Operation *ret = body.getTerminator();
    OpBuilder atEnd(ret), atStart(&body, body.begin());
    llvm::SmallPtrSet<Value, 8> seen;
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      if (isa<BlockArgument>(v))
        operand.set(copyOf(atStart, v));
      else if (v.getDefiningOp<rt::ConstantOp>() || !seen.insert(v).second)
        operand.set(copyOf(atEnd, v));
    }
  }
};

} // namespace
