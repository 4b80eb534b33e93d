//===- MPTRTOps.cpp - mptrt verifiers -------------------------------------===//
//
// The few invariants of mptrt ops that cross fields. Operand and attribute
// structure is ODS's; shapes and dtypes are checked again by the runtime
// when it prepares a kernel.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mpt::rt;

namespace {
int64_t byteSize(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  int64_t bits = tensor.getElementTypeBitWidth();
  return tensor.getNumElements() * ((bits + 7) / 8);
}
} // namespace

namespace {
LogicalResult checkCount(Operation *op, StringRef what, unsigned count,
                         unsigned min, int max) {
  if (count >= min && (max < 0 || count <= static_cast<unsigned>(max)))
    return success();
  InFlightDiagnostic diag = op->emitOpError() << "has " << count << " " << what
                                              << "; the kernel takes " << min;
  if (max < 0)
    diag << " or more";
  else if (static_cast<unsigned>(max) != min)
    diag << " to " << max;
  return diag;
}
} // namespace

LogicalResult mpt::rt::verifyKernelOp(Operation *op, unsigned minOperands,
                                      int maxOperands, unsigned minResults,
                                      int maxResults) {
  if (failed(checkCount(op, "operands", op->getNumOperands(), minOperands,
                        maxOperands)) ||
      failed(checkCount(op, "results", op->getNumResults(), minResults,
                        maxResults)))
    return failure();
  auto offsets = op->getAttrOfType<DenseI64ArrayAttr>("offsets");
  if (!offsets)
    return success();
  if (offsets.size() != static_cast<int64_t>(op->getNumResults()))
    return op->emitOpError()
           << "has " << offsets.size() << " arena offsets for "
           << op->getNumResults() << " results";
  for (int64_t offset : offsets.asArrayRef())
    if (offset < -1 || (offset >= 0 && offset % 64 != 0))
      return op->emitOpError() << "has arena offset " << offset
                               << "; offsets are multiples of 64, or -1 for a "
                                  "value outside the arena";
  return success();
}

LogicalResult DropoutOp::verify() {
  if (!getRng().empty() && getRng().size() != 2)
    return emitOpError("takes either no rng operands or (seed, step)");
  if (getRng().empty() != !getStream().has_value())
    return emitOpError("has a stream exactly when it has (seed, step)");
  return success();
}

LogicalResult ViewOp::verify() {
  int64_t offset = getOffsetAttr().getValue().getSExtValue();
  if (offset < 0 || offset % 64 != 0)
    return emitOpError() << "has offset " << offset
                         << "; arena offsets are non-negative multiples of 64";
  if (byteSize(getSource().getType()) != byteSize(getOutput().getType()))
    return emitOpError() << "views " << getSource().getType() << " as "
                         << getOutput().getType()
                         << ", which has another byte size";
  return success();
}

LogicalResult ArenaOp::verify() {
  Operation *parent = (*this)->getParentOp();
  Block *block = (*this)->getBlock();
  if (!isa_and_nonnull<FunctionOpInterface>(parent) ||
      block != &parent->getRegion(0).front() ||
      &block->front() != getOperation())
    return emitOpError("must be the first op of a function body");
  int64_t size = getSize();
  auto fits = [&](Operation *op, Value value, int64_t offset) -> LogicalResult {
    int64_t bytes = byteSize(value.getType());
    if (offset <= size - bytes)
      return success();
    return op->emitOpError()
           << "places " << bytes << " bytes at arena offset " << offset
           << ", past the end of the " << size << "-byte arena";
  };
  for (Operation &op : block->without_terminator()) {
    if (auto view = dyn_cast<ViewOp>(op)) {
      if (failed(fits(view, view.getOutput(), view.getOffset())))
        return failure();
    } else if (auto kernel = dyn_cast<KernelOpInterface>(op)) {
      DenseI64ArrayAttr offsets = kernel.getArenaOffsets();
      if (!offsets ||
          offsets.size() != static_cast<int64_t>(op.getNumResults()))
        continue; // the kernel's own verifier reports a count mismatch
      for (auto [result, offset] :
           llvm::zip(op.getResults(), offsets.asArrayRef()))
        if (offset >= 0 && failed(fits(&op, result, offset)))
          return failure();
    }
  }
  return success();
}

#define GET_OP_CLASSES
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.cpp.inc"
