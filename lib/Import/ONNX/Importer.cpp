//===- Importer.cpp - ONNX graph to one mpt function ----------------------===//
//
// Reads the model, checks the graph's structure (every use defined, in
// topological order), reports every unsupported op at once, decides which
// initializers are trainable parameters, then imports node by node through
// the op table. Every op carries its ONNX node name as its location.
//
//===----------------------------------------------------------------------===//
#include "mpt/Import/ONNX/Importer.h"
#include "NodeImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mlir;

namespace mpt {
using namespace onnx_import;

std::string parseInputShapeBinding(StringRef binding,
                                   OnnxImportOptions &options) {
  auto [name, dims] = binding.split('=');
  if (name.empty() || dims.empty())
    return "expected name=d0,d1,... but got '" + binding.str() + "'";
  SmallVector<int64_t> shape;
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef p : parts) {
    int64_t d;
    if (p.trim().getAsInteger(10, d) || d < 0)
      return "dimension '" + p.str() + "' of input '" + name.str() +
             "' is not a non-negative integer";
    shape.push_back(d);
  }
  options.inputShapes[name] = shape;
  return "";
}

std::string parseConstantBinding(StringRef binding,
                                 OnnxImportOptions &options) {
  auto [name, file] = binding.split('=');
  if (name.empty() || file.empty())
    return "expected name=file.pb but got '" + binding.str() + "'";
  options.constantInputFiles[name] = file.str();
  return "";
}

namespace {

bool isDefaultDomain(StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

class GraphImporter {
public:
  /// The importer takes the parameters' bytes out of `model` (no copy).
  GraphImporter(onnx::ModelProto &model, StringRef sourceName,
                StringRef baseDir, MLIRContext &ctx,
                const OnnxImportOptions &options)
      : model(model), graph(model.graph()), sourceName(sourceName),
        baseDir(baseDir), ctx(ctx), options(options), builder(&ctx) {}

  OnnxImportResult run();

private:
  Location locFor(StringRef name) {
    return NameLoc::get(StringAttr::get(&ctx, name),
                        FileLineColLoc::get(&ctx, sourceName, 0, 0));
  }
  std::string nodeName(int index) const {
    const auto &node = graph.node(index);
    if (!node.name().empty())
      return node.name();
    return node.op_type() + "_" + std::to_string(index);
  }
  LogicalResult checkOpsets();
  LogicalResult checkSupported();
  LogicalResult checkSingleWriter();
  LogicalResult checkStructure();
  bool reportCycle(const llvm::StringMap<int> &producer,
                   const llvm::StringSet<> &graphValues);
  LogicalResult checkRequiredInputs(int index);
  void classifyInitializers();
  void findDeduplicatedInitializers();
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &info);
  LogicalResult importNode(int index);
  FailureOr<DenseElementsAttr> readConstantBinding(StringRef name,
                                                   StringRef path);
  FailureOr<Attribute> initialValue(const onnx::TensorProto &init,
                                    StringRef name, RankedTensorType type,
                                    Location loc);

  onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  /// The bytes of each parameter initializer taken so far: an untied copy
  /// of a deduplicated parameter shares its first use's bytes.
  llvm::DenseMap<const onnx::TensorProto *, std::shared_ptr<const TensorBytes>>
      takenBytes;
  StringRef sourceName, baseDir;
  MLIRContext &ctx;
  const OnnxImportOptions &options;
  OpBuilder builder;

  int64_t opset = 0;
  bool unsupported = false;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringSet<> parameterNames;
  /// Identity nodes that recreate a deduplicated parameter initializer, by
  /// node index, with the initializer whose value they copy.
  llvm::SmallDenseMap<int, const onnx::TensorProto *> untiedNodes;
  llvm::StringMap<Value> values;
  /// The sequences the nodes made (SplitToSequence, SequenceConstruct...).
  llvm::StringMap<TensorSequence> sequences;
};

LogicalResult GraphImporter::checkOpsets() {
  bool declared = false;
  for (const auto &entry : model.opset_import()) {
    if (!isDefaultDomain(entry.domain()))
      continue;
    if (declared) {
      emitError(locFor(graph.name()))
          << "the model imports the default ONNX domain twice (opsets " << opset
          << " and " << entry.version() << ")";
      return failure();
    }
    declared = true;
    opset = entry.version();
  }
  auto firstUser = llvm::find_if(graph.node(), [](const auto &node) {
    return isDefaultDomain(node.domain());
  });
  if (firstUser == graph.node().end())
    return success();
  if (!declared) {
    emitError(locFor(graph.name())) << "the model imports no opset of the "
                                       "default ONNX domain";
    return failure();
  }
  // A newer opset may have changed what an op means; the op table only
  // knows the versions up to kMaxOnnxOpset.
  if (opset < 1 || opset > kMaxOnnxOpset) {
    const int index = firstUser - graph.node().begin();
    emitError(locFor(nodeName(index)))
        << firstUser->op_type() << " node '" << nodeName(index)
        << "' uses opset " << opset
        << " of the default ONNX domain, but MPT's importer supports opsets "
           "1 to "
        << kMaxOnnxOpset;
    return failure();
  }
  return success();
}

/// Reports every node whose op type, domain or version has no importer.
LogicalResult GraphImporter::checkSupported() {
  const auto &table = OpImporterTable::get();
  bool ok = true;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    if (isDefaultDomain(node.domain()) && table.lookup(node.op_type(), opset))
      continue;
    ok = false;
    auto diag = emitError(locFor(nodeName(i)));
    diag << "unsupported op " << node.op_type() << " (domain '"
         << (node.domain().empty() ? "ai.onnx" : node.domain()) << "', opset "
         << opset << ") at node '" << nodeName(i) << "'";
    if (isDefaultDomain(node.domain()) && table.knows(node.op_type()))
      diag << ": this opset's version of the op is not supported";
  }
  unsupported |= !ok;
  return success(ok);
}

