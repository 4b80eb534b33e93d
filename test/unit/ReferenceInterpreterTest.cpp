//===- ReferenceInterpreterTest.cpp - the float64 reference interpreter ---===//
//
// Hand-computed cases for the forward ops the reference interpreter covers,
// family by family, and its error paths. The backward and training ops are
// in ReferenceInterpreterBackwardTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "InterpreterTestSupport.h"

#include <cmath>

using namespace mlir;
using namespace mpt::ref;

namespace {

class ReferenceInterpreterTest : public InterpreterTest {};

//===----------------------------------------------------------------------===//
// Elementwise.
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, BroadcastingArithmetic) {
  auto results = run(R"mlir(
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = mpt.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = mpt.sub %a, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %2 = mpt.mul %b, %c : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %3 = mpt.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = mpt.pow %a, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
)mlir",
                     {T({2, 3}, {1, 2, 3, 4, 5, 6}), T({3}, {10, 20, 40}),
                      T({2, 1}, {2, 0.5})});
  ASSERT_EQ(results.size(), 5u);
  expectTensor(results[0], {2, 3}, {11, 22, 43, 14, 25, 46});
  expectTensor(results[1], {2, 3}, {-1, 0, 1, 3.5, 4.5, 5.5});
  expectTensor(results[2], {2, 3}, {20, 40, 80, 5, 10, 20});
  expectTensor(results[3], {2, 3}, {0.1, 0.1, 0.075, 0.4, 0.25, 0.15});
  expectTensor(results[4], {2, 3},
               {1, 4, 9, 2, std::sqrt(5.0), std::sqrt(6.0)});
}

TEST_F(ReferenceInterpreterTest, IntegerDivisionTruncatesAndByZeroGivesZero) {
  RefTensor q = run1(R"mlir(
func.func @f(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = mpt.div %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
)mlir",
                     {T({4}, {7, -7, 7, 5}), T({4}, {2, 2, -3, 0})});
  expectTensor(q, {4}, {3, -3, -2, 0});
}

TEST_F(ReferenceInterpreterTest, MaxMinPropagateNaNAndCompare) {
  double nan = std::nan("");
  auto results = run(R"mlir(
func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xf32>) {
  %0 = mpt.max %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = mpt.min %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = mpt.equal %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %3 = mpt.less %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %4 = mpt.greater %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %5 = mpt.where %3, %a, %b : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3xf32>, tensor<3xf32>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xf32>
}
)mlir",
                     {T({3}, {1, 5, nan}), T({3}, {2, 5, 0})});
  ASSERT_EQ(results.size(), 6u);
  expectTensor(results[0], {3}, {2, 5, nan});
  expectTensor(results[1], {3}, {1, 5, nan});
  expectTensor(results[2], {3}, {0, 1, 0});
  expectTensor(results[3], {3}, {1, 0, 0});
  expectTensor(results[4], {3}, {0, 0, 0});
  expectTensor(results[5], {3}, {1, 5, 0});
}

