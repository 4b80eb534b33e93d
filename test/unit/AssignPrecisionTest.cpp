//===- AssignPrecisionTest.cpp - --assign-precision through the C++ API ---===//
//
// Embeds the pass the way a user program would (options struct, any pass
// manager) and checks the invariants on the real models: softmax, norms and
// losses in FP32, contractions on bf16 operands, at most one cast per
// producer and type, parameters FP32.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Import/ONNX/Importer.h"
#include "mpt/Transforms/Passes.h"
#include "mpt/Transforms/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mpt;

namespace {

std::unique_ptr<MLIRContext> makeContext() {
  DialectRegistry registry;
  registry.insert<MPTDialect, func::FuncDialect>();
  auto ctx = std::make_unique<MLIRContext>(registry);
  ctx->loadAllAvailableDialects();
  return ctx;
}

bool isBF16(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isBF16();
}
bool isF32(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF32();
}

/// An op as text, for failure messages.
std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

constexpr const char *kLayer = R"mlir(
func.func @layer(%x: tensor<4x8xf32>, %w: tensor<8x8xf32> {mpt.param = "w"}) -> tensor<4x8xf32> {
  %0 = mpt.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mpt.gelu %0 : tensor<4x8xf32>
  %2 = mpt.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %3 = mpt.softmax %2 {axis = 1 : i64} : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}
)mlir";

TEST(AssignPrecision, EmbedsWithAnOptionsStruct) {
  auto ctx = makeContext();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kLayer, ctx.get());
  ASSERT_TRUE(module);
  PassManager pm(ctx.get());
  AssignPrecisionPassOptions options;
  options.mode = PrecisionMode::FP16;
  options.keepFP32 = {"gelu"};
  pm.addPass(createAssignPrecisionPass(options));
  pm.addPass(createVerifyPrecisionPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));

  auto func = *module->getOps<func::FuncOp>().begin();
  SmallVector<MatMulOp> matmuls = llvm::to_vector(func.getOps<MatMulOp>());
  ASSERT_EQ(matmuls.size(), 2u);
  for (MatMulOp m : matmuls)
    EXPECT_TRUE(m.getLhs().getType().getElementType().isF16());
  // gelu is kept FP32, so the first matmul produces FP32 for it.
  EXPECT_TRUE(isF32(matmuls[0].getResult()));
  EXPECT_TRUE(isF32((*func.getOps<GeluOp>().begin()).getResult()));
}

// Tests that the pipelines' `none` (one enum with the pass's modes) is not a
// mode of the pass: a C++ caller that sets it gets an error, and the pass's
// option does not take it.
TEST(AssignPrecision, RefusesModeNone) {
  auto ctx = makeContext();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kLayer, ctx.get());
  ASSERT_TRUE(module);
  std::string diagnostics;
  ScopedDiagnosticHandler handler(ctx.get(), [&](Diagnostic &diag) {
    diagnostics += diag.str();
    return success();
  });
  PassManager pm(ctx.get());
  AssignPrecisionPassOptions options;
  options.mode = PrecisionMode::None;
  pm.addPass(createAssignPrecisionPass(options));
  EXPECT_TRUE(failed(pm.run(*module)));
  EXPECT_NE(diagnostics.find("'none' is not a mode"), std::string::npos)
      << diagnostics;

  registerAssignPrecisionPass();
  PassManager parsed(ctx.get());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  EXPECT_TRUE(failed(parsePassPipeline("assign-precision{none}", parsed, os)));
}

TEST(AssignPrecision, ParsesTheBareModeInATextualPipeline) {
  auto ctx = makeContext();
  registerAssignPrecisionPass();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kLayer, ctx.get());
  ASSERT_TRUE(module);
  PassManager pm(ctx.get());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  ASSERT_TRUE(succeeded(
      parsePassPipeline("assign-precision{fp16 keep-fp32=gelu}", pm, os)))
      << errors;
  std::string text;
  llvm::raw_string_ostream printed(text);
  pm.printAsTextualPipeline(printed);
  EXPECT_NE(text.find("mode=fp16"), std::string::npos) << text;
  EXPECT_NE(text.find("keep-fp32={gelu}"), std::string::npos) << text;
  EXPECT_TRUE(failed(parsePassPipeline("assign-precision{bf17}", pm, os)));
}

