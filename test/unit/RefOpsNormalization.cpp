//===- RefOpsNormalization.cpp - norms, softmax and their gradients -------===//
//
// batch_norm, batch_norm_train, layer_norm, softmax, log_softmax and
// softmax_grad, layer_norm_grad, batch_norm_grad.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

#include <limits>

using namespace mlir;

namespace mpt::ref {
namespace {

/// x [N, C, ...] seen as channels: the channel of flat index i is
/// (i / spatial) % channels.
struct ChannelView {
  int64_t channels, spatial, count; // count: elements per channel

  explicit ChannelView(const RefTensor &x)
      : channels(x.shape[1]),
        spatial(product(ArrayRef<int64_t>(x.shape).drop_front(2))),
        count(x.shape[0] * spatial) {}
  int64_t channel(int64_t i) const { return (i / spatial) % channels; }
};

/// Per-channel batch mean and biased variance of x.
void channelStats(const RefTensor &x, const ChannelView &view,
                  std::vector<double> &mean, std::vector<double> &var) {
  mean.assign(view.channels, 0.0);
  var.assign(view.channels, 0.0);
  for (int64_t i = 0; i < x.numElements(); ++i)
    mean[view.channel(i)] += x.data[i];
  for (double &m : mean)
    m /= static_cast<double>(view.count);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    double d = x.data[i] - mean[view.channel(i)];
    var[view.channel(i)] += d * d;
  }
  for (double &v : var)
    v /= static_cast<double>(view.count);
}

LogicalResult checkChannels(Operation *op, const RefTensor &x,
                            ArrayRef<RefTensor> perChannel) {
  if (x.rank() < 2)
    return fail(op, "input must be [N, C, ...]");
  for (const RefTensor &t : perChannel)
    if (t.numElements() != x.shape[1])
      return fail(op, "per-channel operands must have C elements");
  return success();
}

/// Inference mode: the running statistics.
LogicalResult batchNorm(Operation *op, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0];
  if (failed(checkChannels(op, x, operands.drop_front())))
    return failure();
  const RefTensor &scale = operands[1], &bias = operands[2],
                  &mean = operands[3], &var = operands[4];
  double eps = floatAttr(op, "epsilon", 1e-5);
  ChannelView view(x);
  RefTensor y(x.shape);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = view.channel(i);
    y.data[i] = (x.data[i] - mean.data[c]) / std::sqrt(var.data[c] + eps) *
                    scale.data[c] +
                bias.data[c];
  }
  results.push_back(std::move(y));
  return success();
}

/// Training mode: batch statistics, and the updated running ones.
LogicalResult batchNormTrain(Operation *op, ArrayRef<RefTensor> operands,
                             std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0];
  if (failed(checkChannels(op, x, operands.drop_front())))
    return failure();
  const RefTensor &scale = operands[1], &bias = operands[2],
                  &runningMean = operands[3], &runningVar = operands[4];
  double eps = floatAttr(op, "epsilon", 1e-5);
  double momentum = floatAttr(op, "momentum", 0.9);
  ChannelView view(x);
  std::vector<double> mean, var;
  channelStats(x, view, mean, var);
  RefTensor y(x.shape);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = view.channel(i);
    y.data[i] =
        (x.data[i] - mean[c]) / std::sqrt(var[c] + eps) * scale.data[c] +
        bias.data[c];
  }
  results.push_back(std::move(y));
  if (op->getNumResults() == 3) {
    // The running variance takes the unbiased batch variance (PyTorch).
    double count = static_cast<double>(view.count);
    double unbias = count > 1 ? count / (count - 1) : 1.0;
    RefTensor newMean = runningMean, newVar = runningVar;
    for (int64_t c = 0; c < view.channels; ++c) {
      newMean.data[c] =
          runningMean.data[c] * momentum + mean[c] * (1 - momentum);
      newVar.data[c] =
          runningVar.data[c] * momentum + var[c] * unbias * (1 - momentum);
    }
    results.push_back(std::move(newMean));
    results.push_back(std::move(newVar));
  }
  return success();
}

