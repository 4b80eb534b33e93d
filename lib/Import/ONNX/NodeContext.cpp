//===- NodeContext.cpp - per-node helpers and the op table ----------------===//
#include "NodeImporter.h"

#include "mlir/IR/Matchers.h"

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
  // A float64 tensor (MPT has no float64) is narrowed to float32, with a
  // warning: exporters write shape-derived scalars this way (the
  // TorchScript exporter's scaled_dot_product_attention scale, a float64
  // 0.25, its Sqrt and a Cast to float32), exact or one rounding away.
  const bool isDouble = a->t().data_type() == onnx::TensorProto::DOUBLE;
  bool unsupportedType = false;
  auto value = convertTensor(a->t(), baseDir, loc, unsupportedType,
                             /*allowFloat64=*/true);
  if (unsupportedType)
    isUnsupported = true;
  if (failed(value) || !isDouble)
    return value;
  int64_t rounded = 0;
  SmallVector<float> narrowed = narrowToF32(*value, &rounded);
  mlir::emitWarning(loc) << "a float64 constant of " << narrowed.size()
                         << " value(s) imported as float32 (MPT has no "
                            "float64; "
                         << rounded << " of them rounded); what it feeds "
                         << "computes in float32";
  return DenseElementsAttr::get(value->getType().clone(b.getF32Type()),
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
