//===- ReferenceInterpreter.cpp - float64 interpreter of mpt IR -----------===//
//
// Walks a function body in order, evaluating each op through the dispatch
// table that the RefOps*.cpp families fill, and checks every result against
// its declared type.
//
//===----------------------------------------------------------------------===//
#include "ReferenceInterpreter.h"
#include "RefOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace mpt::ref {
namespace {

const RefOpTable &opTable() {
  static const RefOpTable table = [] {
    RefOpTable t;
    addConstantOps(t);
    addElementwiseOps(t);
    addContractionOps(t);
    addPoolingOps(t);
    addAttentionOps(t);
    addNormalizationOps(t);
    addLossOps(t);
    addReductionOps(t);
    addDataMovementOps(t);
    addTrainingOps(t);
    return t;
  }();
  return table;
}

/// Gives `value` the shape of `type` and the values its element type can
/// hold: integers truncate toward zero (non-finite values give 0) and i1 is
/// `x != 0`.
LogicalResult conform(Operation *op, unsigned index, RefTensor &value) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(index).getType());
  if (!type || !type.hasStaticShape())
    return fail(op, "result #" + Twine(index) +
                        " is not a statically shaped tensor");
  if (value.numElements() != type.getNumElements())
    return fail(op, "evaluator produced " + Twine(value.numElements()) +
                        " elements for result #" + Twine(index) + ", whose " +
                        "type has " + Twine(type.getNumElements()));
  value.shape.assign(type.getShape().begin(), type.getShape().end());
  Type element = type.getElementType();
  if (element.isInteger(1)) {
    for (double &v : value.data)
      v = v != 0.0 ? 1.0 : 0.0;
  } else if (element.isInteger()) {
    for (double &v : value.data)
      v = std::isfinite(v) ? std::trunc(v) : 0.0;
  }
  return success();
}

} // namespace

FailureOr<std::vector<RefTensor>> interpret(func::FuncOp func,
                                            ArrayRef<RefTensor> args) {
  if (func.isExternal())
    return func.emitError("reference interpreter: function has no body"),
           failure();
  Block &body = func.getBody().front();
  if (args.size() != body.getNumArguments())
    return func.emitError() << "reference interpreter: " << args.size()
                            << " arguments given, the function takes "
                            << body.getNumArguments(),
           failure();

  llvm::DenseMap<Value, RefTensor> values;
  for (auto [index, arg] : llvm::enumerate(body.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getShape() != ArrayRef<int64_t>(args[index].shape) ||
        args[index].numElements() != type.getNumElements())
      return func.emitError() << "reference interpreter: argument #" << index
                              << " does not match " << arg.getType(),
             failure();
    values[arg] = args[index];
  }

  const RefOpTable &table = opTable();
  for (Operation &op : body) {
    std::vector<RefTensor> operands;
    operands.reserve(op.getNumOperands());
    for (Value operand : op.getOperands())
      operands.push_back(values.at(operand));

    if (isa<func::ReturnOp>(op))
      return operands;

    auto it = table.find(op.getName().getStringRef());
    if (it == table.end())
      return op.emitError() << "reference interpreter: no evaluator for '"
                            << op.getName() << "'",
             failure();
    std::vector<RefTensor> results;
    if (failed(it->second(&op, operands, results)))
      return failure();
    if (results.size() != op.getNumResults())
      return fail(&op, "evaluator produced " + Twine(results.size()) +
                           " results, the op has " + Twine(op.getNumResults()));
    for (auto [index, result] : llvm::enumerate(op.getResults())) {
      if (failed(conform(&op, index, results[index])))
        return failure();
      values[result] = std::move(results[index]);
    }
  }
  return func.emitError("reference interpreter: body has no func.return"),
         failure();
}

} // namespace mpt::ref