TEST(AssignPrecision, ResolvesAutoFromTheTarget) {
  std::string error;
  EXPECT_EQ(*resolveAutoMode("sm_90", error), PrecisionMode::BF16);
  EXPECT_EQ(*resolveAutoMode("sm_90a", error), PrecisionMode::BF16);
  EXPECT_EQ(*resolveAutoMode("sm_80", error), PrecisionMode::BF16);
  EXPECT_EQ(*resolveAutoMode("sm_120", error), PrecisionMode::BF16);
  EXPECT_EQ(*resolveAutoMode("sm_75", error), PrecisionMode::FP16);
  EXPECT_EQ(*resolveAutoMode("sm_70", error), PrecisionMode::FP16);
  EXPECT_EQ(*resolveAutoMode("sm_61", error), PrecisionMode::FP32);
  EXPECT_EQ(*resolveAutoMode("cpu", error), PrecisionMode::FP32);
  EXPECT_TRUE(failed(resolveAutoMode("", error)));
  EXPECT_TRUE(failed(resolveAutoMode("sm_", error)));
  EXPECT_TRUE(failed(resolveAutoMode("gfx90a", error)));
}

// Tests the layout conv-layout=auto picks for a target (Target.h): NHWC
// for sm_70 and newer, NCHW for the CPU, older GPUs and no target; an
// explicit layout is kept whatever the target.
TEST(Target, ResolvesTheConvLayout) {
  EXPECT_EQ(resolveConvLayout(ConvLayout::Auto, "sm_90a"), ConvLayout::NHWC);
  EXPECT_EQ(resolveConvLayout(ConvLayout::Auto, "sm_70"), ConvLayout::NHWC);
  EXPECT_EQ(resolveConvLayout(ConvLayout::Auto, "sm_61"), ConvLayout::NCHW);
  EXPECT_EQ(resolveConvLayout(ConvLayout::Auto, "cpu"), ConvLayout::NHWC);
  EXPECT_EQ(resolveConvLayout(ConvLayout::Auto, ""), ConvLayout::NHWC);
  EXPECT_EQ(resolveConvLayout(ConvLayout::NCHW, ""), ConvLayout::NCHW);
  EXPECT_EQ(resolveConvLayout(ConvLayout::NCHW, "cpu"), ConvLayout::NCHW);
  EXPECT_EQ(resolveConvLayout(ConvLayout::NCHW, "sm_90"), ConvLayout::NCHW);
  std::string error;
  FailureOr<Target> t = parseTarget("sm_100f", error);
  ASSERT_TRUE(succeeded(t));
  EXPECT_FALSE(t->cpu);
  EXPECT_EQ(t->capability, 100u);
  EXPECT_TRUE(parseTarget("cpu", error)->cpu);
  for (const char *bad : {"", "sm_", "sm_9", "gfx90a", "CPU"}) {
    EXPECT_TRUE(failed(parseTarget(bad, error))) << bad;
    EXPECT_NE(error.find("expected sm_XY"), std::string::npos) << error;
  }
}

/// Runs bf16 assignment on a fixture and checks the invariants.
void checkModel(const char *name, unsigned expectedContractions) {
  auto ctx = makeContext();
  std::string path = std::string(MPT_FIXTURES_DIR) + "/" + name + "/model.onnx";
  OnnxImportResult imported = importOnnxFile(path, *ctx);
  ASSERT_EQ(imported.status, OnnxImportStatus::Imported) << path;
  PassManager pm(ctx.get());
  AssignPrecisionPassOptions options;
  options.mode = PrecisionMode::BF16;
  pm.addPass(createAssignPrecisionPass(options));
  ASSERT_TRUE(succeeded(pm.run(*imported.module)));

  auto func = *imported.module->getOps<func::FuncOp>().begin();
  unsigned contractions = 0;
  llvm::DenseMap<std::pair<Value, Type>, unsigned> castsPerProducer;
  func.walk([&](Operation *op) {
    if (isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, SoftmaxCrossEntropyLossOp,
            NegativeLogLikelihoodLossOp>(op)) {
      for (Value v : op->getOperands()) {
        if (isa<FloatType>(cast<ShapedType>(v.getType()).getElementType())) {
          EXPECT_TRUE(isF32(v)) << name << ": " << describe(op);
        }
      }
      for (Value v : op->getResults()) {
        EXPECT_TRUE(isF32(v)) << name << ": " << describe(op);
      }
    }
    if (isa<MatMulOp, GemmOp, ConvOp>(op)) {
      ++contractions;
      EXPECT_TRUE(isBF16(op->getOperand(0)) && isBF16(op->getOperand(1)))
          << name << ": " << describe(op);
    }
    if (auto c = dyn_cast<CastOp>(op)) {
      unsigned count = ++castsPerProducer[{c.getInput(), c.getType()}];
      EXPECT_LE(count, 1u) << name << ": two casts of one producer";
    }
  });
  EXPECT_EQ(contractions, expectedContractions) << name;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (func.getArgAttr(i, kParamAttrName)) {
      EXPECT_TRUE(isF32(func.getArgument(i))) << name << " argument " << i;
    }
  }
}

TEST(AssignPrecision, GptInvariants) { checkModel("gpt", 13); }
TEST(AssignPrecision, ResNet18Invariants) { checkModel("resnet18", 21); }
TEST(AssignPrecision, MobileNetV2Invariants) { checkModel("mobilenetv2", 53); }

} // namespace
