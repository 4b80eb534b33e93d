//===- MPTRTDialect.cpp - mptrt dialect registration ----------------------===//
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mpt::rt;

#include "mpt/Dialect/MPTRT/IR/MPTRTAttrInterfaces.cpp.inc"
#include "mpt/Dialect/MPTRT/IR/MPTRTOpInterfaces.cpp.inc"
#include "mpt/Dialect/MPTRT/IR/MPTRTOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mpt/Dialect/MPTRT/IR/MPTRTAttrs.cpp.inc"

void MPTRTDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mpt/Dialect/MPTRT/IR/MPTRTAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.cpp.inc"
      >();
}
