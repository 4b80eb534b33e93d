//===- BuildTrainingStep.cpp - the --build-training-step pass -------------===//
//
// forward + loss -> gradients (Autodiff.cpp, through each op's rule) ->
// unscale -> all-finite -> global norm (-> clip) -> gated optimizer update
// -> step counters and scale update (-> batch-norm running statistics,
// written every step). The function's signature becomes the
// train_step ABI of docs/training.md: the new state is returned with
// `mpt.updates` naming the parameter it replaces. Beside it, eval_step
// (EvalEntry.cpp) is cloned from the forward function once the loss exists.
//
//===----------------------------------------------------------------------===//
#include "EvalEntry.h"
#include "FP8Scaling.h"
#include "MasterWeights.h"
#include "SyncBatchNorm.h"
#include "TrainingLoss.h"

#include "mpt/Dialect/MPT/IR/GradientUtils.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Dialect/MPT/IR/OutputRole.h"
#include "mpt/Transforms/Autodiff.h"
#include "mpt/Transforms/Passes.h"
#include "mpt/Transforms/TrainingStepOptions.h"

#include "mptrt/TrainStepAbi.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

namespace mpt {
#define GEN_PASS_DEF_BUILDTRAININGSTEPPASS
#include "mpt/Transforms/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;
namespace abi = mptrt::abi;

namespace {

enum class ScaleMode { None, Static, Dynamic };

struct Trainable {
  BlockArgument arg;
  std::string name;
  Value grad;
};

class StepBuilder {
public:
  StepBuilder(func::FuncOp func, OpBuilder &b) : func(func), b(b) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, kParamAttrName))
        paramNames.insert(name.getValue());
  }

  /// A new persistent parameter with a splat initial value.
  FailureOr<Value> addState(StringRef name, RankedTensorType type,
                            double init) {
    if (!paramNames.insert(name).second)
      return func.emitError("the model already has a parameter named '")
                 << name << "', which the training state needs",
             failure();
    Attribute element =
        isa<FloatType>(type.getElementType())
            ? Attribute(b.getFloatAttr(type.getElementType(), init))
            : Attribute(b.getIntegerAttr(type.getElementType(),
                                         static_cast<int64_t>(init)));
    MLIRContext *ctx = func.getContext();
    NamedAttribute attrs[] = {
        NamedAttribute(StringAttr::get(ctx, kParamAttrName),
                       StringAttr::get(ctx, name)),
        NamedAttribute(StringAttr::get(ctx, kInitialValueAttrName),
                       DenseElementsAttr::get(type, element))};
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, type, DictionaryAttr::get(ctx, attrs),
                              func.getLoc());
    return Value(func.getArgument(index));
  }

  void update(StringRef name, Value value) {
    updates.push_back({name.str(), value});
  }

  /// The `train.seed` state (i64, initial 0, never updated), added on first
  /// use: training-mode dropout and stochastic rounding draw from it.
  FailureOr<Value> trainSeed() {
    if (seed)
      return seed;
    auto s =
        addState(abi::kTrainSeed, RankedTensorType::get({}, b.getI64Type()), 0);
    if (failed(s))
      return failure();
    seed = *s;
    return seed;
  }

  func::FuncOp func;
  OpBuilder &b;
  llvm::StringSet<> paramNames;
  std::vector<std::pair<std::string, Value>> updates;
  Value seed;
};

/// The running mean or variance of a batch_norm_train: a parameter that the
/// step writes back on every step (PyTorch updates BatchNorm buffers in the
/// forward pass, even on a step whose update is skipped). Not trainable.
struct RunningStat {
  BlockArgument arg;
  std::string name;
  Value next;
};

