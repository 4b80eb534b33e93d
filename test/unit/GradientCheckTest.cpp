//===- GradientCheckTest.cpp - gradient rules vs. finite differences ------===//
//
// Each case is one op with a gradient rule inside `reduce_sum(op(x...) * w)`
// (w a random projection, so every output element counts). Autodiff appends
// the gradients (mpt::appendGradients); the float64 reference interpreter
// evaluates them and central differences of the untouched function, and the
// two must agree to 1e-6 relative plus 1e-9 absolute. Inputs are random
// from a fixed seed, away from the kinks of relu, abs, clip and max (ties of
// max and min are a case of their own: there both split the gradient, as
// central differences do).
//
// Every op of the dialect that implements GradientOpInterface must have a
// case: coverage cannot shrink silently.
//
//===----------------------------------------------------------------------===//
#include "FiniteDifferences.h"
#include "InterpreterTestSupport.h"
#include "UnaryOracle.h"

#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Interfaces/GradientOpInterface.h"
#include "mpt/Transforms/Autodiff.h"

#include "mlir/IR/Verifier.h"

#include <cmath>
#include <set>

using namespace mlir;
using namespace mpt::ref;

namespace {

/// How to fill one argument (its shape comes from the signature).
struct Input {
  double lo = -2, hi = 2;
  /// Points (kinks) kept at least 0.05 away.
  std::vector<double> avoid = {0};
  std::optional<std::vector<double>> fixed;
  std::optional<unsigned> sameAs; // a copy of an earlier argument
};

Input uniform(double lo, double hi, std::vector<double> avoid = {0}) {
  Input in;
  in.lo = lo;
  in.hi = hi;
  in.avoid = std::move(avoid);
  return in;
}
Input fixed(std::vector<double> values) {
  Input in;
  in.fixed = std::move(values);
  return in;
}
Input sameAs(unsigned index) {
  Input in;
  in.sameAs = index;
  return in;
}

struct Arg {
  std::string name, type;
  Input input = {};
  /// Float operands the op's rule treats as constants (class weights,
  /// running statistics, loss and quantization scales): not checked.
  bool constant = false;
};

struct GradientCase {
  std::string name; // unique, "<op>" or "<op>/<variant>"
  std::string op;   // the op whose rule the case checks, "mpt.add"
  std::vector<Arg> args;
  std::string body; // defines the outputs from the args
  std::vector<std::pair<std::string, std::string>> outputs;
};

void PrintTo(const GradientCase &gc, std::ostream *os) { *os << gc.name; }

std::string argList(const std::vector<Arg> &args) {
  std::string text;
  for (const Arg &a : args)
    text += (text.empty() ? "" : ", ") + a.name + ": " + a.type;
  return text;
}

Arg constantArg(std::string name, std::string type) {
  Arg a{std::move(name), std::move(type)};
  a.constant = true;
  return a;
}

/// The cases, one or more per op with a rule.
std::vector<GradientCase> gradientCases() {
  const std::string t23 = "tensor<2x3xf32>";
  std::vector<GradientCase> cases;
  auto add = [&](GradientCase gc) { cases.push_back(std::move(gc)); };
  auto unary = [&](std::string op, std::string name, std::string attrs,
                   Input input) {
    add({name,
         op,
         {{"%x", t23, input}},
         "  %y = " + op + " %x" + attrs + " : " + t23,
         {{"%y", t23}}});
  };

  // Identity-like and conversions.
  unary("mpt.identity", "mpt.identity", "", {});
  add({"mpt.cast",
       "mpt.cast",
       {{"%x", t23}},
       "  %h = mpt.cast %x : tensor<2x3xf32> to tensor<2x3xbf16>\n"
       "  %y = mpt.cast %h : tensor<2x3xbf16> to tensor<2x3xf32>",
       {{"%y", t23}}});
  add({"mpt.quantize",
       "mpt.quantize",
       {{"%x", t23}, constantArg("%s", "tensor<f32>")},
       "  %q = mpt.quantize %x, %s : (tensor<2x3xf32>, tensor<f32>) -> "
       "tensor<2x3xf8E4M3FN>\n"
       "  %y = mpt.cast %q : tensor<2x3xf8E4M3FN> to tensor<2x3xf32>",
       {{"%y", t23}}});
  add({"mpt.dropout",
       "mpt.dropout",
       {{"%x", t23}},
       "  %y, %m = mpt.dropout %x {ratio = 0.3 : f32} : tensor<2x3xf32> -> "
       "tensor<2x3xf32>, tensor<2x3xi1>",
       {{"%y", t23}}});

  // Unary functions.
  // Every op generated from MPTUnaryFunctions.td (a kernel without
  // attributes whose rule is unary_grad, or zero for the piecewise-constant
  // ones), on inputs in its domain away from its kinks and steps.
  for (const mptrt::oracle::UnaryFunctionInfo &u :
       mptrt::oracle::unaryFunctions())
    if (u.kernel && !u.attrs && (u.grad || u.zeroGrad)) {
      std::vector<double> avoid = u.kinks;
      avoid.push_back(0);
      unary(std::string("mpt.") + u.kind, std::string("mpt.") + u.kind, "",
            u.positive ? uniform(0.3, 3)
                       : uniform(-u.width(2), u.width(2), avoid));
    }
  // Float parameters away from their defaults reach the rule.
  unary("mpt.selu", "mpt.selu/params",
        " {alpha = 1.5 : f32, gamma = 0.75 : f32}", {});
  unary("mpt.hard_sigmoid", "mpt.hard_sigmoid/params",
        " {alpha = 0.5 : f32, beta = 0.6 : f32}", uniform(-2, 2, {-1.2, 0.8}));
  unary("mpt.neg", "mpt.neg", "", {});
  unary("mpt.leaky_relu", "mpt.leaky_relu", " {alpha = 0.2 : f32}", {});
  unary("mpt.gelu", "mpt.gelu", "", uniform(-3, 3));
  unary("mpt.gelu", "mpt.gelu/tanh",
        " {approximate = #mpt.gelu_approximate<tanh>}", uniform(-3, 3));
  unary("mpt.clip", "mpt.clip", " {min = -1.0 : f64, max = 0.5 : f64}",
        uniform(-2, 2, {-1, 0.5}));
  unary("mpt.clip", "mpt.clip/min-only", " {min = -0.5 : f64}",
        uniform(-2, 2, {-0.5}));
  add({"mpt.trilu",
       "mpt.trilu",
       {{"%x", "tensor<2x3x4xf32>"}},
       "  %y = mpt.trilu %x {k = 1 : i64} : tensor<2x3x4xf32>",
       {{"%y", "tensor<2x3x4xf32>"}}});
  add({"mpt.trilu/lower",
       "mpt.trilu",
       {{"%x", "tensor<3x4xf32>"}},
       "  %y = mpt.trilu %x {upper = false, k = -1 : i64} : tensor<3x4xf32>",
       {{"%y", "tensor<3x4xf32>"}}});

  // Broadcasting arithmetic: the rhs broadcasts along axis 0, so its
  // gradient is a sum.
  auto binary = [&](std::string op, Input lhs, Input rhs,
                    std::string variant = "",
                    std::string rhsType = "tensor<3xf32>") {
    add({op + variant,
         op,
         {{"%a", t23, lhs}, {"%b", rhsType, rhs}},
         "  %y = " + op + " %a, %b : (tensor<2x3xf32>, " + rhsType +
             ") -> tensor<2x3xf32>",
         {{"%y", t23}}});
  };
  binary("mpt.add", {}, {});
  binary("mpt.sub", {}, {});
  binary("mpt.mul", {}, {}, "", "tensor<2x1xf32>");
  binary("mpt.div", {}, uniform(0.5, 2));
  binary("mpt.div", {}, uniform(-2, -0.5), "/negative-divisor",
         "tensor<2x1xf32>");
  binary("mpt.pow", uniform(0.5, 2), uniform(-2, 2));
  binary("mpt.max", {}, {});
  binary("mpt.min", {}, {}, "", "tensor<2x1xf32>");
  // At a tie the gradient splits in half, as the central difference does.
  binary("mpt.max", {}, sameAs(0), "/tie", t23);
  binary("mpt.min", {}, sameAs(0), "/tie", t23);
  add({"mpt.pow/integer-exponent",
       "mpt.pow",
       {{"%a", t23, uniform(0.5, 2)},
        {"%e", "tensor<3xi64>", fixed({2, 3, -1})}},
       "  %y = mpt.pow %a, %e : (tensor<2x3xf32>, tensor<3xi64>) -> "
       "tensor<2x3xf32>",
       {{"%y", t23}}});
  add({"mpt.where",
       "mpt.where",
       {{"%c", "tensor<2x3xi1>", fixed({1, 0, 0, 1, 1, 0})},
        {"%a", t23},
        {"%b", "tensor<3xf32>"}},
       "  %y = mpt.where %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, "
       "tensor<3xf32>) -> tensor<2x3xf32>",
       {{"%y", t23}}});

  // Contractions.
  auto matmul = [&](std::string variant, std::string a, std::string b,
                    std::string y) {
    add({"mpt.matmul" + variant,
         "mpt.matmul",
         {{"%a", a}, {"%b", b}},
         "  %y = mpt.matmul %a, %b : (" + a + ", " + b + ") -> " + y,
         {{"%y", y}}});
  };
  matmul("", "tensor<2x3x4xf32>", "tensor<4x5xf32>", "tensor<2x3x5xf32>");
  matmul("/batch-broadcast", "tensor<3x1x2x4xf32>", "tensor<2x4x3xf32>",
         "tensor<3x2x2x3xf32>");
  matmul("/vector-lhs", "tensor<4xf32>", "tensor<2x4x3xf32>",
         "tensor<2x3xf32>");
  matmul("/vector-rhs", "tensor<2x3x4xf32>", "tensor<4xf32>",
         "tensor<2x3xf32>");
  matmul("/dot", "tensor<4xf32>", "tensor<4xf32>", "tensor<f32>");
  auto gemm = [&](std::string variant, std::string a, std::string b,
                  std::string cType, std::string attrs) {
    std::vector<Arg> args = {{"%a", a}, {"%b", b}};
    std::string operands = "%a, %b", types = a + ", " + b;
    if (!cType.empty()) {
      args.push_back({"%c", cType});
      operands += ", %c";
      types += ", " + cType;
    }
    add({"mpt.gemm" + variant,
         "mpt.gemm",
         args,
         "  %y = mpt.gemm " + operands + " {" + attrs + "} : (" + types +
             ") -> tensor<3x5xf32>",
         {{"%y", "tensor<3x5xf32>"}}});
  };
  gemm("", "tensor<3x4xf32>", "tensor<4x5xf32>", "tensor<5xf32>",
       "alpha = 0.7 : f32, beta = 1.3 : f32");
  gemm("/transposed-matrix-c", "tensor<4x3xf32>", "tensor<5x4xf32>",
       "tensor<3x5xf32>", "trans_a = true, trans_b = true");
  gemm("/no-c", "tensor<3x4xf32>", "tensor<5x4xf32>", "", "trans_b = true");
  gemm("/column-c", "tensor<4x3xf32>", "tensor<4x5xf32>", "tensor<3x1xf32>",
       "trans_a = true, alpha = -0.5 : f32");
  gemm("/scalar-c", "tensor<3x4xf32>", "tensor<4x5xf32>", "tensor<f32>",
       "beta = 0.5 : f32");
  add({"mpt.conv",
       "mpt.conv",
       {{"%x", "tensor<2x4x5x4xf32>"},
        {"%k", "tensor<6x2x2x2xf32>"},
        {"%bias", "tensor<6xf32>"}},
       "  %y = mpt.conv %x, %k, %bias {strides = array<i64: 2, 1>, pads = "
       "array<i64: 1, 0, 0, 1>, dilations = array<i64: 2, 1>, group = 2 : "
       "i64} : (tensor<2x4x5x4xf32>, tensor<6x2x2x2xf32>, tensor<6xf32>) -> "
       "tensor<2x6x2x4xf32>",
       {{"%y", "tensor<2x6x2x4xf32>"}}});
  add({"mpt.conv/1d",
       "mpt.conv",
       {{"%x", "tensor<2x3x7xf32>"}, {"%k", "tensor<2x3x3xf32>"}},
       "  %y = mpt.conv %x, %k {strides = array<i64: 2>, pads = array<i64: "
       "1, 1>, dilations = array<i64: 1>} : (tensor<2x3x7xf32>, "
       "tensor<2x3x3xf32>) -> tensor<2x2x4xf32>",
       {{"%y", "tensor<2x2x4xf32>"}}});

  // Pooling.
  const std::string window = "kernel_shape = array<i64: 2, 3>, strides = "
                             "array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>";
  add({"mpt.max_pool",
       "mpt.max_pool",
       {{"%x", "tensor<1x2x4x5xf32>"}},
       "  %y = mpt.max_pool %x {" + window +
           ", dilations = array<i64: 1, 1>} : (tensor<1x2x4x5xf32>) -> "
           "tensor<1x2x3x3xf32>",
       {{"%y", "tensor<1x2x3x3xf32>"}}});
  add({"mpt.max_pool/ceil-dilated",
       "mpt.max_pool",
       {{"%x", "tensor<1x1x6x6xf32>"}},
       "  %y = mpt.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = "
       "array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = "
       "array<i64: 2, 1>, ceil_mode = true} : (tensor<1x1x6x6xf32>) -> "
       "tensor<1x1x3x3xf32>",
       {{"%y", "tensor<1x1x3x3xf32>"}}});
  for (std::string countPad : {"false", "true"})
    add({"mpt.average_pool/count_include_pad=" + countPad,
         "mpt.average_pool",
         {{"%x", "tensor<1x2x4x5xf32>"}},
         "  %y = mpt.average_pool %x {" + window + ", count_include_pad = " +
             countPad + "} : (tensor<1x2x4x5xf32>) -> tensor<1x2x3x3xf32>",
         {{"%y", "tensor<1x2x3x3xf32>"}}});
  add({"mpt.average_pool/ceil",
       "mpt.average_pool",
       {{"%x", "tensor<1x1x5x5xf32>"}},
       "  %y = mpt.average_pool %x {kernel_shape = array<i64: 2, 2>, strides "
       "= array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} "
       ": (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>",
       {{"%y", "tensor<1x1x3x3xf32>"}}});
  add({"mpt.global_average_pool",
       "mpt.global_average_pool",
       {{"%x", "tensor<2x3x2x2xf32>"}},
       "  %y = mpt.global_average_pool %x : (tensor<2x3x2x2xf32>) -> "
       "tensor<2x3x1x1xf32>",
       {{"%y", "tensor<2x3x1x1xf32>"}}});

  // Normalisation and softmax.
  add({"mpt.batch_norm",
       "mpt.batch_norm",
       {{"%x", "tensor<2x3x2xf32>"},
        {"%s", "tensor<3xf32>"},
        {"%b", "tensor<3xf32>"},
        constantArg("%m", "tensor<3xf32>"),
        constantArg("%v", "tensor<3xf32>")},
       "  %y = mpt.batch_norm %x, %s, %b, %m, %v : (tensor<2x3x2xf32>, "
       "tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> "
       "tensor<2x3x2xf32>",
       {{"%y", "tensor<2x3x2xf32>"}}});
  cases.back().args[4].input = uniform(0.5, 2);
  add({"mpt.batch_norm_train",
       "mpt.batch_norm_train",
       {{"%x", "tensor<4x3x2xf32>"},
        {"%s", "tensor<3xf32>"},
        {"%b", "tensor<3xf32>"},
        {"%rm", "tensor<3xf32>"},
        {"%rv", "tensor<3xf32>", uniform(0.5, 2)}},
       "  %y, %nm, %nv = mpt.batch_norm_train %x, %s, %b, %rm, %rv : "
       "(tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
       "tensor<3xf32>) -> (tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>)",
       {{"%y", "tensor<4x3x2xf32>"}}});
  add({"mpt.layer_norm",
       "mpt.layer_norm",
       {{"%x", "tensor<2x3x4xf32>"},
        {"%s", "tensor<3x4xf32>"},
        {"%b", "tensor<3x4xf32>"}},
       "  %y, %m, %r = mpt.layer_norm %x, %s, %b {axis = 1 : i64} : "
       "(tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> "
       "(tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)",
       {{"%y", "tensor<2x3x4xf32>"}}});
  add({"mpt.layer_norm/last-axis-no-bias",
       "mpt.layer_norm",
       {{"%x", "tensor<3x5xf32>"}, {"%s", "tensor<5xf32>"}},
       "  %y, %m, %r = mpt.layer_norm %x, %s {axis = 1 : i64, epsilon = "
       "0.001 : f32} : (tensor<3x5xf32>, tensor<5xf32>) -> (tensor<3x5xf32>, "
       "tensor<3x1xf32>, tensor<3x1xf32>)",
       {{"%y", "tensor<3x5xf32>"}}});
  add({"mpt.softmax",
       "mpt.softmax",
       {{"%x", "tensor<2x3x4xf32>"}},
       "  %y = mpt.softmax %x {axis = 1 : i64} : tensor<2x3x4xf32>",
       {{"%y", "tensor<2x3x4xf32>"}}});
  add({"mpt.log_softmax",
       "mpt.log_softmax",
       {{"%x", "tensor<2x3x4xf32>"}},
       "  %y = mpt.log_softmax %x {axis = 2 : i64} : tensor<2x3x4xf32>",
       {{"%y", "tensor<2x3x4xf32>"}}});

  // Fused attention: query, key and value carry gradients; the additive
  // mask is a constant of the step.
  add({"mpt.attention",
       "mpt.attention",
       {{"%q", "tensor<2x3x4xf32>"},
        {"%k", "tensor<2x5x4xf32>"},
        {"%v", "tensor<2x5x3xf32>"}},
       "  %y, %lse = mpt.attention %q, %k, %v {scale = 0.5 : f32} : "
       "(tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32>) -> "
       "(tensor<2x3x3xf32>, tensor<2x3xf32>)",
       {{"%y", "tensor<2x3x3xf32>"}}});
  add({"mpt.attention/mask",
       "mpt.attention",
       {{"%q", "tensor<2x2x3x4xf32>"},
        {"%k", "tensor<2x2x3x4xf32>"},
        {"%v", "tensor<2x2x3x2xf32>"},
        constantArg("%m", "tensor<1x3x3xf32>")},
       "  %y, %lse = mpt.attention %q, %k, %v, %m {scale = 0.35 : f32} : "
       "(tensor<2x2x3x4xf32>, tensor<2x2x3x4xf32>, tensor<2x2x3x2xf32>, "
       "tensor<1x3x3xf32>) -> (tensor<2x2x3x2xf32>, tensor<2x2x3xf32>)",
       {{"%y", "tensor<2x2x3x2xf32>"}}});

  // Losses: class weights are constants; labels are integers.
  for (std::string reduction : {"mean", "sum", "none"}) {
    std::string lossType =
        reduction == "none" ? "tensor<3x2xf32>" : "tensor<f32>";
    add({"mpt.softmax_cross_entropy_loss/" + reduction,
         "mpt.softmax_cross_entropy_loss",
         {{"%x", "tensor<3x4x2xf32>"},
          {"%t", "tensor<3x2xi64>", fixed({0, 3, 2, -1, 1, 3})},
          constantArg("%cw", "tensor<4xf32>")},
         "  %l, %lp = mpt.softmax_cross_entropy_loss %x, %t, %cw {reduction "
         "= #mpt.reduction<" +
             reduction +
             ">, ignore_index = -1 : i64} : (tensor<3x4x2xf32>, "
             "tensor<3x2xi64>, tensor<4xf32>) -> (" +
             lossType + ", tensor<3x4x2xf32>)",
         {{"%l", lossType}, {"%lp", "tensor<3x4x2xf32>"}}});
    cases.back().args[2].input = uniform(0.5, 2);
    add({"mpt.nll_loss/" + reduction,
         "mpt.nll_loss",
         {{"%x", "tensor<4x3xf32>"},
          {"%t", "tensor<4xi64>", fixed({2, 0, 1, 2})},
          constantArg("%cw", "tensor<3xf32>")},
         "  %y = mpt.nll_loss %x, %t, %cw {reduction = #mpt.reduction<" +
             reduction +
             ">} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> " +
             (reduction == "none" ? "tensor<4xf32>" : "tensor<f32>"),
         {{"%y", reduction == "none" ? "tensor<4xf32>" : "tensor<f32>"}}});
    cases.back().args[2].input = uniform(0.5, 2);
  }
  add({"mpt.softmax_cross_entropy_loss/unweighted-2d",
       "mpt.softmax_cross_entropy_loss",
       {{"%x", "tensor<4x3xf32>"},
        {"%t", "tensor<4xi32>", fixed({2, 0, 1, 1})}},
       "  %l, %lp = mpt.softmax_cross_entropy_loss %x, %t : (tensor<4x3xf32>, "
       "tensor<4xi32>) -> (tensor<f32>, tensor<4x3xf32>)",
       {{"%l", "tensor<f32>"}}});

  // Reductions.
  auto reduce = [&](std::string op, std::string variant, std::string attrs,
                    std::string y) {
    add({op + variant,
         op,
         {{"%x", "tensor<2x3x4xf32>"}},
         "  %y = " + op + " %x " + attrs + " : (tensor<2x3x4xf32>) -> " + y,
         {{"%y", y}}});
  };
  reduce("mpt.reduce_sum", "", "{axes = array<i64: 1>}", "tensor<2x1x4xf32>");
  reduce("mpt.reduce_sum", "/all", "{keepdims = false}", "tensor<f32>");
  reduce("mpt.reduce_mean", "", "{axes = array<i64: 0, 2>, keepdims = false}",
         "tensor<3xf32>");
  reduce("mpt.reduce_max", "", "{axes = array<i64: 2>}", "tensor<2x3x1xf32>");
  reduce("mpt.reduce_l2", "", "{axes = array<i64: 1>, keepdims = false}",
         "tensor<2x4xf32>");

  // Shape and data movement.
  auto move = [&](std::string op, std::string variant, std::string x,
                  std::string attrs, std::string y) {
    add({op + variant,
         op,
         {{"%x", x}},
         "  %y = " + op + " %x " + attrs + " : (" + x + ") -> " + y,
         {{"%y", y}}});
  };
  move("mpt.reshape", "", "tensor<2x3x4xf32>", "", "tensor<6x4xf32>");
  move("mpt.expand", "", "tensor<3x1xf32>", "", "tensor<2x3x4xf32>");
  move("mpt.transpose", "", "tensor<2x3x4xf32>", "{perm = array<i64: 2, 0, 1>}",
       "tensor<4x2x3xf32>");
  move("mpt.flatten", "", "tensor<2x3x4xf32>", "{axis = 2 : i64}",
       "tensor<6x4xf32>");
  move("mpt.squeeze", "", "tensor<2x1x4xf32>", "{axes = array<i64: 1>}",
       "tensor<2x4xf32>");
  move("mpt.unsqueeze", "", "tensor<2x4xf32>", "{axes = array<i64: 0, 3>}",
       "tensor<1x2x4x1xf32>");
  move("mpt.slice", "", "tensor<4x5xf32>",
       "{starts = array<i64: 3, 1>, ends = array<i64: -1, 5>, steps = "
       "array<i64: -2, 2>}",
       "tensor<2x2xf32>");
  add({"mpt.concat",
       "mpt.concat",
       {{"%a", "tensor<2x3xf32>"},
        {"%b", "tensor<2x1xf32>"},
        {"%d", "tensor<2x2xf32>"}},
       "  %y = mpt.concat %a, %b, %d {axis = 1 : i64} : (tensor<2x3xf32>, "
       "tensor<2x1xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>",
       {{"%y", "tensor<2x6xf32>"}}});
  add({"mpt.split",
       "mpt.split",
       {{"%x", "tensor<2x6xf32>"}},
       "  %y:3 = mpt.split %x {axis = 1 : i64, sizes = array<i64: 1, 3, 2>} : "
       "(tensor<2x6xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>, "
       "tensor<2x2xf32>)",
       {{"%y#0", "tensor<2x1xf32>"}, {"%y#2", "tensor<2x2xf32>"}}});
  add({"mpt.gather",
       "mpt.gather",
       {{"%x", "tensor<3x4xf32>"},
        {"%i", "tensor<2x3xi64>", fixed({1, -1, 1, 0, 3, -3})}},
       "  %y = mpt.gather %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, "
       "tensor<2x3xi64>) -> tensor<3x2x3xf32>",
       {{"%y", "tensor<3x2x3xf32>"}}});

  // all_reduce over the interpreter's world of one: the identity, and its
  // rule (itself) the identity on the gradients; a bucket of two, the mean
  // and the sum.
  add({"mpt.all_reduce",
       "mpt.all_reduce",
       {{"%a", t23}, {"%b", "tensor<3xf32>"}},
       "  %y:2 = mpt.all_reduce %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> "
       "(tensor<2x3xf32>, tensor<3xf32>)",
       {{"%y#0", t23}, {"%y#1", "tensor<3xf32>"}}});
  add({"mpt.all_reduce/sum",
       "mpt.all_reduce",
       {{"%a", t23}},
       "  %y = mpt.all_reduce %a {sum = true} : (tensor<2x3xf32>) -> "
       "tensor<2x3xf32>",
       {{"%y", t23}}});

  // Loss scaling: the scale is a constant of the step.
  add({"mpt.scale_loss",
       "mpt.scale_loss",
       {{"%l", "tensor<f32>"}, constantArg("%s", "tensor<f32>")},
       "  %y = mpt.scale_loss %l, %s : (tensor<f32>, tensor<f32>) -> "
       "tensor<f32>",
       {{"%y", "tensor<f32>"}}});
  return cases;
}

/// Values for `input` of `shape`; `args` holds the earlier arguments.
RefTensor makeInput(std::mt19937 &rng, const Input &input,
                    std::vector<int64_t> shape,
                    const std::vector<RefTensor> &args) {
  if (input.sameAs)
    return args.at(*input.sameAs);
  if (input.fixed)
    return RefTensor(std::move(shape), *input.fixed);
  std::uniform_real_distribution<double> dist(input.lo, input.hi);
  RefTensor t(std::move(shape));
  for (double &v : t.data) {
    auto nearKink = [&](double x) {
      return llvm::any_of(input.avoid,
                          [&](double k) { return std::fabs(x - k) < 0.05; });
    };
    do
      v = dist(rng);
    while (nearKink(v));
  }
  return t;
}

bool isFloat(Type type) {
  return isa<FloatType>(cast<ShapedType>(type).getElementType());
}

class GradientCheckTest : public InterpreterTest,
                          public ::testing::WithParamInterface<GradientCase> {};

TEST_P(GradientCheckTest, MatchesCentralDifferences) {
  const GradientCase &gc = GetParam();
  std::string text = projectedFunction(argList(gc.args), gc.body, gc.outputs);
  func::FuncOp f = parse(text);
  ASSERT_TRUE(f) << text;
  bool hasOp = false;
  f.walk(
      [&](Operation *op) { hasOp |= op->getName().getStringRef() == gc.op; });
  ASSERT_TRUE(hasOp) << "the case does not use " << gc.op;
  OwningOpRef<func::FuncOp> reference = f.clone();

  // Inputs: the op's arguments, then one projection per output.
  std::mt19937 rng(20261);
  std::vector<RefTensor> args;
  std::vector<unsigned> wrt;
  for (BlockArgument arg : f.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto shape = cast<ShapedType>(arg.getType()).getShape();
    Input input = i < gc.args.size() ? gc.args[i].input : Input{};
    args.push_back(makeInput(rng, input, {shape.begin(), shape.end()}, args));
    bool constant = i < gc.args.size() && gc.args[i].constant;
    if (isFloat(arg.getType()) && !constant)
      wrt.push_back(i);
  }

  diagnostics.clear();
  {
    ScopedDiagnosticHandler handler(
        &context, [&](Diagnostic &d) { diagnostics += d.str() + "\n"; });
    ASSERT_TRUE(succeeded(mpt::appendGradients(f, wrt))) << diagnostics;
    ASSERT_TRUE(succeeded(verify(f))) << diagnostics;
  }
  FailureOr<std::vector<RefTensor>> results = [&] {
    ScopedDiagnosticHandler handler(
        &context, [&](Diagnostic &d) { diagnostics += d.str() + "\n"; });
    return interpret(f, args);
  }();
  ASSERT_TRUE(succeeded(results)) << diagnostics;
  expectGradientsMatchCentralDifferences(*reference, args, wrt, *results, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, GradientCheckTest, ::testing::ValuesIn(gradientCases()),
    [](const ::testing::TestParamInfo<GradientCase> &info) {
      std::string name = info.param.name.substr(4); // without "mpt."
      for (char &ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch)))
          ch = '_';
      return name;
    });