/// x, scale, dy -> dx, dscale, dbias, recomputing the batch statistics.
LogicalResult batchNormGrad(Operation *op, ArrayRef<RefTensor> operands,
                            std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0], &scale = operands[1], &dy = operands[2];
  if (failed(checkChannels(op, x, scale)))
    return failure();
  double eps = floatAttr(op, "epsilon", 1e-5);
  ChannelView view(x);
  std::vector<double> mean, var;
  channelStats(x, view, mean, var);
  std::vector<double> inv(view.channels);
  for (int64_t c = 0; c < view.channels; ++c)
    inv[c] = 1.0 / std::sqrt(var[c] + eps);
  RefTensor dx(x.shape), dscale(scale.shape), dbias(scale.shape);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = view.channel(i);
    dbias.data[c] += dy.data[i];
    dscale.data[c] += dy.data[i] * (x.data[i] - mean[c]) * inv[c];
  }
  double count = static_cast<double>(view.count);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t c = view.channel(i);
    double xhat = (x.data[i] - mean[c]) * inv[c];
    dx.data[i] =
        scale.data[c] * inv[c] *
        (dy.data[i] - dbias.data[c] / count - xhat * dscale.data[c] / count);
  }
  results.push_back(std::move(dx));
  results.push_back(std::move(dscale));
  results.push_back(std::move(dbias));
  return success();
}

/// x viewed as rows of the elements from `axis` on.
struct RowView {
  int64_t rows, cols;
};

FailureOr<RowView> rowView(Operation *op, const RefTensor &x) {
  std::optional<int64_t> axis =
      normalizeAxis(intAttr(op, "axis", -1), x.rank());
  if (!axis)
    return fail(op, "axis out of range");
  ArrayRef<int64_t> shape(x.shape);
  return RowView{product(shape.take_front(*axis)),
                 product(shape.drop_front(*axis))};
}

/// x, scale, bias? -> y, mean, inv_std_dev (as many results as the op has).
LogicalResult layerNorm(Operation *op, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0], &scale = operands[1];
  const RefTensor *bias = operands.size() > 2 ? &operands[2] : nullptr;
  FailureOr<RowView> view = rowView(op, x);
  if (failed(view))
    return failure();
  auto [rows, cols] = *view;
  auto isRowSized = [&](const RefTensor &t) {
    return t.numElements() == cols || t.numElements() == 1;
  };
  if (!isRowSized(scale) || (bias && !isRowSized(*bias)))
    return fail(op, "scale and bias must have one element or one per row");
  double eps = floatAttr(op, "epsilon", 1e-5);
  RefTensor y(x.shape);
  std::vector<double> means(rows), invs(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data.data() + r * cols;
    double mean = 0.0, var = 0.0;
    for (int64_t j = 0; j < cols; ++j)
      mean += row[j];
    mean /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j)
      var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(cols);
    double inv = 1.0 / std::sqrt(var + eps);
    means[r] = mean;
    invs[r] = inv;
    for (int64_t j = 0; j < cols; ++j) {
      double s = scale.data[scale.numElements() == 1 ? 0 : j];
      double b = bias ? bias->data[bias->numElements() == 1 ? 0 : j] : 0.0;
      y.data[r * cols + j] = (row[j] - mean) * inv * s + b;
    }
  }
  results.push_back(std::move(y));
  if (op->getNumResults() > 1)
    results.emplace_back(resultShape(op, 1), std::move(means));
  if (op->getNumResults() > 2)
    results.emplace_back(resultShape(op, 2), std::move(invs));
  return success();
}

