//===- PrecisionMode.h - precision modes and targets ------------*- C++ -*-===//
#ifndef MPT_TRANSFORMS_PRECISIONMODE_H
#define MPT_TRANSFORMS_PRECISIONMODE_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"
#include <string>

namespace mpt {

/// The precision modes of `--assign-precision`.
enum class PrecisionMode { BF16, FP16, FP8, FP32, Auto };

/// The mode's name as the option spells it ("bf16", ...).
llvm::StringRef stringifyPrecisionMode(PrecisionMode mode);

/// The mode `auto` picks for `target`: bf16 for sm_80 and newer, fp16 for
/// sm_70 to sm_79, fp32 for older GPUs and for `cpu`. Fails, with a message
/// in `error`, for a target it does not know. Nothing is detected at compile
/// time: the target is what the user states.
llvm::FailureOr<PrecisionMode> resolveAutoMode(llvm::StringRef target,
                                               std::string &error);

/// The low-precision element type ops compute in under `mode` (bf16 for bf16
/// and fp8, f16 for fp16), or null for fp32. `mode` must not be auto.
mlir::Type lowPrecisionType(mlir::MLIRContext *ctx, PrecisionMode mode);

} // namespace mpt

#endif // MPT_TRANSFORMS_PRECISIONMODE_H
