//===- RefOpsLoss.cpp - classification losses and their gradients ---------===//
//
// softmax_cross_entropy_loss, nll_loss, softmax_cross_entropy_loss_grad and
// nll_loss_grad. Per sample `loss = -w[t] * log_prob[t]`; ignored samples
// contribute 0 and weight 0; "mean" divides by the summed weights.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"

#include <limits>

using namespace mlir;

namespace mpt::ref {
namespace {

/// Log-probabilities [N, C, d...] against labels [N, d...]: sample s = (n, r)
/// with r the flat index into d..., class c at (n * C + c) * inner + r.
struct LossLayout {
  int64_t batch, classes, inner;
  std::string reduction;
  std::optional<int64_t> ignoreIndex;

  int64_t samples() const { return batch * inner; }
  int64_t at(int64_t sample, int64_t c) const {
    return ((sample / inner) * classes + c) * inner + sample % inner;
  }
};

FailureOr<LossLayout> lossLayout(Operation *op, ArrayRef<int64_t> scores,
                                 const RefTensor &labels,
                                 const RefTensor *weights) {
  if (scores.size() < 2)
    return fail(op, "scores must be [N, C, ...]");
  LossLayout layout{scores[0], scores[1], product(scores.drop_front(2)),
                    stringAttr(op, "reduction", "mean"),
                    optionalIntAttr(op, "ignore_index")};
  if (labels.numElements() != layout.samples())
    return fail(op, "labels must be [N, d...]");
  if (weights && weights->numElements() != layout.classes)
    return fail(op, "weights must have C elements");
  if (layout.reduction != "mean" && layout.reduction != "sum" &&
      layout.reduction != "none")
    return fail(op, "unknown reduction '" + layout.reduction + "'");
  return layout;
}

/// Each sample's label, or nullopt when it is ignored; fails on a label
/// outside [0, C).
FailureOr<std::vector<std::optional<int64_t>>>
sampleLabels(Operation *op, const LossLayout &layout, const RefTensor &labels) {
  std::vector<std::optional<int64_t>> result;
  for (double v : labels.data) {
    int64_t label = static_cast<int64_t>(v);
    if (layout.ignoreIndex && label == *layout.ignoreIndex) {
      result.push_back(std::nullopt);
      continue;
    }
    if (label < 0 || label >= layout.classes)
      return fail(op, "label " + Twine(label) + " outside [0, " +
                          Twine(layout.classes) + ")");
    result.push_back(label);
  }
  return result;
}

double weightOf(const RefTensor *weights, int64_t label) {
  return weights ? weights->data[label] : 1.0;
}

/// The loss from log-probabilities.
FailureOr<RefTensor> nll(Operation *op, const RefTensor &logProb,
                         const RefTensor &labels, const RefTensor *weights) {
  FailureOr<LossLayout> layout = lossLayout(op, logProb.shape, labels, weights);
  if (failed(layout))
    return failure();
  auto targets = sampleLabels(op, *layout, labels);
  if (failed(targets))
    return failure();
  std::vector<double> perSample(layout->samples(), 0.0);
  double total = 0.0, weightSum = 0.0;
  for (int64_t s = 0; s < layout->samples(); ++s) {
    std::optional<int64_t> t = (*targets)[s];
    if (!t)
      continue;
    double w = weightOf(weights, *t);
    perSample[s] = -w * logProb.data[layout->at(s, *t)];
    total += perSample[s];
    weightSum += w;
  }
  if (layout->reduction == "none")
    return RefTensor(labels.shape, std::move(perSample));
  if (layout->reduction == "sum")
    return RefTensor::scalar(total);
  return RefTensor::scalar(weightSum == 0.0
                               ? std::numeric_limits<double>::quiet_NaN()
                               : total / weightSum);
}

/// scores, labels, weights? -> loss, log_prob?
LogicalResult softmaxCrossEntropyLoss(Operation *op,
                                      ArrayRef<RefTensor> operands,
                                      std::vector<RefTensor> &results) {
  const RefTensor &scores = operands[0];
  if (scores.rank() < 2)
    return fail(op, "scores must be [N, C, ...]");
  auto [outer, classes, inner] = splitAtAxis(scores.shape, 1);
  RefTensor logProb(scores.shape);
  for (int64_t n = 0; n < outer; ++n)
    for (int64_t r = 0; r < inner; ++r) {
      auto at = [&](int64_t c) { return (n * classes + c) * inner + r; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c)
        max = std::max(max, scores.data[at(c)]);
      double sum = 0.0;
      for (int64_t c = 0; c < classes; ++c)
        sum += std::exp(scores.data[at(c)] - max);
      for (int64_t c = 0; c < classes; ++c)
        logProb.data[at(c)] = scores.data[at(c)] - max - std::log(sum);
    }
  FailureOr<RefTensor> loss = nll(op, logProb, operands[1],
                                  operands.size() > 2 ? &operands[2] : nullptr);
  if (failed(loss))
    return failure();
  results.push_back(std::move(*loss));
  if (op->getNumResults() > 1)
    results.push_back(std::move(logProb));
  return success();
}

/// input (log-probabilities), target, weight? -> loss.
LogicalResult nllLoss(Operation *op, ArrayRef<RefTensor> operands,
                      std::vector<RefTensor> &results) {
  FailureOr<RefTensor> loss = nll(op, operands[0], operands[1],
                                  operands.size() > 2 ? &operands[2] : nullptr);
  if (failed(loss))
    return failure();
  results.push_back(std::move(*loss));
  return success();
}

/// The upstream gradient of each sample's loss term: dloss divided by the
/// summed weights (mean), dloss (sum) or dloss[s] (none).
FailureOr<std::vector<double>>
sampleGradients(Operation *op, const LossLayout &layout,
                const std::vector<std::optional<int64_t>> &targets,
                const RefTensor *weights, const RefTensor &dloss) {
  if (layout.reduction == "none") {
    if (dloss.numElements() != layout.samples())
      return fail(op, "dloss must have one element per sample");
    return dloss.data;
  }
  if (dloss.numElements() != 1)
    return fail(op, "dloss must have one element");
  double g = dloss.data[0];
  if (layout.reduction == "mean") {
    double weightSum = 0.0;
    for (const std::optional<int64_t> &t : targets)
      if (t)
        weightSum += weightOf(weights, *t);
    g /= weightSum;
  }
  return std::vector<double>(layout.samples(), g);
}

/// log_prob, labels, weights?, dloss -> dscores.
LogicalResult softmaxCrossEntropyLossGrad(Operation *op,
                                          ArrayRef<RefTensor> operands,
                                          std::vector<RefTensor> &results) {
  const RefTensor &logProb = operands[0], &labels = operands[1];
  const RefTensor *weights = operands.size() > 3 ? &operands[2] : nullptr;
  const RefTensor &dloss = operands.back();
  FailureOr<LossLayout> layout = lossLayout(op, logProb.shape, labels, weights);
  if (failed(layout))
    return failure();
  auto targets = sampleLabels(op, *layout, labels);
  if (failed(targets))
    return failure();
  auto g = sampleGradients(op, *layout, *targets, weights, dloss);
  if (failed(g))
    return failure();
  RefTensor dscores(logProb.shape);
  for (int64_t s = 0; s < layout->samples(); ++s) {
    std::optional<int64_t> t = (*targets)[s];
    if (!t)
      continue;
    double scale = weightOf(weights, *t) * (*g)[s];
    for (int64_t c = 0; c < layout->classes; ++c) {
      int64_t i = layout->at(s, c);
      dscores.data[i] = (std::exp(logProb.data[i]) - (c == *t)) * scale;
    }
  }
  results.push_back(std::move(dscores));
  return success();
}

/// target, weight?, dloss -> dinput (the result type gives its shape).
LogicalResult nllLossGrad(Operation *op, ArrayRef<RefTensor> operands,
                          std::vector<RefTensor> &results) {
  const RefTensor &labels = operands[0];
  const RefTensor *weights = operands.size() > 2 ? &operands[1] : nullptr;
  const RefTensor &dloss = operands.back();
  RefTensor dinput(resultShape(op, 0));
  FailureOr<LossLayout> layout = lossLayout(op, dinput.shape, labels, weights);
  if (failed(layout))
    return failure();
  auto targets = sampleLabels(op, *layout, labels);
  if (failed(targets))
    return failure();
  auto g = sampleGradients(op, *layout, *targets, weights, dloss);
  if (failed(g))
    return failure();
  for (int64_t s = 0; s < layout->samples(); ++s)
    if (std::optional<int64_t> t = (*targets)[s])
      dinput.data[layout->at(s, *t)] = -weightOf(weights, *t) * (*g)[s];
  results.push_back(std::move(dinput));
  return success();
}

} // namespace

void addLossOps(RefOpTable &table) {
  table["mpt.softmax_cross_entropy_loss"] = softmaxCrossEntropyLoss;
  table["mpt.nll_loss"] = nllLoss;
  table["mpt.softmax_cross_entropy_loss_grad"] = softmaxCrossEntropyLossGrad;
  table["mpt.nll_loss_grad"] = nllLossGrad;
}

} // namespace mpt::ref