/// Finds a cycle among the nodes (a node that, through other nodes' outputs,
/// uses its own) and reports the first one found, naming each node and value
/// on it. `graphValues` are the graph inputs and initializers.
bool GraphImporter::reportCycle(const llvm::StringMap<int> &producer,
                                const llvm::StringSet<> &graphValues) {
  // Depth-first over "node uses an output of node" edges; a node met again
  // while still on the path closes a cycle.
  enum State : uint8_t { kNew, kOnPath, kDone };
  std::vector<State> state(graph.node_size(), kNew);
  struct Frame {
    int node, nextInput;
  };
  for (int root = 0; root < graph.node_size(); ++root) {
    if (state[root] != kNew)
      continue;
    SmallVector<Frame> path{{root, 0}};
    state[root] = kOnPath;
    while (!path.empty()) {
      Frame &top = path.back();
      const auto &node = graph.node(top.node);
      if (top.nextInput == node.input_size()) {
        state[top.node] = kDone;
        path.pop_back();
        continue;
      }
      const std::string &in = node.input(top.nextInput++);
      auto it = producer.find(in);
      if (in.empty() || graphValues.contains(in) || it == producer.end())
        continue;
      const int next = it->second;
      if (state[next] == kNew) {
        state[next] = kOnPath;
        path.push_back({next, 0});
        continue;
      }
      if (state[next] == kDone)
        continue;
      // path[k].node == next ... top.node, each using an output of the next
      // frame's node, and top.node uses `in` from next.
      auto describe = [&](int n) {
        return graph.node(n).op_type() + " node '" + nodeName(n) + "'";
      };
      auto diag = emitError(locFor(nodeName(next)));
      if (next == top.node) {
        diag << describe(next) << " uses its own output '" << in
             << "': the graph has a cycle";
        return true;
      }
      size_t k = path.size() - 1;
      while (path[k].node != next)
        --k;
      diag << "the graph has a cycle: " << describe(path[k].node);
      for (size_t j = k; j < path.size(); ++j) {
        const auto &user = graph.node(path[j].node);
        const int from = j + 1 < path.size() ? path[j + 1].node : next;
        diag << (j == k ? " uses '" : ", which uses '")
             << user.input(path[j].nextInput - 1) << "' from "
             << describe(from);
      }
      return true;
    }
  }
  return false;
}

