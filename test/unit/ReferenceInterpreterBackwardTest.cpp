//===- ReferenceInterpreterBackwardTest.cpp - backward and training ops ---===//
//
// The reference interpreter's backward ops checked against central finite
// differences of their forward ops, so that the gradient checks stand on a
// reference that is itself checked; and its loss-scaling and optimizer ops
// on hand-computed cases.
//
// These ops are written in generic form: where the dialect does not define
// them yet they parse as unregistered mpt ops, and they verify once it does.
//
//===----------------------------------------------------------------------===//
#include "FiniteDifferences.h"
#include "InterpreterTestSupport.h"
#include "UnaryOracle.h"

#include <cmath>

using namespace mlir;
using namespace mpt::ref;

namespace {

class ReferenceBackwardOpTest : public InterpreterTest {
protected:
  /// Checks that `backward`, run on `backwardArgs`, returns the central
  /// differences of `forward` (a scalar function) at `forwardArgs` with
  /// respect to the forward arguments `wrt`, in order.
  void check(StringRef forward, const std::vector<RefTensor> &forwardArgs,
             StringRef backward, const std::vector<RefTensor> &backwardArgs,
             std::vector<unsigned> wrt) {
    std::vector<RefTensor> analytic = run(backward, backwardArgs);
    ASSERT_EQ(analytic.size(), wrt.size()) << diagnostics;
    func::FuncOp f = parse(forward);
    ASSERT_TRUE(f);
    for (size_t k = 0; k < wrt.size(); ++k) {
      FailureOr<RefTensor> numeric = centralDifference(f, forwardArgs, wrt[k]);
      ASSERT_TRUE(succeeded(numeric)) << diagnostics;
      ASSERT_EQ(analytic[k].shape, numeric->shape) << "gradient " << k;
      for (int64_t i = 0; i < numeric->numElements(); ++i)
        EXPECT_NEAR(analytic[k].data[i], numeric->data[i],
                    1e-6 * std::fabs(numeric->data[i]) + 1e-8)
            << "gradient " << k << ", element " << i;
    }
  }

