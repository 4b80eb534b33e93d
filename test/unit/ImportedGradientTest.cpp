//===- ImportedGradientTest.cpp - ONNX ops imported as other ops train ----===//
//
// Some ONNX nodes become several mpt ops: the recurrent ones unrolled over
// the sequence (lib/Import/ONNX/RecurrentImport.cpp), TopK as rounds of
// argmax (ReductionImport.cpp). Their forward values are checked against
// ONNX's own node tests (onnx-numerics-conformance). This checks their
// backward pass as autodiff derives it from those ops (for the recurrent
// nodes, back-propagation through time): the gradient of a random
// projection of every float output with respect to every input (X, the
// weights, the biases, the initial states, the peepholes) matches central
// finite differences of the imported function, in the float64 reference
// interpreter.
//
//===----------------------------------------------------------------------===//
#include "FiniteDifferences.h"
#include "InterpreterTestSupport.h"
#include "ReferenceInterpreter.h"

#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Import/ONNX/Importer.h"
#include "mpt/Transforms/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mpt;
using namespace mpt::ref;

namespace {

struct ImportedCase {
  const char *name;
  /// An opset-17 ONNX text model whose first output is a scalar loss.
  const char *model;
};

// Each model projects the node's outputs on the inputs named proj_*, so that
// the loss depends on every output element.
const ImportedCase kCases[] = {
    {"RnnBidirectional", R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,2,4] x, float[2,5,4] w, float[2,5,5] r, float[2,10] b,
   float[2,2,5] h0, float[3,2,2,5] proj_y, float[2,2,5] proj_h)
    => (float loss) {
  y, yh = RNN <hidden_size = 5, direction = "bidirectional"> (x, w, r, b, , h0)
  py = Mul(y, proj_y)
  ph = Mul(yh, proj_h)
  sy = ReduceSum <keepdims = 0> (py)
  sh = ReduceSum <keepdims = 0> (ph)
  loss = Add(sy, sh)
})"},
    {"GruReverseLinearBeforeReset", R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,2,4] x, float[1,9,4] w, float[1,9,3] r, float[1,18] b,
   float[1,2,3] h0, float[3,1,2,3] proj_y, float[1,2,3] proj_h)
    => (float loss) {
  y, yh = GRU <hidden_size = 3, direction = "reverse", linear_before_reset = 1> (x, w, r, b, , h0)
  py = Mul(y, proj_y)
  ph = Mul(yh, proj_h)
  sy = ReduceSum <keepdims = 0> (py)
  sh = ReduceSum <keepdims = 0> (ph)
  loss = Add(sy, sh)
})"},
    {"GruBatchMajor", R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x, float[1,9,4] w, float[1,9,3] r, float[2,3,1,3] proj_y)
    => (float loss) {
  y = GRU <hidden_size = 3, layout = 1> (x, w, r)
  py = Mul(y, proj_y)
  loss = ReduceSum <keepdims = 0> (py)
})"},
    {"LstmPeepholesBidirectional", R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,2,4] x, float[2,12,4] w, float[2,12,3] r, float[2,24] b,
   float[2,2,3] h0, float[2,2,3] c0, float[2,9] p,
   float[3,2,2,3] proj_y, float[2,2,3] proj_h, float[2,2,3] proj_c)
    => (float loss) {
  y, yh, yc = LSTM <hidden_size = 3, direction = "bidirectional"> (x, w, r, b, , h0, c0, p)
  py = Mul(y, proj_y)
  ph = Mul(yh, proj_h)
  pc = Mul(yc, proj_c)
  sy = ReduceSum <keepdims = 0> (py)
  sh = ReduceSum <keepdims = 0> (ph)
  sc = ReduceSum <keepdims = 0> (pc)
  s = Add(sy, sh)
  loss = Add(s, sc)
})"},
    {"TopKLargest", R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,5] x, float[3,2] proj_v) => (float loss) {
  k = Constant <value = int64[1] {2}> ()
  v, i = TopK <axis = 1> (x, k)
  pv = Mul(v, proj_v)
  loss = ReduceSum <keepdims = 0> (pv)
})"},
    {"TopKSmallestAxis0", R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4,3] x, float[3,3] proj_v) => (float loss) {
  k = Constant <value = int64[1] {3}> ()
  v, i = TopK <axis = 0, largest = 0> (x, k)
  pv = Mul(v, proj_v)
  loss = ReduceSum <keepdims = 0> (pv)
})"},
};

class ImportedGradientTest
    : public InterpreterTest,
      public ::testing::WithParamInterface<ImportedCase> {};

TEST_P(ImportedGradientTest, MatchesCentralDifferences) {
  const ImportedCase &rc = GetParam();
  diagnostics.clear();
  ScopedDiagnosticHandler handler(
      &context, [&](Diagnostic &d) { diagnostics += d.str() + "\n"; });
  OnnxImportResult imported = importOnnxBuffer(
      rc.model, /*isText=*/true, "imported.onnxtext", ".", context);
  ASSERT_TRUE(imported.module) << diagnostics;
  module = std::move(imported.module);
  auto funcs = module->getOps<func::FuncOp>();
  ASSERT_FALSE(funcs.empty());
  func::FuncOp f = *funcs.begin();
  OwningOpRef<func::FuncOp> reference = f.clone();

  // Inputs in [-1, 1]; the gradients with respect to all but the
  // projections.
  std::mt19937 rng(20261128);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<RefTensor> args;
  std::vector<unsigned> wrt;
  for (BlockArgument arg : f.getArguments()) {
    auto shape = cast<ShapedType>(arg.getType()).getShape();
    RefTensor t(std::vector<int64_t>(shape.begin(), shape.end()));
    for (double &v : t.data)
      v = dist(rng);
    args.push_back(std::move(t));
    auto name =
        f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kInputAttrName);
    ASSERT_TRUE(name) << "argument " << arg.getArgNumber();
    if (!name.getValue().starts_with("proj_"))
      wrt.push_back(arg.getArgNumber());
  }
  ASSERT_TRUE(succeeded(appendGradients(f, wrt))) << diagnostics;
  FailureOr<std::vector<RefTensor>> results = interpret(f, args);
  ASSERT_TRUE(succeeded(results)) << diagnostics;
  std::vector<double> largest = expectGradientsMatchCentralDifferences(
      *reference, args, wrt, *results, 1e-8);
  // A gradient that is zero everywhere would match trivially.
  for (auto [k, argIndex] : llvm::enumerate(wrt))
    EXPECT_GT(largest[k], 1e-3) << "gradient of argument #" << argIndex;
}

INSTANTIATE_TEST_SUITE_P(
    Nodes, ImportedGradientTest, ::testing::ValuesIn(kCases),
    [](const ::testing::TestParamInfo<ImportedCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
