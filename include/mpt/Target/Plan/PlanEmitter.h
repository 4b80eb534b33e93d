//===- PlanEmitter.h - mpt IR to a runtime plan file ------------*- C++ -*-===//
//
// Serializes a module that went through `--lower-to-runtime` into the plan
// format of docs/plan-format.md: each public function becomes an entry point,
// each op a kernel (the op's mnemonic is the kernel kind, its inherent
// attributes the kernel's), each value a tensor placed where the lowering
// said.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TARGET_PLAN_PLANEMITTER_H
#define MPT_TARGET_PLAN_PLANEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <vector>

namespace mpt {

/// What a plan holds, for tools to print.
struct PlanSummary {
  size_t entries = 0, kernels = 0, tensors = 0, parameters = 0;
  uint64_t parameterBytes = 0, constantBytes = 0, maxArenaBytes = 0;
};

/// Builds the plan's bytes. Emits diagnostics at the offending op and fails
/// if the module was not lowered or uses something without a plan encoding.
mlir::FailureOr<std::vector<uint8_t>> emitPlan(mlir::ModuleOp module,
                                               PlanSummary *summary = nullptr);

/// Writes the plan to `os` as emitPlan builds it, without gathering it in
/// memory: the weights go from the module's attributes to `os` directly.
mlir::LogicalResult writePlan(mlir::ModuleOp module, llvm::raw_ostream &os,
                              PlanSummary *summary = nullptr);

} // namespace mpt

#endif // MPT_TARGET_PLAN_PLANEMITTER_H
