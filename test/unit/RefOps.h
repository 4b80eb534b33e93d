//===- RefOps.h - op evaluators of the reference interpreter ----*- C++ -*-===//
//
// The reference interpreter's dispatch table and the helpers its evaluators
// share. Each RefOps*.cpp file adds one op family's evaluators to the table,
// keyed by op name ("mpt.add"). Evaluators read attributes by name, with the
// ODS (or docs/training.md) defaults when an attribute is absent, so they
// work on ops built generically as well as on registered ones.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TEST_UNIT_REFOPS_H
#define MPT_TEST_UNIT_REFOPS_H

#include "ReferenceInterpreter.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"

#include <cmath>
#include <functional>
#include <optional>
#include <string>

namespace mpt::ref {

/// Computes `op`'s results (one per op result, in order) from its operands'
/// values. Result shapes are checked, and integer results truncated, by the
/// interpreter afterwards. Failures emit an error at `op`.
using RefEvaluator = std::function<mlir::LogicalResult(
    mlir::Operation *op, llvm::ArrayRef<RefTensor> operands,
    std::vector<RefTensor> &results)>;
using RefOpTable = llvm::StringMap<RefEvaluator>;

// One per family (RefOps<Family>.cpp).
void addConstantOps(RefOpTable &table);
void addElementwiseOps(RefOpTable &table);
void addContractionOps(RefOpTable &table);
void addPoolingOps(RefOpTable &table);
void addAttentionOps(RefOpTable &table);
void addNormalizationOps(RefOpTable &table);
void addLossOps(RefOpTable &table);
void addReductionOps(RefOpTable &table);
void addDataMovementOps(RefOpTable &table);
void addTrainingOps(RefOpTable &table);

//===----------------------------------------------------------------------===//
// Diagnostics, result types and attributes (RefOpsSupport.cpp).
//===----------------------------------------------------------------------===//

/// Emits "reference interpreter: <op name>: <message>" at `op`.
mlir::LogicalResult fail(mlir::Operation *op, const llvm::Twine &message);

/// The static shape and element type of result `index`.
std::vector<int64_t> resultShape(mlir::Operation *op, unsigned index);
mlir::Type resultElementType(mlir::Operation *op, unsigned index);

/// Attribute readers. Integer, bool and float attributes accept any of
/// IntegerAttr, BoolAttr and FloatAttr where the value converts exactly; a
/// UnitAttr reads as true.
std::optional<int64_t> optionalIntAttr(mlir::Operation *op,
                                       llvm::StringRef name);
int64_t intAttr(mlir::Operation *op, llvm::StringRef name, int64_t fallback);
std::optional<double> optionalFloatAttr(mlir::Operation *op,
                                        llvm::StringRef name);
double floatAttr(mlir::Operation *op, llvm::StringRef name, double fallback);
bool boolAttr(mlir::Operation *op, llvm::StringRef name, bool fallback);
/// A string attribute, or the case name of an enum attribute.
std::string stringAttr(mlir::Operation *op, llvm::StringRef name,
                       llvm::StringRef fallback);
/// A DenseI64ArrayAttr or an ArrayAttr of integers.
std::optional<std::vector<int64_t>> optionalIntListAttr(mlir::Operation *op,
                                                        llvm::StringRef name);

/// `op`'s operands split by its `operandSegmentSizes`, or one group per
/// operand when it has none.
std::vector<llvm::ArrayRef<RefTensor>>
operandGroups(mlir::Operation *op, llvm::ArrayRef<RefTensor> operands);

//===----------------------------------------------------------------------===//
// Index arithmetic.
//===----------------------------------------------------------------------===//

int64_t product(llvm::ArrayRef<int64_t> dims);
/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);
/// `axis` in [-rank, rank) made non-negative; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);
/// Calls `fn` with every multi-index of `shape` in row-major order.
void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  llvm::function_ref<void(llvm::ArrayRef<int64_t>)> fn);
/// `value` numpy-broadcast to `shape` (right-aligned; size-1 dims stretch).
/// Fails when the shapes are incompatible.
std::optional<RefTensor> broadcastTo(const RefTensor &value,
                                     llvm::ArrayRef<int64_t> shape);
/// `shape` split at `axis`: the product of the dims before it, the dim
/// itself and the product of those after it.
struct AxisSplit {
  int64_t outer, dim, inner;
};
AxisSplit splitAtAxis(llvm::ArrayRef<int64_t> shape, int64_t axis);

//===----------------------------------------------------------------------===//
// Scalar functions shared by forward and backward evaluators.
//===----------------------------------------------------------------------===//

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
/// GELU, erf form.
inline double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}
/// GELU, PyTorch's tanh approximation.
inline double geluTanh(double x) {
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

} // namespace mpt::ref

#endif // MPT_TEST_UNIT_REFOPS_H