TEST_F(ReferenceInterpreterTest, UnaryMath) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<3xf32>, %p: tensor<3xf32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>,
        tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = mpt.relu %x : tensor<3xf32>
  %1 = mpt.neg %x : tensor<3xf32>
  %2 = mpt.abs %x : tensor<3xf32>
  %3 = mpt.sigmoid %x : tensor<3xf32>
  %4 = mpt.tanh %x : tensor<3xf32>
  %5 = mpt.erf %x : tensor<3xf32>
  %6 = mpt.exp %x : tensor<3xf32>
  %7 = mpt.sqrt %p : tensor<3xf32>
  %8 = mpt.log %p : tensor<3xf32>
  %9 = mpt.leaky_relu %x {alpha = 0.5 : f32} : tensor<3xf32>
  %10 = mpt.gelu %x : tensor<3xf32>
  %11 = mpt.gelu %x {approximate = #mpt.gelu_approximate<tanh>} : tensor<3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
)mlir",
                     {T({3}, {-2, 0, 1.5}), T({3}, {4, 1, 0.25})});
  ASSERT_EQ(results.size(), 12u);
  expectTensor(results[0], {3}, {0, 0, 1.5});
  expectTensor(results[1], {3}, {2, 0, -1.5});
  expectTensor(results[2], {3}, {2, 0, 1.5});
  expectTensor(results[3], {3},
               {1 / (1 + std::exp(2.0)), 0.5, 1 / (1 + std::exp(-1.5))});
  expectTensor(results[4], {3}, {std::tanh(-2.0), 0, std::tanh(1.5)});
  expectTensor(results[5], {3}, {std::erf(-2.0), 0, std::erf(1.5)});
  expectTensor(results[6], {3}, {std::exp(-2.0), 1, std::exp(1.5)});
  expectTensor(results[7], {3}, {2, 1, 0.5});
  expectTensor(results[8], {3}, {std::log(4.0), 0, std::log(0.25)});
  expectTensor(results[9], {3}, {-1, 0, 1.5});
  // gelu(x) = x * Phi(x); Phi(-2) = 0.022750131948179, Phi(1.5) =
  // 0.933192798731142.
  expectTensor(results[10], {3},
               {-2 * 0.022750131948179195, 0, 1.5 * 0.93319279873114191},
               1e-12);
  auto tanhForm = [](double x) {
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  expectTensor(results[11], {3}, {tanhForm(-2), 0, tanhForm(1.5)});
}

TEST_F(ReferenceInterpreterTest,
       ClipBoundsAreOptionalAndRoundInwardForIntegers) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) {
  %0 = mpt.clip %x {min = -1.0 : f64, max = 1.0 : f64} : tensor<4xf32>
  %1 = mpt.clip %x {max = 0.5 : f64} : tensor<4xf32>
  %2 = mpt.clip %i {min = -1.5 : f64, max = 2.5 : f64} : tensor<4xi64>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>
}
)mlir",
                     {T({4}, {-3, -0.5, 0.75, 2}), T({4}, {-5, -1, 2, 7})});
  ASSERT_EQ(results.size(), 3u);
  expectTensor(results[0], {4}, {-1, -0.5, 0.75, 1});
  expectTensor(results[1], {4}, {-3, -0.5, 0.5, 0.5});
  expectTensor(results[2], {4}, {-1, -1, 2, 2});
}

TEST_F(ReferenceInterpreterTest, CastDoesNotRoundFloatsAndTruncatesToIntegers) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xi64>, tensor<4xi1>, tensor<4xf32>) {
  %0 = mpt.cast %x : tensor<4xf32> to tensor<4xbf16>
  %1 = mpt.cast %x : tensor<4xf32> to tensor<4xi64>
  %2 = mpt.cast %x : tensor<4xf32> to tensor<4xi1>
  %3 = mpt.identity %x : tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xbf16>, tensor<4xi64>, tensor<4xi1>, tensor<4xf32>
}
)mlir",
                     {T({4}, {1.0001, -1.7, 0, 2.5})});
  ASSERT_EQ(results.size(), 4u);
  expectTensor(results[0], {4}, {1.0001, -1.7, 0, 2.5});
  expectTensor(results[1], {4}, {1, -1, 0, 2});
  expectTensor(results[2], {4}, {1, 1, 0, 1});
  expectTensor(results[3], {4}, {1.0001, -1.7, 0, 2.5});
}

TEST_F(ReferenceInterpreterTest, QuantizeScalesWithoutRounding) {
  RefTensor y = run1(R"mlir(
func.func @f(%x: tensor<3xf32>, %s: tensor<f32>) -> tensor<3xf8E4M3FN> {
  %0 = mpt.quantize %x, %s : (tensor<3xf32>, tensor<f32>) -> tensor<3xf8E4M3FN>
  return %0 : tensor<3xf8E4M3FN>
}
)mlir",
                     {T({3}, {0.1, -1, 300}), RefTensor::scalar(2)});
  expectTensor(y, {3}, {0.2, -2, 600});
}

TEST_F(ReferenceInterpreterTest, InferenceDropoutIsIdentityWithATrueMask) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi1>) {
  %0, %1 = mpt.dropout %x : tensor<3xf32> -> tensor<3xf32>, tensor<3xi1>
  return %0, %1 : tensor<3xf32>, tensor<3xi1>
}
)mlir",
                     {T({3}, {1, 2, 3})});
  ASSERT_EQ(results.size(), 2u);
  expectTensor(results[0], {3}, {1, 2, 3});
  expectTensor(results[1], {3}, {1, 1, 1});
}

