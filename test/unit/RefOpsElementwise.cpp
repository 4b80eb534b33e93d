//===- RefOpsElementwise.cpp - elementwise ops and their gradients --------===//
//
// identity, cast, quantize, dropout (inference), the unary math ops, the
// broadcasting binary, comparison and select ops, and unary_grad.
//
//===----------------------------------------------------------------------===//
#include "RefOps.h"
#include "UnaryOracle.h"

#include "mlir/IR/BuiltinTypes.h"

#include <limits>

using namespace mlir;

namespace mpt::ref {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Copies the operand: identity, and cast, which does not round (integer
/// and i1 results are conformed by the interpreter).
LogicalResult copy(Operation *, ArrayRef<RefTensor> operands,
                   std::vector<RefTensor> &results) {
  results.push_back(operands[0]);
  return success();
}

/// x * scale, neither rounded into the FP8 result type nor saturated.
LogicalResult quantize(Operation *, ArrayRef<RefTensor> operands,
                       std::vector<RefTensor> &results) {
  RefTensor out = operands[0];
  for (double &v : out.data)
    v *= operands[1].data.at(0);
  results.push_back(std::move(out));
  return success();
}

/// Inference dropout: the input and an all-true mask.
LogicalResult dropout(Operation *op, ArrayRef<RefTensor> operands,
                      std::vector<RefTensor> &results) {
  if (boolAttr(op, "training", false) && floatAttr(op, "ratio", 0.5) != 0.0)
    return fail(op, "training-mode dropout is random; not interpreted");
  results.push_back(operands[0]);
  if (op->getNumResults() > 1) {
    RefTensor mask(operands[0].shape);
    std::fill(mask.data.begin(), mask.data.end(), 1.0);
    results.push_back(std::move(mask));
  }
  return success();
}

/// y = fn(op, x) elementwise.
RefEvaluator unary(std::function<double(Operation *, double)> fn) {
  return [fn](Operation *op, ArrayRef<RefTensor> operands,
              std::vector<RefTensor> &results) {
    RefTensor out = operands[0];
    for (double &v : out.data)
      v = fn(op, v);
    results.push_back(std::move(out));
    return success();
  };
}

/// The attributes of a unary op or unary_grad, for the oracle.
mptrt::oracle::UnaryArgs unaryArgsOf(Operation *op, const std::string &kind) {
  mptrt::oracle::UnaryArgs a = mptrt::oracle::defaultArgs(kind);
  a.alpha = floatAttr(op, "alpha", a.alpha);
  a.beta = floatAttr(op, "beta", a.beta);
  a.gamma = floatAttr(op, "gamma", a.gamma);
  if (std::optional<double> lo = optionalFloatAttr(op, "min"))
    a.lo = *lo;
  if (std::optional<double> hi = optionalFloatAttr(op, "max"))
    a.hi = *hi;
  return a;
}

/// The function of kind `kind` (runtime/test/UnaryOracle.h).
RefEvaluator unaryFunction(std::string kind) {
  return unary([kind](Operation *op, double x) {
    double f, df;
    mptrt::oracle::evalUnary(kind, x, unaryArgsOf(op, kind), &f, &df);
    return f;
  });
}

double leakyRelu(Operation *op, double x) {
  return x >= 0 ? x : floatAttr(op, "alpha", 0.01) * x;
}

double geluOp(Operation *op, double x) {
  return stringAttr(op, "approximate", "none") == "tanh" ? geluTanh(x)
                                                         : gelu(x);
}

/// Clamps into [min, max]; integer results round the bounds inward.
double clip(Operation *op, double x) {
  bool integer = resultElementType(op, 0).isInteger();
  if (std::isnan(x))
    return x;
  if (std::optional<double> lo = optionalFloatAttr(op, "min"))
    x = std::max(x, integer ? std::ceil(*lo) : *lo);
  if (std::optional<double> hi = optionalFloatAttr(op, "max"))
    x = std::min(x, integer ? std::floor(*hi) : *hi);
  return x;
}

/// out = fn(a, b, c...) over the operands numpy-broadcast to the result
/// type's shape. `fn` sees whether the result is an integer type.
using NaryFn = std::function<double(ArrayRef<double> args, bool integer)>;
RefEvaluator broadcasting(NaryFn fn) {
  return [fn](Operation *op, ArrayRef<RefTensor> operands,
              std::vector<RefTensor> &results) -> LogicalResult {
    std::vector<int64_t> shape = resultShape(op, 0);
    std::vector<RefTensor> expanded;
    for (const RefTensor &operand : operands) {
      std::optional<RefTensor> b = broadcastTo(operand, shape);
      if (!b)
        return fail(op, "operands do not broadcast to the result shape");
      expanded.push_back(std::move(*b));
    }
    bool integer = resultElementType(op, 0).isInteger();
    RefTensor out(shape);
    std::vector<double> args(operands.size());
    for (int64_t i = 0; i < out.numElements(); ++i) {
      for (size_t k = 0; k < expanded.size(); ++k)
        args[k] = expanded[k].data[i];
      out.data[i] = fn(args, integer);
    }
    results.push_back(std::move(out));
    return success();
  };
}

double divide(ArrayRef<double> a, bool integer) {
  if (integer)
    return a[1] == 0 ? 0.0 : std::trunc(a[0] / a[1]);
  return a[0] / a[1];
}

double maximum(ArrayRef<double> a, bool) {
  return std::isnan(a[0]) || std::isnan(a[1]) ? kNaN : std::max(a[0], a[1]);
}

double minimum(ArrayRef<double> a, bool) {
  return std::isnan(a[0]) || std::isnan(a[1]) ? kNaN : std::min(a[0], a[1]);
}

/// f'(x) for unary_grad's `kind`; nullopt for an unknown kind.
std::optional<double> derivative(Operation *op, StringRef kind, double x) {
  double f, df;
  if (!mptrt::oracle::evalUnary(kind.str(), x, unaryArgsOf(op, kind.str()), &f,
                                &df))
    return std::nullopt;
  return df;
}

/// dx = f'(x) * dy.
LogicalResult unaryGrad(Operation *op, ArrayRef<RefTensor> operands,
                        std::vector<RefTensor> &results) {
  std::string kind = stringAttr(op, "kind", "");
  const RefTensor &x = operands[0], &dy = operands[1];
  if (x.data.size() != dy.data.size())
    return fail(op, "x and dy differ in size");
  RefTensor dx(x.shape);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    std::optional<double> d = derivative(op, kind, x.data[i]);
    if (!d)
      return fail(op, "unknown kind '" + kind + "'");
    dx.data[i] = *d * dy.data[i];
  }
  results.push_back(std::move(dx));
  return success();
}

} // namespace