  std::mt19937 rng{1234};
};

TEST_F(ReferenceBackwardOpTest, UnaryGradMatchesEveryKind) {
  struct Case {
    std::string kind, forward, attrs;
    double lo, hi;
  };
  // The ops generated from MPTUnaryFunctions.td, then those with attributes.
  std::vector<Case> cases;
  // A function's float parameters at their defaults, as the rule writes
  // them on unary_grad.
  auto paramAttrs = [](const std::string &kind) {
    std::string s;
#define MPTRT_UNARY_PARAM(Name, k, param, value)                               \
  if (kind == #k)                                                              \
    s += ", " #param " = " #value " : f32";
#include "mptrt/generated/UnaryKinds.def"
    return s;
  };
  for (const mptrt::oracle::UnaryFunctionInfo &u :
       mptrt::oracle::unaryFunctions())
    if (u.kernel && !u.attrs && u.grad)
      cases.push_back({u.kind, std::string("mpt.") + u.kind + " %x",
                       paramAttrs(u.kind), u.positive ? 0.2 : -u.width(2),
                       u.positive ? 3.0 : u.width(2)});
  cases.push_back({"leaky_relu", "mpt.leaky_relu %x {alpha = 0.25 : f32}",
                   ", alpha = 0.25 : f32", -2, 2});
  cases.push_back({"gelu", "mpt.gelu %x", "", -3, 3});
  cases.push_back({"gelu_tanh",
                   "mpt.gelu %x {approximate = #mpt.gelu_approximate<tanh>}",
                   "", -3, 3});
  cases.push_back({"clip", "mpt.clip %x {min = -0.5 : f64, max = 1.05 : f64}",
                   ", min = -0.5 : f64, max = 1.05 : f64", -2, 2});
  for (const Case &c : cases) {
    SCOPED_TRACE(c.kind);
    std::string forward = projectedFunction(
        "%x: tensor<8xf32>", "  %y = " + c.forward + " : tensor<8xf32>",
        "tensor<8xf32>");
    std::string backward = substitute(R"mlir(
func.func @g(%x: tensor<8xf32>, %w: tensor<8xf32>) -> tensor<8xf32> {
  %dx = "mpt.unary_grad"(%x, %w) {kind = #mpt.unary_grad_kind<$KIND>$ATTRS} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %dx : tensor<8xf32>
}
)mlir",
                                      {{"KIND", c.kind}, {"ATTRS", c.attrs}});
    RefTensor x = randomTensor(rng, {8}, c.lo, c.hi);
    // Keep clip's inputs off its bounds.
    for (double &v : x.data)
      if (std::fabs(v + 0.5) < 0.05 || std::fabs(v - 1.05) < 0.05)
        v += 0.2;
    RefTensor w = randomTensor(rng, {8});
    check(forward, {x, w}, backward, {x, w}, {0});
  }
}

TEST_F(ReferenceBackwardOpTest, SoftmaxGrad) {
  RefTensor x = randomTensor(rng, {2, 3, 2}), w = randomTensor(rng, {2, 3, 2});
  for (bool log : {false, true}) {
    SCOPED_TRACE(log ? "log_softmax" : "softmax");
    std::string op = log ? "mpt.log_softmax" : "mpt.softmax";
    std::string forward = projectedFunction(
        "%x: tensor<2x3x2xf32>",
        "  %y = " + op + " %x {axis = 1 : i64} : tensor<2x3x2xf32>",
        "tensor<2x3x2xf32>");
    std::string backward =
        substitute(R"mlir(
func.func @g(%x: tensor<2x3x2xf32>, %w: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %y = $OP %x {axis = 1 : i64} : tensor<2x3x2xf32>
  %dx = "mpt.softmax_grad"(%y, %w) {axis = 1 : i64, log = $LOG} : (tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  return %dx : tensor<2x3x2xf32>
}
)mlir",
                   {{"OP", op}, {"LOG", log ? "true" : "false"}});
    check(forward, {x, w}, backward, {x, w}, {0});
  }
}

TEST_F(ReferenceBackwardOpTest, LayerNormGrad) {
  RefTensor x = randomTensor(rng, {2, 2, 3}), s = randomTensor(rng, {2, 3}),
            b = randomTensor(rng, {2, 3}), w = randomTensor(rng, {2, 2, 3});
  std::string forward = projectedFunction(
      "%x: tensor<2x2x3xf32>, %s: tensor<2x3xf32>, %b: tensor<2x3xf32>",
      "  %y, %m, %r = mpt.layer_norm %x, %s, %b {axis = 1 : i64} : "
      "(tensor<2x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> "
      "(tensor<2x2x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)",
      "tensor<2x2x3xf32>");
  check(forward, {x, s, b, w}, R"mlir(
func.func @g(%x: tensor<2x2x3xf32>, %s: tensor<2x3xf32>, %b: tensor<2x3xf32>, %w: tensor<2x2x3xf32>)
    -> (tensor<2x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %y, %m, %r = mpt.layer_norm %x, %s, %b {axis = 1 : i64} : (tensor<2x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x2x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %dx, %ds, %db = "mpt.layer_norm_grad"(%x, %s, %m, %r, %w) {axis = 1 : i64} : (tensor<2x2x3xf32>, tensor<2x3xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>, tensor<2x2x3xf32>) -> (tensor<2x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return %dx, %ds, %db : tensor<2x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
)mlir",
        {x, s, b, w}, {0, 1, 2});
}

TEST_F(ReferenceBackwardOpTest, BatchNormGrad) {
  RefTensor x = randomTensor(rng, {3, 2, 2}), s = randomTensor(rng, {2}),
            b = randomTensor(rng, {2}), w = randomTensor(rng, {3, 2, 2});
  RefTensor rm = randomTensor(rng, {2}), rv = randomTensor(rng, {2}, 0.5, 2);
  std::string forward = projectedFunction(
      "%x: tensor<3x2x2xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, "
      "%rm: tensor<2xf32>, %rv: tensor<2xf32>",
      "  %y, %m, %v = mpt.batch_norm_train %x, %s, %b, %rm, %rv : "
      "(tensor<3x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, "
      "tensor<2xf32>) -> (tensor<3x2x2xf32>, tensor<2xf32>, tensor<2xf32>)",
      "tensor<3x2x2xf32>");
  check(forward, {x, s, b, rm, rv, w}, R"mlir(
func.func @g(%x: tensor<3x2x2xf32>, %s: tensor<2xf32>, %w: tensor<3x2x2xf32>) -> (tensor<3x2x2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %dx, %ds, %db = "mpt.batch_norm_grad"(%x, %s, %w) : (tensor<3x2x2xf32>, tensor<2xf32>, tensor<3x2x2xf32>) -> (tensor<3x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %dx, %ds, %db : tensor<3x2x2xf32>, tensor<2xf32>, tensor<2xf32>
}
)mlir",
        {x, s, w}, {0, 1, 2});
}

TEST_F(ReferenceBackwardOpTest, SoftmaxCrossEntropyLossGrad) {
  RefTensor x = randomTensor(rng, {3, 4, 2});
  RefTensor labels = T({3, 2}, {0, 3, 2, -1, 1, 3});
  RefTensor weights = randomTensor(rng, {4}, 0.5, 2);
  for (std::string reduction : {"mean", "sum", "none"}) {
    SCOPED_TRACE(reduction);
    bool none = reduction == "none";
    std::string lossType = none ? "tensor<3x2xf32>" : "tensor<f32>";
    std::string forward = projectedFunction(
        "%x: tensor<3x4x2xf32>, %t: tensor<3x2xi64>, %c: tensor<4xf32>",
        substitute(
            "  %y, %lp = mpt.softmax_cross_entropy_loss %x, %t, %c "
            "{reduction = #mpt.reduction<$RED>, ignore_index = -1 : i64} : "
            "(tensor<3x4x2xf32>, tensor<3x2xi64>, tensor<4xf32>) -> "
            "($LT, tensor<3x4x2xf32>)",
            {{"RED", reduction}, {"LT", lossType}}),
        lossType);
    std::string backward = substitute(R"mlir(
func.func @g(%x: tensor<3x4x2xf32>, %t: tensor<3x2xi64>, %c: tensor<4xf32>, %w: $LT) -> tensor<3x4x2xf32> {
  %l, %lp = mpt.softmax_cross_entropy_loss %x, %t, %c {reduction = #mpt.reduction<$RED>, ignore_index = -1 : i64} : (tensor<3x4x2xf32>, tensor<3x2xi64>, tensor<4xf32>) -> ($LT, tensor<3x4x2xf32>)
  %dx = "mpt.softmax_cross_entropy_loss_grad"(%lp, %t, %c, %w) {reduction = #mpt.reduction<$RED>, ignore_index = -1 : i64} : (tensor<3x4x2xf32>, tensor<3x2xi64>, tensor<4xf32>, $LT) -> tensor<3x4x2xf32>
  return %dx : tensor<3x4x2xf32>
}
)mlir",
                                      {{"RED", reduction}, {"LT", lossType}});
    RefTensor w = none ? randomTensor(rng, {3, 2}) : RefTensor::scalar(1.7);
    check(forward, {x, labels, weights, w}, backward, {x, labels, weights, w},
          {0});
  }
}

TEST_F(ReferenceBackwardOpTest, NllLossGrad) {
  RefTensor x = randomTensor(rng, {4, 3});
  RefTensor labels = T({4}, {2, 0, 1, 2});
  RefTensor weights = randomTensor(rng, {3}, 0.5, 2);
  RefTensor w = RefTensor::scalar(0.7);
  std::string forward = projectedFunction(
      "%x: tensor<4x3xf32>, %t: tensor<4xi64>, %c: tensor<3xf32>",
      "  %y = mpt.nll_loss %x, %t, %c : (tensor<4x3xf32>, tensor<4xi64>, "
      "tensor<3xf32>) -> tensor<f32>",
      "tensor<f32>");
  check(forward, {x, labels, weights, w}, R"mlir(
func.func @g(%t: tensor<4xi64>, %c: tensor<3xf32>, %w: tensor<f32>) -> tensor<4x3xf32> {
  %dx = "mpt.nll_loss_grad"(%t, %c, %w) : (tensor<4xi64>, tensor<3xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %dx : tensor<4x3xf32>
}
)mlir",
        {labels, weights, w}, {0});
}

TEST_F(ReferenceBackwardOpTest, GatherGrad) {
  RefTensor x = randomTensor(rng, {3, 4}), w = randomTensor(rng, {3, 2, 2});
  RefTensor indices = T({2, 2}, {1, -1, 1, 0});
  std::string forward = projectedFunction(
      "%x: tensor<3x4xf32>, %i: tensor<2x2xi64>",
      "  %y = mpt.gather %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, "
      "tensor<2x2xi64>) -> tensor<3x2x2xf32>",
      "tensor<3x2x2xf32>");
  check(forward, {x, indices, w}, R"mlir(
func.func @g(%i: tensor<2x2xi64>, %w: tensor<3x2x2xf32>) -> tensor<3x4xf32> {
  %dx = "mpt.gather_grad"(%i, %w) {axis = 1 : i64} : (tensor<2x2xi64>, tensor<3x2x2xf32>) -> tensor<3x4xf32>
  return %dx : tensor<3x4xf32>
}
)mlir",
        {indices, w}, {0});
}

TEST_F(ReferenceBackwardOpTest, SliceGrad) {
  RefTensor x = randomTensor(rng, {3, 4}), w = randomTensor(rng, {2, 2});
  const char *attrs = "starts = array<i64: 2, 0>, ends = array<i64: -1, 4>, "
                      "steps = array<i64: -2, 2>";
  std::string forward = projectedFunction(
      "%x: tensor<3x4xf32>",
      substitute("  %y = mpt.slice %x {$ATTRS} : (tensor<3x4xf32>) -> "
                 "tensor<2x2xf32>",
                 {{"ATTRS", attrs}}),
      "tensor<2x2xf32>");
  check(forward, {x, w},
        substitute(R"mlir(
func.func @g(%w: tensor<2x2xf32>) -> tensor<3x4xf32> {
  %dx = "mpt.slice_grad"(%w) {$ATTRS} : (tensor<2x2xf32>) -> tensor<3x4xf32>
  return %dx : tensor<3x4xf32>
}
)mlir",
                   {{"ATTRS", attrs}}),
        {w}, {0});
}

TEST_F(ReferenceBackwardOpTest, PoolingGrads) {
  RefTensor x = randomTensor(rng, {1, 2, 4, 5}),
            w = randomTensor(rng, {1, 2, 3, 3});
  std::string window = "kernel_shape = array<i64: 2, 3>, strides = array<i64: "
                       "2, 2>, pads = array<i64: 1, 1, 1, 1>";
  std::string maxAttrs = window + ", dilations = array<i64: 1, 1>";
  std::string forward = projectedFunction(
      "%x: tensor<1x2x4x5xf32>",
      substitute("  %y = mpt.max_pool %x {$ATTRS} : (tensor<1x2x4x5xf32>) "
                 "-> tensor<1x2x3x3xf32>",
                 {{"ATTRS", maxAttrs}}),
      "tensor<1x2x3x3xf32>");
  check(forward, {x, w},
        substitute(R"mlir(
func.func @g(%x: tensor<1x2x4x5xf32>, %w: tensor<1x2x3x3xf32>) -> tensor<1x2x4x5xf32> {
  %dx = "mpt.max_pool_grad"(%x, %w) {$ATTRS} : (tensor<1x2x4x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x4x5xf32>
  return %dx : tensor<1x2x4x5xf32>
}
)mlir",
                   {{"ATTRS", maxAttrs}}),
        {x, w}, {0});

  for (std::string countPad : {"false", "true"}) {
    SCOPED_TRACE("count_include_pad = " + countPad);
    std::string avgAttrs = window + ", count_include_pad = " + countPad;
    std::string forward = projectedFunction(
        "%x: tensor<1x2x4x5xf32>",
        substitute("  %y = mpt.average_pool %x {$ATTRS} : "
                   "(tensor<1x2x4x5xf32>) -> tensor<1x2x3x3xf32>",
                   {{"ATTRS", avgAttrs}}),
        "tensor<1x2x3x3xf32>");
    check(forward, {x, w},
          substitute(R"mlir(
func.func @g(%w: tensor<1x2x3x3xf32>) -> tensor<1x2x4x5xf32> {
  %dx = "mpt.average_pool_grad"(%w) {$ATTRS} : (tensor<1x2x3x3xf32>) -> tensor<1x2x4x5xf32>
  return %dx : tensor<1x2x4x5xf32>
}
)mlir",
                     {{"ATTRS", avgAttrs}}),
          {w}, {0});
  }
}

TEST_F(ReferenceBackwardOpTest, ConvGrads) {
  // Two groups; strided, asymmetrically padded and dilated.
  RefTensor x = randomTensor(rng, {2, 4, 5, 4}),
            k = randomTensor(rng, {6, 2, 2, 2}),
            w = randomTensor(rng, {2, 6, 2, 4});
  std::string attrs = "strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 0, "
                      "1>, dilations = array<i64: 2, 1>, group = 2 : i64";
  std::string forward = projectedFunction(
      "%x: tensor<2x4x5x4xf32>, %k: tensor<6x2x2x2xf32>",
      substitute("  %y = mpt.conv %x, %k {$ATTRS} : (tensor<2x4x5x4xf32>, "
                 "tensor<6x2x2x2xf32>) -> tensor<2x6x2x4xf32>",
                 {{"ATTRS", attrs}}),
      "tensor<2x6x2x4xf32>");
  check(forward, {x, k, w},
        substitute(R"mlir(
func.func @g(%x: tensor<2x4x5x4xf32>, %k: tensor<6x2x2x2xf32>, %w: tensor<2x6x2x4xf32>) -> (tensor<2x4x5x4xf32>, tensor<6x2x2x2xf32>) {
  %dx = "mpt.conv_grad_input"(%w, %k) {$ATTRS} : (tensor<2x6x2x4xf32>, tensor<6x2x2x2xf32>) -> tensor<2x4x5x4xf32>
  %dk = "mpt.conv_grad_weight"(%x, %w) {$ATTRS} : (tensor<2x4x5x4xf32>, tensor<2x6x2x4xf32>) -> tensor<6x2x2x2xf32>
  return %dx, %dk : tensor<2x4x5x4xf32>, tensor<6x2x2x2xf32>
}
)mlir",
                   {{"ATTRS", attrs}}),
        {x, k, w}, {0, 1});
}

class ReferenceTrainingOpTest : public InterpreterTest {};

TEST_F(ReferenceTrainingOpTest, LossScalingOps) {
  double inf = INFINITY;
  auto results = run(R"mlir(
func.func @f(%l: tensor<f32>, %s: tensor<f32>, %g: tensor<2xf32>, %h: tensor<2xbf16>, %bad: tensor<2xf32>)
    -> (tensor<f32>, tensor<2xf32>, tensor<i1>, tensor<i1>, tensor<f32>, tensor<2xf32>, tensor<f32>) {
  %0 = "mpt.scale_loss"(%l, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %1 = "mpt.unscale"(%g, %s) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %2 = "mpt.all_finite"(%g, %h) : (tensor<2xf32>, tensor<2xbf16>) -> tensor<i1>
  %3 = "mpt.all_finite"(%g, %bad) : (tensor<2xf32>, tensor<2xf32>) -> tensor<i1>
  %4 = "mpt.global_norm"(%g, %h) : (tensor<2xf32>, tensor<2xbf16>) -> tensor<f32>
  %5 = "mpt.clip_by_norm"(%g, %4) {max_norm = 1.0 : f64} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %6 = "mpt.amax"(%g) : (tensor<2xf32>) -> tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<f32>, tensor<2xf32>, tensor<i1>, tensor<i1>, tensor<f32>, tensor<2xf32>, tensor<f32>
}
)mlir",
                     {RefTensor::scalar(3), RefTensor::scalar(4),
                      T({2}, {-8, 4}), T({2}, {1, 2}), T({2}, {1, inf})});
  ASSERT_EQ(results.size(), 7u);
  expectTensor(results[0], {}, {12});
  expectTensor(results[1], {2}, {-2, 1});
  expectTensor(results[2], {}, {1});
  expectTensor(results[3], {}, {0});
  expectTensor(results[4], {}, {std::sqrt(85.0)});
  double c = 1.0 / (std::sqrt(85.0) + 1e-6);
  expectTensor(results[5], {2}, {-8 * c, 4 * c});
  expectTensor(results[6], {}, {8});
}

TEST_F(ReferenceTrainingOpTest, OptimizerOps) {
  auto results = run(R"mlir(
func.func @f(%p: tensor<2xf32>, %g: tensor<2xf32>, %b: tensor<2xf32>, %step: tensor<i64>, %lr: tensor<f32>, %ok: tensor<i1>, %no: tensor<i1>)
    -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<i64>) {
  %0, %1 = "mpt.sgd_update"(%p, %g, %b, %step, %lr, %ok) {momentum = 0.5 : f64, weight_decay = 0.1 : f64} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2xf32>, tensor<2xf32>)
  %2 = "mpt.sgd_update"(%p, %g, %step, %lr, %no) : (tensor<2xf32>, tensor<2xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> tensor<2xf32>
  %3, %4, %5 = "mpt.adamw_update"(%p, %g, %b, %b, %step, %lr, %ok) {weight_decay = 0.0 : f64, eps = 0.0 : f64} : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i64>, tensor<f32>, tensor<i1>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  %6 = "mpt.advance_step"(%step, %no) : (tensor<i64>, tensor<i1>) -> tensor<i64>
  %7, %8 = "mpt.update_loss_scale"(%lr, %step, %ok) {growth_interval = 4 : i64} : (tensor<f32>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>)
  return %0, %1, %2, %3, %5, %6, %step, %7, %8 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<i64>, tensor<i64>, tensor<f32>, tensor<i64>
}
)mlir",
                     {T({2}, {1, -2}), T({2}, {0.5, 1}), T({2}, {2, 0}),
                      RefTensor::scalar(3), RefTensor::scalar(0.1),
                      RefTensor::scalar(1), RefTensor::scalar(0)});
  ASSERT_EQ(results.size(), 9u);
  // g = grad + 0.1 p = {0.6, 0.8}; buf = 0.5 buf + g = {1.6, 0.8}.
  expectTensor(results[1], {2}, {1.6, 0.8});
  expectTensor(results[0], {2}, {1 - 0.16, -2 - 0.08});
  expectTensor(results[2], {2}, {1, -2});
  // AdamW at t = 4 with both moments starting at {2, 0}.
  double t = 4, m0 = 0.9 * 2 + 0.1 * 0.5, v0 = 0.999 * 2 + 0.001 * 0.25;
  double step = 0.1 / (1 - std::pow(0.9, t)),
         c2 = std::sqrt(1 - std::pow(0.999, t));
  double m1 = 0.1, v1 = 0.001;
  expectTensor(results[3], {2},
               {1 - step * m0 / (std::sqrt(v0) / c2),
                -2 - step * m1 / (std::sqrt(v1) / c2)});
  expectTensor(results[4], {2}, {v0, v1});
  expectTensor(results[5], {}, {3});
  // Tracker 3 + 1 reaches the interval: the scale doubles and it resets.
  expectTensor(results[7], {}, {0.2});
  expectTensor(results[8], {}, {0});
}

} // namespace
