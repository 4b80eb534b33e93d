//===- ResizeImport.cpp - Resize and Upsample as gathers ------------------===//
//
// Resize (opsets 11 and later; Upsample and opset 10's Resize with their
// fixed asymmetric coordinates) with the nearest, linear and cubic modes, as
// the ops MPT has, so that it trains with their gradients on every backend:
// shapes are static, so for each resized axis the importer computes, for
// every output position, the input coordinate (the coordinate
// transformation mode) and from it
//   - nearest: the input index (the nearest mode): one gather along the
//     axis at a constant index list;
//   - linear: the two neighbours floor(x) and floor(x) + 1, clamped into
//     the axis (ONNX's edge rule), and the weights 1 - f and f with
//     f = x - floor(x): g0 * w0 + g1 * w1, two gathers and constants of the
//     weights along the axis;
//   - cubic: the four neighbours floor(x) - 1 .. + 2 with ONNX's cubic
//     convolution weights (cubic_coeff_a; exclude_outside zeroes the taps
//     outside the axis and renormalises).
// Separable axes one after another give the bilinear (and n-linear)
// result. Antialiasing, tf_crop_and_resize and the aspect-ratio policies
// other than stretch are reported as unsupported.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include <array>
#include <cmath>

using namespace mlir;

namespace mpt::onnx_import {
namespace {

struct ResizeMode {
  std::string mode = "nearest";
  std::string coordinates = "half_pixel";
  std::string nearest = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
};

/// The input coordinate of output position `o` along an axis of `in`
/// elements resized with scale `scale` to `length` (in * scale, which
/// ONNX's align_corners and pytorch_half_pixel use unrounded).
double sourceCoordinate(StringRef coordinates, int64_t o, int64_t in,
                        double length, double scale) {
  if (coordinates == "half_pixel")
    return (o + 0.5) / scale - 0.5;
  if (coordinates == "pytorch_half_pixel")
    return length > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (coordinates == "align_corners")
    return length == 1 ? 0.0 : static_cast<double>(o) * (in - 1) / (length - 1);
  if (coordinates == "tf_half_pixel_for_nn")
    return (o + 0.5) / scale;
  return o / scale; // asymmetric
}

int64_t nearestIndex(StringRef nearest, double x) {
  double r;
  if (nearest == "round_prefer_ceil")
    r = std::floor(x + 0.5);
  else if (nearest == "floor")
    r = std::floor(x);
  else if (nearest == "ceil")
    r = std::ceil(x);
  else // round_prefer_floor
    r = std::ceil(x - 0.5);
  return static_cast<int64_t>(r);
}

/// `x` gathered along `axis` at `indices`.
FailureOr<Value> gatherAlong(NodeContext &c, Value x, int64_t axis,
                             ArrayRef<int64_t> indices) {
  return c.create1<GatherOp>(
      {x, c.constantI64({(int64_t)indices.size()}, indices)},
      {c.named("axis", c.b.getI64IntegerAttr(axis))});
}

/// The weights along `axis` of a tensor of rank `rank`, in `element`.
Value weightsAlong(NodeContext &c, ArrayRef<double> weights, int64_t axis,
                   int64_t rank, Type element) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = weights.size();
  auto f32 = RankedTensorType::get(shape, c.b.getF32Type());
  SmallVector<float> values(weights.begin(), weights.end());
  Value w = ConstantOp::create(c.b, c.loc,
                               DenseElementsAttr::get(f32, ArrayRef(values)))
                .getResult();
  if (element != c.b.getF32Type())
    w = c.createTyped<CastOp>(RankedTensorType::get(shape, element), {w})[0];
  return w;
}

/// ONNX's cubic convolution weights of the taps at floor(x) - 1 .. + 2
/// for fraction r = x - floor(x), with coefficient a.
std::array<double, 4> cubicWeights(double r, double a) {
  auto near = [&](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [&](double d) {
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  };
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

/// Resizes `x` along `axis` from `in` to `out` elements: the sum over the
/// taps of x gathered at the tap's indices times its weights (one tap,
/// unweighted, for nearest; two for linear; four for cubic).
FailureOr<Value> resizeAxis(NodeContext &c, const ResizeMode &m, Value x,
                            int64_t axis, int64_t out, double length,
                            double scale) {
  auto type = cast<RankedTensorType>(x.getType());
  const int64_t in = type.getDimSize(axis);
  const size_t taps = m.mode == "nearest" ? 1 : m.mode == "linear" ? 2 : 4;
  SmallVector<SmallVector<int64_t>> index(taps);
  SmallVector<SmallVector<double>> weight(taps);
  bool identity = in == out;
  for (int64_t o = 0; o < out; ++o) {
    double src = sourceCoordinate(m.coordinates, o, in, length, scale);
    if (taps == 1) {
      index[0].push_back(
          std::clamp<int64_t>(nearestIndex(m.nearest, src), 0, in - 1));
      weight[0].push_back(1.0);
      identity &= index[0].back() == o;
      continue;
    }
    double base = std::floor(src), r = src - base;
    int64_t first = static_cast<int64_t>(base) - (taps == 4 ? 1 : 0);
    std::array<double, 4> w = {1 - r, r, 0, 0};
    if (taps == 4)
      w = cubicWeights(r, m.cubicA);
    double total = 0;
    for (size_t k = 0; k < taps; ++k) {
      int64_t i = first + static_cast<int64_t>(k);
      if (m.excludeOutside && (i < 0 || i >= in))
        w[k] = 0; // and the others renormalised
      total += w[k];
      // Outside the axis, ONNX takes the edge element.
      index[k].push_back(std::clamp<int64_t>(i, 0, in - 1));
    }
    for (size_t k = 0; k < taps; ++k)
      weight[k].push_back(m.excludeOutside && total != 0 ? w[k] / total : w[k]);
    identity &= r == 0 && index[taps == 4 ? 1 : 0].back() == o;
  }
  if (identity && taps < 4)
    return x;
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  Value sum;
  for (size_t k = 0; k < taps; ++k) {
    if (taps > 1 && llvm::all_of(weight[k], [](double w) { return w == 0; }))
      continue;
    auto g = gatherAlong(c, x, axis, index[k]);
    if (failed(g))
      return failure();
    Value term = *g;
    if (taps > 1 && !llvm::all_of(weight[k], [](double w) { return w == 1; })) {
      auto weighted = c.create1<MulOp>(
          {term, weightsAlong(c, weight[k], axis, rank, element)});
      if (failed(weighted))
        return failure();
      term = *weighted;
    }
    if (sum) {
      auto added = c.create1<AddOp>({sum, term});
      if (failed(added))
        return failure();
      sum = *added;
    } else {
      sum = term;
    }
  }
  return sum ? sum : x;
}

LogicalResult buildResize(NodeContext &c, const ResizeMode &m,
                          ArrayRef<double> scales, ArrayRef<int64_t> sizes,
                          ArrayRef<int64_t> axes) {
  auto type = c.inputType(0);
  if (!isa<FloatType>(type.getElementType()))
    return c.unsupported("resizing a tensor of a non-float type");
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic")
    return c.emitError() << "unknown mode '" << m.mode << "'";
  static const char *kCoordinates[] = {"half_pixel", "pytorch_half_pixel",
                                       "align_corners", "asymmetric",
                                       "tf_half_pixel_for_nn"};
  if (!llvm::is_contained(kCoordinates, StringRef(m.coordinates)))
    return c.unsupported("coordinate_transformation_mode '" + m.coordinates +
                         "'");
  static const char *kNearest[] = {"round_prefer_floor", "round_prefer_ceil",
                                   "floor", "ceil"};
  if (!llvm::is_contained(kNearest, StringRef(m.nearest)))
    return c.emitError() << "unknown nearest_mode '" << m.nearest << "'";
  const size_t count = scales.empty() ? sizes.size() : scales.size();
  if (count != axes.size())
    return c.emitError() << (scales.empty() ? "sizes" : "scales") << " has "
                         << count << " values for " << axes.size() << " axes";
  Value x = c.input(0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i], in = type.getDimSize(axis);
    int64_t out;
    double scale, length;
    if (scales.empty()) {
      out = sizes[i];
      scale = static_cast<double>(out) / in;
      length = out;
    } else {
      scale = scales[i];
      if (!(scale > 0))
        return c.emitError() << "scale " << scale << " of axis " << axis
                             << " is not positive";
      out = static_cast<int64_t>(std::floor(in * scale));
      length = in * scale;
    }
    if (out < 1 || in < 1)
      return c.emitError() << "axis " << axis << " of " << in
                           << " elements resized to " << out;
    auto resized = resizeAxis(c, m, x, axis, out, length, scale);
    if (failed(resized))
      return failure();
    x = *resized;
  }
  c.setResults(x);
  return success();
}

/// Resize-11+: inputs X, roi, scales, sizes (one of the last two).
LogicalResult importResize(NodeContext &c) {
  ResizeMode m;
  m.mode = c.getString("mode", "nearest");
  m.coordinates = c.getString("coordinate_transformation_mode", "half_pixel");
  m.nearest = c.getString("nearest_mode", "round_prefer_floor");
  m.cubicA = c.getFloat("cubic_coeff_a", -0.75f);
  m.excludeOutside = c.getInt("exclude_outside", 0) != 0;
  if (c.getInt("antialias", 0) != 0)
    return c.unsupported(
        "antialias (an antialiasing filter when downsampling)");
  if (c.getString("keep_aspect_ratio_policy", "stretch") != "stretch")
    return c.unsupported("keep_aspect_ratio_policy '" +
                         c.getString("keep_aspect_ratio_policy", "") + "'");
  int64_t rank = c.inputType(0).getRank();
  SmallVector<int64_t> axes = c.getInts("axes");
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a)
      axes.push_back(a);
  for (int64_t &a : axes) {
    auto n = c.axis(a, rank);
    if (failed(n))
      return failure();
    a = *n;
  }
  SmallVector<double> scales;
  SmallVector<int64_t> sizes;
  DenseElementsAttr scaleValues = c.constantInput(2);
  if (c.hasInput(2) && !scaleValues)
    return c.unsupported("scales (" + c.describeInput(2) +
                         ") must be a compile-time constant");
  if (scaleValues && scaleValues.getNumElements() > 0) {
    for (const APFloat &v : scaleValues.getValues<APFloat>())
      scales.push_back(v.convertToDouble());
  } else if (c.hasInput(3)) {
    auto s = c.constantInts(3, "sizes");
    if (failed(s))
      return failure();
    sizes = *s;
  } else {
    return c.emitError() << "has neither scales nor sizes";
  }
  return buildResize(c, m, scales, sizes, axes);
}

/// Upsample-9 and Resize-10: X and constant scales, asymmetric
/// coordinates, nearest taking the floor.
LogicalResult importUpsample(NodeContext &c) {
  ResizeMode m;
  m.mode = c.getString("mode", "nearest");
  m.coordinates = "asymmetric";
  m.nearest = "floor";
  DenseElementsAttr scaleValues = c.constantInput(1);
  if (!scaleValues)
    return c.unsupported("scales (" + c.describeInput(1) +
                         ") must be a compile-time constant");
  SmallVector<double> scales;
  for (const APFloat &v : scaleValues.getValues<APFloat>())
    scales.push_back(v.convertToDouble());
  SmallVector<int64_t> axes;
  for (int64_t a = 0; a < c.inputType(0).getRank(); ++a)
    axes.push_back(a);
  return buildResize(c, m, scales, {}, axes);
}

} // namespace

void registerResizeImporters(OpImporterTable &t) {
  t.add("Upsample", {9, importUpsample, /*constantInputs=*/0b10});
  t.add("Resize", {10, importUpsample, 0b10});
  t.add("Resize", {11, importResize, 0b1110});
}

} // namespace mpt::onnx_import
