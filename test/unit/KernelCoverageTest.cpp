//===- KernelCoverageTest.cpp - every mpt op the lowering can emit runs ---===//
//
// The lowering turns each mpt op into the mptrt kernel of the same name
// (whose kind mpt-mptrt-schema-test keeps equal to KernelSchema.def). This
// checks that the CPU backend has a kernel for every op of the dialect
// except those that never reach a plan: `constant` (plan data) and `range`
// / `shape` (folded to constants, refused by the conversion otherwise).
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTDialect.h"

#include "mptrt.h"

#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <set>
#include <string>

TEST(KernelCoverage, EveryOpHasACpuKernel) {
  mlir::MLIRContext context;
  context.loadDialect<mpt::MPTDialect>();
  const std::set<std::string> compileTimeOnly = {"constant", "range", "shape"};
  int checked = 0;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations()) {
    if (op.getDialectNamespace() != "mpt")
      continue;
    std::string kind = op.getStringRef().drop_front(4).str(); // "mpt."
    int has = -1;
    ASSERT_EQ(mptrt_backend_has_kernel("cpu", kind.c_str(), &has), MPTRT_OK)
        << mptrt_last_error();
    if (compileTimeOnly.count(kind))
      EXPECT_EQ(has, 0) << kind << " has a kernel now; drop it from the list";
    else
      EXPECT_EQ(has, 1) << "mpt." << kind << " has no CPU kernel";
    ++checked;
  }
  EXPECT_GT(checked, 50);
}