FailureOr<std::vector<RunningStat>> runningStatistics(func::FuncOp func) {
  std::vector<RunningStat> stats;
  llvm::StringSet<> seen;
  WalkResult walk = func.walk([&](BatchNormTrainOp op) {
    std::tuple<Value, Value, StringRef> stats3[] = {
        {op.getRunningMean(), op.getNewRunningMean(), "mean"},
        {op.getRunningVar(), op.getNewRunningVar(), "variance"}};
    for (auto [operand, next, what] : stats3) {
      auto arg = dyn_cast<BlockArgument>(operand);
      StringAttr name;
      if (arg && arg.getOwner() == &func.getBody().front())
        name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                 kParamAttrName);
      if (!name) {
        emitWarning(op.getLoc()) << "the running " << what
                                 << " of this batch_norm_train is not a "
                                    "parameter; its update is dropped";
        continue;
      }
      if (!seen.insert(name.getValue()).second) {
        op.emitError("parameter '")
            << name.getValue()
            << "' is the running statistic of more than one batch_norm_train";
        return WalkResult::interrupt();
      }
      stats.push_back({arg, name.str(), next});
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return stats;
}

/// Batch norm in inference mode normalises with its running statistics,
/// which a training step leaves frozen (PyTorch's eval mode). That is how
/// the dynamo exporter writes a module in train mode, so say so once.
void warnInferenceBatchNorm(func::FuncOp func) {
  SmallVector<BatchNormOp> norms;
  func.walk([&](BatchNormOp op) { norms.push_back(op); });
  if (norms.empty())
    return;
  emitWarning(norms.front().getLoc())
      << norms.size()
      << " batch_norm op(s) in inference mode: the training step normalises "
         "with their running statistics, which stay frozen (PyTorch's eval "
         "mode); the dynamo exporter writes a module in train mode this "
         "way: import with --batch-norm-training to use batch statistics";
}

bool hasF16(func::FuncOp func) {
  bool found = false;
  func.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (elementTypeOf(t).isF16())
        found = true;
  });
  return found;
}