//===----------------------------------------------------------------------===//
// Contractions.
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, MatMulBatchesAndVectors) {
  auto results =
      run(R"mlir(
func.func @f(%a: tensor<2x2x3xf32>, %b: tensor<3x2xf32>, %v: tensor<3xf32>, %u: tensor<2xf32>)
    -> (tensor<2x2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<f32>) {
  %0 = mpt.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x2xf32>) -> tensor<2x2x2xf32>
  %1 = mpt.matmul %a, %v : (tensor<2x2x3xf32>, tensor<3xf32>) -> tensor<2x2xf32>
  %2 = mpt.matmul %v, %b : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  %3 = mpt.matmul %u, %u : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<2x2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<f32>
}
)mlir",
          {T({2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}),
           T({3, 2}, {1, 0, 0, 1, 1, 1}), T({3}, {1, 2, 3}), T({2}, {3, 4})});
  ASSERT_EQ(results.size(), 4u);
  expectTensor(results[0], {2, 2, 2}, {4, 5, 10, 11, 1, 0, 0, 1});
  expectTensor(results[1], {2, 2}, {14, 32, 1, 2});
  expectTensor(results[2], {2}, {4, 5});
  expectTensor(results[3], {}, {25});
}

TEST_F(ReferenceInterpreterTest, GemmTransposesScalesAndAppliesItsEpilogue) {
  auto results = run(R"mlir(
func.func @f(%a: tensor<3x2xf32>, %b: tensor<2x3xf32>, %c: tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0 = mpt.gemm %a, %b, %c {alpha = 2.0 : f32, beta = 0.5 : f32, trans_a = true, trans_b = true} : (tensor<3x2xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = mpt.gemm %a, %b, %c {trans_a = true, trans_b = true, activation = #mpt.activation<relu>, beta = -10.0 : f32} : (tensor<3x2xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}
)mlir",
                     {T({3, 2}, {1, 4, 2, 5, 3, 6}),
                      T({2, 3}, {1, 0, 1, 0, 1, 0}), T({2}, {2, 4})});
  // A^T = [[1,2,3],[4,5,6]], B^T = [[1,0],[0,1],[1,0]]: A^T B^T =
  // [[4,2],[10,5]].
  ASSERT_EQ(results.size(), 2u);
  expectTensor(results[0], {2, 2}, {9, 6, 21, 12});
  expectTensor(results[1], {2, 2}, {0, 0, 0, 0});
}

TEST_F(ReferenceInterpreterTest, ConvWithPadsStridesDilationsGroupsAndBias) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<1x1x5xf32>, %w: tensor<1x1x2xf32>, %b: tensor<1xf32>,
             %x2: tensor<1x2x2x2xf32>, %w2: tensor<2x1x1x1xf32>)
    -> (tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x2x2x2xf32>) {
  %0 = mpt.conv %x, %w, %b {strides = array<i64: 2>, pads = array<i64: 1, 0>, dilations = array<i64: 1>} : (tensor<1x1x5xf32>, tensor<1x1x2xf32>, tensor<1xf32>) -> tensor<1x1x3xf32>
  %1 = mpt.conv %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0>, dilations = array<i64: 2>} : (tensor<1x1x5xf32>, tensor<1x1x2xf32>) -> tensor<1x1x3xf32>
  %2 = mpt.conv %x2, %w2 {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x2x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  return %0, %1, %2 : tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x2x2x2xf32>
}
)mlir",
                     {T({1, 1, 5}, {1, 2, 3, 4, 5}), T({1, 1, 2}, {10, 1}),
                      T({1}, {100}), T({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                      T({2, 1, 1, 1}, {2, -1})});
  ASSERT_EQ(results.size(), 3u);
  // Padded x = [0,1,2,3,4,5]; windows at 0, 2, 4.
  expectTensor(results[0], {1, 1, 3}, {101, 123, 145});
  // Taps x[i] and x[i+2].
  expectTensor(results[1], {1, 1, 3}, {13, 24, 35});
  expectTensor(results[2], {1, 2, 2, 2}, {2, 4, 6, 8, -5, -6, -7, -8});
}

