//===- InterpreterTestSupport.cpp - interpreter test fixtures -------------===//
#include "InterpreterTestSupport.h"
#include "FiniteDifferences.h"

#include "mpt/Dialect/MPT/IR/MPTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <cmath>

using namespace mlir;

namespace mpt::ref {

InterpreterTest::InterpreterTest() {
  DialectRegistry registry;
  registry.insert<MPTDialect, func::FuncDialect>();
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
  context.allowUnregisteredDialects();
}

func::FuncOp InterpreterTest::parse(StringRef ir) {
  diagnostics.clear();
  ScopedDiagnosticHandler handler(
      &context, [&](Diagnostic &d) { diagnostics += d.str() + "\n"; });
  // The verifier rejects unknown ops of a registered dialect, so verify the
  // registered ops one by one instead.
  module = parseSourceString<ModuleOp>(
      ir, ParserConfig(&context, /*verifyAfterParse=*/false));
  auto verifyRegistered = [](Operation *op) {
    if (op->isRegistered() && failed(verify(op, /*verifyRecursively=*/false)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  };
  if (!module || module->walk(verifyRegistered).wasInterrupted()) {
    ADD_FAILURE() << "parse failed: " << diagnostics;
    return nullptr;
  }
  auto funcs = module->getOps<func::FuncOp>();
  if (funcs.empty()) {
    ADD_FAILURE() << "no function";
    return nullptr;
  }
  return *funcs.begin();
}

FailureOr<std::vector<RefTensor>>
InterpreterTest::tryRun(StringRef ir, std::vector<RefTensor> args) {
  func::FuncOp f = parse(ir);
  if (!f)
    return failure();
  diagnostics.clear();
  ScopedDiagnosticHandler handler(
      &context, [&](Diagnostic &d) { diagnostics += d.str() + "\n"; });
  return interpret(f, args);
}

std::vector<RefTensor> InterpreterTest::run(StringRef ir,
                                            std::vector<RefTensor> args) {
  FailureOr<std::vector<RefTensor>> results = tryRun(ir, std::move(args));
  if (failed(results)) {
    ADD_FAILURE() << "interpretation failed: " << diagnostics;
    return {};
  }
  return *results;
}

RefTensor InterpreterTest::run1(StringRef ir, std::vector<RefTensor> args) {
  std::vector<RefTensor> results = run(ir, std::move(args));
  return results.empty() ? RefTensor() : results.front();
}

void expectTensor(const RefTensor &actual, std::vector<int64_t> shape,
                  std::vector<double> values, double tolerance) {
  EXPECT_EQ(actual.shape, shape);
  ASSERT_EQ(actual.data.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) {
      EXPECT_TRUE(std::isnan(actual.data[i])) << "element " << i;
      continue;
    }
    EXPECT_NEAR(actual.data[i], values[i],
                tolerance * std::max(1.0, std::fabs(values[i])))
        << "element " << i;
  }
}

RefTensor randomTensor(std::mt19937 &rng, std::vector<int64_t> shape, double lo,
                       double hi, bool awayFromZero) {
  std::uniform_real_distribution<double> dist(lo, hi);
  RefTensor t(std::move(shape));
  for (double &v : t.data) {
    do
      v = dist(rng);
    while (awayFromZero && std::fabs(v) < 0.1);
  }
  return t;
}

std::string
projectedFunction(StringRef args, StringRef body,
                  ArrayRef<std::pair<std::string, std::string>> outputs) {
  std::string weights, projections, loss;
  for (auto [k, output] : llvm::enumerate(outputs)) {
    auto [value, type] = output;
    std::string w = "%w" + std::to_string(k), s = "%s" + std::to_string(k);
    weights += ", " + w + ": " + type;
    projections += substitute(R"mlir(
  %p$K = mpt.mul $Y, $W : ($T, $T) -> $T
  $S = mpt.reduce_sum %p$K {keepdims = false} : ($T) -> tensor<f32>)mlir",
                              {{"K", std::to_string(k)},
                               {"Y", value},
                               {"W", w},
                               {"T", type},
                               {"S", s}});
    if (k == 0) {
      loss = s;
      continue;
    }
    std::string sum = "%sum" + std::to_string(k);
    projections += "\n  " + sum + " = mpt.add " + loss + ", " + s +
                   " : (tensor<f32>, tensor<f32>) -> tensor<f32>";
    loss = sum;
  }
  return substitute(R"mlir(
func.func @f($ARGS$WEIGHTS) -> tensor<f32> {
$BODY$PROJECTIONS
  return $LOSS : tensor<f32>
}
)mlir",
                    {{"ARGS", args.str()},
                     {"WEIGHTS", weights},
                     {"BODY", body.str()},
                     {"PROJECTIONS", projections},
                     {"LOSS", loss}});
}

std::string projectedFunction(StringRef args, StringRef body, StringRef yType) {
  return projectedFunction(args, body, {{"%y", yType.str()}});
}

std::string
substitute(std::string text,
           std::initializer_list<std::pair<StringRef, std::string>> values) {
  for (const auto &[name, value] : values) {
    std::string key = "$" + name.str();
    for (size_t at = text.find(key); at != std::string::npos;
         at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  }
  return text;
}

std::vector<double> expectGradientsMatchCentralDifferences(
    func::FuncOp reference, ArrayRef<RefTensor> args, ArrayRef<unsigned> wrt,
    ArrayRef<RefTensor> results, double atol) {
  std::vector<double> largest(wrt.size(), 0.0);
  EXPECT_EQ(results.size(), 1 + wrt.size());
  if (results.size() != 1 + wrt.size())
    return largest;
  for (auto [k, argIndex] : llvm::enumerate(wrt)) {
    SCOPED_TRACE("gradient of argument #" + std::to_string(argIndex));
    FailureOr<RefTensor> numeric =
        centralDifference(reference, args, argIndex, 1e-6);
    EXPECT_TRUE(succeeded(numeric));
    if (failed(numeric))
      continue;
    const RefTensor &analytic = results[1 + k];
    EXPECT_EQ(analytic.shape, numeric->shape);
    if (analytic.shape != numeric->shape)
      continue;
    for (int64_t i = 0; i < numeric->numElements(); ++i) {
      largest[k] = std::max(largest[k], std::fabs(numeric->data[i]));
      EXPECT_NEAR(analytic.data[i], numeric->data[i],
                  1e-6 * std::fabs(numeric->data[i]) + atol)
          << "element " << i;
    }
  }
  return largest;
}

} // namespace mpt::ref
