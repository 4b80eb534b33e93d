//===- PrecisionMode.cpp - precision modes and targets --------------------===//
#include "mpt/Transforms/PrecisionMode.h"
#include "mpt/Transforms/Target.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mpt {

FailureOr<PrecisionMode> resolveAutoMode(StringRef target, std::string &error) {
  if (target.empty()) {
    error = "mode=auto needs target=<sm_XY|cpu>; the compiler does not "
            "detect hardware";
    return failure();
  }
  FailureOr<Target> t = parseTarget(target, error);
  if (failed(t))
    return failure();
  if (t->cpu)
    return PrecisionMode::FP32;
  if (t->capability >= 80)
    return PrecisionMode::BF16;
  if (t->capability >= 70)
    return PrecisionMode::FP16;
  return PrecisionMode::FP32;
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
