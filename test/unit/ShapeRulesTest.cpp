//===- ShapeRulesTest.cpp - broadcasting, axes and folding ----------------===//
#include "mpt/Dialect/MPT/IR/MPTOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Matchers.h"
#include "gtest/gtest.h"

using namespace mlir;

namespace {

TEST(BroadcastShapes, NumpyRules) {
  using V = SmallVector<int64_t>;
  EXPECT_EQ(*mpt::broadcastShapes({2, 3}, {3}), (V{2, 3}));
  EXPECT_EQ(*mpt::broadcastShapes({2, 1, 4}, {3, 1}), (V{2, 3, 4}));
  EXPECT_EQ(*mpt::broadcastShapes({}, {5}), (V{5}));
  EXPECT_EQ(*mpt::broadcastShapes({1}, {0}), (V{0}));
  EXPECT_FALSE(mpt::broadcastShapes({2, 3}, {4}).has_value());
  EXPECT_FALSE(mpt::broadcastShapes({2}, {3}).has_value());
}

TEST(NormalizeAxis, Range) {
  EXPECT_EQ(mpt::normalizeAxis(-1, 3), 2);
  EXPECT_EQ(mpt::normalizeAxis(0, 3), 0);
  EXPECT_EQ(mpt::normalizeAxis(-3, 3), 0);
  EXPECT_FALSE(mpt::normalizeAxis(3, 3).has_value());
  EXPECT_FALSE(mpt::normalizeAxis(-4, 3).has_value());
}

class FoldTest : public ::testing::Test {
protected:
  void SetUp() override {
    ctx.loadDialect<mpt::MPTDialect, func::FuncDialect>();
    module = ModuleOp::create(UnknownLoc::get(&ctx));
    b.setInsertionPointToEnd(module->getBody());
  }
  Value constant(ArrayRef<int64_t> values, ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, b.getI64Type());
    return mpt::ConstantOp::create(b, b.getUnknownLoc(),
                                   DenseIntElementsAttr::get(type, values));
  }
  SmallVector<int64_t> folded(Value v) {
    DenseIntElementsAttr attr;
    EXPECT_TRUE(matchPattern(v, m_Constant(&attr)));
    return SmallVector<int64_t>(attr.getValues<int64_t>());
  }
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  OpBuilder b{&ctx};
};

TEST_F(FoldTest, IntegerArithmeticBroadcasts) {
  Value lhs = constant({1, 2, 3, 4, 5, 6}, {2, 3});
  Value rhs = constant({10, 20, 30}, {3});
  Value sum = b.createOrFold<mpt::AddOp>(b.getUnknownLoc(), lhs, rhs);
  EXPECT_EQ(folded(sum), (SmallVector<int64_t>{11, 22, 33, 14, 25, 36}));
  Value quot =
      b.createOrFold<mpt::DivOp>(b.getUnknownLoc(), lhs, constant({2}, {1}));
  EXPECT_EQ(folded(quot), (SmallVector<int64_t>{0, 1, 1, 2, 2, 3}));
}

TEST_F(FoldTest, DivisionByZeroIsNotFolded) {
  Value lhs = constant({1, 2}, {2});
  Value q =
      b.createOrFold<mpt::DivOp>(b.getUnknownLoc(), lhs, constant({0}, {1}));
  EXPECT_TRUE(isa_and_nonnull<mpt::DivOp>(q.getDefiningOp()));
}

TEST_F(FoldTest, GatherConcatTranspose) {
  Value data = constant({7, 8, 9, 10, 11, 12}, {2, 3});
  Value idx = constant({2, 0}, {2});
  Value g = b.createOrFold<mpt::GatherOp>(b.getUnknownLoc(), data, idx,
                                          b.getI64IntegerAttr(1));
  EXPECT_EQ(folded(g), (SmallVector<int64_t>{9, 7, 12, 10}));
  Value t = b.createOrFold<mpt::TransposeOp>(b.getUnknownLoc(), data,
                                             b.getDenseI64ArrayAttr({1, 0}));
  EXPECT_EQ(folded(t), (SmallVector<int64_t>{7, 10, 8, 11, 9, 12}));
  Value c = b.createOrFold<mpt::ConcatOp>(
      b.getUnknownLoc(), ValueRange{data, constant({1, 2}, {2, 1})},
      b.getI64IntegerAttr(1));
  EXPECT_EQ(folded(c), (SmallVector<int64_t>{7, 8, 9, 1, 10, 11, 12, 2}));
}

TEST_F(FoldTest, SliceWithNegativeStep) {
  Value data = constant({0, 1, 2, 3, 4}, {5});
  Value s = b.createOrFold<mpt::SliceOp>(
      b.getUnknownLoc(), data, b.getDenseI64ArrayAttr({4}),
      b.getDenseI64ArrayAttr({-1}), b.getDenseI64ArrayAttr({-2}));
  EXPECT_EQ(folded(s), (SmallVector<int64_t>{4, 2, 0}));
}

} // namespace
