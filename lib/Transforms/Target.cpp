//===- Target.cpp - the compile target a user states ----------------------===//
#include "mpt/Transforms/Target.h"

using namespace mlir;

namespace mpt {

FailureOr<Target> parseTarget(llvm::StringRef target, std::string &error) {
  Target t;
  if (target == "cpu") {
    t.cpu = true;
    return t;
  }
  llvm::StringRef digits = target;
  if (digits.consume_front("sm_")) {
    digits = digits.rtrim("af");
    if (!digits.getAsInteger(10, t.capability) && t.capability >= 10)
      return t;
  }
  error = ("unknown target '" + target +
           "'; expected sm_XY (e.g. sm_80, sm_90) or cpu")
              .str();
  return failure();
}

ConvLayout resolveConvLayout(ConvLayout layout, llvm::StringRef target) {
  if (layout != ConvLayout::Auto)
    return layout;
  // No target (which does not parse) is a plan for any backend: NHWC too.
  std::string error;
  FailureOr<Target> t = parseTarget(target, error);
  if (succeeded(t) && !t->cpu && t->capability < 70)
    return ConvLayout::NCHW;
  return ConvLayout::NHWC;
}

} // namespace mpt
