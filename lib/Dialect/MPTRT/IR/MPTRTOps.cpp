//===- MPTRTOps.cpp - mptrt verifiers -------------------------------------===//
//
// The few invariants of mptrt ops that cross fields. Operand and attribute
// structure is ODS's; shapes and dtypes are checked again by the runtime
// when it prepares a kernel.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mpt::rt;

namespace {
int64_t byteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  int64_t bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * ((bits + 7) / 8);
}
} // namespace

LogicalResult mpt::rt::verifyKernelOp(Operation *op) {
  auto offsets = op->getAttrOfType<DenseI64ArrayAttr>("offsets");
  if (!offsets)
    return success();
  if (offsets.size() != static_cast<int64_t>(op->getNumResults()))
    return op->emitOpError() << "has " << offsets.size() << " arena offsets for "
                             << op->getNumResults() << " results";
  for (int64_t offset : offsets.asArrayRef())
    if (offset < -1 || (offset >= 0 && offset % 64 != 0))
      return op->emitOpError()
             << "has arena offset " << offset
             << "; offsets are multiples of 64, or -1 for a value outside the arena";
  return success();
}

LogicalResult DropoutOp::verify() {
  if (!getRng().empty() && getRng().size() != 2)
    return emitOpError("takes either no rng operands or (seed, step)");
  if (getRng().empty() != !getStream().has_value())
    return emitOpError("has a stream exactly when it has (seed, step)");
  return success();
}

LogicalResult AllFiniteOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one operand");
  return success();
}

LogicalResult GlobalNormOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one operand");
  return success();
}

LogicalResult ViewOp::verify() {
  if (getOffset() < 0 || getOffset() % 64 != 0)
    return emitOpError() << "has offset " << getOffset()
                         << "; arena offsets are non-negative multiples of 64";
  if (byteSize(getSource().getType()) != byteSize(getOutput().getType()))
    return emitOpError() << "views " << getSource().getType() << " as "
                         << getOutput().getType() << ", which has another byte size";
  return success();
}

#define GET_OP_CLASSES
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.cpp.inc"
