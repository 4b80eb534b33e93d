//===- MPTRTOps.h - mptrt operations ----------------------------*- C++ -*-===//
#ifndef MPT_DIALECT_MPTRT_IR_MPTRTOPS_H
#define MPT_DIALECT_MPTRT_IR_MPTRTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
// ODS infers mptrt.constant's result type from its value (the records
// include InferTypeOpInterface.td with the mpt ops'; MPTRTOps.td).
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mpt/Dialect/MPTRT/IR/KernelAttrInfo.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTDialect.h"
#include "mpt/IR/MPTEnums.h"

#include "mpt/Dialect/MPTRT/IR/MPTRTAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mpt/Dialect/MPTRT/IR/MPTRTAttrs.h.inc"

namespace mpt::rt {
/// Checks what every kernel op shares: operand and result counts within the
/// kernel's ranges (max -1: no bound), one arena offset per result.
mlir::LogicalResult verifyKernelOp(mlir::Operation *op, unsigned minOperands,
                                   int maxOperands, unsigned minResults,
                                   int maxResults);
} // namespace mpt::rt

#include "mpt/Dialect/MPTRT/IR/MPTRTOpInterfaces.h.inc"

#define GET_OP_CLASSES
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h.inc"

#endif // MPT_DIALECT_MPTRT_IR_MPTRTOPS_H