/// Every tensor has one writer: a graph input, an initializer, or one
/// output of one node. ONNX requires it (the graph is in SSA form); a second
/// writer would otherwise silently replace the first for later nodes, and a
/// node writing a graph input would ignore the user's input.
LogicalResult GraphImporter::checkSingleWriter() {
  bool ok = true;
  llvm::StringSet<> inputs, initializerNames;
  for (const auto &in : graph.input())
    if (!inputs.insert(in.name()).second) {
      emitError(locFor(in.name()))
          << "graph input '" << in.name() << "' is listed twice";
      ok = false;
    }
  for (const auto &init : graph.initializer())
    if (!initializerNames.insert(init.name()).second) {
      emitError(locFor(init.name()))
          << "initializer '" << init.name() << "' is stored twice";
      ok = false;
    }
  llvm::StringMap<int> writer;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    auto describe = [&](int n) {
      return graph.node(n).op_type() + " node '" + nodeName(n) + "'";
    };
    for (const auto &out : node.output()) {
      if (out.empty())
        continue;
      auto diag = [&] {
        ok = false;
        InFlightDiagnostic d = emitError(locFor(nodeName(i)));
        d << describe(i) << " writes '" << out << "', which ";
        return d;
      };
      if (initializerNames.contains(out)) {
        diag() << "is an initializer";
        continue;
      }
      if (inputs.contains(out)) {
        diag() << "is a graph input";
        continue;
      }
      auto [it, inserted] = writer.try_emplace(out, i);
      if (inserted)
        continue;
      ok = false;
      if (it->second == i)
        emitError(locFor(nodeName(i)))
            << describe(i) << " writes '" << out << "' twice";
      else
        diag() << describe(it->second) << " already writes";
    }
  }
  return success(ok);
}

/// Every input is defined before use: by a graph input, an initializer, or
/// an earlier node. A node that depends on itself is a cycle; a later
/// producer otherwise means the graph is not sorted; no producer at all is a
/// dangling input.
LogicalResult GraphImporter::checkStructure() {
  if (failed(checkSingleWriter()))
    return failure();
  llvm::StringMap<int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &out : graph.node(i).output())
      if (!out.empty())
        producer.try_emplace(out, i);
  llvm::StringSet<> defined;
  for (const auto &in : graph.input())
    defined.insert(in.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());
  if (reportCycle(producer, defined))
    return failure();
  bool ok = true;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    for (const auto &in : node.input()) {
      if (in.empty() || defined.contains(in))
        continue;
      ok = false;
      auto it = producer.find(in);
      if (it != producer.end())
        emitError(locFor(nodeName(i)))
            << node.op_type() << " node '" << nodeName(i) << "' uses '" << in
            << "' before node '" << nodeName(it->second)
            << "' produces it: the graph is not topologically sorted";
      else
        emitError(locFor(nodeName(i)))
            << node.op_type() << " node '" << nodeName(i) << "' has dangling "
            << "input '" << in << "': no node, graph input or initializer "
            << "produces it";
    }
    for (const auto &out : node.output())
      defined.insert(out);
    ok &= succeeded(checkRequiredInputs(i));
  }
  for (const auto &out : graph.output())
    if (!defined.contains(out.name())) {
      ok = false;
      emitError(locFor(out.name()))
          << "graph output '" << out.name() << "' is not produced by any node";
    }
  return success(ok);
}

/// A node of the default domain gives every input that ONNX's schema of its
/// op (at the model's opset) requires: the op importers rely on that, and a
/// missing input would otherwise reach an op builder as a null value.
LogicalResult GraphImporter::checkRequiredInputs(int index) {
  const auto &node = graph.node(index);
  if (!isDefaultDomain(node.domain()))
    return success();
  const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(opset), onnx::ONNX_DOMAIN);
  if (!schema)
    return success(); // an unknown op: checkSupported reports it
  if (node.input_size() < schema->min_input())
    return emitError(locFor(nodeName(index)))
               << node.op_type() << " node '" << nodeName(index) << "' has "
               << node.input_size() << " input(s) but " << node.op_type() << "-"
               << schema->since_version() << " needs at least "
               << schema->min_input(),
           failure();
  const auto &formal = schema->inputs();
  for (int k = 0; k < node.input_size() && k < static_cast<int>(formal.size());
       ++k)
    if (node.input(k).empty() &&
        formal[k].GetOption() == onnx::OpSchema::FormalParameterOption::Single)
      return emitError(locFor(nodeName(index)))
                 << node.op_type() << " node '" << nodeName(index)
                 << "': input " << k << " ('" << formal[k].GetName()
                 << "') is required but its name is empty",
             failure();
  return success();
}

/// The initializer element types a parameter can be stored in.
static bool isFloatType(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 ||
         t == onnx::TensorProto::BFLOAT16 || t == onnx::TensorProto::DOUBLE;
}

