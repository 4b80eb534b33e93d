//===- PrecisionMode.h - precision modes and targets ------------*- C++ -*-===//
#ifndef MPT_TRANSFORMS_PRECISIONMODE_H
#define MPT_TRANSFORMS_PRECISIONMODE_H

#include "mpt/IR/MPTEnumOptions.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"
#include <string>

namespace mpt {

// mpt::PrecisionMode, the precision a model is compiled in, is MPTEnums.td's:
// the modes of `--assign-precision` (whose `mode` takes every case but
// `none`), and `none` (the model's own types, no `--assign-precision`),
// which only the pipelines' `precision` takes. stringifyPrecisionMode gives
// a mode's name as the options spell it ("bf16", ...).

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
