//===- ContractionImport.cpp - MatMul, Gemm, Conv and pooling -------------===//
#include "NodeImporter.h"
#include "mpt/Dialect/MPT/IR/GradientUtils.h"

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

/// `attrName`'s ints, or `spatial` copies of `def` when absent; reports a
/// list of another length, or a value below `min`.
FailureOr<SmallVector<int64_t>> spatialInts(NodeContext &c, StringRef attrName,
                                            int64_t spatial, int64_t def,
                                            int64_t min) {
  SmallVector<int64_t> values = c.getInts(attrName);
  if (values.empty())
    values.assign(spatial, def);
  if (static_cast<int64_t>(values.size()) != spatial)
    return c.emitError() << attrName << " has " << values.size()
                         << " entries for " << spatial << " spatial axes",
           failure();
  for (int64_t v : values)
    if (v < min)
      return c.emitError() << attrName << " holds " << v << " (below " << min
                           << ")",
             failure();
  return values;
}

/// ConvTranspose as a convolution, of which it is the gradient with
/// respect to the input:
///   - x with s - 1 zeros after each element along each spatial axis of
///     stride s: a reshape gives the axis a unit axis after it, a concat
///     of zeros widens that to s, and a reshape merges the two;
///   - padded by (k - 1) d - pad_begin before and (k - 1) d - pad_end +
///     output_padding - (s - 1) after: the conv's pads, or a slice that
///     crops where they are negative;
///   - convolved at stride 1 and the node's dilations with W (C, M / g,
///     k...) made a conv weight (M, C / g, k...): each group's two channel
///     axes swapped (reshape, transpose, reshape) and every spatial axis
///     flipped (a slice of step -1).
/// output_shape, or auto_pad SAME_UPPER / SAME_LOWER (for an output of
/// input x stride), sets the pads as ONNX defines.
LogicalResult importConvTranspose(NodeContext &c) {
  auto input = c.inputType(0), weight = c.inputType(1);
  const int64_t rank = input.getRank(), spatial = rank - 2;
  if (spatial < 1)
    return c.emitError() << "expects an input of rank >= 3, got " << input;
  const int64_t group = c.getInt("group", 1);
  const int64_t channels = input.getDimSize(1);
  if (weight.getRank() != rank || group < 1 || channels % group != 0 ||
      weight.getDimSize(0) != channels)
    return c.emitError() << "weight " << weight << " does not fit input "
                         << input << " in " << group << " groups";
  ArrayRef<int64_t> kernel = weight.getShape().drop_front(2);
  SmallVector<int64_t> kernelAttr = c.getInts("kernel_shape");
  if (!kernelAttr.empty() && ArrayRef<int64_t>(kernelAttr) != kernel)
    return c.emitError() << "kernel_shape ["
                         << llvm::make_range(kernelAttr.begin(),
                                             kernelAttr.end())
                         << "] differs from weight " << weight;
  auto strides = spatialInts(c, "strides", spatial, 1, 1);
  auto dilations = spatialInts(c, "dilations", spatial, 1, 1);
  auto outputPadding = spatialInts(c, "output_padding", spatial, 0, 0);
  if (failed(strides) || failed(dilations) || failed(outputPadding))
    return failure();
  ArrayRef<int64_t> inShape = input.getShape().drop_front(2);
  // The output's length along axis i without pads.
  auto fullLength = [&](int64_t i) {
    return (*strides)[i] * (inShape[i] - 1) + (*outputPadding)[i] +
           (kernel[i] - 1) * (*dilations)[i] + 1;
  };

  std::string autoPad = c.getString("auto_pad", "NOTSET");
  SmallVector<int64_t> outputShape = c.getInts("output_shape");
  if (static_cast<int64_t>(outputShape.size()) == rank)
    outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (!outputShape.empty() &&
      static_cast<int64_t>(outputShape.size()) != spatial)
    return c.emitError() << "output_shape has " << outputShape.size()
                         << " entries for " << spatial << " spatial axes";
  SmallVector<int64_t> pads(2 * spatial, 0);
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return c.emitError() << "unknown auto_pad '" << autoPad << "'";
  if (!outputShape.empty() || autoPad == "SAME_UPPER" ||
      autoPad == "SAME_LOWER") {
    // ONNX: total = full - output, split with floor division, the larger
    // half at the end for SAME_UPPER and at the beginning otherwise.
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t out =
          outputShape.empty() ? inShape[i] * (*strides)[i] : outputShape[i];
      int64_t total = fullLength(i) - out;
      int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
      pads[i + spatial] = total - pads[i];
    }
  } else if (autoPad == "NOTSET" && c.hasAttr("pads")) {
    pads = c.getInts("pads");
    if (static_cast<int64_t>(pads.size()) != 2 * spatial)
      return c.emitError() << "pads needs " << 2 * spatial << " entries";
  }
  for (int64_t i = 0; i < spatial; ++i)
    if (fullLength(i) - pads[i] - pads[i + spatial] < 1)
      return c.emitError() << "spatial axis " << i << " of the output would "
                           << "have "
                           << fullLength(i) - pads[i] - pads[i + spatial]
                           << " elements";

  // x with s - 1 zeros after each element along the strided axes.
  Type element = input.getElementType();
  Value x = c.input(0);
  if (llvm::any_of(*strides, [](int64_t s) { return s > 1; })) {
    SmallVector<int64_t> interleaved = {input.getDimSize(0), channels};
    for (int64_t len : inShape)
      interleaved.append({len, 1});
    x = c.createTyped<ReshapeOp>(RankedTensorType::get(interleaved, element),
                                 {x})[0];
    for (int64_t i = 0; i < spatial; ++i) {
      if ((*strides)[i] == 1)
        continue;
      const int64_t axis = 3 + 2 * i;
      SmallVector<int64_t> zerosShape(
          cast<RankedTensorType>(x.getType()).getShape());
      zerosShape[axis] = (*strides)[i] - 1;
      Value zeros = grad::splat(
          c.b, c.loc, RankedTensorType::get(zerosShape, element), 0.0);
      auto widened = c.create1<ConcatOp>(
          {x, zeros}, {c.named("axis", c.b.getI64IntegerAttr(axis))});
      if (failed(widened))
        return failure();
      x = *widened;
    }
    SmallVector<int64_t> merged = {input.getDimSize(0), channels};
    for (int64_t i = 0; i < spatial; ++i)
      merged.push_back(inShape[i] * (*strides)[i]);
    x = c.createTyped<ReshapeOp>(RankedTensorType::get(merged, element),
                                 {x})[0];
  }
  // The conv's pads; negative ones crop x.
  SmallVector<int64_t> convPads(2 * spatial), starts(rank, 0), steps(rank, 1);
  SmallVector<int64_t> ends(cast<RankedTensorType>(x.getType()).getShape());
  bool crop = false;
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t span = (kernel[i] - 1) * (*dilations)[i];
    int64_t before = span - pads[i];
    int64_t after =
        span - pads[i + spatial] + (*outputPadding)[i] - ((*strides)[i] - 1);
    convPads[i] = std::max<int64_t>(before, 0);
    convPads[i + spatial] = std::max<int64_t>(after, 0);
    starts[i + 2] = std::max<int64_t>(-before, 0);
    ends[i + 2] -= std::max<int64_t>(-after, 0);
    crop |= before < 0 || after < 0;
    if (ends[i + 2] <= starts[i + 2])
      return c.unsupported("pads that crop all of spatial axis " + Twine(i) +
                           " before the convolution");
  }
  if (crop) {
    auto cropped = c.slice(x, starts, ends, steps);
    if (failed(cropped))
      return failure();
    x = *cropped;
  }

  // W (C, M / g, k...) as a conv weight (M, C / g, k...), flipped.
  const int64_t perGroupIn = channels / group,
                perGroupOut = weight.getDimSize(1);
  SmallVector<int64_t> grouped = {group, perGroupIn, perGroupOut};
  llvm::append_range(grouped, kernel);
  Value w = c.createTyped<ReshapeOp>(
      RankedTensorType::get(grouped, weight.getElementType()), {c.input(1)})[0];
  SmallVector<int64_t> perm = {0, 2, 1};
  for (int64_t i = 0; i < spatial; ++i)
    perm.push_back(3 + i);
  auto swapped = c.create1<TransposeOp>(
      {w}, {c.named("perm", c.b.getDenseI64ArrayAttr(perm))});
  if (failed(swapped))
    return failure();
  SmallVector<int64_t> convWeight = {group * perGroupOut, perGroupIn};
  llvm::append_range(convWeight, kernel);
  w = c.createTyped<ReshapeOp>(
      RankedTensorType::get(convWeight, weight.getElementType()),
      {*swapped})[0];
  SmallVector<int64_t> flipStarts(rank, 0), flipEnds(convWeight),
      flipSteps(rank, 1);
  for (int64_t i = 0; i < spatial; ++i) {
    flipStarts[i + 2] = kernel[i] - 1;
    flipEnds[i + 2] = -1;
    flipSteps[i + 2] = -1;
  }
  auto flipped = c.slice(w, flipStarts, flipEnds, flipSteps);
  if (failed(flipped))
    return failure();

  SmallVector<Value> operands = {x, *flipped};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return c.produce<ConvOp>(
      operands, {c.named("strides", c.b.getDenseI64ArrayAttr(
                                        SmallVector<int64_t>(spatial, 1))),
                 c.named("pads", c.b.getDenseI64ArrayAttr(convPads)),
                 c.named("dilations", c.b.getDenseI64ArrayAttr(*dilations)),
                 c.named("group", c.b.getI64IntegerAttr(group)),
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
  t.add("Gemm", {6, importGemm}); // 6: `broadcast`, which numpy's rule covers
  t.add("Conv", {1, importConv});
  t.add("ConvTranspose", {1, importConvTranspose});
  t.add("MaxPool", {1, importMaxPool});         // 1: no dilations, ceil_mode
  t.add("AveragePool", {1, importAveragePool}); // 1: no count_include_pad
  t.add("GlobalAveragePool", {1, importGlobalAveragePool});
}

} // namespace mpt::onnx_import