/// A float initializer is a trainable parameter if some node consumes it as
/// data (not as an attribute-like constant input such as a shape or axes).
void GraphImporter::classifyInitializers() {
  const auto &table = OpImporterTable::get();
  for (const auto &init : graph.initializer())
    initializers[init.name()] = &init;
  SmallVector<StringRef> scalarConstants;
  auto isScalarConstant = [&](const onnx::TensorProto &init) {
    return !options.trainScalarInitializers && init.dims_size() == 0;
  };
  for (const auto &node : graph.node()) {
    const OpImporter *entry = table.lookup(node.op_type(), opset);
    for (int i = 0; i < node.input_size(); ++i) {
      auto it = initializers.find(node.input(i));
      if (it == initializers.end() || !isFloatType(it->second->data_type()))
        continue;
      if (llvm::is_contained(options.frozenInitializers, it->first()))
        continue;
      if (isScalarConstant(*it->second)) {
        if (!llvm::is_contained(scalarConstants, it->first()))
          scalarConstants.push_back(it->first());
        continue;
      }
      if (!entry || !(entry->constantInputs & (1u << i)))
        parameterNames.insert(node.input(i));
    }
  }
  if (!scalarConstants.empty()) {
    auto diag = emitWarning(locFor(scalarConstants.front()));
    diag << "treating " << scalarConstants.size()
         << " scalar float initializer(s) as constants, not trainable "
            "parameters (exporters store constants such as GELU's 0.5 this "
            "way; --train-scalar-initializers trains them):";
    for (StringRef name : scalarConstants)
      diag << " '" << name << "'"
           << (name == scalarConstants.back() ? "" : ",");
  }
  for (const auto &out : graph.output())
    if (auto it = initializers.find(out.name());
        it != initializers.end() && isFloatType(it->second->data_type()))
      parameterNames.insert(out.name());
  if (options.untieDeduplicatedInitializers)
    findDeduplicatedInitializers();
}

/// An Identity whose input is a parameter initializer (or another such
/// Identity's output) is how torch.onnx writes a second parameter with the
/// same value; see OnnxImportOptions::untieDeduplicatedInitializers.
void GraphImporter::findDeduplicatedInitializers() {
  llvm::StringMap<const onnx::TensorProto *> rootOf;
  SmallVector<int> found;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    if (!isDefaultDomain(node.domain()) || node.op_type() != "Identity" ||
        node.input_size() != 1 || node.output_size() != 1 ||
        node.output(0).empty() || initializers.count(node.output(0)))
      continue;
    const onnx::TensorProto *root = rootOf.lookup(node.input(0));
    if (!root && parameterNames.contains(node.input(0)))
      root = initializers.lookup(node.input(0));
    if (!root)
      continue;
    rootOf[node.output(0)] = root;
    untiedNodes[i] = root;
    found.push_back(i);
  }
  if (found.empty())
    return;
  auto diag = emitWarning(locFor(nodeName(found.front())));
  diag << "untied " << found.size()
       << " parameter(s) that the exporter stored once and copied through "
          "Identity nodes; each trains separately, as in PyTorch "
          "(--untie-initializers=false keeps them tied):";
  for (int i : found)
    diag << " '" << graph.node(i).output(0) << "' (a copy of '"
         << untiedNodes[i]->name() << "', node '" << nodeName(i) << "')"
         << (i == found.back() ? "" : ",");
}

/// A parameter's initializer as an FP32 `dense_resource` blob named after
/// it (blobs keep large weights out of the context's uniquing tables and out
/// of the printed IR's body).
FailureOr<Attribute> GraphImporter::initialValue(const onnx::TensorProto &init,
                                                 StringRef name,
                                                 RankedTensorType type,
                                                 Location loc) {
  // FP32 bytes, as exporters store weights: the blob takes them over, with
  // no copy and no conversion (on a little-endian host, as ONNX stores them).
  if (init.data_type() == onnx::TensorProto::FLOAT &&
      llvm::endianness::native == llvm::endianness::little &&
      (init.has_raw_data() ||
       init.data_location() == onnx::TensorProto::EXTERNAL ||
       takenBytes.count(&init))) {
    std::shared_ptr<const TensorBytes> &bytes = takenBytes[&init];
    if (!bytes) {
      // `init` belongs to `model`, which this importer may change.
      auto taken =
          takeTensorBytes(const_cast<onnx::TensorProto &>(init), baseDir, loc);
      if (failed(taken))
        return failure();
      bytes = *taken;
    }
    StringRef data = bytes->bytes();
    const uint64_t expected =
        static_cast<uint64_t>(type.getNumElements()) * sizeof(float);
    if (data.size() != expected)
      return emitError(loc) << "tensor '" << init.name() << "' has "
                            << data.size() << " bytes of "
                            << (bytes->mapped ? "external data" : "raw_data")
                            << " but its shape " << type << " needs "
                            << type.getNumElements() << " x 4 bytes",
             failure();
    // The blob keeps the bytes alive; its deleter lets them go.
    AsmResourceBlob blob(
        ArrayRef<char>(data.data(), data.size()), alignof(float),
        [keep = bytes](void *, size_t, size_t) mutable { keep.reset(); },
        /*dataIsMutable=*/false);
    return Attribute(
        DenseResourceElementsAttr::get(type, name, std::move(blob)));
  }
  bool unsupportedType = false;
  auto stored = convertTensor(init, baseDir, loc, unsupportedType);
  unsupported |= unsupportedType;
  if (failed(stored))
    return failure();
  SmallVector<float> values = narrowToF32(*stored);
  AsmResourceBlob blob =
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(values));
  return Attribute(DenseResourceElementsAttr::get(type, name, std::move(blob)));
}

