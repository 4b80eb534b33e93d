//===- ReferenceInterpreter.h - float64 interpreter of mpt IR ---*- C++ -*-===//
//
// A reference interpreter for `mpt` functions, for tests. Every value is held
// in double whatever its declared element type: floats (f32, f16, bf16, fp8)
// are computed in double without rounding, integers as exact integers and i1
// as 0 / 1. The gradient-check tests use it to compare each op's gradient
// rule with central finite differences.
//
// Ops are dispatched by name through a table (RefOps.h), so ops this branch
// does not define yet can be interpreted from generic IR. An op without an
// evaluator fails with an error at its location naming it.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_UNIT_REFERENCEINTERPRETER_H
#define MPT_TEST_UNIT_REFERENCEINTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace mpt::ref {

/// A tensor of doubles in row-major order. Integer and i1 values are stored
/// exactly (i1 as 0 or 1).
struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;

  RefTensor() = default;
  /// Zeros of `shape`.
  explicit RefTensor(std::vector<int64_t> shape);
  RefTensor(std::vector<int64_t> shape, std::vector<double> data)
      : shape(std::move(shape)), data(std::move(data)) {}
  /// A 0-d tensor.
  static RefTensor scalar(double value) { return RefTensor({}, {value}); }

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const { return static_cast<int64_t>(data.size()); }
};

/// Runs `func` on `args` (one per argument, each of its argument's shape)
/// and returns the values of its `func.return`. Fails, with an error at the
/// offending op, on an op without an evaluator, on data errors (an index out
/// of range) and on arguments that do not match the signature.
mlir::FailureOr<std::vector<RefTensor>>
interpret(mlir::func::FuncOp func, llvm::ArrayRef<RefTensor> args);

} // namespace mpt::ref

#endif // MPT_TEST_UNIT_REFERENCEINTERPRETER_H
