//===- TrainingLoss.cpp - the loss a training step minimises --------------===//
//
// A model exported with its loss has a 0-d float output: that is the loss.
// Otherwise the options name a loss kind and the output it applies to, and
// the labels are an input of that name (added, or the model's own input of
// that name when the model reads the labels too, as T5 does to shift them
// into its decoder): cross-entropy over the last axis (class scores, as
// PyTorch lays out [N, C] and [B, T, V]), mean squared error, or negative
// log-likelihood of log-probabilities; each reduces by the mean, in FP32.
//
//===----------------------------------------------------------------------===//
#include "TrainingLoss.h"

#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/IR/MPTEnumOptions.h"

#include <numeric>

using namespace mlir;

namespace mpt {
namespace {

StringRef outputName(func::FuncOp func, unsigned i) {
  if (auto name = func.getResultAttrOfType<StringAttr>(i, kOutputAttrName))
    return name.getValue();
  return "";
}

/// "cross_entropy|mse|nll": the loss kinds that add a loss.
std::string addedLossKinds() {
  std::string kinds;
  for (const EnumOptionCase<LossKind> &c : EnumOptionCases<LossKind>::cases)
    if (c.value != LossKind::Model)
      kinds += (kinds.empty() ? "" : "|") + std::string(c.name);
  return kinds;
}

bool isScalarFloat(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getRank() == 0 && isa<FloatType>(t.getElementType());
}

/// The returned value the loss is (or applies to), by output name or as the
/// only candidate.
FailureOr<Value> pickOutput(func::FuncOp func, StringRef name, bool scalar,
                            StringRef what) {
  Operation *ret = func.getBody().front().getTerminator();
  SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < ret->getNumOperands(); ++i) {
    Type type = ret->getOperand(i).getType();
    if (!isFloatLike(type) || (scalar && !isScalarFloat(type)))
      continue;
    if (!name.empty() && outputName(func, i) != name)
      continue;
    candidates.push_back(i);
  }
  if (candidates.size() == 1)
    return ret->getOperand(candidates[0]);
  std::string names;
  for (unsigned i = 0; i < ret->getNumOperands(); ++i)
    names += (names.empty() ? "'" : ", '") + outputName(func, i).str() + "'";
  if (candidates.empty() && !name.empty())
    return func.emitError("no ") << what << " output named '" << name
                                 << "'; the outputs are " << names,
           failure();
  if (candidates.empty())
    return func.emitError("the model has no ")
               << what << " output (its outputs are " << names
               << "); add a loss with loss-kind=" << addedLossKinds()
               << ", loss-output and label-input",
           failure();
  return func.emitError("several ")
             << what << " outputs (" << names << "); choose one with "
             << (scalar ? "loss=NAME" : "loss-output=NAME"),
         failure();
}

/// The label input `name` of `type`: the model's own input of that name
/// (which must have that type), or a new one.
FailureOr<Value> labelInput(func::FuncOp func, RankedTensorType type,
                            StringRef name) {
  for (BlockArgument arg : func.getArguments())
    if (auto input = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                       kInputAttrName))
      if (input.getValue() == name) {
        if (arg.getType() != type)
          return func.emitError("the model's input '")
                     << name << "' is " << arg.getType()
                     << ", but the loss needs labels of type " << type
                     << "; choose another label-input",
                 failure();
        return Value(arg);
      }
  unsigned index = func.getNumArguments();
  (void)func.insertArgument(
      index, type,
      DictionaryAttr::get(
          func.getContext(),
          {NamedAttribute(StringAttr::get(func.getContext(), kInputAttrName),
                          StringAttr::get(func.getContext(), name))}),
      func.getLoc());
  return func.getArgument(index);
}

} // namespace

FailureOr<Value> prepareLoss(func::FuncOp func, const LossOptions &options) {
  if (options.kind == LossKind::Model)
    return pickOutput(func, options.lossName, /*scalar=*/true, "scalar float");
  auto output = pickOutput(func, options.output, /*scalar=*/false, "float");
  if (failed(output))
    return failure();

  OpBuilder b(func.getBody().front().getTerminator());
  StringRef kind = stringifyLossKind(options.kind);
  Location loc = NameLoc::get(b.getStringAttr("loss." + kind));
  Type f32 = b.getF32Type();
  Value y = grad::castTo(b, loc, *output, f32);
  RankedTensorType yType = grad::tensorType(y);
  int64_t rank = yType.getRank();
  auto i64 = b.getI64Type();

  if (options.kind == LossKind::MSE) {
    auto t = labelInput(func, yType, options.labelInput);
    if (failed(t))
      return failure();
    Value d = SubOp::create(b, loc, y, *t).getResult();
    Value sq = MulOp::create(b, loc, d, d).getResult();
    return ReduceMeanOp::create(b, loc, sq, ArrayRef<int64_t>{},
                                /*keepdims=*/false)
        .getResult();
  }
  if (rank < 2)
    return func.emitError("loss-kind=") << kind
                                        << " needs class scores of rank >= 2 "
                                           "(classes on the last axis); '"
                                        << options.output << "' is " << yType,
           failure();
  // Classes on the last axis; the ONNX-style losses want them on axis 1.
  if (rank > 2) {
    SmallVector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    perm.erase(perm.begin() + (rank - 1));
    perm.insert(perm.begin() + 1, rank - 1);
    y = TransposeOp::create(b, loc, y, perm).getResult();
  }
  SmallVector<int64_t> labelShape(yType.getShape().drop_back());
  auto labelValue = labelInput(func, RankedTensorType::get(labelShape, i64),
                               options.labelInput);
  if (failed(labelValue))
    return failure();
  Value labels = *labelValue;
  if (options.kind == LossKind::NLL)
    return NegativeLogLikelihoodLossOp::create(
               b, loc, TypeRange{RankedTensorType::get({}, f32)},
               ValueRange{y, labels},
               {b.getNamedAttr(
                   "reduction",
                   ReductionAttr::get(b.getContext(), Reduction::mean))})
        .getResult();
  auto sce = SoftmaxCrossEntropyLossOp::create(
      b, loc, TypeRange{RankedTensorType::get({}, f32), grad::tensorType(y)},
      ValueRange{y, labels},
      {b.getNamedAttr("reduction",
                      ReductionAttr::get(b.getContext(), Reduction::mean))});
  return sce.getLoss();
}

} // namespace mpt