FailureOr<RankedTensorType>
GraphImporter::inputType(const onnx::ValueInfoProto &info) {
  Location loc = locFor(info.name());
  if (!info.type().has_tensor_type()) {
    unsupported = true;
    return emitError(loc) << "unsupported: graph input '" << info.name()
                          << "' is not a tensor",
           failure();
  }
  const auto &tensor = info.type().tensor_type();
  Type element = convertElementType(tensor.elem_type(), &ctx);
  if (!element) {
    unsupported = true;
    return emitError(loc) << "unsupported: graph input '" << info.name()
                          << "' has element type "
                          << elementTypeName(tensor.elem_type()),
           failure();
  }
  SmallVector<int64_t> shape;
  auto bound = options.inputShapes.find(info.name());
  // Every shape returned passes checkShape.
  auto typeFor = [&](ArrayRef<int64_t> dims) -> FailureOr<RankedTensorType> {
    if (std::string bad = checkShape(dims); !bad.empty())
      return emitError(loc) << "graph input '" << info.name()
                            << "' has a bad shape: " << bad,
             failure();
    return RankedTensorType::get(dims, element);
  };
  if (!tensor.has_shape()) {
    if (bound == options.inputShapes.end())
      return emitError(loc) << "graph input '" << info.name()
                            << "' has no shape; bind one with --input-shape "
                            << info.name() << "=d0,d1,...",
             failure();
    return typeFor(bound->second);
  }
  const auto &dims = tensor.shape().dim();
  if (bound != options.inputShapes.end()) {
    if (static_cast<int>(bound->second.size()) != dims.size())
      return emitError(loc) << "--input-shape gives " << bound->second.size()
                            << " dimensions for input '" << info.name()
                            << "' of rank " << dims.size(),
             failure();
    for (int i = 0; i < dims.size(); ++i)
      if (dims[i].has_dim_value() && dims[i].dim_value() != bound->second[i])
        return emitError(loc)
                   << "--input-shape sets dimension " << i << " of input '"
                   << info.name() << "' to " << bound->second[i]
                   << " but the model fixes it at " << dims[i].dim_value(),
               failure();
    return typeFor(bound->second);
  }
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i].has_dim_value() && dims[i].dim_value() < 0)
      return emitError(loc)
                 << "dimension " << i << " of graph input '" << info.name()
                 << "' is negative (" << dims[i].dim_value() << ")",
             failure();
    if (!dims[i].has_dim_value())
      return emitError(loc) << "dimension " << i << " of graph input '"
                            << info.name() << "' is dynamic"
                            << (dims[i].has_dim_param()
                                    ? " ('" + dims[i].dim_param() + "')"
                                    : std::string())
                            << "; bind it with --input-shape " << info.name()
                            << "=d0,d1,...",
             failure();
    shape.push_back(dims[i].dim_value());
  }
  return typeFor(shape);
}

FailureOr<DenseElementsAttr>
GraphImporter::readConstantBinding(StringRef name, StringRef path) {
  Location loc = locFor(name);
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  onnx::TensorProto tensor;
  if (!buffer || !tensor.ParseFromArray((*buffer)->getBufferStart(),
                                        (*buffer)->getBufferSize()))
    return emitError(loc) << "--bind-constant " << name << "=" << path
                          << ": cannot read an ONNX TensorProto from the file",
           failure();
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  bool unsupportedType = false;
  auto value = convertTensor(tensor, dir, loc, unsupportedType);
  unsupported |= unsupportedType;
  return value;
}

