//===- RefOpsContraction.cpp - matmul, gemm, conv and conv gradients ------===//
//
// The contractions in double, and conv_grad_input / conv_grad_weight. FP8
// scales are not interpreted: an op carrying them fails.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

using namespace mlir;

namespace mpt::ref {
namespace {

/// Fails when a contraction carries FP8 scales (operand groups past `count`
/// that are not empty).
LogicalResult rejectScales(Operation *op,
                           const std::vector<ArrayRef<RefTensor>> &groups,
                           size_t count) {
  for (size_t g = count; g < groups.size(); ++g)
    if (!groups[g].empty())
      return fail(op, "FP8 scales are not interpreted");
  return success();
}

/// numpy broadcast of two shapes; nullopt when incompatible.
std::optional<std::vector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// numpy matmul: batch dims broadcast; a 1-D lhs is [1, K] and a 1-D rhs
/// [K, 1], the added axis dropped from the result.
LogicalResult matmul(Operation *op, ArrayRef<RefTensor> operands,
                     std::vector<RefTensor> &results) {
  auto groups = operandGroups(op, operands);
  if (failed(rejectScales(op, groups, 2)))
    return failure();
  RefTensor a = groups[0][0], b = groups[1][0];
  if (a.rank() == 1)
    a.shape.insert(a.shape.begin(), 1);
  if (b.rank() == 1)
    b.shape.push_back(1);
  if (a.rank() < 2 || b.rank() < 2)
    return fail(op, "operands must have rank 1 or more");
  int64_t m = a.shape[a.rank() - 2], k = a.shape[a.rank() - 1];
  int64_t n = b.shape[b.rank() - 1];
  if (b.shape[b.rank() - 2] != k)
    return fail(op, "contracted dims differ");
  auto batch = broadcastShapes(ArrayRef<int64_t>(a.shape).drop_back(2),
                               ArrayRef<int64_t>(b.shape).drop_back(2));
  if (!batch)
    return fail(op, "batch dims do not broadcast");
  std::vector<int64_t> aShape = *batch, bShape = *batch;
  aShape.insert(aShape.end(), {m, k});
  bShape.insert(bShape.end(), {k, n});
  std::optional<RefTensor> aa = broadcastTo(a, aShape);
  std::optional<RefTensor> bb = broadcastTo(b, bShape);
  int64_t batches = product(*batch);
  std::vector<double> out(batches * m * n, 0.0);
  for (int64_t p = 0; p < batches; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t q = 0; q < k; ++q)
          sum += aa->data[(p * m + i) * k + q] * bb->data[(p * k + q) * n + j];
        out[(p * m + i) * n + j] = sum;
      }
  results.emplace_back(resultShape(op, 0), std::move(out));
  return success();
}

/// act(alpha * op(A) op(B) + beta * C).
LogicalResult gemm(Operation *op, ArrayRef<RefTensor> operands,
                   std::vector<RefTensor> &results) {
  auto groups = operandGroups(op, operands);
  if (failed(rejectScales(op, groups, 3)))
    return failure();
  const RefTensor &a = groups[0][0], &b = groups[1][0];
  if (a.rank() != 2 || b.rank() != 2)
    return fail(op, "A and B must be 2-D");
  bool transA = boolAttr(op, "trans_a", false);
  bool transB = boolAttr(op, "trans_b", false);
  double alpha = floatAttr(op, "alpha", 1.0), beta = floatAttr(op, "beta", 1.0);
  std::string activation = stringAttr(op, "activation", "none");
  int64_t m = transA ? a.shape[1] : a.shape[0];
  int64_t k = transA ? a.shape[0] : a.shape[1];
  int64_t n = transB ? b.shape[0] : b.shape[1];
  if ((transB ? b.shape[1] : b.shape[0]) != k)
    return fail(op, "contracted dims differ");
  RefTensor c({m, n});
  if (groups.size() > 2 && !groups[2].empty()) {
    std::optional<RefTensor> cc = broadcastTo(groups[2][0], {m, n});
    if (!cc)
      return fail(op, "C does not broadcast to [M, N]");
    c = std::move(*cc);
  }
  RefTensor y({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t q = 0; q < k; ++q)
        sum += a.data[transA ? q * m + i : i * k + q] *
               b.data[transB ? j * k + q : q * n + j];
      double v = alpha * sum + beta * c.data[i * n + j];
      if (activation == "relu")
        v = v > 0 ? v : 0.0;
      else if (activation == "gelu")
        v = gelu(v);
      else if (activation == "gelu_tanh")
        v = geluTanh(v);
      else if (activation != "none")
        return fail(op, "unknown activation '" + activation + "'");
      y.data[i * n + j] = v;
    }
  results.push_back(std::move(y));
  return success();
}

/// The shapes and attributes of one convolution, x [N, C, d...] with
/// w [M, C/group, k...] into y [N, M, o...].
struct ConvGeometry {
  std::vector<int64_t> x, w, y, strides, pads, dilations;
  int64_t group;

