//===- MPTAttrVerifier.cpp - the dialect's discardable attributes --------===//
//
// The `mpt.*` attributes that sit on ops, function arguments and function
// results carry meaning that passes, the lowering and the plan emitter rely
// on: which argument is a parameter, which result updates one, where a value
// lives in the arena, which precision a user forced. The dialect checks each
// of them here, so a malformed one (`mpt.param = 7`) is an error at its op,
// not a weight silently demoted to an input. An `mpt.*` name this dialect
// does not define is an error too: a misspelt attribute would otherwise be
// ignored.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mpt;

namespace {

/// A name attribute: a non-empty string.
LogicalResult verifyName(Operation *op, NamedAttribute attr, StringRef what) {
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (name && !name.getValue().empty())
    return success();
  return op->emitOpError() << "'" << attr.getName().getValue()
                           << "' must be a non-empty "
                           << "string naming " << what << ", got "
                           << attr.getValue();
}

/// The argument attributes of `argIndex`, or null.
DictionaryAttr argAttrs(Operation *op, unsigned argIndex) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  return func ? func.getArgAttrDict(argIndex) : DictionaryAttr();
}

} // namespace

LogicalResult MPTDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  if (name == kPrecisionAttrName) {
    auto s = dyn_cast<StringAttr>(value);
    if (s && (s.getValue() == "f32" || s.getValue() == "low"))
      return success();
    return op->emitOpError()
           << name << " must be \"f32\" or \"low\", got " << value;
  }
  if (name == kBackwardAttrName) {
    if (isa<UnitAttr>(value))
      return success();
    return op->emitOpError()
           << name << " must be a unit attribute, got " << value;
  }
  if (name == kParamAttrName || name == kInputAttrName ||
      name == kInitialValueAttrName || name == kFP8ScaleAttrName ||
      name == kOutputAttrName || name == kOutputRoleAttrName ||
      name == kUpdatesAttrName)
    return op->emitOpError() << "'" << name
                             << "' belongs on a function argument or result, "
                                "not on an op";
  return op->emitOpError() << "unknown attribute '" << name
                           << "' of the mpt dialect";
}

LogicalResult MPTDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto where = [&]() {
    return op->emitOpError() << "argument " << argIndex << ": ";
  };
  if (regionIndex != 0 || !isa<FunctionOpInterface>(op))
    return where() << "'" << name
                   << "' is only meaningful on a function's arguments";
  auto func = cast<FunctionOpInterface>(op);
  Type argType = func.getArgumentTypes()[argIndex];
  if (name == kParamAttrName || name == kInputAttrName) {
    if (failed(verifyName(op, attr,
                          name == kParamAttrName ? "the parameter"
                                                 : "the graph input")))
      return failure();
    StringRef other = name == kParamAttrName ? kInputAttrName : kParamAttrName;
    if (argAttrs(op, argIndex).get(other))
      return where() << "is both '" << kParamAttrName << "' and '"
                     << kInputAttrName << "'";
    return success();
  }
  if (name == kFP8ScaleAttrName)
    return verifyName(op, attr, "the FP8 scale input");
  if (name == kInitialValueAttrName) {
    auto value = dyn_cast<ElementsAttr>(attr.getValue());
    if (!value)
      return where() << "'" << name << "' must be an elements attribute";
    if (value.getType() != argType)
      return where() << "'" << name << "' has type " << value.getType()
                     << " but the argument is " << argType;
    if (!argAttrs(op, argIndex).get(kParamAttrName))
      return where() << "'" << name << "' needs '" << kParamAttrName
                     << "' on the same argument";
    return success();
  }
  return where() << "unknown argument attribute '" << name
                 << "' of the mpt dialect";
}

LogicalResult MPTDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto where = [&]() {
    return op->emitOpError() << "result " << resultIndex << ": ";
  };
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (regionIndex != 0 || !func)
    return where() << "'" << name
                   << "' is only meaningful on a function's results";
  if (name == kOutputAttrName)
    return verifyName(op, attr, "the graph output");
  if (name == kOutputRoleAttrName) {
    if (!isa<OutputRoleAttr>(attr.getValue()))
      return where() << "'" << name << "' must be an #mpt.output_role, got "
                     << attr.getValue();
    DictionaryAttr attrs = func.getResultAttrDict(resultIndex);
    if (!attrs || !attrs.get(kOutputAttrName))
      return where() << "'" << name << "' needs '" << kOutputAttrName
                     << "' on the same result";
    return success();
  }
  if (name == kUpdatesAttrName) {
    if (failed(verifyName(op, attr, "the parameter it updates")))
      return failure();
    StringRef param = cast<StringAttr>(attr.getValue()).getValue();
    Type resultType = func.getResultTypes()[resultIndex];
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
      auto argName = dyn_cast_or_null<StringAttr>(
          argAttrs(op, i) ? argAttrs(op, i).get(kParamAttrName) : Attribute());
      if (!argName || argName.getValue() != param)
        continue;
      if (func.getArgumentTypes()[i] != resultType)
        return where() << "updates parameter '" << param << "' of type "
                       << func.getArgumentTypes()[i] << " with a value of type "
                       << resultType;
      return success();
    }
    return where() << "'" << name << "' names '" << param
                   << "', which is no parameter of this function";
  }
  return where() << "unknown result attribute '" << name
                 << "' of the mpt dialect";
}