struct BuildTrainingStepPass
    : public mpt::impl::BuildTrainingStepPassBase<BuildTrainingStepPass> {
  using Base::Base;

#define GEN_PASS_OPTION_VALUES_BuildTrainingStepPass
#include "mpt/Transforms/PassOptionValues.h.inc"

  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.isPublic())
        funcs.push_back(func);
    if (funcs.size() != 1) {
      getOperation().emitError(
          "--build-training-step expects one public function, found ")
          << funcs.size();
      return signalPassFailure();
    }
    if (failed(build(funcs[0])))
      signalPassFailure();
  }

  /// The loss scaling `loss-scale` asks for.
  void scaleMode(func::FuncOp func, ScaleMode &mode, double &init) {
    init = initScale;
    switch (lossScale.mode) {
    case LossScaleMode::Auto:
      mode = hasF16(func) ? ScaleMode::Dynamic : ScaleMode::None;
      break;
    case LossScaleMode::None:
      mode = ScaleMode::None;
      break;
    case LossScaleMode::Dynamic:
      mode = ScaleMode::Dynamic;
      break;
    case LossScaleMode::Static:
      mode = ScaleMode::Static;
      init = lossScale.scale;
      break;
    }
  }

  LogicalResult build(func::FuncOp func) {
    // The options that need no model are checked where every front end
    // checks them (mpt::verifyOptions calls the same function).
    if (std::string bad = verifyTrainingStepOptions(optionValues());
        !bad.empty())
      return func.emitError(bad), failure();
    warnInferenceBatchNorm(func);
    MasterWeights masters = masterWeights;
    ScaleMode mode = ScaleMode::None;
    double init = initScale;
    scaleMode(func, mode, init);

    FP8ScalingOptions fp8Options =
        FP8Scaling::parse(fp8Scaling, fp8AmaxHistory, fp8AmaxAlgo, fp8Margin);

    LossOptions lossOptions{lossKind, lossOutput, labelInput, lossName};
    FailureOr<Value> loss = prepareLoss(func, lossOptions);
    if (failed(loss))
      return failure();
    // The FP8 scales become state before eval_step is cloned, so that it
    // reads the scales train_step writes.
    Operation *terminator = func.getBody().front().getTerminator();
    OpBuilder b(terminator);
    StepBuilder step(func, b);
    FP8Scaling fp8(
        func, fp8Options,
        {[&](StringRef name, RankedTensorType type, double init) {
           return step.addState(name, type, init);
         },
         [&](StringRef name, Value value) { step.update(name, value); }});
    if (failed(fp8.adoptForwardScales(step.paramNames)))
      return failure();
    func::FuncOp evalFunc;
    if (!evalEntry.empty()) {
      auto built = buildEvalEntry(func, *loss, evalEntry);
      if (failed(built))
        return failure();
      evalFunc = *built;
    }

    Location loc = NameLoc::get(b.getStringAttr(abi::kTrainEntry));
    Type f32 = b.getF32Type(), i64 = b.getI64Type();
    auto scalarF32 = RankedTensorType::get({}, f32);
    auto scalarI64 = RankedTensorType::get({}, i64);
    Value lossValue = grad::castTo(b, loc, *loss, f32);

    // Trainable parameters.
    SmallVector<llvm::GlobPattern> frozen;
    for (const std::string &pattern : freeze)
      frozen.push_back(llvm::cantFail(llvm::GlobPattern::create(pattern)));
    auto runningStats = runningStatistics(func);
    if (failed(runningStats))
      return failure();
    std::vector<Trainable> trainable;
    for (BlockArgument arg : func.getArguments()) {
      auto name =
          func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kParamAttrName);
      if (!name || !elementTypeOf(arg.getType()).isF32() ||
          func.getArgAttr(arg.getArgNumber(), kFP8ScaleAttrName))
        continue;
      if (llvm::any_of(*runningStats,
                       [&](const RunningStat &r) { return r.arg == arg; }))
        continue;
      if (llvm::any_of(frozen,
                       [&](auto &g) { return g.match(name.getValue()); }))
        continue;
      trainable.push_back({arg, name.str(), {}});
    }
    // Batch statistics over the ranks: the batch norms become ops with
    // all_reduce'd statistics; their running statistics the new values.
    if (syncBatchNorm) {
      llvm::DenseMap<Value, Value> replaced;
      if (failed(synchronizeBatchNorms(func, replaced)))
        return failure();
      for (RunningStat &r : *runningStats)
        if (auto it = replaced.find(r.next); it != replaced.end())
          r.next = it->second;
    }

    // Training-mode dropout gets its seed and step before the gradient is
    // built: each dropout's gradient redraws the forward mask from them.
    Value trainStep;
    if (hasTrainingDropout(func)) {
      auto t = step.addState(abi::kTrainStep, scalarI64, 0);
      if (failed(t) || failed(seedDropouts(step, *t)))
        return failure();
      trainStep = *t;
    }
    // 1. Scale the loss.
    Value scale, scaled = lossValue, tracker;
    if (mode != ScaleMode::None) {
      auto s = step.addState(abi::kLossScaleScale, scalarF32, init);
      if (failed(s))
        return failure();
      scale = *s;
      scaled =
          ScaleLossOp::create(b, loc, scalarF32, lossValue, scale).getResult();
    }
    // The forward FP8 scales' amax and update (current scaling: the
    // contractions then read this step's scale).
    if (failed(fp8.updateForwardScales()))
      return failure();
    SmallVector<Value> wrt;
    for (Trainable &t : trainable)
      wrt.push_back(t.arg);
    auto grads = buildGradients(b, scaled, wrt, /*seed=*/{}, &fp8);
    if (failed(grads))
      return failure();
    std::vector<Trainable> live;
    for (auto [t, g] : llvm::zip(trainable, *grads)) {
      if (!g) {
        emitWarning(t.arg.getLoc())
            << "parameter '" << t.name
            << "' does not reach the loss; it is left frozen";
        continue;
      }
      live.push_back({t.arg, t.name, g});
    }
    if (live.empty())
      return func.emitError("no trainable parameter reaches the loss"),
             failure();

    // Data parallelism: the gradients' mean over the ranks, before the
    // unscale and the finite check (every rank then skips alike), and the
    // loss's, the global batch's loss.
    if (shardOptimizerState > 0) {
      reduceScatterGradients(b, loc, live);
      lossValue = AllReduceOp::create(b, loc, TypeRange{lossValue.getType()},
                                      ValueRange{lossValue},
                                      b.getBoolAttr(allReduceF32))
                      .getResult(0);
    } else if (dataParallel) {
      allReduceGradients(b, loc, live);
      lossValue = AllReduceOp::create(b, loc, TypeRange{lossValue.getType()},
                                      ValueRange{lossValue},
                                      b.getBoolAttr(allReduceF32))
                      .getResult(0);
    }

    // 2. Unscale, 3. one finite check, the norm, 4. clipping.
    SmallVector<Value> gradValues;
    for (Trainable &t : live) {
      if (scale)
        t.grad =
            UnscaleOp::create(
                b, loc, cast<RankedTensorType>(t.grad.getType()).clone(f32),
                t.grad, scale)
                .getResult();
      gradValues.push_back(t.grad);
    }
    SmallVector<Value> unclipped = gradValues;
    auto boolScalar = RankedTensorType::get({}, b.getI1Type());
    // Sharded, each rank holds a shard of each gradient: the check and the
    // norm cover every rank's.
    BoolAttr overRanks =
        shardOptimizerState > 0 ? b.getBoolAttr(true) : BoolAttr();
    Value finite =
        AllFiniteOp::create(b, loc, boolScalar, gradValues, overRanks)
            .getResult();
    Value norm = GlobalNormOp::create(b, loc, scalarF32, gradValues, overRanks)
                     .getResult();
    if (clipNorm > 0)
      for (Trainable &t : live)
        t.grad = ClipByNormOp::create(b, loc, t.grad.getType(), t.grad, norm,
                                      b.getF64FloatAttr(clipNorm))
                     .getResult();

    // The step counters and the learning rate.
    auto optStep = step.addState(abi::kOptimizerStep, scalarI64, 0);
    if (failed(optStep))
      return failure();
    if (!trainStep) {
      auto t = step.addState(abi::kTrainStep, scalarI64, 0);
      if (failed(t))
        return failure();
      trainStep = *t;
    }
    SmallVector<NamedAttribute> lrAttrs = {
        b.getNamedAttr("schedule",
                       LrScheduleAttr::get(b.getContext(), schedule)),
        b.getNamedAttr("lr", b.getF64FloatAttr(lr))};
    if (schedule == LrSchedule::warmup_cosine) {
      lrAttrs.push_back(
          b.getNamedAttr("warmup_steps", b.getI64IntegerAttr(warmupSteps)));
      lrAttrs.push_back(
          b.getNamedAttr("total_steps", b.getI64IntegerAttr(totalSteps)));
      lrAttrs.push_back(b.getNamedAttr("min_lr", b.getF64FloatAttr(minLr)));
    }
    Value lrValue = LRScheduleOp::create(b, loc, TypeRange{scalarF32},
                                         ValueRange{trainStep}, lrAttrs)
                        .getResult();
    // settable-lr: times a state the caller may set between steps.
    if (settableLr) {
      auto lrScale = step.addState(abi::kLrScale, scalarF32, 1.0);
      if (failed(lrScale))
        return failure();
      lrValue = MulOp::create(b, loc, lrValue, *lrScale).getResult();
    }

    // 5. The gated optimizer update.
    if (failed(buildUpdates(step, loc, live, *optStep, lrValue, finite, masters,
                            evalFunc)))
      return failure();
    step.update(abi::kOptimizerStep,
                AdvanceStepOp::create(b, loc, TypeRange{scalarI64},
                                      ValueRange{*optStep, finite})
                    .getResult());
    step.update(abi::kTrainStep,
                AdvanceStepOp::create(b, loc, TypeRange{scalarI64},
                                      ValueRange{trainStep})
                    .getResult());

    // 6. The scale update.
    if (mode == ScaleMode::Dynamic) {
      auto t = step.addState(abi::kLossScaleGrowthTracker, scalarI64, 0);
      if (failed(t))
        return failure();
      auto upd = UpdateLossScaleOp::create(
          b, loc, TypeRange{scalarF32, scalarI64},
          ValueRange{scale, *t, finite},
          {b.getNamedAttr("growth_factor", b.getF64FloatAttr(growthFactor)),
           b.getNamedAttr("backoff_factor", b.getF64FloatAttr(backoffFactor)),
           b.getNamedAttr("growth_interval",
                          b.getI64IntegerAttr(growthInterval))});
      step.update(abi::kLossScaleScale, upd.getNewScale());
      step.update(abi::kLossScaleGrowthTracker, upd.getNewGrowthTracker());
    }

    // The delayed FP8 scale updates, after every reader of this step's
    // scales.
    fp8.finish(b);

    // The batch-norm running statistics, ungated.
    for (const RunningStat &r : *runningStats)
      step.update(r.name, r.next);

    // The signature: outputs, then the new state.
    Value skipped = NotOp::create(b, loc, finite).getResult();
    Value scaleOut = scale ? scale : grad::scalar(b, loc, 1.0, f32);
    struct Output {
      std::string name;
      abi::OutputRole role;
      Value value;
    };
    auto output = [](abi::OutputRole role, Value value) {
      return Output{abi::outputName(role), role, value};
    };
    SmallVector<Output> outputs = {output(abi::OutputRole::Loss, lossValue),
                                   output(abi::OutputRole::Skipped, skipped),
                                   output(abi::OutputRole::GradNorm, norm),
                                   output(abi::OutputRole::LossScale, scaleOut),
                                   output(abi::OutputRole::Lr, lrValue)};
    if (emitGradients)
      for (auto [t, g] : llvm::zip(live, unclipped))
        outputs.push_back({abi::kGradientOutputPrefix + t.name,
                           abi::OutputRole::Gradient, g});
    SmallVector<Value> results;
    for (auto &o : outputs)
      results.push_back(o.value);
    for (auto &u : step.updates)
      results.push_back(u.second);
    func::ReturnOp::create(b, terminator->getLoc(), results);
    terminator->erase();
    func.setFunctionType(b.getFunctionType(func.getArgumentTypes(),
                                           ValueRange(results).getTypes()));
    MLIRContext *ctx = &getContext();
    SmallVector<DictionaryAttr> resultAttrs;
    for (auto &o : outputs)
      resultAttrs.push_back(outputAttrs(ctx, o.name, o.role));
    for (auto &u : step.updates)
      resultAttrs.push_back(DictionaryAttr::get(
          ctx, {NamedAttribute(StringAttr::get(ctx, kUpdatesAttrName),
                               StringAttr::get(ctx, u.first))}));
    func.setAllResultAttrs(resultAttrs);
    func.setSymName(entry);
    return success();
  }

  /// Replaces each gradient of `live` by its mean over the ranks: one
  /// mpt.all_reduce per bucket of gradientBuckets.
  void allReduceGradients(OpBuilder &b, Location loc,
                          MutableArrayRef<Trainable> live) {
    for (ArrayRef<size_t> bucket : gradientBuckets(live)) {
      SmallVector<Value> grads;
      SmallVector<Type> types;
      for (size_t i : bucket) {
        grads.push_back(live[i].grad);
        types.push_back(live[i].grad.getType());
      }
      auto op = AllReduceOp::create(b, loc, types, grads,
                                    b.getBoolAttr(allReduceF32));
      for (auto [i, mean] : llvm::zip(bucket, op.getOutputs()))
        live[i].grad = mean;
    }
  }

  /// Sharded optimizer state (ZeRO-1): replaces each gradient of `live` by
  /// this rank's shard of its mean over the ranks, one mpt.reduce_scatter
  /// per bucket (the buckets of allReduceGradients), and remembers the
  /// buckets, in which the updated shards are gathered again.
  void reduceScatterGradients(OpBuilder &b, Location loc,
                              MutableArrayRef<Trainable> live) {
    shardBuckets = gradientBuckets(live);
    for (ArrayRef<size_t> bucket : shardBuckets) {
      SmallVector<Value> grads;
      SmallVector<Type> types;
      for (size_t i : bucket) {
        grads.push_back(live[i].grad);
        types.push_back(shardType(live[i].grad.getType()));
      }
      auto op = ReduceScatterOp::create(
          b, loc, types, grads, b.getI64IntegerAttr(shardOptimizerState),
          b.getBoolAttr(allReduceF32));
      for (auto [i, shard] : llvm::zip(bucket, op.getOutputs()))
        live[i].grad = shard;
    }
  }

  /// The type of one rank's shard of a tensor of `whole`'s type.
  Type shardType(Type whole) const {
    auto type = cast<RankedTensorType>(whole);
    int64_t n = shardOptimizerState;
    return RankedTensorType::get({(type.getNumElements() + n - 1) / n},
                                 type.getElementType());
  }

  /// The gradients' buckets, as indices into `live`: at most `bucket-mb` MiB
  /// each (a larger gradient is a bucket alone), filled from the last
  /// parameter back, the order in which the backward pass produces the
  /// gradients (as DDP).
  SmallVector<SmallVector<size_t>>
  gradientBuckets(ArrayRef<Trainable> live) const {
    const double capacity = bucketMb * 1024.0 * 1024.0;
    SmallVector<SmallVector<size_t>> buckets;
    double bytes = 0;
    for (size_t i = live.size(); i-- > 0;) {
      auto type = cast<RankedTensorType>(live[i].grad.getType());
      double size = double(type.getNumElements()) *
                    double(type.getElementTypeBitWidth()) / 8.0;
      if (buckets.empty() ||
          (!buckets.back().empty() && bytes + size > capacity)) {
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().push_back(i);
      bytes += size;
    }
    return buckets;
  }

  /// With sharded state, the buckets of reduceScatterGradients.
  SmallVector<SmallVector<size_t>> shardBuckets;

  /// Each training-mode dropout draws its mask from (train.seed, train.step,
  /// its own stream id): train.step advances on every step, skipped ones
  /// included, so no mask repeats. train.seed exists only when one does.
  static bool isTrainingDropout(DropoutOp op) {
    return op.getTraining() && !op.getRatio().isZero();
  }
  static bool hasTrainingDropout(func::FuncOp func) {
    return func
        .walk([](DropoutOp op) {
          return isTrainingDropout(op) ? WalkResult::interrupt()
                                       : WalkResult::advance();
        })
        .wasInterrupted();
  }

  LogicalResult seedDropouts(StepBuilder &step, Value trainStep) {
    SmallVector<DropoutOp> drops;
    step.func.walk([&](DropoutOp op) {
      if (isTrainingDropout(op))
        drops.push_back(op);
    });
    if (drops.empty())
      return success();
    auto seed = step.trainSeed();
    if (failed(seed))
      return failure();
    for (auto [stream, op] : llvm::enumerate(drops)) {
      if (!op.getRng().empty())
        return op.emitOpError("already has seed and step operands"), failure();
      op.getRngMutable().assign(ValueRange{*seed, trainStep});
      op.setStream(static_cast<int64_t>(stream));
    }
    return success();
  }

  /// With bf16 masters, `arg` (train_step's) and the same parameter of
  /// eval_step become bf16, read through a cast to f32.
  LogicalResult makeMaster(StepBuilder &step, const Trainable &t,
                           func::FuncOp evalFunc) {
    if (failed(makeBf16Master(step.func, t.arg)))
      return failure();
    if (evalFunc)
      if (BlockArgument arg = findParam(evalFunc, t.name))
        if (failed(makeBf16Master(evalFunc, arg)))
          return failure();
    return success();
  }

  LogicalResult buildUpdates(StepBuilder &step, Location loc,
                             ArrayRef<Trainable> live, Value optStep,
                             Value lrValue, Value finite, MasterWeights masters,
                             func::FuncOp evalFunc) {
    OpBuilder &b = step.b;
    bool adamw = optimizer == Optimizer::AdamW;
    double decay = weightDecay >= 0 ? weightDecay : (adamw ? 0.01 : 0.0);
    // Stochastic rounding's Philox streams: one per parameter, from 2^31
    // (mptrt/Philox.h kRoundingStreamBase), apart from dropout's 0, 1, ...
    constexpr int64_t kRoundingStreamBase = int64_t(1) << 31;
    // Sharded (ZeRO-1), each update reads and writes this rank's shard of
    // its parameter, whose moments are shard-sized; the new shards are
    // gathered after the loop.
    const bool sharded = shardOptimizerState > 0;
    SmallVector<Value> newShards(live.size());
    auto setParam = [&](size_t index, const Trainable &t, Value updated) {
      if (sharded)
        newShards[index] = updated;
      else
        step.update(t.name, updated);
    };
    for (auto [index, t] : llvm::enumerate(live)) {
      // A bf16 master is retyped before anything here reads it, so that a
      // shard of it is bf16 too; the moments stay f32.
      if (adamw && masters != MasterWeights::FP32 &&
          failed(makeMaster(step, t, evalFunc)))
        return failure();
      Value param = t.arg;
      if (sharded)
        param = ShardOp::create(b, loc, shardType(t.arg.getType()), t.arg,
                                b.getI64IntegerAttr(shardOptimizerState))
                    .getResult();
      auto type = cast<RankedTensorType>(param.getType()).clone(b.getF32Type());
      if (adamw) {
        auto m = step.addState(t.name + abi::kExpAvgSuffix, type, 0);
        auto v = step.addState(t.name + abi::kExpAvgSqSuffix, type, 0);
        if (failed(m) || failed(v))
          return failure();
        SmallVector<Value> operands = {param,   t.grad,  *m,    *v,
                                       optStep, lrValue, finite};
        SmallVector<NamedAttribute> attrs = {
            b.getNamedAttr("beta1", b.getF64FloatAttr(beta1)),
            b.getNamedAttr("beta2", b.getF64FloatAttr(beta2)),
            b.getNamedAttr("eps", b.getF64FloatAttr(eps)),
            b.getNamedAttr("weight_decay", b.getF64FloatAttr(decay))};
        if (masters == MasterWeights::BF16SR) {
          auto seed = step.trainSeed();
          if (failed(seed))
            return failure();
          operands.push_back(*seed);
          attrs.push_back(
              b.getNamedAttr("stochastic_rounding", b.getBoolAttr(true)));
          attrs.push_back(b.getNamedAttr(
              "stream",
              b.getI64IntegerAttr(kRoundingStreamBase + int64_t(index))));
          if (sharded)
            attrs.push_back(b.getNamedAttr("sharded", b.getBoolAttr(true)));
        }
        auto paramType = param.getType();
        auto upd = AdamWUpdateOp::create(
            b, loc, TypeRange{paramType, type, type}, operands, attrs);
        setParam(index, t, upd.getNewParam());
        step.update(t.name + abi::kExpAvgSuffix, upd.getNewExpAvg());
        step.update(t.name + abi::kExpAvgSqSuffix, upd.getNewExpAvgSq());
        continue;
      }
      SmallVector<Value> operands = {param, t.grad};
      SmallVector<Type> types = {type};
      SmallVector<NamedAttribute> attrs = {
          b.getNamedAttr("weight_decay", b.getF64FloatAttr(decay))};
      if (optimizer == Optimizer::Momentum) {
        auto buf = step.addState(t.name + abi::kMomentumBufferSuffix, type, 0);
        if (failed(buf))
          return failure();
        operands.push_back(*buf);
        types.push_back(type);
        attrs.push_back(
            b.getNamedAttr("momentum", b.getF64FloatAttr(momentum)));
        attrs.push_back(
            b.getNamedAttr("dampening", b.getF64FloatAttr(dampening)));
        attrs.push_back(b.getNamedAttr("nesterov", b.getBoolAttr(nesterov)));
      }
      operands.append({optStep, lrValue, finite});
      auto upd = SGDUpdateOp::create(b, loc, types, operands, attrs);
      setParam(index, t, upd.getNewParam());
      if (optimizer == Optimizer::Momentum)
        step.update(t.name + abi::kMomentumBufferSuffix,
                    upd.getNewMomentumBuffer());
    }
    // Every rank's new shards, gathered into the whole new parameters, in
    // the gradients' buckets.
    if (sharded)
      for (ArrayRef<size_t> bucket : shardBuckets) {
        SmallVector<Value> shards;
        SmallVector<Type> types;
        for (size_t i : bucket) {
          shards.push_back(newShards[i]);
          types.push_back(live[i].arg.getType());
        }
        auto gather = AllGatherOp::create(
            b, loc, types, shards, b.getI64IntegerAttr(shardOptimizerState));
        for (auto [i, whole] : llvm::zip(bucket, gather.getOutputs()))
          step.update(live[i].name, whole);
      }
    return success();
  }
};

} // namespace