TEST_F(ReferenceInterpreterTest, ContractionsWithFP8ScalesFail) {
  auto results = tryRun(R"mlir(
func.func @f(%a: tensor<2x2xf8E4M3FN>, %s: tensor<f32>) -> tensor<2x2xf32> {
  %0 = mpt.matmul %a, %a scales(%s, %s) : (tensor<2x2xf8E4M3FN>, tensor<2x2xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
)mlir",
                        {T({2, 2}, {1, 2, 3, 4}), RefTensor::scalar(1)});
  EXPECT_TRUE(failed(results));
  EXPECT_NE(diagnostics.find("FP8 scales"), std::string::npos) << diagnostics;
}

//===----------------------------------------------------------------------===//
// Pooling.
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, Pooling) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<1x1x4xf32>) -> (tensor<1x1x2xf32>, tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x1x1xf32>) {
  %0 = mpt.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x1x4xf32>) -> tensor<1x1x2xf32>
  %1 = mpt.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 1>, dilations = array<i64: 1>} : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
  %2 = mpt.average_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 1>} : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
  %3 = mpt.average_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 0>, count_include_pad = true, ceil_mode = true} : (tensor<1x1x4xf32>) -> tensor<1x1x3xf32>
  %4 = mpt.global_average_pool %x : (tensor<1x1x4xf32>) -> tensor<1x1x1xf32>
  return %0, %1, %2, %3, %4 : tensor<1x1x2xf32>, tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x1x3xf32>, tensor<1x1x1xf32>
}
)mlir",
                     {T({1, 1, 4}, {1, 5, -2, 3})});
  ASSERT_EQ(results.size(), 5u);
  expectTensor(results[0], {1, 1, 2}, {5, 3});
  expectTensor(results[1], {1, 1, 3}, {1, 5, 3});
  expectTensor(results[2], {1, 1, 3}, {1, 1.5, 3});
  // Windows [-1, 1), [1, 3), [3, 5): ceil_mode adds the last, whose
  // position 4 lies beyond the explicit pads and does not count.
  expectTensor(results[3], {1, 1, 3}, {1.0 / 2, 3.0 / 2, 3.0 / 1});
  expectTensor(results[4], {1, 1, 1}, {7.0 / 4});
}

TEST_F(ReferenceInterpreterTest, MaxPool2D) {
  RefTensor y = run1(R"mlir(
func.func @f(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %0 = mpt.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
)mlir",
                     {T({1, 1, 3, 3}, {1, 2, 3, 4, 9, 6, 7, 8, 0})});
  expectTensor(y, {1, 1, 2, 2}, {9, 9, 9, 9});
}

//===----------------------------------------------------------------------===//
// Normalisation, softmax and losses.
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, BatchNorm) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<2x2x1xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>, %m: tensor<2xf32>, %v: tensor<2xf32>)
    -> (tensor<2x2x1xf32>, tensor<2x2x1xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0 = mpt.batch_norm %x, %s, %b, %m, %v {epsilon = 0.0 : f32} : (tensor<2x2x1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x1xf32>
  %1, %2, %3 = mpt.batch_norm_train %x, %s, %b, %m, %v {epsilon = 0.0 : f32, momentum = 0.5 : f32} : (tensor<2x2x1xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2x1xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0, %1, %2, %3 : tensor<2x2x1xf32>, tensor<2x2x1xf32>, tensor<2xf32>, tensor<2xf32>
}
)mlir",
                     {T({2, 2, 1}, {1, 10, 3, 20}), T({2}, {2, 1}),
                      T({2}, {0, 5}), T({2}, {1, 10}), T({2}, {4, 25})});
  ASSERT_EQ(results.size(), 4u);
  expectTensor(results[0], {2, 2, 1}, {0, 5, 2, 7});
  // Channel 0: {1, 3}, mean 2, var 1; channel 1: {10, 20}, mean 15, var 25.
  // The running variance takes the unbiased variances 2 and 50.
  expectTensor(results[1], {2, 2, 1}, {-2, 4, 2, 6});
  expectTensor(results[2], {2}, {1.5, 12.5});
  expectTensor(results[3], {2}, {3, 37.5});
}

