//===- EvalEntry.cpp - the eval_step entry beside train_step --------------===//
//
// eval_step is the forward function as --build-training-step found it, after
// the loss was chosen or added: the same ops at the same assigned
// precision, so that a validation loss is what train_step's forward pass
// would compute, in inference mode. Two rewrites make it inference mode:
//
//   batch_norm_train(x, s, b, rm, rv) -> batch_norm(x, s, b, rm, rv), its
//       new running statistics replaced by the old ones (nothing is
//       written back);
//   dropout {training = true}         -> its input (the mask, if used,
//       becomes all true through the op's canonicalization).
//
//===----------------------------------------------------------------------===//
#include "EvalEntry.h"

#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Dialect/MPT/IR/OutputRole.h"
#include "mptrt/TrainStepAbi.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace mpt {
namespace {

void toInference(BatchNormTrainOp op) {
  OpBuilder b(op);
  SmallVector<NamedAttribute> attrs;
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != op.getMomentumAttrName())
      attrs.push_back(a);
  auto inference =
      BatchNormOp::create(b, op.getLoc(), TypeRange{op.getOutput().getType()},
                          ValueRange{op.getInput(), op.getScale(), op.getBias(),
                                     op.getRunningMean(), op.getRunningVar()},
                          attrs);
  op.getOutput().replaceAllUsesWith(inference.getResult());
  op.getNewRunningMean().replaceAllUsesWith(op.getRunningMean());
  op.getNewRunningVar().replaceAllUsesWith(op.getRunningVar());
  op.erase();
}

void toInference(DropoutOp op) {
  if (op.getMask().use_empty()) {
    op.getOutput().replaceAllUsesWith(op.getInput());
    op.erase();
    return;
  }
  op.setTraining(false);
}

} // namespace

FailureOr<func::FuncOp> buildEvalEntry(func::FuncOp func, Value loss,
                                       StringRef name) {
  auto module = func->getParentOfType<ModuleOp>();
  if (module && SymbolTable::lookupSymbolIn(module, name))
    return func.emitError("the module already has a symbol named '")
               << name
               << "', the name of the eval entry (choose another with "
                  "eval-entry=NAME, "
               << "or none with eval-entry=)",
           failure();

  IRMapping mapping;
  auto eval = cast<func::FuncOp>(func->clone(mapping));
  OpBuilder(func).insert(eval);
  eval->moveAfter(func);
  eval.setSymName(name);
  eval.setPublic();

  SmallVector<BatchNormTrainOp> norms;
  SmallVector<DropoutOp> drops;
  eval.walk([&](Operation *op) {
    if (auto bn = dyn_cast<BatchNormTrainOp>(op))
      norms.push_back(bn);
    else if (auto drop = dyn_cast<DropoutOp>(op); drop && drop.getTraining())
      drops.push_back(drop);
  });
  for (BatchNormTrainOp op : norms)
    toInference(op);
  for (DropoutOp op : drops)
    toInference(op);

  // Outputs: the loss, with its role, then the forward function's other
  // outputs. The loss is known by its value, not by an output's name: the
  // model's own output when it is the loss, else the one prepareLoss added.
  // An entry's outputs have distinct names, so a model output that the loss
  // output's name shadows (the model's own loss, when loss-kind added
  // another) is left out.
  Operation *terminator = eval.getBody().front().getTerminator();
  OpBuilder b(terminator);
  Value evalLoss = mapping.lookup(loss);
  SmallVector<Value> results = {grad::castTo(
      b, NameLoc::get(b.getStringAttr(name)), evalLoss, b.getF32Type())};
  MLIRContext *ctx = func.getContext();
  const char *lossName = mptrt::abi::outputName(mptrt::abi::OutputRole::Loss);
  SmallVector<DictionaryAttr> resultAttrs = {
      outputAttrs(ctx, lossName, mptrt::abi::OutputRole::Loss)};
  llvm::StringSet<> names = {lossName};
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    auto output = eval.getResultAttrOfType<StringAttr>(i, kOutputAttrName);
    if (value == evalLoss || !output || !names.insert(output.getValue()).second)
      continue;
    results.push_back(value);
    resultAttrs.push_back(
        outputAttrs(ctx, output.getValue(), mptrt::abi::OutputRole::None));
  }
  func::ReturnOp::create(b, terminator->getLoc(), results);
  terminator->erase();
  eval.setFunctionType(b.getFunctionType(eval.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  eval.setAllResultAttrs(resultAttrs);
  return eval;
}

} // namespace mpt
