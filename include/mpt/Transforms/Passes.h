//===- Passes.h - MPT transformation passes ---------------------*- C++ -*-===//
#ifndef MPT_TRANSFORMS_PASSES_H
#define MPT_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mpt/Transforms/LossScale.h"
#include "mpt/Transforms/PrecisionMode.h"

#include <memory>

namespace mpt {
class MPTDialect;

#define GEN_PASS_DECL
#include "mpt/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "mpt/Transforms/Passes.h.inc"

} // namespace mpt

#endif // MPT_TRANSFORMS_PASSES_H