TEST_F(ReferenceInterpreterTest, LayerNormReturnsKeepdimsStatistics) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<2x2xf32>, %s: tensor<2xf32>, %b: tensor<2xf32>)
    -> (tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %0, %1, %2 = mpt.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 0.0 : f32} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %0, %1, %2 : tensor<2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}
)mlir",
                     {T({2, 2}, {1, 3, 0, 8}), T({2}, {1, 2}), T({2}, {0, 1})});
  ASSERT_EQ(results.size(), 3u);
  expectTensor(results[0], {2, 2}, {-1, 3, -1, 3});
  expectTensor(results[1], {2, 1}, {2, 4});
  expectTensor(results[2], {2, 1}, {1, 0.25});
}

TEST_F(ReferenceInterpreterTest, SoftmaxAndLogSoftmax) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0 = mpt.softmax %x {axis = 0 : i64} : tensor<2x2xf32>
  %1 = mpt.log_softmax %x {axis = 1 : i64} : tensor<2x2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}
)mlir",
                     {T({2, 2}, {0, 1, 0, 3})});
  ASSERT_EQ(results.size(), 2u);
  double s = 1 / (1 + std::exp(2.0));
  expectTensor(results[0], {2, 2}, {0.5, s, 0.5, 1 - s});
  double l1 = std::log(1 + std::exp(1.0)), l3 = std::log(1 + std::exp(3.0));
  expectTensor(results[1], {2, 2}, {-l1, 1 - l1, -l3, 3 - l3});
}

TEST_F(ReferenceInterpreterTest,
       SoftmaxCrossEntropyReductionsWeightsAndIgnoreIndex) {
  auto results =
      run(R"mlir(
func.func @f(%x: tensor<3x2xf32>, %t: tensor<3xi64>, %w: tensor<2xf32>)
    -> (tensor<f32>, tensor<3x2xf32>, tensor<f32>, tensor<3xf32>, tensor<f32>) {
  %0, %1 = mpt.softmax_cross_entropy_loss %x, %t, %w {ignore_index = 1 : i64} : (tensor<3x2xf32>, tensor<3xi64>, tensor<2xf32>) -> (tensor<f32>, tensor<3x2xf32>)
  %2, %3 = mpt.softmax_cross_entropy_loss %x, %t {reduction = #mpt.reduction<sum>} : (tensor<3x2xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<3x2xf32>)
  %4, %5 = mpt.softmax_cross_entropy_loss %x, %t {reduction = #mpt.reduction<none>} : (tensor<3x2xf32>, tensor<3xi64>) -> (tensor<3xf32>, tensor<3x2xf32>)
  %6 = mpt.nll_loss %1, %t, %w : (tensor<3x2xf32>, tensor<3xi64>, tensor<2xf32>) -> tensor<f32>
  return %0, %1, %2, %4, %6 : tensor<f32>, tensor<3x2xf32>, tensor<f32>, tensor<3xf32>, tensor<f32>
}
)mlir",
          {T({3, 2}, {0, 0, 1, 0, 0, 2}), T({3}, {0, 1, 0}), T({2}, {2, 3})});
  ASSERT_EQ(results.size(), 5u);
  double l2 = std::log(2.0), a = std::log(1 + std::exp(1.0)),
         b = std::log(1 + std::exp(2.0));
  // Per-sample -log p[t]: l2, a (class 1 of [1, 0]), b (class 0 of [0, 2]).
  expectTensor(results[1], {3, 2}, {-l2, -l2, 1 - a, -a, -b, 2 - b});
  // Sample 1 ignored; weights 2 each for the others.
  expectTensor(results[0], {}, {(2 * l2 + 2 * b) / 4});
  expectTensor(results[2], {}, {l2 + a + b});
  expectTensor(results[3], {3}, {l2, a, b});
  // nll with weights, mean: (2 l2 + 3 a + 2 b) / 7.
  expectTensor(results[4], {}, {(2 * l2 + 3 * a + 2 * b) / 7});
}

TEST_F(ReferenceInterpreterTest, LossRejectsALabelOutOfRange) {
  auto results = tryRun(R"mlir(
func.func @f(%x: tensor<1x2xf32>, %t: tensor<1xi64>) -> tensor<f32> {
  %0 = mpt.nll_loss %x, %t : (tensor<1x2xf32>, tensor<1xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}
)mlir",
                        {T({1, 2}, {0, 0}), T({1}, {2})});
  EXPECT_TRUE(failed(results));
  EXPECT_NE(diagnostics.find("label 2 outside [0, 2)"), std::string::npos)
      << diagnostics;
}

//===----------------------------------------------------------------------===//
// Reductions.
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, Reductions) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1xf32>, tensor<2xf32>) {
  %0 = mpt.reduce_sum %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = mpt.reduce_mean %x {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
  %2 = mpt.reduce_max %x {keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  %3 = mpt.reduce_sum %x : (tensor<2x3xf32>) -> tensor<1x1xf32>
  %4 = mpt.reduce_l2 %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0, %1, %2, %3, %4 : tensor<2x1xf32>, tensor<3xf32>, tensor<f32>, tensor<1x1xf32>, tensor<2xf32>
}
)mlir",
                     {T({2, 3}, {1, 2, 2, -4, 0, 3})});
  ASSERT_EQ(results.size(), 5u);
  expectTensor(results[0], {2, 1}, {5, -1});
  expectTensor(results[1], {3}, {-1.5, 1, 2.5});
  expectTensor(results[2], {}, {3});
  expectTensor(results[3], {1, 1}, {4});
  expectTensor(results[4], {2}, {3, 5});
}

