//===- InterpreterTestSupport.h - interpreter test fixtures -----*- C++ -*-===//
//
// What the reference interpreter's tests and the gradient checks share: a
// context with the mpt and func dialects that parses IR text (unregistered
// mpt ops allowed, so that ops a branch does not define yet can be written
// in generic form), tensor literals, comparisons, random inputs, and text
// templates.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_UNIT_INTERPRETERTESTSUPPORT_H
#define MPT_TEST_UNIT_INTERPRETERTESTSUPPORT_H

#include "ReferenceInterpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "gtest/gtest.h"

#include <random>
#include <string>
#include <utility>

namespace mpt::ref {

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest();

  /// The first function of `ir`, or null (with a test failure). Registered
  /// ops are verified; unregistered ones are let through.
  mlir::func::FuncOp parse(llvm::StringRef ir);

  /// Interprets the first function of `ir`; on failure the diagnostics are
  /// in `diagnostics`.
  mlir::FailureOr<std::vector<RefTensor>> tryRun(llvm::StringRef ir,
                                                 std::vector<RefTensor> args);
  /// tryRun(), failing the test on an error.
  std::vector<RefTensor> run(llvm::StringRef ir, std::vector<RefTensor> args);
  /// The first result of run().
  RefTensor run1(llvm::StringRef ir, std::vector<RefTensor> args);

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string diagnostics;
};

/// A tensor literal.
inline RefTensor T(std::vector<int64_t> shape, std::vector<double> data) {
  return RefTensor(std::move(shape), std::move(data));
}

/// Expects `actual` to have `shape` and `values` within `tolerance` times
/// max(1, |value|); a NaN value expects NaN.
void expectTensor(const RefTensor &actual, std::vector<int64_t> shape,
                  std::vector<double> values, double tolerance = 1e-12);

/// Uniform values in [lo, hi), with |x| >= 0.1 when `awayFromZero` (the
/// kinks of relu, abs and friends sit at 0).
RefTensor randomTensor(std::mt19937 &rng, std::vector<int64_t> shape,
                       double lo = -2, double hi = 2, bool awayFromZero = true);

/// IR text of `func.func @f(<args>, %w0: <type 0>, ...) -> tensor<f32>`:
/// `body`, which defines the `outputs` (value name and type), then the sum
/// over them of `reduce_sum(output * %wk)`. With random projections `%wk`,
/// every output element reaches the scalar result.
std::string
projectedFunction(llvm::StringRef args, llvm::StringRef body,
                  llvm::ArrayRef<std::pair<std::string, std::string>> outputs);
/// One output, `%y` of `yType`.
std::string projectedFunction(llvm::StringRef args, llvm::StringRef body,
                              llvm::StringRef yType);

/// `text` with every `$NAME` replaced by its value. No name may be a
/// prefix of another.
std::string substitute(
    std::string text,
    std::initializer_list<std::pair<llvm::StringRef, std::string>> values);

/// Expects each gradient autodiff appended to a function, `results[1 + k]`
/// for argument `wrt[k]`, to match central differences of `reference` (the
/// function before autodiff) at `args`: every element within 1e-6 of the
/// numeric value plus `atol`. Returns, per gradient, its largest numeric
/// magnitude (a test can require that it is not zero everywhere).
std::vector<double> expectGradientsMatchCentralDifferences(
    mlir::func::FuncOp reference, llvm::ArrayRef<RefTensor> args,
    llvm::ArrayRef<unsigned> wrt, llvm::ArrayRef<RefTensor> results,
    double atol);

} // namespace mpt::ref

#endif // MPT_TEST_UNIT_INTERPRETERTESTSUPPORT_H