/// Every op with a gradient rule has a case, and every case names such an
/// op.
TEST(GradientCheckCoverage, EveryRuleHasACase) {
  DialectRegistry registry;
  registry.insert<mpt::MPTDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::set<std::string> withCase, names;
  for (const GradientCase &gc : gradientCases()) {
    withCase.insert(gc.op);
    EXPECT_TRUE(names.insert(gc.name).second) << "duplicate case " << gc.name;
  }
  std::set<std::string> withRule;
  for (RegisteredOperationName name : context.getRegisteredOperations())
    if (name.getDialectNamespace() == "mpt" &&
        name.hasInterface<mpt::GradientOpInterface>())
      withRule.insert(name.getStringRef().str());
  EXPECT_FALSE(withRule.empty());
  for (const std::string &op : withRule)
    EXPECT_TRUE(withCase.count(op))
        << op << " has a gradient rule but no gradient-check case";
  for (const std::string &op : withCase)
    EXPECT_TRUE(withRule.count(op))
        << "a case checks " << op << ", which has no gradient rule";
}

/// An op without a rule on the path from an argument to the loss is an
/// error naming it.
class GradientCheckErrorTest : public InterpreterTest {
protected:
  /// appendGradients on the first function of `ir` with respect to
  /// argument 0; the diagnostics are in `diagnostics`.
  LogicalResult differentiate(StringRef ir) {
    func::FuncOp f = parse(ir);
    if (!f)
      return failure();
    diagnostics.clear();
    ScopedDiagnosticHandler handler(
        &context, [&](Diagnostic &d) { diagnostics += d.str() + "\n"; });
    return mpt::appendGradients(f, {0});
  }
};

TEST_F(GradientCheckErrorTest, OpWithoutARuleOnThePathIsDiagnosed) {
  EXPECT_TRUE(failed(differentiate(R"mlir(
func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
  %n = mpt.global_norm %x : (tensor<4xf32>) -> tensor<f32>
  return %n : tensor<f32>
}
)mlir")));
  EXPECT_NE(diagnostics.find("'mpt.global_norm' has no gradient rule"),
            std::string::npos)
      << diagnostics;
}

/// A rule refuses what it does not cover: a fused gemm epilogue (autodiff
/// runs before the lowering fuses them).
TEST_F(GradientCheckErrorTest, FusedGemmEpilogueIsRefused) {
  EXPECT_TRUE(failed(differentiate(R"mlir(
func.func @f(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<f32> {
  %y = mpt.gemm %a, %b {activation = #mpt.activation<relu>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = mpt.reduce_sum %y {keepdims = false} : (tensor<2x2xf32>) -> tensor<f32>
  return %s : tensor<f32>
}
)mlir")));
  EXPECT_NE(diagnostics.find("while building the gradient of 'mpt.gemm'"),
            std::string::npos)
      << diagnostics;
}

} // namespace