//===----------------------------------------------------------------------===//
// Shape and data movement, constants.
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, ReshapesAndTranspose) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<6x1xf32>, tensor<1x2x3xf32>, tensor<2x3xf32>, tensor<2x2x3xf32>) {
  %0 = mpt.reshape %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = mpt.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = mpt.flatten %1 {axis = 2 : i64} : (tensor<3x2xf32>) -> tensor<6x1xf32>
  %3 = mpt.unsqueeze %x {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
  %4 = mpt.squeeze %3 {axes = array<i64: 0>} : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
  %5 = mpt.expand %3 : (tensor<1x2x3xf32>) -> tensor<2x2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<3x2xf32>, tensor<3x2xf32>, tensor<6x1xf32>, tensor<1x2x3xf32>, tensor<2x3xf32>, tensor<2x2x3xf32>
}
)mlir",
                     {T({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(results.size(), 6u);
  expectTensor(results[0], {3, 2}, {1, 2, 3, 4, 5, 6});
  expectTensor(results[1], {3, 2}, {1, 4, 2, 5, 3, 6});
  expectTensor(results[2], {6, 1}, {1, 4, 2, 5, 3, 6});
  expectTensor(results[3], {1, 2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(results[4], {2, 3}, {1, 2, 3, 4, 5, 6});
  expectTensor(results[5], {2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
}

TEST_F(ReferenceInterpreterTest, ConcatSplitSliceGatherTrilu) {
  auto results =
      run(R"mlir(
func.func @f(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>, %i: tensor<2xi64>)
    -> (tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = mpt.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %1:2 = mpt.split %x {axis = 1 : i64, sizes = array<i64: 1, 2>} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>)
  %2 = mpt.slice %x {starts = array<i64: 1, 2>, ends = array<i64: 2, -1>, steps = array<i64: 1, -2>} : (tensor<2x3xf32>) -> tensor<1x2xf32>
  %3 = mpt.gather %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  %4 = mpt.trilu %x {k = 1 : i64} : tensor<2x3xf32>
  %5 = mpt.trilu %x {upper = false} : tensor<2x3xf32>
  return %0, %1#0, %1#1, %2, %3, %4, %5 : tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
)mlir",
          {T({2, 3}, {1, 2, 3, 4, 5, 6}), T({2, 1}, {7, 8}), T({2}, {-1, 0})});
  ASSERT_EQ(results.size(), 7u);
  expectTensor(results[0], {2, 4}, {1, 2, 3, 7, 4, 5, 6, 8});
  expectTensor(results[1], {2, 1}, {1, 4});
  expectTensor(results[2], {2, 2}, {2, 3, 5, 6});
  expectTensor(results[3], {1, 2}, {6, 4});
  expectTensor(results[4], {2, 2}, {3, 1, 6, 4});
  expectTensor(results[5], {2, 3}, {0, 2, 3, 0, 0, 6});
  expectTensor(results[6], {2, 3}, {1, 0, 0, 4, 5, 0});
}

TEST_F(ReferenceInterpreterTest, GatherRejectsAnIndexOutOfRange) {
  auto results = tryRun(R"mlir(
func.func @f(%x: tensor<3xf32>, %i: tensor<1xi64>) -> tensor<1xf32> {
  %0 = mpt.gather %x, %i {axis = 0 : i64} : (tensor<3xf32>, tensor<1xi64>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
)mlir",
                        {T({3}, {1, 2, 3}), T({1}, {-4})});
  EXPECT_TRUE(failed(results));
  EXPECT_NE(diagnostics.find("index -4 outside [-3, 3)"), std::string::npos)
      << diagnostics;
}

TEST_F(ReferenceInterpreterTest, Constants) {
  auto results = run(R"mlir(
func.func @f(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x2xbf16>, tensor<3xi64>, tensor<2xi1>,
                                      tensor<2x2xf32>, tensor<4xi64>, tensor<2xi64>, tensor<2xf32>) {
  %0 = mpt.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %1 = mpt.constant dense<0.5> : tensor<2x2xbf16>
  %2 = mpt.constant dense<[-1, 0, 7]> : tensor<3xi64>
  %3 = mpt.constant dense<[true, false]> : tensor<2xi1>
  %4 = mpt.constant_of_shape {value = 3.0 : f32} : () -> tensor<2x2xf32>
  %s = mpt.constant dense<1> : tensor<i64>
  %l = mpt.constant dense<9> : tensor<i64>
  %d = mpt.constant dense<2> : tensor<i64>
  %5 = mpt.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %6 = mpt.shape %x : (tensor<2x3xf32>) -> tensor<2xi64>
  %7 = mpt.constant dense_resource<blob> : tensor<2xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2xf32>, tensor<2x2xbf16>, tensor<3xi64>, tensor<2xi1>, tensor<2x2xf32>, tensor<4xi64>, tensor<2xi64>, tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000C03F000020C0"
    }
  }
#-}
)mlir",
                     {T({2, 3}, {0, 0, 0, 0, 0, 0})});
  ASSERT_EQ(results.size(), 8u);
  expectTensor(results[0], {2}, {1.5, -2});
  expectTensor(results[1], {2, 2}, {0.5, 0.5, 0.5, 0.5});
  expectTensor(results[2], {3}, {-1, 0, 7});
  expectTensor(results[3], {2}, {1, 0});
  expectTensor(results[4], {2, 2}, {3, 3, 3, 3});
  expectTensor(results[5], {4}, {1, 3, 5, 7});
  expectTensor(results[6], {2}, {2, 3});
  expectTensor(results[7], {2}, {1.5, -2.5});
}

//===----------------------------------------------------------------------===//
// Errors.
//===----------------------------------------------------------------------===//

TEST_F(ReferenceInterpreterTest, UnknownOpFailsNamingIt) {
  auto results = tryRun(R"mlir(
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mpt.frobnicate"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)mlir",
                        {T({2}, {1, 2})});
  EXPECT_TRUE(failed(results));
  EXPECT_NE(diagnostics.find("no evaluator for 'mpt.frobnicate'"),
            std::string::npos)
      << diagnostics;
}

TEST_F(ReferenceInterpreterTest, ArgumentsMustMatchTheSignature) {
  auto results = tryRun(R"mlir(
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
)mlir",
                        {T({3}, {1, 2, 3})});
  EXPECT_TRUE(failed(results));
  EXPECT_NE(diagnostics.find("argument #0 does not match"), std::string::npos)
      << diagnostics;
}

} // namespace
