//===- FP8Scaling.h - FP8 scale state of the training step ------*- C++ -*-===//
//
// The per-tensor FP8 scales of train_step (docs/training.md, "FP8
// scaling"): every quantized forward tensor (an `mpt.fp8_scale` argument
// that --assign-precision=fp8 added) and every f8E5M2 output gradient gets a
// scale `<t>.fp8_scale` and an amax history `<t>.amax_history`, both
// train_step state, updated by `update_fp8_scale` from the tensor's `amax`.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_LIB_TRANSFORMS_FP8SCALING_H
#define MPT_LIB_TRANSFORMS_FP8SCALING_H

#include "mpt/IR/MPTEnums.h"
#include "mpt/Transforms/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringSet.h"

#include <functional>
#include <string>
#include <vector>

namespace mpt {

struct FP8ScalingOptions {
  FP8ScalingMode mode = FP8ScalingMode::Delayed;
  int64_t historyLength = 1024; // delayed; current keeps one entry
  AmaxComputeAlgo amaxAlgo = AmaxComputeAlgo::max;
  int64_t margin = 0;
};

/// Where the scale state goes: a new persistent parameter (failing when
/// the name is taken), and the value it is written back with.
struct FP8StateSink {
  std::function<mlir::FailureOr<mlir::Value>(llvm::StringRef,
                                             mlir::RankedTensorType, double)>
      addState;
  std::function<void(llvm::StringRef, mlir::Value)> update;
};

class FP8Scaling final : public FP8GradientScales {
public:
  FP8Scaling(mlir::func::FuncOp func, FP8ScalingOptions options,
             FP8StateSink sink)
      : func(func), options(std::move(options)), sink(std::move(sink)) {}

  /// Why the options `fp8-amax-history` and `fp8-margin` are invalid, or
  /// "" (verifyTrainingStepOptions). `fp8-scaling` and `fp8-amax-algo` are
  /// typed: their parsers check them.
  static std::string check(int64_t historyLength, int64_t margin);
  /// The options, once check() has passed them.
  static FP8ScalingOptions parse(FP8ScalingMode mode, int64_t historyLength,
                                 AmaxComputeAlgo amaxAlgo, int64_t margin);

  /// Turns every `mpt.fp8_scale` argument into the parameter
  /// `<t>.fp8_scale` (initially 1), keeping the attribute. Run before
  /// eval_step is cloned, so that it reads the same scales. `taken` holds
  /// the parameter names in use and receives the new ones.
  mlir::LogicalResult adoptForwardScales(llvm::StringSet<> &taken);

  /// For each forward scale: the amax of the tensor its quantize reads and
  /// the scale update. With current scaling, the quantize and the
  /// contractions then read the new scale. Run before the gradient is built.
  mlir::LogicalResult updateForwardScales();

  /// FP8GradientScales: the scale state `<t>.grad.fp8_scale` of the
  /// gradient of `forward`.
  mlir::FailureOr<mlir::Value> scaleFor(mlir::OpBuilder &b, mlir::Value forward,
                                        mlir::Value grad,
                                        mlir::Type fp8Type) override;

  /// The delayed updates, built at `b` after everything that reads this
  /// step's scales (each writes its scale in place).
  void finish(mlir::OpBuilder &b);

private:
  struct Pending {
    std::string name;
    mlir::Value history, scale, amax;
    double fp8Max;
    mlir::Location loc;
  };
  mlir::Value emitUpdate(mlir::OpBuilder &b, const Pending &update);

  /// amax -> update_fp8_scale of `name`'s history and `scale`; returns the
  /// scale to quantize with (the old one when delayed, the new one when
  /// current).
  mlir::FailureOr<mlir::Value> track(mlir::OpBuilder &b, mlir::Location loc,
                                     llvm::StringRef name, mlir::Value scale,
                                     mlir::Value tensor, mlir::Type fp8Type);

  mlir::func::FuncOp func;
  FP8ScalingOptions options;
  FP8StateSink sink;
  llvm::StringSet<> gradNames;
  std::vector<Pending> pending;
};

} // namespace mpt

#endif // MPT_LIB_TRANSFORMS_FP8SCALING_H
