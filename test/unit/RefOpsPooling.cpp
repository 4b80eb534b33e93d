//===- RefOpsPooling.cpp - pooling and its gradients ----------------------===//
//
// max_pool, average_pool, global_average_pool, max_pool_grad and
// average_pool_grad. Output sizes come from the result types (which carry
// ceil_mode's effect); windows skip positions outside the input.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

#include <limits>

using namespace mlir;

namespace mpt::ref {
namespace {

/// x [N, C, d...] pooled into y [N, C, o...].
struct PoolGeometry {
  std::vector<int64_t> x, y, kernel, strides, pads, dilations;

  /// Calls fn(yFlat, xFlats, paddedCount) for every output element: the
  /// flat x indices of its window's positions inside the input, in
  /// row-major window order, and how many positions lie inside
  /// [-pad_begin, d + pad_end) on every axis.
  void forEachWindow(
      llvm::function_ref<void(int64_t, ArrayRef<int64_t>, int64_t)> fn) const {
    size_t spatial = x.size() - 2;
    ArrayRef<int64_t> inSpatial = ArrayRef<int64_t>(x).drop_front(2);
    ArrayRef<int64_t> outSpatial = ArrayRef<int64_t>(y).drop_front(2);
    std::vector<int64_t> inStrides = stridesOf(inSpatial);
    int64_t inSize = product(inSpatial), outSize = product(outSpatial);
    std::vector<int64_t> positions;
    for (int64_t nc = 0; nc < x[0] * x[1]; ++nc) {
      int64_t yFlat = nc * outSize;
      forEachIndex(outSpatial, [&](ArrayRef<int64_t> o) {
        positions.clear();
        int64_t padded = 0;
        forEachIndex(kernel, [&](ArrayRef<int64_t> k) {
          bool inside = true, insidePadded = true;
          int64_t xFlat = nc * inSize;
          for (size_t s = 0; s < spatial; ++s) {
            int64_t pos = o[s] * strides[s] - pads[s] + k[s] * dilations[s];
            inside &= pos >= 0 && pos < inSpatial[s];
            insidePadded &=
                pos >= -pads[s] && pos < inSpatial[s] + pads[s + spatial];
            xFlat += pos * inStrides[s];
          }
          padded += insidePadded;
          if (inside)
            positions.push_back(xFlat);
        });
        fn(yFlat++, positions, padded);
      });
    }
  }
};

FailureOr<PoolGeometry> poolGeometry(Operation *op, ArrayRef<int64_t> x,
                                     ArrayRef<int64_t> y) {
  PoolGeometry geo;
  geo.x.assign(x.begin(), x.end());
  geo.y.assign(y.begin(), y.end());
  if (x.size() < 3 || y.size() != x.size() || x[0] != y[0] || x[1] != y[1])
    return fail(op, "x and y must be [N, C, ...] of one rank, at least 3");
  size_t spatial = x.size() - 2;
  std::optional<std::vector<int64_t>> kernel =
      optionalIntListAttr(op, "kernel_shape");
  if (!kernel || kernel->size() != spatial)
    return fail(op, "kernel_shape missing or of the wrong size");
  geo.kernel = *kernel;
  geo.strides = optionalIntListAttr(op, "strides")
                    .value_or(std::vector<int64_t>(spatial, 1));
  geo.pads = optionalIntListAttr(op, "pads")
                 .value_or(std::vector<int64_t>(2 * spatial, 0));
  geo.dilations = optionalIntListAttr(op, "dilations")
                      .value_or(std::vector<int64_t>(spatial, 1));
  if (geo.strides.size() != spatial || geo.pads.size() != 2 * spatial ||
      geo.dilations.size() != spatial)
    return fail(op, "strides, pads or dilations do not match the rank");
  return geo;
}

/// Max over the window (NaN propagates; an empty window gives -inf).
LogicalResult maxPool(Operation *op, ArrayRef<RefTensor> operands,
                      std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0];
  RefTensor y(resultShape(op, 0));
  FailureOr<PoolGeometry> geo = poolGeometry(op, x.shape, y.shape);
  if (failed(geo))
    return failure();
  geo->forEachWindow([&](int64_t yi, ArrayRef<int64_t> window, int64_t) {
    double best = -std::numeric_limits<double>::infinity();
    for (int64_t xi : window) {
      double v = x.data[xi];
      if (std::isnan(v) || std::isnan(best))
        best = std::numeric_limits<double>::quiet_NaN();
      else
        best = std::max(best, v);
    }
    y.data[yi] = best;
  });
  results.push_back(std::move(y));
  return success();
}

/// x, dy -> dx: each output's gradient to the first maximum of its window.
LogicalResult maxPoolGrad(Operation *op, ArrayRef<RefTensor> operands,
                          std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0], &dy = operands[1];
  RefTensor dx(resultShape(op, 0));
  FailureOr<PoolGeometry> geo = poolGeometry(op, x.shape, dy.shape);
  if (failed(geo))
    return failure();
  geo->forEachWindow([&](int64_t yi, ArrayRef<int64_t> window, int64_t) {
    if (window.empty())
      return;
    int64_t arg = window.front();
    for (int64_t xi : window)
      if (x.data[xi] > x.data[arg])
        arg = xi;
    dx.data[arg] += dy.data[yi];
  });
  results.push_back(std::move(dx));
  return success();
}

