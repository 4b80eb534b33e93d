//===- FP8Scaling.cpp - FP8 scale state of the training step --------------===//
//
// Transformer Engine's delayed scaling, as state and ops of train_step:
//
//   amax_k   = max |x| of the tensor at step k        (mpt.amax)
//   history' = [amax_k, history[0 .. H-2]]            (mpt.update_fp8_scale)
//   a        = max(history') or history'[0]           (amax_compute_algo)
//   scale'   = fp8_max / a / 2^margin, or scale when a is 0 or not finite
//
// Delayed: step k quantizes with the scale step k-1 wrote, so the amax
// recorded at step k sets the scale of step k+1. Current: step k quantizes
// with the scale its own amax gives (the state keeps a one-entry history
// and that scale). The state update runs on every step, a skipped one
// included (the amax describes the tensors the step saw), after every
// reader of the stored scale, because it writes the scale in place.
//
//===----------------------------------------------------------------------===//
#include "FP8Scaling.h"
#include "PrecisionPlan.h"

#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mptrt/TrainStepAbi.h"

using namespace mlir;
using namespace mpt;

namespace {

double fp8Max(Type fp8Type) {
  return isa<Float8E5M2Type>(fp8Type) ? 57344.0 : 448.0;
}

RankedTensorType scalarF32(MLIRContext *ctx) {
  return RankedTensorType::get({}, Float32Type::get(ctx));
}

} // namespace

std::string FP8Scaling::check(int64_t historyLength, int64_t margin) {
  if (historyLength < 1)
    return "fp8-amax-history must be at least 1; got " +
           std::to_string(historyLength);
  if (margin < -126 || margin > 126)
    return "fp8-margin must be in [-126, 126]; got " + std::to_string(margin);
  return "";
}

FP8ScalingOptions FP8Scaling::parse(FP8ScalingMode mode, int64_t historyLength,
                                    AmaxComputeAlgo amaxAlgo, int64_t margin) {
  assert(check(historyLength, margin).empty() && "FP8 options not verified");
  FP8ScalingOptions o;
  o.mode = mode;
  o.historyLength = mode == FP8ScalingMode::Current ? 1 : historyLength;
  o.amaxAlgo = amaxAlgo;
  o.margin = margin;
  return o;
}

LogicalResult FP8Scaling::adoptForwardScales(llvm::StringSet<> &taken) {
  MLIRContext *ctx = func.getContext();
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto tensor = func.getArgAttrOfType<StringAttr>(i, kFP8ScaleAttrName);
    if (!tensor || func.getArgAttr(i, kParamAttrName))
      continue;
    std::string name = tensor.getValue().str() + mptrt::abi::kFP8ScaleSuffix;
    if (!taken.insert(name).second)
      return func.emitError("the model already has a parameter named '")
                 << name << "', which the FP8 scale state needs",
             failure();
    func.setArgAttr(i, kParamAttrName, StringAttr::get(ctx, name));
    func.setArgAttr(i, kInitialValueAttrName,
                    DenseElementsAttr::get(scalarF32(ctx), 1.0f));
  }
  return success();
}

LogicalResult FP8Scaling::updateForwardScales() {
  if (options.mode == FP8ScalingMode::None)
    return success();
  // The state added below appends arguments: collect the scales first.
  SmallVector<std::pair<BlockArgument, StringAttr>> scales;
  for (BlockArgument arg : func.getArguments())
    if (auto tensor = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        kFP8ScaleAttrName))
      scales.push_back({arg, tensor});
  for (auto [arg, tensor] : scales) {
    SmallVector<QuantizeOp> quantizes;
    for (Operation *user : arg.getUsers())
      if (auto q = dyn_cast<QuantizeOp>(user); q && q.getScale() == arg)
        quantizes.push_back(q);
    if (quantizes.empty())
      continue; // the scale of a contraction whose operand the user quantized
    if (quantizes.size() > 1)
      return quantizes[1].emitOpError("shares its FP8 scale '")
                 << tensor.getValue()
                 << "' with another quantize; one amax per scale is kept",
             failure();
    QuantizeOp q = quantizes.front();
    OpBuilder b(q);
    FailureOr<Value> scale =
        track(b, q.getLoc(), tensor.getValue(), arg, q.getInput(),
              getElementTypeOrSelf(q.getType()));
    if (failed(scale))
      return failure();
    if (*scale != arg)
      arg.replaceUsesWithIf(*scale, [&](OpOperand &use) {
        return !isa<UpdateFP8ScaleOp>(use.getOwner());
      });
  }
  return success();
}

