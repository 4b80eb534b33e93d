//===- PrecisionOverrides.cpp - user overrides of op categories -----------===//
//
// Four ways to override an op's declared category, strongest first: the
// `mpt.precision` attribute on the op ("f32" or "low"), node-name globs
// (`keep-fp32-nodes`, `force-low-nodes`), and op types (`keep-fp32`,
// `force-low`). At each level FP32 wins over low precision.
//
//===----------------------------------------------------------------------===//
#include "PrecisionPlan.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace mpt::precision {
namespace {

/// Op types compare without case, underscores or the `mpt.` prefix, so
/// `LayerNorm`, `layer_norm` and `mpt.layer_norm` name one op.
std::string normalizeOpType(StringRef name) {
  name.consume_front("mpt.");
  std::string out;
  for (char c : name)
    if (c != '_')
      out.push_back(llvm::toLower(c));
  return out;
}

LogicalResult addOpTypes(MLIRContext *ctx, ArrayRef<std::string> names,
                         StringRef option, llvm::StringSet<> &set,
                         std::string &error) {
  llvm::StringSet<> known;
  for (RegisteredOperationName name : ctx->getRegisteredOperations())
    if (name.getDialectNamespace() == "mpt")
      known.insert(normalizeOpType(name.getStringRef()));
  for (const std::string &name : names) {
    std::string key = normalizeOpType(StringRef(name).trim());
    if (!known.contains(key)) {
      error =
          ("'" + StringRef(name).trim() + "' in " + option + " names no mpt op")
              .str();
      return failure();
    }
    set.insert(key);
  }
  return success();
}

LogicalResult addGlobs(ArrayRef<std::string> patterns, StringRef option,
                       std::vector<llvm::GlobPattern> &globs,
                       std::string &error) {
  for (const std::string &pattern : patterns) {
    auto glob = llvm::GlobPattern::create(StringRef(pattern).trim(),
                                          /*MaxSubPatterns=*/1024);
    if (!glob) {
      error = ("bad pattern '" + pattern + "' in " + option + ": " +
               llvm::toString(glob.takeError()))
                  .str();
      return failure();
    }
    globs.push_back(std::move(*glob));
  }
  return success();
}

bool matchesAny(ArrayRef<llvm::GlobPattern> globs, StringRef name) {
  return llvm::any_of(
      globs, [&](const llvm::GlobPattern &glob) { return glob.match(name); });
}
} // namespace

FailureOr<PrecisionOverrides> PrecisionOverrides::create(
    MLIRContext *ctx, ArrayRef<std::string> keepFP32Types,
    ArrayRef<std::string> forceLowTypes, ArrayRef<std::string> keepFP32Nodes,
    ArrayRef<std::string> forceLowNodes, std::string &error) {
  PrecisionOverrides o;
  if (failed(addOpTypes(ctx, keepFP32Types, "keep-fp32", o.keepFP32Types,
                        error)) ||
      failed(addOpTypes(ctx, forceLowTypes, "force-low", o.forceLowTypes,
                        error)) ||
      failed(
          addGlobs(keepFP32Nodes, "keep-fp32-nodes", o.keepFP32Nodes, error)) ||
      failed(
          addGlobs(forceLowNodes, "force-low-nodes", o.forceLowNodes, error)))
    return failure();
  return o;
}

LogicalResult
PrecisionOverrides::lookup(Operation *op,
                           std::optional<Override> &result) const {
  result.reset();
  if (Attribute attr = op->getAttr(kPrecisionAttrName)) {
    auto value = dyn_cast<StringAttr>(attr);
    if (value && value.getValue() == "f32")
      result = Override{PrecisionCategory::RequireF32, Reason::Attribute};
    else if (value && value.getValue() == "low")
      result = Override{PrecisionCategory::AlwaysLow, Reason::Attribute};
    else
      return op->emitError() << kPrecisionAttrName
                             << " must be \"f32\" or \"low\", got " << attr;
    return success();
  }
  if (!keepFP32Nodes.empty() || !forceLowNodes.empty()) {
    StringRef name = onnxNodeName(op->getLoc());
    if (matchesAny(keepFP32Nodes, name))
      result = Override{PrecisionCategory::RequireF32, Reason::KeepFP32Node};
    else if (matchesAny(forceLowNodes, name))
      result = Override{PrecisionCategory::AlwaysLow, Reason::ForceLowNode};
    if (result)
      return success();
  }
  if (!keepFP32Types.empty() || !forceLowTypes.empty()) {
    std::string type = normalizeOpType(op->getName().getStringRef());
    if (keepFP32Types.contains(type))
      result = Override{PrecisionCategory::RequireF32, Reason::KeepFP32Type};
    else if (forceLowTypes.contains(type))
      result = Override{PrecisionCategory::AlwaysLow, Reason::ForceLowType};
  }
  return success();
}

} // namespace mpt::precision
