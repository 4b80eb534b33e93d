//===- PrecisionMode.cpp - precision modes and targets --------------------===//
#include "mpt/Transforms/PrecisionMode.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace mpt {

// The modes of --assign-precision, as option values.
#define MPT_ASSIGN_PRECISION_MODES                                             \
  clEnumValN(PrecisionMode::BF16, "bf16", "BF16 mixed precision"),             \
      clEnumValN(PrecisionMode::FP16, "fp16", "FP16 mixed precision"),         \
      clEnumValN(PrecisionMode::FP8, "fp8",                                    \
                 "FP8 (E4M3) contraction inputs, otherwise BF16"),             \
      clEnumValN(PrecisionMode::FP32, "fp32", "Everything FP32"),              \
      clEnumValN(PrecisionMode::Auto, "auto", "Chosen from `target`")

llvm::cl::ValuesClass precisionModeValues(bool withNone) {
  if (!withNone)
    return llvm::cl::values(MPT_ASSIGN_PRECISION_MODES);
  return llvm::cl::values(
      clEnumValN(PrecisionMode::None, "none",
                 "The model's own types (no --assign-precision)"),
      MPT_ASSIGN_PRECISION_MODES);
}
#undef MPT_ASSIGN_PRECISION_MODES

StringRef stringifyPrecisionMode(PrecisionMode mode) {
  switch (mode) {
  case PrecisionMode::None:
    return "none";
  case PrecisionMode::BF16:
    return "bf16";
  case PrecisionMode::FP16:
    return "fp16";
  case PrecisionMode::FP8:
    return "fp8";
  case PrecisionMode::FP32:
    return "fp32";
  case PrecisionMode::Auto:
    return "auto";
  }
  return "unknown";
}

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
