//===- NodeImporter.h - per-node import context and op table ----*- C++ -*-===//
//
// Internal to the ONNX importer. Each ONNX op is imported by a small function
// registered in a table keyed by op type and the opset version it was
// introduced in ("since version"); the per-family files (Elementwise,
// Contraction, Einsum, Normalization, Reduction, Shape, Index, Resize)
// register their entries.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_LIB_IMPORT_ONNX_NODEIMPORTER_H
#define MPT_LIB_IMPORT_ONNX_NODEIMPORTER_H

#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "onnx/onnx_pb.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace mpt::onnx_import {

class NodeContext;
using ImportFn = llvm::LogicalResult (*)(NodeContext &);

struct OpImporter {
  /// Opset version of the default domain from which this entry applies.
  int64_t sinceVersion;
  ImportFn fn;
  /// Bit i set: input i must be a compile-time constant (axes, shapes,
  /// clip bounds...). Initializers used only there stay constants rather
  /// than becoming trainable parameters.
  uint32_t constantInputs = 0;
  /// Whether the op takes sequences (SequenceImport.cpp); any other op given
  /// one is reported unsupported.
  bool takesSequences = false;
};

class OpImporterTable {
public:
  void add(llvm::StringRef opType, OpImporter importer);
  /// The entry with the greatest sinceVersion <= opset, or null.
  const OpImporter *lookup(llvm::StringRef opType, int64_t opset) const;
  /// Whether any version of `opType` is registered.
  bool knows(llvm::StringRef opType) const { return table.count(opType); }
  /// The table with every family registered.
  static const OpImporterTable &get();

private:
  llvm::StringMap<llvm::SmallVector<OpImporter, 2>> table;
};

/// The rows the mpt ops' records declare (RecordImporters.cpp).
void registerRecordImporters(OpImporterTable &table);
void registerElementwiseImporters(OpImporterTable &table);
void registerContractionImporters(OpImporterTable &table);
void registerNormalizationImporters(OpImporterTable &table);
void registerReductionImporters(OpImporterTable &table);
void registerShapeImporters(OpImporterTable &table);
void registerIndexImporters(OpImporterTable &table);
void registerResizeImporters(OpImporterTable &table);
void registerEinsumImporters(OpImporterTable &table);
void registerRecurrentImporters(OpImporterTable &table);
void registerSequenceImporters(OpImporterTable &table);

/// An ONNX sequence whose length and elements are known at import time:
/// the tensors it holds, in order (SequenceImport.cpp).
using TensorSequence = llvm::SmallVector<mlir::Value>;

/// Converts an ONNX element type code; null if unsupported.
mlir::Type convertElementType(int32_t onnxType, mlir::MLIRContext *ctx);
/// Name of an ONNX element type code, for diagnostics.
llvm::StringRef elementTypeName(int32_t onnxType);

/// Checks a static shape read from a model: no negative dimension, and an
/// element count that fits in int64 (so that types and byte sizes built
/// from it cannot overflow). Returns "" or what is wrong, e.g. "dimension 1
/// is negative (-3)" or "the element count of 4294967296x4294967296
/// overflows int64"; the caller names the tensor.
std::string checkShape(llvm::ArrayRef<int64_t> shape);

/// A tensor's stored bytes, owned without a copy: raw_data moved out of its
/// TensorProto, or external data mapped from its file.
struct TensorBytes {
  std::string moved;
  std::unique_ptr<llvm::MemoryBuffer> mapped;
  llvm::StringRef bytes() const {
    return mapped ? mapped->getBuffer() : llvm::StringRef(moved);
  }
};

/// Takes over the bytes `tensor` stores (its raw_data is moved out; external
/// data is mapped, only the tensor's slice). Null when the tensor holds
/// typed fields instead. Emits a diagnostic at `loc` and fails when its
/// external data cannot be read.
llvm::FailureOr<std::shared_ptr<const TensorBytes>>
takeTensorBytes(onnx::TensorProto &tensor, llvm::StringRef baseDir,
                mlir::Location loc);

