//===- ContractionImport.cpp - MatMul, Gemm, Conv and pooling -------------===//
#include "NodeImporter.h"

using namespace mlir;

namespace mpt::onnx_import {
namespace {

/// Contractions have optional trailing operands (bias, FP8 scales), so their
/// operand groups are stated; the importer never produces scales.
NamedAttribute contractionSegments(NodeContext &c, bool hasBias,
                                   bool biasGroup = true) {
  SmallVector<int32_t> sizes = {1, 1};
  if (biasGroup)
    sizes.push_back(hasBias ? 1 : 0);
  sizes.append({0, 0});
  return c.named("operandSegmentSizes", c.b.getDenseI32ArrayAttr(sizes));
}

LogicalResult importMatMul(NodeContext &c) {
  return c.produce<MatMulOp>(
      {c.input(0), c.input(1)},
      {contractionSegments(c, /*hasBias=*/false, /*biasGroup=*/false)});
}

LogicalResult importGemm(NodeContext &c) {
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return c.produce<GemmOp>(
      operands,
      {c.named("alpha", c.b.getF32FloatAttr(c.getFloat("alpha", 1.0f))),
       c.named("beta", c.b.getF32FloatAttr(c.getFloat("beta", 1.0f))),
       c.named("trans_a", c.b.getBoolAttr(c.getInt("transA", 0))),
       c.named("trans_b", c.b.getBoolAttr(c.getInt("transB", 0))),
       contractionSegments(c, c.hasInput(2))});
}

/// Window attributes shared by Conv and the pools, with auto_pad resolved
/// into explicit pads.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};

FailureOr<Window> windowAttrs(NodeContext &c, RankedTensorType input,
                              ArrayRef<int64_t> kernel) {
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1)
    return c.emitError() << "expects an input of rank >= 3, got " << input,
           failure();
  if (static_cast<int64_t>(kernel.size()) != spatial)
    return c.emitError() << "kernel_shape has " << kernel.size()
                         << " entries for " << spatial << " spatial axes",
           failure();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = c.getInts("strides");
  w.dilations = c.getInts("dilations");
  w.pads = c.getInts("pads");
  if (w.strides.empty())
    w.strides.assign(spatial, 1);
  if (w.dilations.empty())
    w.dilations.assign(spatial, 1);
  if (static_cast<int64_t>(w.strides.size()) != spatial ||
      static_cast<int64_t>(w.dilations.size()) != spatial)
    return c.emitError() << "strides and dilations need " << spatial
                         << " entries",
           failure();
  std::string autoPad = c.getString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    if (w.pads.empty())
      w.pads.assign(2 * spatial, 0);
    if (static_cast<int64_t>(w.pads.size()) != 2 * spatial)
      return c.emitError() << "pads needs " << 2 * spatial << " entries",
             failure();
  } else if (autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    w.pads.assign(2 * spatial, 0);
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = input.getDimSize(i + 2);
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + span - in);
      int64_t small = total / 2, large = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
      w.pads[i + spatial] = autoPad == "SAME_UPPER" ? large : small;
    }
  } else {
    return c.emitError() << "unknown auto_pad '" << autoPad << "'", failure();
  }
  return w;
}

LogicalResult importConv(NodeContext &c) {
  auto input = c.inputType(0), weight = c.inputType(1);
  if (weight.getRank() < 3)
    return c.emitError() << "weight must have rank >= 3, got " << weight;
  SmallVector<int64_t> kernel = c.getInts("kernel_shape");
  if (kernel.empty())
    kernel.assign(weight.getShape().begin() + 2, weight.getShape().end());
  auto w = windowAttrs(c, input, kernel);
  if (failed(w))
    return failure();
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return c.produce<ConvOp>(
      operands, {c.named("strides", c.b.getDenseI64ArrayAttr(w->strides)),
                 c.named("pads", c.b.getDenseI64ArrayAttr(w->pads)),
                 c.named("dilations", c.b.getDenseI64ArrayAttr(w->dilations)),
                 c.named("group", c.b.getI64IntegerAttr(c.getInt("group", 1))),
                 contractionSegments(c, c.hasInput(2))});
}

LogicalResult importMaxPool(NodeContext &c) {
  if (c.outputWanted(1))
    return c.unsupported("the Indices output of MaxPool");
  if (c.getInt("storage_order", 0) != 0)
    return c.unsupported("storage_order = 1");
  auto w = windowAttrs(c, c.inputType(0), c.getInts("kernel_shape"));
  if (failed(w))
    return failure();
  return c.produce<MaxPoolOp>(
      {c.input(0)},
      {c.named("kernel_shape", c.b.getDenseI64ArrayAttr(w->kernel)),
       c.named("strides", c.b.getDenseI64ArrayAttr(w->strides)),
       c.named("pads", c.b.getDenseI64ArrayAttr(w->pads)),
       c.named("dilations", c.b.getDenseI64ArrayAttr(w->dilations)),
       c.named("ceil_mode", c.b.getBoolAttr(c.getInt("ceil_mode", 0)))});
}

LogicalResult importAveragePool(NodeContext &c) {
  auto w = windowAttrs(c, c.inputType(0), c.getInts("kernel_shape"));
  if (failed(w))
    return failure();
  if (llvm::any_of(w->dilations, [](int64_t d) { return d != 1; }))
    return c.unsupported("dilated average pooling");
  return c.produce<AveragePoolOp>(
      {c.input(0)},
      {c.named("kernel_shape", c.b.getDenseI64ArrayAttr(w->kernel)),
       c.named("strides", c.b.getDenseI64ArrayAttr(w->strides)),
       c.named("pads", c.b.getDenseI64ArrayAttr(w->pads)),
       c.named("ceil_mode", c.b.getBoolAttr(c.getInt("ceil_mode", 0))),
       c.named("count_include_pad",
               c.b.getBoolAttr(c.getInt("count_include_pad", 0)))});
}

LogicalResult importGlobalAveragePool(NodeContext &c) {
  return c.produce<GlobalAveragePoolOp>({c.input(0)});
}

} // namespace

void registerContractionImporters(OpImporterTable &t) {
  t.add("MatMul", {1, importMatMul});
  t.add("Gemm", {7, importGemm});
  t.add("Conv", {1, importConv});
  t.add("MaxPool", {8, importMaxPool});
  t.add("AveragePool", {7, importAveragePool});
  t.add("GlobalAveragePool", {1, importGlobalAveragePool});
}

} // namespace mpt::onnx_import
