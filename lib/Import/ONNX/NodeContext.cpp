//===- NodeContext.cpp - per-node helpers and the op table ----------------===//
#include "NodeImporter.h"

#include "mlir/IR/Matchers.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace mpt::onnx_import {

void OpImporterTable::add(StringRef opType, OpImporter importer) {
  auto &entries = table[opType];
  entries.push_back(importer);
  llvm::sort(entries, [](const OpImporter &a, const OpImporter &b) {
    return a.sinceVersion < b.sinceVersion;
  });
}

const OpImporter *OpImporterTable::lookup(StringRef opType,
                                          int64_t opset) const {
  auto it = table.find(opType);
  if (it == table.end())
    return nullptr;
  const OpImporter *best = nullptr;
  for (const OpImporter &entry : it->second)
    if (entry.sinceVersion <= opset)
      best = &entry;
  return best;
}

const OpImporterTable &OpImporterTable::get() {
  static const OpImporterTable instance = [] {
    OpImporterTable t;
    registerRecordImporters(t);
    registerElementwiseImporters(t);
    registerContractionImporters(t);
    registerNormalizationImporters(t);
    registerReductionImporters(t);
    registerShapeImporters(t);
    registerIndexImporters(t);
    registerResizeImporters(t);
    registerEinsumImporters(t);
    registerRecurrentImporters(t);
    registerSequenceImporters(t);
    return t;
  }();
  return instance;
}

Value NodeContext::constantI64(ArrayRef<int64_t> shape,
                               ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, b.getI64Type());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values))
      .getResult();
}

FailureOr<Value> NodeContext::slice(Value v, ArrayRef<int64_t> starts,
                                    ArrayRef<int64_t> ends,
                                    ArrayRef<int64_t> steps) {
  return create1<SliceOp>({v}, {named("starts", b.getDenseI64ArrayAttr(starts)),
                                named("ends", b.getDenseI64ArrayAttr(ends)),
                                named("steps", b.getDenseI64ArrayAttr(steps))});
}

std::string NodeContext::describeInput(unsigned i) const {
  std::string text = "input " + std::to_string(i);
  if (static_cast<int>(i) < node.input_size() && !node.input(i).empty())
    text += ", '" + node.input(i) + "'";
  return text;
}