LogicalResult GraphImporter::importNode(int index) {
  const auto &node = graph.node(index);
  const OpImporter *entry =
      OpImporterTable::get().lookup(node.op_type(), opset);
  std::string name = nodeName(index);
  Location loc = locFor(name);
  SmallVector<Value> inputs;
  SmallVector<const TensorSequence *> sequenceInputs;
  for (const auto &in : node.input()) {
    inputs.push_back(in.empty() ? Value() : values.lookup(in));
    auto it = in.empty() ? sequences.end() : sequences.find(in);
    sequenceInputs.push_back(it == sequences.end() ? nullptr : &it->second);
  }

  // Collect this node's diagnostics and re-emit them prefixed with the op
  // type and node name, so every message names the node the user knows.
  SmallVector<std::pair<DiagnosticSeverity, std::string>> messages;
  LogicalResult result = success();
  bool nodeUnsupported = false;
  if (!entry->takesSequences)
    for (auto [i, sequence] : llvm::enumerate(sequenceInputs))
      if (sequence) {
        unsupported = true;
        emitError(loc) << node.op_type() << " node '" << name
                       << "': unsupported: input " << i << " ('"
                       << node.input(i) << "') is a sequence";
        return failure();
      }
  NodeContext context(node, opset, builder, loc, name, inputs, baseDir,
                      sequenceInputs, options.batchNormTraining);
  {
    ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
      messages.emplace_back(diag.getSeverity(), diag.str());
      return success();
    });
    result = entry->fn(context);
    nodeUnsupported = context.reportedUnsupported();
  }
  for (auto &[severity, text] : messages) {
    auto prefix = node.op_type() + " node '" + name + "': ";
    if (severity == DiagnosticSeverity::Error)
      emitError(loc) << prefix << text;
    else if (severity == DiagnosticSeverity::Warning)
      emitWarning(loc) << prefix << text;
    else
      emitRemark(loc) << prefix << text;
  }
  if (failed(result)) {
    if (messages.empty())
      emitError(loc) << node.op_type() << " node '" << name
                     << "': import failed";
    unsupported |= nodeUnsupported;
    return failure();
  }
  ArrayRef<Value> results = context.results();
  if (context.sequenceOutput()) {
    sequences[node.output(0)] = *context.sequenceOutput();
    return success();
  }
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if (i >= static_cast<int>(results.size()) || !results[i]) {
      unsupported = true;
      emitError(loc) << node.op_type() << " node '" << name
                     << "': unsupported: output " << i << " ('"
                     << node.output(i) << "') is not produced by MPT";
      return failure();
    }
    values[node.output(i)] = results[i];
  }
  return success();
}