  /// Calls fn(xFlat, wFlat, yFlat) for every product term of the forward
  /// convolution (window positions in the padding are skipped).
  void
  forEachTerm(llvm::function_ref<void(int64_t, int64_t, int64_t)> fn) const {
    size_t spatial = x.size() - 2;
    int64_t batch = x[0], channels = x[1], outChannels = w[0];
    int64_t perGroupIn = channels / group, perGroupOut = outChannels / group;
    std::vector<int64_t> xStrides = stridesOf(x), wStrides = stridesOf(w),
                         yStrides = stridesOf(y);
    ArrayRef<int64_t> outSpatial = ArrayRef<int64_t>(y).drop_front(2);
    ArrayRef<int64_t> kernel = ArrayRef<int64_t>(w).drop_front(2);
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t m = 0; m < outChannels; ++m) {
        int64_t g = m / perGroupOut;
        forEachIndex(outSpatial, [&](ArrayRef<int64_t> o) {
          int64_t yFlat = n * yStrides[0] + m * yStrides[1];
          for (size_t s = 0; s < spatial; ++s)
            yFlat += o[s] * yStrides[s + 2];
          for (int64_t c = 0; c < perGroupIn; ++c) {
            int64_t ic = g * perGroupIn + c;
            forEachIndex(kernel, [&](ArrayRef<int64_t> k) {
              int64_t xFlat = n * xStrides[0] + ic * xStrides[1];
              int64_t wFlat = m * wStrides[0] + c * wStrides[1];
              for (size_t s = 0; s < spatial; ++s) {
                int64_t pos = o[s] * strides[s] - pads[s] + k[s] * dilations[s];
                if (pos < 0 || pos >= x[s + 2])
                  return;
                xFlat += pos * xStrides[s + 2];
                wFlat += k[s] * wStrides[s + 2];
              }
              fn(xFlat, wFlat, yFlat);
            });
          }
        });
      }
  }
};

FailureOr<ConvGeometry> convGeometry(Operation *op, ArrayRef<int64_t> x,
                                     ArrayRef<int64_t> w, ArrayRef<int64_t> y) {
  ConvGeometry geo;
  geo.x.assign(x.begin(), x.end());
  geo.w.assign(w.begin(), w.end());
  geo.y.assign(y.begin(), y.end());
  if (x.size() < 3 || w.size() != x.size() || y.size() != x.size())
    return fail(op, "x, w and y must have one rank, at least 3");
  size_t spatial = x.size() - 2;
  geo.strides = optionalIntListAttr(op, "strides")
                    .value_or(std::vector<int64_t>(spatial, 1));
  geo.pads = optionalIntListAttr(op, "pads")
                 .value_or(std::vector<int64_t>(2 * spatial, 0));
  geo.dilations = optionalIntListAttr(op, "dilations")
                      .value_or(std::vector<int64_t>(spatial, 1));
  geo.group = intAttr(op, "group", 1);
  if (geo.strides.size() != spatial || geo.pads.size() != 2 * spatial ||
      geo.dilations.size() != spatial)
    return fail(op, "strides, pads or dilations do not match the rank");
  if (geo.group < 1 || x[1] % geo.group || w[0] % geo.group ||
      w[1] * geo.group != x[1] || y[0] != x[0] || y[1] != w[0])
    return fail(op, "channel counts do not match the group count");
  return geo;
}

LogicalResult conv(Operation *op, ArrayRef<RefTensor> operands,
                   std::vector<RefTensor> &results) {
  auto groups = operandGroups(op, operands);
  if (failed(rejectScales(op, groups, 3)))
    return failure();
  const RefTensor &x = groups[0][0], &w = groups[1][0];
  RefTensor y(resultShape(op, 0));
  FailureOr<ConvGeometry> geo = convGeometry(op, x.shape, w.shape, y.shape);
  if (failed(geo))
    return failure();
  geo->forEachTerm([&](int64_t xi, int64_t wi, int64_t yi) {
    y.data[yi] += x.data[xi] * w.data[wi];
  });
  if (groups.size() > 2 && !groups[2].empty()) {
    const RefTensor &bias = groups[2][0];
    int64_t spatial = product(ArrayRef<int64_t>(y.shape).drop_front(2));
    for (int64_t i = 0; i < y.numElements(); ++i)
      y.data[i] += bias.data[(i / spatial) % y.shape[1]];
  }
  results.push_back(std::move(y));
  return success();
}

/// dy, weight -> dx: the forward's terms, accumulated into x's positions.
LogicalResult convGradInput(Operation *op, ArrayRef<RefTensor> operands,
                            std::vector<RefTensor> &results) {
  const RefTensor &dy = operands[0], &w = operands[1];
  RefTensor dx(resultShape(op, 0));
  FailureOr<ConvGeometry> geo = convGeometry(op, dx.shape, w.shape, dy.shape);
  if (failed(geo))
    return failure();
  geo->forEachTerm([&](int64_t xi, int64_t wi, int64_t yi) {
    dx.data[xi] += dy.data[yi] * w.data[wi];
  });
  results.push_back(std::move(dx));
  return success();
}

/// x, dy -> dweight.
LogicalResult convGradWeight(Operation *op, ArrayRef<RefTensor> operands,
                             std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0], &dy = operands[1];
  RefTensor dw(resultShape(op, 0));
  FailureOr<ConvGeometry> geo = convGeometry(op, x.shape, dw.shape, dy.shape);
  if (failed(geo))
    return failure();
  geo->forEachTerm([&](int64_t xi, int64_t wi, int64_t yi) {
    dw.data[wi] += x.data[xi] * dy.data[yi];
  });
  results.push_back(std::move(dw));
  return success();
}

} // namespace

void addContractionOps(RefOpTable &table) {
  table["mpt.matmul"] = matmul;
  table["mpt.gemm"] = gemm;
  table["mpt.conv"] = conv;
  table["mpt.conv_grad_input"] = convGradInput;
  table["mpt.conv_grad_weight"] = convGradWeight;
}

} // namespace mpt::ref
