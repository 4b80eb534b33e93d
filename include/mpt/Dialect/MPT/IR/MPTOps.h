//===- MPTOps.h - mpt dialect operations ------------------------*- C++ -*-===//
#ifndef MPT_DIALECT_MPT_IR_MPTOPS_H
#define MPT_DIALECT_MPT_IR_MPTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPT/IR/ShapeRules.h"
#include "mpt/IR/MPTEnums.h"
#include "mpt/Interfaces/GradientOpInterface.h"
#include "mpt/Interfaces/PrecisionPolicyOpInterface.h"

#include "mpt/Dialect/MPT/IR/MPTOutputRole.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mpt/Dialect/MPT/IR/MPTAttrs.h.inc"

#define GET_OP_CLASSES
#include "mpt/Dialect/MPT/IR/MPTOps.h.inc"

#endif // MPT_DIALECT_MPT_IR_MPTOPS_H