/// Converts a TensorProto to an attribute. `baseDir` resolves external data.
/// Emits a diagnostic at `loc` and fails on unsupported types or bad data.
/// A float64 tensor, outside MPT's types, is read (as an f64 attribute)
/// only with `allowFloat64`, for a caller that narrows it (narrowToF32).
llvm::FailureOr<mlir::DenseElementsAttr>
convertTensor(const onnx::TensorProto &tensor, llvm::StringRef baseDir,
              mlir::Location loc, bool &unsupported, bool allowFloat64 = false);

/// The values of a float attribute rounded to float32 (to nearest, ties to
/// even); `rounded`, when given, counts the values that changed.
llvm::SmallVector<float> narrowToF32(mlir::DenseElementsAttr value,
                                     int64_t *rounded = nullptr);

/// Everything one node's import function needs.
class NodeContext {
public:
  NodeContext(const onnx::NodeProto &node, int64_t opset, mlir::OpBuilder &b,
              mlir::Location loc, llvm::StringRef name,
              llvm::ArrayRef<mlir::Value> inputs, llvm::StringRef baseDir,
              llvm::ArrayRef<const TensorSequence *> sequenceInputs = {},
              bool batchNormTraining = false)
      : node(node), opset(opset), b(b), loc(loc), name(name),
        batchNormTraining(batchNormTraining), inputs(inputs),
        sequenceInputs(sequenceInputs), baseDir(baseDir) {}

  const onnx::NodeProto &node;
  const int64_t opset;
  mlir::OpBuilder &b;
  const mlir::Location loc;
  const llvm::StringRef name;
  /// OnnxImportOptions::batchNormTraining.
  const bool batchNormTraining;

  // Inputs. Absent optional inputs (empty names) are null values.
  unsigned numInputs() const { return inputs.size(); }
  bool hasInput(unsigned i) const { return i < inputs.size() && inputs[i]; }
  mlir::Value input(unsigned i) const {
    return hasInput(i) ? inputs[i] : nullptr;
  }
  mlir::RankedTensorType inputType(unsigned i) const {
    return mlir::cast<mlir::RankedTensorType>(inputs[i].getType());
  }
  /// "input 1, 'name'": input `i` for diagnostics, with its ONNX name.
  std::string describeInput(unsigned i) const;
  /// The value of input `i` if it folded to a constant, else null.
  mlir::DenseElementsAttr constantInput(unsigned i) const;
  /// Integer values of constant input `i`; reports `what` if not constant.
  llvm::FailureOr<llvm::SmallVector<int64_t>>
  constantInts(unsigned i, llvm::StringRef what);
  /// A float scalar from constant input `i`; reports if not constant.
  llvm::FailureOr<double> constantScalar(unsigned i, llvm::StringRef what);
  /// The tensors of input `i` when it is a sequence, else null.
  const TensorSequence *inputSequence(unsigned i) const {
    return i < sequenceInputs.size() ? sequenceInputs[i] : nullptr;
  }

  // Attributes.
  const onnx::AttributeProto *attr(llvm::StringRef attrName) const;
  bool hasAttr(llvm::StringRef attrName) const { return attr(attrName); }
  int64_t getInt(llvm::StringRef attrName, int64_t def) const;
  float getFloat(llvm::StringRef attrName, float def) const;
  std::string getString(llvm::StringRef attrName, llvm::StringRef def) const;
  llvm::SmallVector<int64_t> getInts(llvm::StringRef attrName) const;
  llvm::FailureOr<mlir::DenseElementsAttr> getTensor(llvm::StringRef attrName);

  // Outputs.
  unsigned numOutputs() const { return node.output_size(); }
  bool outputWanted(unsigned i) const {
    return static_cast<int>(i) < node.output_size() && !node.output(i).empty();
  }
  void setResults(mlir::ValueRange values);
  llvm::ArrayRef<mlir::Value> results() const { return resultValues; }
  /// Makes output 0 a sequence of these tensors.
  void setSequenceResult(TensorSequence values) {
    sequenceResult = std::move(values);
  }
  const std::optional<TensorSequence> &sequenceOutput() const {
    return sequenceResult;
  }

  // Diagnostics. Messages are prefixed with the op type and node name.
  mlir::InFlightDiagnostic emitError() const;
  /// Reports a feature of this op that MPT does not support.
  llvm::LogicalResult unsupported(const llvm::Twine &what);
  bool reportedUnsupported() const { return isUnsupported; }