DenseElementsAttr NodeContext::constantInput(unsigned i) const {
  DenseElementsAttr value;
  if (hasInput(i) && matchPattern(inputs[i], m_Constant(&value)))
    return value;
  return {};
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(unsigned i,
                                                          StringRef what) {
  auto value = dyn_cast_or_null<DenseIntElementsAttr>(constantInput(i));
  if (!value) {
    (void)unsupported(Twine(what) + " (" + describeInput(i) +
                      ") must be a compile-time constant");
    return failure();
  }
  SmallVector<int64_t> out;
  for (const APInt &v : value.getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

FailureOr<double> NodeContext::constantScalar(unsigned i, StringRef what) {
  DenseElementsAttr value = constantInput(i);
  if (!value || value.getNumElements() != 1) {
    (void)unsupported(Twine(what) + " (" + describeInput(i) +
                      ") must be a compile-time scalar constant");
    return failure();
  }
  Attribute v = value.getSplatValue<Attribute>();
  if (auto f = dyn_cast<FloatAttr>(v))
    return f.getValueAsDouble();
  return static_cast<double>(cast<IntegerAttr>(v).getValue().getSExtValue());
}

const onnx::AttributeProto *NodeContext::attr(StringRef attrName) const {
  for (const auto &a : node.attribute())
    if (a.name() == attrName)
      return &a;
  return nullptr;
}

int64_t NodeContext::getInt(StringRef attrName, int64_t def) const {
  const auto *a = attr(attrName);
  return a ? a->i() : def;
}

float NodeContext::getFloat(StringRef attrName, float def) const {
  const auto *a = attr(attrName);
  return a ? a->f() : def;
}

std::string NodeContext::getString(StringRef attrName, StringRef def) const {
  const auto *a = attr(attrName);
  return a ? a->s() : def.str();
}

SmallVector<int64_t> NodeContext::getInts(StringRef attrName) const {
  const auto *a = attr(attrName);
  if (!a)
    return {};
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<DenseElementsAttr> NodeContext::getTensor(StringRef attrName) {
  const auto *a = attr(attrName);
  if (!a || !a->has_t())
    return emitError() << "missing tensor attribute '" << attrName << "'",
           failure();
  bool unsupportedType = false;
  if (a->t().data_type() == onnx::TensorProto::DOUBLE)
    return doubleAsFloat(a->t());
  auto value = convertTensor(a->t(), baseDir, loc, unsupportedType);
  if (unsupportedType)
    isUnsupported = true;
  return value;
}

/// A float64 tensor attribute (a Constant) as float32, with a warning: MPT
/// has no float64. Exporters write shape-derived scalars this way (the
/// TorchScript exporter's scaled_dot_product_attention scale: a float64
/// 0.25, its Sqrt, a Cast to float32), and their float32 values are exact
/// or one rounding away.
FailureOr<DenseElementsAttr>
NodeContext::doubleAsFloat(const onnx::TensorProto &tensor) {
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (std::string bad = checkShape(shape); !bad.empty())
    return emitError() << "tensor '" << tensor.name()
                       << "' has a bad shape: " << bad,
           failure();
  const int64_t count = ShapedType::getNumElements(shape);
  SmallVector<double> values;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    isUnsupported = true;
    return emitError() << "unsupported: a float64 constant in external data",
           failure();
  }
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (raw.size() != static_cast<uint64_t>(count) * sizeof(double))
      return emitError() << "tensor '" << tensor.name() << "' holds "
                         << raw.size() << " bytes but its shape needs "
                         << count * sizeof(double),
             failure();
    values.resize(count);
    std::memcpy(values.data(), raw.data(), raw.size());
  } else {
    if (tensor.double_data_size() != count)
      return emitError() << "tensor '" << tensor.name() << "' holds "
                         << tensor.double_data_size()
                         << " values but its shape needs " << count,
             failure();
    values.assign(tensor.double_data().begin(), tensor.double_data().end());
  }
  SmallVector<float> narrowed;
  int64_t inexact = 0;
  for (double v : values) {
    narrowed.push_back(static_cast<float>(v));
    inexact += static_cast<double>(narrowed.back()) != v && !std::isnan(v);
  }
  mlir::emitWarning(loc) << "a float64 constant of " << count
                         << " value(s) imported as float32 (MPT has no "
                            "float64; "
                         << inexact << " of them rounded); what it feeds "
                         << "computes in float32";
  return DenseElementsAttr::get(
      RankedTensorType::get(shape, Float32Type::get(b.getContext())),
      ArrayRef<float>(narrowed));
}

void NodeContext::setResults(ValueRange values) {
  resultValues.assign(values.begin(), values.end());
}

InFlightDiagnostic NodeContext::emitError() const {
  return mlir::emitError(loc);
}

LogicalResult NodeContext::unsupported(const Twine &what) {
  isUnsupported = true;
  return emitError() << "unsupported: " << what, failure();
}

FailureOr<int64_t> NodeContext::axis(int64_t value, int64_t rank) {
  auto normalized = normalizeAxis(value, rank);
  if (!normalized)
    return emitError() << "axis " << value << " is out of range for rank "
                       << rank,
           failure();
  return *normalized;
}

SmallVector<Value> NodeContext::finish(Operation *op) {
  SmallVector<Value> folded;
  if (succeeded(b.tryFold(op, folded)) && !folded.empty()) {
    op->erase();
    return folded;
  }
  return SmallVector<Value>(op->getResults());
}

} // namespace mpt::onnx_import