void addElementwiseOps(RefOpTable &table) {
  table["mpt.identity"] = copy;
  table["mpt.cast"] = copy;
  table["mpt.quantize"] = quantize;
  table["mpt.dropout"] = dropout;

  // The unary functions without attributes (UnaryKinds.def).
  for (const mptrt::oracle::UnaryFunctionInfo &u :
       mptrt::oracle::unaryFunctions())
    if (u.kernel && !u.attrs)
      table[std::string("mpt.") + u.kind] = unaryFunction(u.kind);
  table["mpt.leaky_relu"] = unary(leakyRelu);
  table["mpt.gelu"] = unary(geluOp);
  table["mpt.clip"] = unary(clip);

  table["mpt.add"] =
      broadcasting([](ArrayRef<double> a, bool) { return a[0] + a[1]; });
  table["mpt.sub"] =
      broadcasting([](ArrayRef<double> a, bool) { return a[0] - a[1]; });
  table["mpt.mul"] =
      broadcasting([](ArrayRef<double> a, bool) { return a[0] * a[1]; });
  table["mpt.div"] = broadcasting(divide);
  table["mpt.pow"] = broadcasting(
      [](ArrayRef<double> a, bool) { return std::pow(a[0], a[1]); });
  table["mpt.max"] = broadcasting(maximum);
  table["mpt.min"] = broadcasting(minimum);
  table["mpt.equal"] = broadcasting(
      [](ArrayRef<double> a, bool) { return a[0] == a[1] ? 1.0 : 0.0; });
  table["mpt.less"] = broadcasting(
      [](ArrayRef<double> a, bool) { return a[0] < a[1] ? 1.0 : 0.0; });
  table["mpt.greater"] = broadcasting(
      [](ArrayRef<double> a, bool) { return a[0] > a[1] ? 1.0 : 0.0; });
  table["mpt.where"] = broadcasting(
      [](ArrayRef<double> a, bool) { return a[0] != 0 ? a[1] : a[2]; });

  table["mpt.unary_grad"] = unaryGrad;
}

} // namespace mpt::ref