/// x, scale, mean, inv_std_dev, dy -> dx, dscale, dbias, with the forward's
/// statistics.
LogicalResult layerNormGrad(Operation *op, ArrayRef<RefTensor> operands,
                            std::vector<RefTensor> &results) {
  const RefTensor &x = operands[0], &scale = operands[1], &mean = operands[2],
                  &inv = operands[3], &dy = operands[4];
  FailureOr<RowView> view = rowView(op, x);
  if (failed(view))
    return failure();
  auto [rows, cols] = *view;
  if (mean.numElements() != rows || inv.numElements() != rows)
    return fail(op, "mean and inv_std_dev must have one element per row");
  bool scalarScale = scale.numElements() == 1;
  if (!scalarScale && scale.numElements() != cols)
    return fail(op, "scale must have one element or one per row");
  RefTensor dx(x.shape), dscale(scale.shape), dbias(scale.shape);
  std::vector<double> xhat(cols), g(cols);
  for (int64_t r = 0; r < rows; ++r) {
    double meanG = 0.0, meanGX = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      int64_t i = r * cols + j, s = scalarScale ? 0 : j;
      xhat[j] = (x.data[i] - mean.data[r]) * inv.data[r];
      g[j] = dy.data[i] * scale.data[s];
      meanG += g[j];
      meanGX += g[j] * xhat[j];
      dscale.data[s] += dy.data[i] * xhat[j];
      dbias.data[s] += dy.data[i];
    }
    meanG /= static_cast<double>(cols);
    meanGX /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j)
      dx.data[r * cols + j] = inv.data[r] * (g[j] - meanG - xhat[j] * meanGX);
  }
  results.push_back(std::move(dx));
  results.push_back(std::move(dscale));
  results.push_back(std::move(dbias));
  return success();
}

/// Softmax, or log-softmax, along `axis`.
RefEvaluator softmax(bool log) {
  return [log](Operation *op, ArrayRef<RefTensor> operands,
               std::vector<RefTensor> &results) -> LogicalResult {
    const RefTensor &x = operands[0];
    std::optional<int64_t> axis =
        normalizeAxis(intAttr(op, "axis", -1), x.rank());
    if (!axis)
      return fail(op, "axis out of range");
    auto [outer, dim, inner] = splitAtAxis(x.shape, *axis);
    RefTensor y(x.shape);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        auto at = [&](int64_t k) { return (o * dim + k) * inner + in; };
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < dim; ++k)
          max = std::max(max, x.data[at(k)]);
        double sum = 0.0;
        for (int64_t k = 0; k < dim; ++k)
          sum += std::exp(x.data[at(k)] - max);
        for (int64_t k = 0; k < dim; ++k)
          y.data[at(k)] = log ? x.data[at(k)] - max - std::log(sum)
                              : std::exp(x.data[at(k)] - max) / sum;
      }
    results.push_back(std::move(y));
    return success();
  };
}

/// y, dy -> dx for softmax (`log` 0) or log-softmax (`log` 1).
LogicalResult softmaxGrad(Operation *op, ArrayRef<RefTensor> operands,
                          std::vector<RefTensor> &results) {
  const RefTensor &y = operands[0], &dy = operands[1];
  std::optional<std::int64_t> axis =
      normalizeAxis(intAttr(op, "axis", -1), y.rank());
  if (!axis)
    return fail(op, "axis out of range");
  bool log = boolAttr(op, "log", false);
  auto [outer, dim, inner] = splitAtAxis(y.shape, *axis);
  RefTensor dx(y.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return (o * dim + k) * inner + in; };
      double sum = 0.0;
      for (int64_t k = 0; k < dim; ++k)
        sum += log ? dy.data[at(k)] : dy.data[at(k)] * y.data[at(k)];
      for (int64_t k = 0; k < dim; ++k)
        dx.data[at(k)] = log ? dy.data[at(k)] - std::exp(y.data[at(k)]) * sum
                             : y.data[at(k)] * (dy.data[at(k)] - sum);
    }
  results.push_back(std::move(dx));
  return success();
}

} // namespace

void addNormalizationOps(RefOpTable &table) {
  table["mpt.batch_norm"] = batchNorm;
  table["mpt.batch_norm_train"] = batchNormTrain;
  table["mpt.layer_norm"] = layerNorm;
  table["mpt.softmax"] = softmax(/*log=*/false);
  table["mpt.log_softmax"] = softmax(/*log=*/true);
  table["mpt.softmax_grad"] = softmaxGrad;
  table["mpt.layer_norm_grad"] = layerNormGrad;
  table["mpt.batch_norm_grad"] = batchNormGrad;
}

} // namespace mpt::ref
