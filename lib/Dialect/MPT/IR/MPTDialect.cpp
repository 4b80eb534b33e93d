//===- MPTDialect.cpp - mpt dialect registration --------------------------===//
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"

using namespace mlir;
using namespace mpt;

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include "mpt/Dialect/MPT/IR/MPTOpsDialect.cpp.inc"

#include "mpt/Dialect/MPT/IR/MPTOutputRole.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mpt/Dialect/MPT/IR/MPTAttrs.cpp.inc"

void MPTDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mpt/Dialect/MPT/IR/MPTAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mpt/Dialect/MPT/IR/MPTOps.cpp.inc"
      >();
}

Operation *MPTDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
