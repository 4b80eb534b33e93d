//===- FiniteDifferences.cpp - numeric gradients --------------------------===//
#include "FiniteDifferences.h"

using namespace mlir;

namespace mpt::ref {

FailureOr<RefTensor> centralDifference(func::FuncOp func,
                                       ArrayRef<RefTensor> args,
                                       unsigned argIndex, double h) {
  std::vector<RefTensor> shifted(args.begin(), args.end());
  auto evaluate = [&]() -> FailureOr<double> {
    FailureOr<std::vector<RefTensor>> results = interpret(func, shifted);
    if (failed(results))
      return failure();
    if (results->empty() || results->front().numElements() != 1)
      return func.emitError("finite differences: result 0 is not a scalar"),
             failure();
    return results->front().data[0];
  };
  RefTensor gradient(args[argIndex].shape);
  for (int64_t i = 0; i < gradient.numElements(); ++i) {
    double x = args[argIndex].data[i];
    shifted[argIndex].data[i] = x + h;
    FailureOr<double> plus = evaluate();
    shifted[argIndex].data[i] = x - h;
    FailureOr<double> minus = evaluate();
    shifted[argIndex].data[i] = x;
    if (failed(plus) || failed(minus))
      return failure();
    gradient.data[i] = (*plus - *minus) / (2 * h);
  }
  return gradient;
}

} // namespace mpt::ref
