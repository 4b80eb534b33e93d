//===- FiniteDifferences.h - numeric gradients ------------------*- C++ -*-===//
//
// Central finite differences of a function's scalar result, evaluated with
// the float64 reference interpreter. The gradient checks compare them with
// the gradients that autodiff's rules compute.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_UNIT_FINITEDIFFERENCES_H
#define MPT_TEST_UNIT_FINITEDIFFERENCES_H

#include "ReferenceInterpreter.h"

namespace mpt::ref {

/// d(result 0 of `func`) / d(argument `argIndex`) at `args`, element by
/// element: (f(x + h e_i) - f(x - h e_i)) / 2h. Result 0 must have one
/// element.
mlir::FailureOr<RefTensor> centralDifference(mlir::func::FuncOp func,
                                             llvm::ArrayRef<RefTensor> args,
                                             unsigned argIndex,
                                             double h = 1e-6);

} // namespace mpt::ref

#endif // MPT_TEST_UNIT_FINITEDIFFERENCES_H