OnnxImportResult GraphImporter::run() {
  OnnxImportResult result;
  auto failWith = [&](bool maybeUnsupported) {
    result.status = maybeUnsupported && unsupported
                        ? OnnxImportStatus::Unsupported
                        : OnnxImportStatus::Failed;
    result.module = nullptr;
    return std::move(result);
  };
  if (failed(checkOpsets()))
    return failWith(false);
  // Broken structure is reported before unsupported ops: it is the user's
  // first problem. Unsupported ops are all reported together.
  if (failed(checkStructure()))
    return failWith(false);
  if (failed(checkSupported()))
    return failWith(true);
  classifyInitializers();
  for (const std::string &name : options.frozenInitializers) {
    auto it = initializers.find(name);
    if (it == initializers.end() || !isFloatType(it->second->data_type())) {
      emitError(locFor(name)) << "--freeze-initializer: '" << name
                              << "' is not a float initializer of the graph";
      return failWith(false);
    }
  }

  // Arguments: graph inputs (not shadowed by initializers), then parameters
  // in initializer order.
  SmallVector<Type> argTypes;
  SmallVector<std::pair<StringRef, StringRef>> argNames; // (attr kind, name)
  SmallVector<Attribute> argInitialValues;               // null for inputs
  bool inputsOk = true;
  SmallVector<std::pair<std::string, DenseElementsAttr>> boundConstants;
  for (const auto &in : graph.input()) {
    if (initializers.count(in.name()))
      continue;
    auto file = options.constantInputFiles.find(in.name());
    if (file != options.constantInputFiles.end()) {
      auto value = readConstantBinding(in.name(), file->second);
      if (failed(value)) {
        inputsOk = false;
        continue;
      }
      boundConstants.push_back({in.name(), *value});
      continue;
    }
    auto type = inputType(in);
    if (failed(type)) {
      inputsOk = false;
      continue;
    }
    argTypes.push_back(*type);
    argNames.push_back({kInputAttrName, in.name()});
    argInitialValues.push_back(nullptr);
  }
  auto checkNamesInput = [&](StringRef bindingName, StringRef flag) {
    bool found = llvm::any_of(graph.input(), [&](const auto &in) {
      return in.name() == bindingName;
    });
    if (!found) {
      emitError(locFor(bindingName)) << flag << " names '" << bindingName
                                     << "', which is not a graph input";
      inputsOk = false;
    }
  };
  for (const auto &binding : options.inputShapes)
    checkNamesInput(binding.first(), "--input-shape");
  for (const auto &binding : options.constantInputFiles)
    checkNamesInput(binding.first(), "--bind-constant");
  if (!inputsOk)
    return failWith(true);

  auto module = ModuleOp::create(locFor(sourceName));
  result.module = module;
  builder.setInsertionPointToEnd(module.getBody());
  auto func =
      func::FuncOp::create(builder, locFor(graph.name()), options.entryName,
                           builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  for (auto [arg, kind] : llvm::zip(body->getArguments(), argNames)) {
    values[kind.second] = arg;
    arg.setLoc(locFor(kind.second));
  }
  for (auto &[name, value] : boundConstants)
    values[name] = ConstantOp::create(builder, locFor(name), value);

  // A parameter: an FP32 argument named `name`, with `init`'s value.
  auto addParameter = [&](StringRef name, const onnx::TensorProto &init) {
    Location loc = locFor(name);
    Type element = convertElementType(init.data_type(), &ctx);
    if (!element) {
      unsupported = true;
      emitError(loc) << "unsupported: parameter '" << name
                     << "' has element type "
                     << elementTypeName(init.data_type());
      return false;
    }
    // Parameters are FP32 master values whatever their stored type.
    SmallVector<int64_t> shape(init.dims().begin(), init.dims().end());
    if (std::string bad = checkShape(shape); !bad.empty()) {
      emitError(loc) << "parameter '" << name << "' has a bad shape: " << bad;
      return false;
    }
    auto type = RankedTensorType::get(shape, builder.getF32Type());
    Value param = body->addArgument(type, loc);
    argNames.push_back({kParamAttrName, name});
    Attribute initial;
    if (options.embedWeights) {
      auto value = initialValue(init, name, type, loc);
      if (failed(value))
        return false;
      initial = *value;
    }
    argInitialValues.push_back(initial);
    // A model stored in a lower precision reads its parameters through a
    // cast, so the graph computes exactly as the model was written.
    if (element != type.getElementType())
      param = CastOp::create(builder, loc,
                             RankedTensorType::get(shape, element), param);
    values[name] = param;
    return true;
  };

  // Initializers: parameters become arguments, the rest constants.
  bool initOk = true;
  for (const auto &init : graph.initializer()) {
    Location loc = locFor(init.name());
    if (parameterNames.contains(init.name())) {
      initOk &= addParameter(init.name(), init);
      continue;
    }
    bool unsupportedType = false;
    auto value = convertTensor(init, baseDir, loc, unsupportedType);
    unsupported |= unsupportedType;
    if (failed(value)) {
      initOk = false;
      continue;
    }
    values[init.name()] = ConstantOp::create(builder, loc, *value);
  }
  // Untied copies of deduplicated parameters follow, in node order.
  for (int i = 0; i < graph.node_size(); ++i)
    if (auto it = untiedNodes.find(i); it != untiedNodes.end())
      initOk &= addParameter(graph.node(i).output(0), *it->second);
  if (!initOk)
    return failWith(true);

  bool nodesOk = true;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (untiedNodes.count(i))
      continue;
    if (failed(importNode(i))) {
      nodesOk = false;
      break;
    }
  }
  if (!nodesOk)
    return failWith(true);

  SmallVector<Value> outputs;
  for (const auto &out : graph.output()) {
    if (sequences.count(out.name())) {
      unsupported = true;
      emitError(locFor(out.name()))
          << "unsupported: graph output '" << out.name()
          << "' is a sequence (MPT's functions return tensors)";
      return failWith(true);
    }
    outputs.push_back(values.lookup(out.name()));
  }
  func::ReturnOp::create(builder, locFor(graph.name()), outputs);
  func.setFunctionType(builder.getFunctionType(body->getArgumentTypes(),
                                               ValueRange(outputs).getTypes()));
  for (auto [i, kind] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, kind.first, builder.getStringAttr(kind.second));
    if (argInitialValues[i])
      func.setArgAttr(i, kInitialValueAttrName, argInitialValues[i]);
  }
  for (auto [i, out] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, kOutputAttrName, builder.getStringAttr(out.name()));

  // Exporters spell GELU as five ops; the dialect's mul canonicalization
  // makes it one `gelu` before any pass decides its precision.
  {
    RewritePatternSet patterns(&ctx);
    MulOp::getCanonicalizationPatterns(patterns, &ctx);
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    (void)applyPatternsGreedily(func, std::move(patterns), config);
  }
  // Shape arithmetic that folded into static types leaves dead constants.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (op.use_empty() && isPure(&op) && !op.hasTrait<OpTrait::IsTerminator>())
      op.erase();

  if (failed(verify(module)))
    return failWith(false);
  result.status = OnnxImportStatus::Imported;
  return result;
}

} // namespace