  /// Normalises an axis against `rank`, reporting if out of range.
  llvm::FailureOr<int64_t> axis(int64_t value, int64_t rank);

  // Op construction. `create` infers the result types first, so an invalid
  // combination is a diagnostic at this node rather than a crash, then folds.
  template <typename OpTy>
  llvm::FailureOr<llvm::SmallVector<mlir::Value>>
  create(mlir::ValueRange operands,
         llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  template <typename OpTy>
  llvm::FailureOr<mlir::Value>
  create1(mlir::ValueRange operands,
          llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    auto values = create<OpTy>(operands, attrs);
    if (mlir::failed(values))
      return mlir::failure();
    return values->front();
  }
  /// Creates an op and makes its results the node's outputs.
  template <typename OpTy>
  llvm::LogicalResult produce(mlir::ValueRange operands,
                              llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    auto values = create<OpTy>(operands, attrs);
    if (mlir::failed(values))
      return mlir::failure();
    setResults(*values);
    return mlir::success();
  }
  /// Creates an op with explicit result types, then folds.
  template <typename OpTy>
  llvm::SmallVector<mlir::Value>
  createTyped(mlir::TypeRange types, mlir::ValueRange operands,
              llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  /// An int64 constant of `shape` holding `values` (row-major); a scalar
  /// when `shape` is empty: the index maps and offsets the importer
  /// computes.
  mlir::Value constantI64(llvm::ArrayRef<int64_t> shape,
                          llvm::ArrayRef<int64_t> values);
  /// An mpt.slice of `v` with one normalised start, end and step per axis
  /// (an end of -1 with a negative step runs through index 0).
  llvm::FailureOr<mlir::Value> slice(mlir::Value v,
                                     llvm::ArrayRef<int64_t> starts,
                                     llvm::ArrayRef<int64_t> ends,
                                     llvm::ArrayRef<int64_t> steps);
  mlir::NamedAttribute named(llvm::StringRef attrName, mlir::Attribute value) {
    return b.getNamedAttr(attrName, value);
  }

private:
  llvm::SmallVector<mlir::Value> finish(mlir::Operation *op);

  llvm::ArrayRef<mlir::Value> inputs;
  llvm::ArrayRef<const TensorSequence *> sequenceInputs;
  llvm::StringRef baseDir;
  llvm::SmallVector<mlir::Value> resultValues;
  std::optional<TensorSequence> sequenceResult;
  bool isUnsupported = false;
};

template <typename OpTy>
llvm::FailureOr<llvm::SmallVector<mlir::Value>>
NodeContext::create(mlir::ValueRange operands,
                    llvm::ArrayRef<mlir::NamedAttribute> attrs) {
  mlir::MLIRContext *ctx = b.getContext();
  mlir::OperationState state(loc, OpTy::getOperationName());
  state.addOperands(operands);
  state.addAttributes(attrs);
  mlir::DictionaryAttr dict = state.attributes.getDictionary(ctx);
  llvm::SmallVector<mlir::Type> types;
  if constexpr (std::is_same_v<typename OpTy::Properties,
                               mlir::EmptyProperties>) {
    if (mlir::failed(OpTy::inferReturnTypes(ctx, loc, operands, dict, nullptr,
                                            {}, types)))
      return mlir::failure();
  } else {
    typename OpTy::Properties props;
    if (mlir::failed(OpTy::setPropertiesFromAttr(props, dict,
                                                 [&] { return emitError(); })))
      return mlir::failure();
    if (mlir::failed(OpTy::inferReturnTypes(ctx, loc, operands, dict,
                                            mlir::OpaqueProperties(&props), {},
                                            types)))
      return mlir::failure();
  }
  state.addTypes(types);
  return finish(b.create(state));
}

template <typename OpTy>
llvm::SmallVector<mlir::Value>
NodeContext::createTyped(mlir::TypeRange types, mlir::ValueRange operands,
                         llvm::ArrayRef<mlir::NamedAttribute> attrs) {
  mlir::OperationState state(loc, OpTy::getOperationName());
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(types);
  return finish(b.create(state));
}

} // namespace mpt::onnx_import

#endif // MPT_LIB_IMPORT_ONNX_NODEIMPORTER_H
