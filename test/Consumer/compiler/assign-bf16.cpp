// Parses a small mpt module, runs MPT's precision assignment in bf16 in its
// own PassManager, and prints the result.
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

static const char kModule[] = R"mlir(
func.func @mlp(%x: tensor<4x8xf32> {mpt.input = "x"}, %w: tensor<8x16xf32> {mpt.param = "w"})
    -> (tensor<4x16xf32> {mpt.output = "y"}) {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = mpt.softmax %0 {axis = 1 : i64} : tensor<4x16xf32>
  return %1 : tensor<4x16xf32>
}
)mlir";

int main() {
  mlir::DialectRegistry registry;
  registry.insert<mpt::MPTDialect, mlir::func::FuncDialect>();
  mlir::MLIRContext context(registry);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  mpt::AssignPrecisionPassOptions options;
  options.mode = mpt::PrecisionMode::BF16;
  pm.addPass(mpt::createAssignPrecisionPass(options));
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
