//===- PrecisionMode.cpp - precision modes and targets --------------------===//
#include "mpt/Transforms/PrecisionMode.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mpt {

FailureOr<PrecisionMode> resolveAutoMode(StringRef target, std::string &error) {
  if (target == "cpu")
    return PrecisionMode::FP32;
  // sm_XY, optionally with an architecture suffix (sm_90a, sm_100f).
  StringRef digits = target;
  unsigned capability = 0;
  if (digits.consume_front("sm_")) {
    digits = digits.rtrim("af");
    if (!digits.getAsInteger(10, capability) && capability >= 10) {
      if (capability >= 80)
        return PrecisionMode::BF16;
      if (capability >= 70)
        return PrecisionMode::FP16;
      return PrecisionMode::FP32;
    }
  }
  error = target.empty()
              ? "mode=auto needs target=<sm_XY|cpu>; the compiler does not "
                "detect hardware"
              : ("unknown target '" + target +
                 "'; expected sm_XY (e.g. sm_80, sm_90) or cpu")
                    .str();
  return failure();
}

Type lowPrecisionType(MLIRContext *ctx, PrecisionMode mode) {
  switch (mode) {
  case PrecisionMode::BF16:
  case PrecisionMode::FP8:
    return BFloat16Type::get(ctx);
  case PrecisionMode::FP16:
    return Float16Type::get(ctx);
  case PrecisionMode::None:
  case PrecisionMode::FP32:
  case PrecisionMode::Auto:
    return {};
  }
  return {};
}

} // namespace mpt
