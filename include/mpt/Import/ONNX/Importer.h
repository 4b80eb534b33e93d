//===- Importer.h - ONNX to mpt dialect -------------------------*- C++ -*-===//
//
// The public entry point of the ONNX importer. It reads a binary `.onnx`
// model (with external data files) or a textual `.onnxtext` model and builds
// one `func.func` in the `mpt` dialect whose arguments are the graph inputs
// followed by the trainable parameters.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_IMPORT_ONNX_IMPORTER_H
#define MPT_IMPORT_ONNX_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include <string>
#include <vector>

namespace mpt {

/// The newest opset of the default ONNX domain the importer knows. A model
/// that imports a newer one is refused: a later opset may change what an op
/// means, and the op table picks the newest entry at or below the opset.
/// Raising it means checking every op that changed up to the new opset.
constexpr int64_t kMaxOnnxOpset = 21;

struct OnnxImportOptions {
  /// Static shapes for graph inputs, by input name (`--input-shape`). Every
  /// symbolic or unknown dimension of a graph input must be bound here.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Graph inputs to import as constants instead of arguments, by input
  /// name, each read from an ONNX TensorProto file (`--bind-constant`). This
  /// is how a graph that takes its shapes or axes as inputs gets static.
  llvm::StringMap<std::string> constantInputFiles;
  /// Name of the function that holds the graph.
  std::string entryName = "forward";
  /// Attach each parameter's initial value (its initializer, as FP32) to its
  /// argument as `mpt.initial_value`, a `dense_resource` blob, so that the
  /// IR alone can be lowered to a runnable plan (`--embed-weights`).
  bool embedWeights = true;
  /// torch.onnx stores initializers with equal values once and recreates
  /// the others as `Identity(initializer)` nodes (freshly initialised
  /// LayerNorm weights, for instance). PyTorch trains them as separate
  /// parameters, so by default each such Identity output becomes a parameter
  /// of its own, named after the output, with the shared initial value, and a
  /// warning lists them. False keeps them tied: one parameter, one gradient
  /// (`--untie-initializers=false`). A weight that several nodes read
  /// directly (a tied embedding and LM head) is shared either way.
  bool untieDeduplicatedInitializers = true;
  /// A 0-d float initializer is a constant of the graph, not a parameter,
  /// unless this is set (`--train-scalar-initializers`). The dynamo exporter
  /// stores constants such as erf-GELU's 0.5 and sqrt(2) and attention's
  /// 1/sqrt(d) as scalar initializers; PyTorch never trains them. A model
  /// with a genuine scalar parameter (a learned temperature) sets this, or
  /// the warning that lists the scalars says so.
  bool trainScalarInitializers = false;
  /// Float initializers to import as constants rather than trainable
  /// parameters, by name (`--freeze-initializer`): buffers that an exporter
  /// stores like weights (a rotary embedding's inverse frequencies, from the
  /// dynamo exporter), or weights a fine-tune keeps fixed. Each must name a
  /// float initializer of the graph.
  llvm::SmallVector<std::string> frozenInitializers;
  /// BatchNormalization in inference mode imports in training mode (batch
  /// statistics; the running statistics updated with the node's momentum),
  /// as PyTorch trains a module in train mode (`--batch-norm-training`).
  /// The dynamo exporter writes inference-mode batch norm for a module in
  /// train mode; without this, training such a graph normalises with the
  /// frozen running statistics.
  bool batchNormTraining = false;
};

/// Outcome of an import. Diagnostics have been reported through the
/// context's diagnostic engine in every case but Imported.
enum class OnnxImportStatus {
  Imported,
  /// The model is well formed but uses ops, versions, element types or
  /// features this importer does not support; every such use was reported.
  Unsupported,
  /// The file or the graph is broken (unreadable, truncated, dangling or
  /// unsorted references, missing external data, invalid shapes).
  Failed,
};

struct OnnxImportResult {
  OnnxImportStatus status = OnnxImportStatus::Failed;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// The external data files the model names (its folder joined with each
  /// `location`, for initializers and Constant nodes), whether or not the
  /// import got to read them: files a front end must not write over.
  std::vector<std::string> externalDataFiles;
};

/// Imports the model at `path`. Files ending in `.onnxtext` are parsed as the
/// ONNX text syntax; anything else as a binary ModelProto.
OnnxImportResult importOnnxFile(llvm::StringRef path,
                                mlir::MLIRContext &context,
                                const OnnxImportOptions &options = {});

/// Imports a model held in memory. `sourceName` names it in diagnostics and
/// locations; `baseDir` is where external data files are looked up.
OnnxImportResult importOnnxBuffer(llvm::StringRef bytes, bool isText,
                                  llvm::StringRef sourceName,
                                  llvm::StringRef baseDir,
                                  mlir::MLIRContext &context,
                                  const OnnxImportOptions &options = {});

/// Parses `name=d0,d1,...` into `options.inputShapes`; returns an error
/// message, or an empty string on success.
std::string parseInputShapeBinding(llvm::StringRef binding,
                                   OnnxImportOptions &options);

/// Parses `name=file.pb` into `options.constantInputFiles`; returns an error
/// message, or an empty string on success.
std::string parseConstantBinding(llvm::StringRef binding,
                                 OnnxImportOptions &options);

} // namespace mpt

#endif // MPT_IMPORT_ONNX_IMPORTER_H