FailureOr<Value> FP8Scaling::scaleFor(OpBuilder &b, Value forward, Value grad,
                                      Type fp8Type) {
  Operation *def = forward.getDefiningOp();
  std::string base = def ? onnxNodeName(def->getLoc()).str() : std::string();
  if (base.empty())
    base = def ? def->getName().getStringRef().str() : "input";
  base += mptrt::abi::kFP8GradientSuffix;
  std::string name = base;
  for (unsigned n = 1; !gradNames.insert(name).second; ++n)
    name = base + "#" + std::to_string(n);
  auto scale = sink.addState(name + mptrt::abi::kFP8ScaleSuffix,
                             scalarF32(b.getContext()), 1.0);
  if (failed(scale))
    return failure();
  if (options.mode == FP8ScalingMode::None)
    return *scale;
  return track(b, forward.getLoc(), name, *scale, grad, fp8Type);
}

FailureOr<Value> FP8Scaling::track(OpBuilder &b, Location loc, StringRef name,
                                   Value scale, Value tensor, Type fp8Type) {
  MLIRContext *ctx = b.getContext();
  auto historyType =
      RankedTensorType::get({options.historyLength}, Float32Type::get(ctx));
  auto history = sink.addState((name + mptrt::abi::kAmaxHistorySuffix).str(),
                               historyType, 0.0);
  if (failed(history))
    return failure();
  Value amax = AmaxOp::create(b, loc, scalarF32(ctx), tensor).getResult();
  // The state update writes the scale in place, so it runs after every
  // reader of the stored scale (finish).
  pending.push_back({name.str(), *history, scale, amax, fp8Max(fp8Type), loc});
  if (options.mode != FP8ScalingMode::Current)
    return scale;
  // Current scaling: this step's scale, from this step's amax alone (the
  // same rule on a fresh one-entry history, so a zero or non-finite amax
  // keeps the stored scale), in a temporary that the step's quantize and
  // contractions read.
  auto oneType = RankedTensorType::get({1}, Float32Type::get(ctx));
  Value fresh =
      ConstantOp::create(b, loc, DenseElementsAttr::get(oneType, 0.0f))
          .getResult();
  auto now = UpdateFP8ScaleOp::create(
      b, loc, TypeRange{oneType, scalarF32(ctx)},
      ValueRange{fresh, scale, amax},
      {b.getNamedAttr("fp8_max", b.getF64FloatAttr(fp8Max(fp8Type))),
       b.getNamedAttr("margin", b.getI64IntegerAttr(options.margin))});
  return now.getNewScale();
}

Value FP8Scaling::emitUpdate(OpBuilder &b, const Pending &u) {
  MLIRContext *ctx = b.getContext();
  auto historyType = cast<RankedTensorType>(u.history.getType());
  auto upd = UpdateFP8ScaleOp::create(
      b, u.loc, TypeRange{historyType, scalarF32(ctx)},
      ValueRange{u.history, u.scale, u.amax},
      {b.getNamedAttr("fp8_max", b.getF64FloatAttr(u.fp8Max)),
       b.getNamedAttr("margin", b.getI64IntegerAttr(options.margin)),
       b.getNamedAttr("amax_compute_algo",
                      AmaxComputeAlgoAttr::get(ctx, options.amaxAlgo))});
  sink.update(u.name + mptrt::abi::kAmaxHistorySuffix, upd.getNewAmaxHistory());
  sink.update(u.name + mptrt::abi::kFP8ScaleSuffix, upd.getNewScale());
  return upd.getNewScale();
}

void FP8Scaling::finish(OpBuilder &b) {
  for (const Pending &u : pending)
    emitUpdate(b, u);
  pending.clear();
}
