//===- TrainingLoss.h - the loss a training step minimises ------*- C++ -*-===//
#ifndef MPT_LIB_TRANSFORMS_TRAININGLOSS_H
#define MPT_LIB_TRANSFORMS_TRAININGLOSS_H

#include "mpt/IR/MPTEnums.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace mpt {

struct LossOptions {
  LossKind kind;          // the model's, or one to add
  std::string output;     // the output an added loss applies to
  std::string labelInput; // the name of the label input it takes
  std::string lossName;   // which scalar output is the loss
};

/// Finds the scalar FP32 loss among `func`'s returned values, or builds one
/// before the terminator on the chosen output (adding the label argument).
/// The result is a 0-d f32 value; errors name the outputs involved.
mlir::FailureOr<mlir::Value> prepareLoss(mlir::func::FuncOp func,
                                         const LossOptions &options);

} // namespace mpt

#endif // MPT_LIB_TRANSFORMS_TRAININGLOSS_H