namespace {

/// Imports a parsed model; the importer takes its parameters' bytes.
OnnxImportResult importModel(onnx::ModelProto &model, Location fileLoc,
                             StringRef sourceName, StringRef baseDir,
                             MLIRContext &context,
                             const OnnxImportOptions &options) {
  if (!model.has_graph()) {
    emitError(fileLoc) << "not a valid ONNX model: it has no graph";
    return {};
  }
  // The files the model's external data name, for the front ends' output
  // checks: collected before the import, which takes the tensors' bytes.
  std::vector<std::string> external;
  auto note = [&](const onnx::TensorProto &tensor) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      return;
    for (const auto &entry : tensor.external_data())
      if (entry.key() == "location" && !entry.value().empty()) {
        SmallString<256> file(baseDir);
        llvm::sys::path::append(file, entry.value());
        external.push_back(file.str().str());
      }
  };
  for (const auto &init : model.graph().initializer())
    note(init);
  for (const auto &node : model.graph().node())
    for (const auto &attr : node.attribute())
      if (attr.has_t())
        note(attr.t());
  GraphImporter importer(model, sourceName, baseDir, context, options);
  OnnxImportResult result = importer.run();
  result.externalDataFiles = std::move(external);
  return result;
}

void reportCorruptModel(Location fileLoc, uint64_t size) {
  emitError(fileLoc) << "not a valid ONNX model: the protobuf data is "
                        "truncated or corrupt ("
                     << size << " bytes)";
}

} // namespace

OnnxImportResult importOnnxBuffer(StringRef bytes, bool isText,
                                  StringRef sourceName, StringRef baseDir,
                                  MLIRContext &context,
                                  const OnnxImportOptions &options) {
  context.loadDialect<MPTDialect, func::FuncDialect>();
  onnx::ModelProto model;
  Location fileLoc = FileLineColLoc::get(&context, sourceName, 0, 0);
  if (isText) {
    std::string text = bytes.str();
    onnx::Status status;
    try {
      status = onnx::OnnxParser::Parse(model, text.c_str());
    } catch (const std::exception &e) {
      emitError(fileLoc) << "cannot parse ONNX text: " << e.what();
      return {};
    }
    if (!status.IsOK()) {
      emitError(fileLoc) << "cannot parse ONNX text: " << status.ErrorMessage();
      return {};
    }
  } else if (bytes.size() > static_cast<size_t>(INT_MAX) ||
             !model.ParseFromArray(bytes.data(),
                                   static_cast<int>(bytes.size()))) {
    reportCorruptModel(fileLoc, bytes.size());
    return {};
  }
  return importModel(model, fileLoc, sourceName, baseDir, context, options);
}

OnnxImportResult importOnnxFile(StringRef path, MLIRContext &context,
                                const OnnxImportOptions &options) {
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  auto cannotRead = [&](std::error_code ec) {
    emitError(fileLoc) << "cannot read '" << path << "': " << ec.message();
    return OnnxImportResult();
  };
  if (path.ends_with(".onnxtext")) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return cannotRead(buffer.getError());
    return importOnnxBuffer((*buffer)->getBuffer(), /*isText=*/true, path, dir,
                            context, options);
  }
  // A binary model is parsed as it is read: the file's bytes are never in
  // memory beside the parsed model, whose weights the importer then takes.
  context.loadDialect<MPTDialect, func::FuncDialect>();
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::openFileForRead(path, fd))
    return cannotRead(ec);
  uint64_t size = 0;
  std::error_code sizeError = llvm::sys::fs::file_size(path, size);
  onnx::ModelProto model;
  bool parsed = !sizeError && size <= static_cast<uint64_t>(INT_MAX) &&
                model.ParseFromFileDescriptor(fd);
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  if (sizeError)
    return cannotRead(sizeError);
  if (!parsed) {
    reportCorruptModel(fileLoc, size);
    return {};
  }
  return importModel(model, fileLoc, path, dir, context, options);
}

} // namespace mpt
