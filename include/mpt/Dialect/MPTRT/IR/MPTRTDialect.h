//===- MPTRTDialect.h - mptrt execution dialect -----------------*- C++ -*-===//
#ifndef MPT_DIALECT_MPTRT_IR_MPTRTDIALECT_H
#define MPT_DIALECT_MPTRT_IR_MPTRTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "mpt/Dialect/MPTRT/IR/MPTRTOpsDialect.h.inc"

#endif // MPT_DIALECT_MPTRT_IR_MPTRTDIALECT_H