/// The divisor of one window: its positions inside the input, or with
/// count_include_pad those inside the explicit padding.
double divisor(Operation *op, ArrayRef<int64_t> window, int64_t padded) {
  return static_cast<double>(boolAttr(op, "count_include_pad", false)
                                 ? padded
                                 : static_cast<int64_t>(window.size()));
}

LogicalResult averagePool(Operation *op, ArrayRef<RefTensor> operands,
                          std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0];
  RefTensor y(resultShape(op, 0));
  FailureOr<PoolGeometry> geo = poolGeometry(op, x.shape, y.shape);
  if (failed(geo))
    return failure();
  geo->forEachWindow([&](int64_t yi, ArrayRef<int64_t> window, int64_t padded) {
    double sum = 0.0;
    for (int64_t xi : window)
      sum += x.data[xi];
    y.data[yi] = sum / divisor(op, window, padded);
  });
  results.push_back(std::move(y));
  return success();
}

/// dy -> dx: each output's gradient spread over its window.
LogicalResult averagePoolGrad(Operation *op, ArrayRef<RefTensor> operands,
                              std::vector<RefTensor> &results) {
  const RefTensor &dy = operands[0];
  RefTensor dx(resultShape(op, 0));
  FailureOr<PoolGeometry> geo = poolGeometry(op, dx.shape, dy.shape);
  if (failed(geo))
    return failure();
  geo->forEachWindow([&](int64_t yi, ArrayRef<int64_t> window, int64_t padded) {
    double share = dy.data[yi] / divisor(op, window, padded);
    for (int64_t xi : window)
      dx.data[xi] += share;
  });
  results.push_back(std::move(dx));
  return success();
}

LogicalResult globalAveragePool(Operation *op, ArrayRef<RefTensor> operands,
                                std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0];
  if (x.rank() < 2)
    return fail(op, "input must be [N, C, ...]");
  int64_t spatial = product(ArrayRef<int64_t>(x.shape).drop_front(2));
  std::vector<double> out(x.shape[0] * x.shape[1], 0.0);
  for (int64_t i = 0; i < x.numElements(); ++i)
    out[i / spatial] += x.data[i];
  for (double &v : out)
    v /= static_cast<double>(spatial);
  results.emplace_back(resultShape(op, 0), std::move(out));
  return success();
}

} // namespace

void addPoolingOps(RefOpTable &table) {
  table["mpt.max_pool"] = maxPool;
  table["mpt.average_pool"] = averagePool;
  table["mpt.global_average_pool"] = globalAveragePool;
  table["mpt.max_pool_grad"] = maxPoolGrad;
  table["mpt.average_pool_grad"] = averagePoolGrad;
}

} // namespace mpt::ref
