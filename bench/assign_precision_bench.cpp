//===- assign_precision_bench.cpp - --assign-precision at scale -----------===//
//
// Builds synthetic transformer-like graphs of N ops in memory and times the
// --assign-precision pass on them, to show that it runs in linear time.
//
//   mpt-bench-assign-precision [--mode=bf16|fp16|fp8] [N ...]
//
// Each layer is 12 ops that exercise every rule: layer_norm (require-f32),
// matmul (always-low), bias add and gelu (follow, between low ops),
// transpose and reshape (clear), softmax (require-f32), a mul downstream of
// it (follow, stays FP32), and the residual add. Weights come from a pool of
// 64 parameters. The time printed is the pass alone (no IR verification),
// the minimum of the runs.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;
using namespace mpt;

namespace {

constexpr int64_t kPool = 64;
constexpr int64_t kOpsPerLayer = 12;

/// Creates `name` with inferred or given result types through the generic
/// path, as the importer does.
Operation *make(OpBuilder &b, Location loc, StringRef name, TypeRange results,
                ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
  OperationState state(loc, name);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(results);
  return b.create(state);
}

OwningOpRef<ModuleOp> buildGraph(MLIRContext &ctx, int64_t layers) {
  OpBuilder b(&ctx);
  Location unknown = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(unknown);
  b.setInsertionPointToEnd(module->getBody());

  Type f32 = b.getF32Type();
  auto act = RankedTensorType::get({8, 16}, f32);
  auto actT = RankedTensorType::get({16, 8}, f32);
  auto weight = RankedTensorType::get({16, 16}, f32);
  auto vec = RankedTensorType::get({16}, f32);
  auto stat = RankedTensorType::get({8, 1}, f32);

  SmallVector<Type> inputs = {act};
  for (int64_t i = 0; i < kPool; ++i)
    inputs.append({weight, weight, weight, vec, vec});
  auto func = func::FuncOp::create(b, unknown, "forward",
                                   b.getFunctionType(inputs, {act}));
  func.setArgAttr(0, kInputAttrName, b.getStringAttr("x"));
  for (int64_t i = 1; i < func.getNumArguments(); ++i)
    func.setArgAttr(i, kParamAttrName,
                    b.getStringAttr("p" + std::to_string(i)));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  auto segments = b.getNamedAttr("operandSegmentSizes",
                                 b.getDenseI32ArrayAttr({1, 1, 0, 0}));
  auto axis1 = b.getNamedAttr("axis", b.getI64IntegerAttr(1));
  auto perm = b.getNamedAttr("perm", b.getDenseI64ArrayAttr({1, 0}));
  Value x = entry->getArgument(0);
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::string prefix = "/layers." + std::to_string(layer) + "/";
    auto loc = [&](const char *node) {
      return NameLoc::get(b.getStringAttr(prefix + node));
    };
    int64_t base = 1 + 5 * (layer % kPool);
    Value w1 = entry->getArgument(base), w2 = entry->getArgument(base + 1),
          w3 = entry->getArgument(base + 2),
          bias = entry->getArgument(base + 3),
          gain = entry->getArgument(base + 4);

    Value ln = make(b, loc("ln/LayerNormalization"), "mpt.layer_norm",
                    {act, stat, stat}, {x, gain}, {axis1})
                   ->getResult(0);
    Value h =
        make(b, loc("fc1/MatMul"), "mpt.matmul", {act}, {ln, w1}, {segments})
            ->getResult(0);
    h = make(b, loc("fc1/Add"), "mpt.add", {act}, {h, bias})->getResult(0);
    h = make(b, loc("act/Gelu"), "mpt.gelu", {act}, {h})->getResult(0);
    h = make(b, loc("Transpose"), "mpt.transpose", {actT}, {h}, {perm})
            ->getResult(0);
    h = make(b, loc("Reshape"), "mpt.reshape", {act}, {h})->getResult(0);
    Value s =
        make(b, loc("scores/MatMul"), "mpt.matmul", {act}, {h, w2}, {segments})
            ->getResult(0);
    s = make(b, loc("Softmax"), "mpt.softmax", {act}, {s}, {axis1})
            ->getResult(0);
    s = make(b, loc("Mul"), "mpt.mul", {act}, {s, s})->getResult(0);
    Value o =
        make(b, loc("out/MatMul"), "mpt.matmul", {act}, {s, w3}, {segments})
            ->getResult(0);
    o = make(b, loc("out/Add"), "mpt.add", {act}, {o, bias})->getResult(0);
    x = make(b, loc("residual/Add"), "mpt.add", {act}, {x, o})->getResult(0);
  }
  func::ReturnOp::create(b, unknown, ValueRange{x});
  return module;
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

} // namespace

int main(int argc, char **argv) {
  PrecisionMode mode = PrecisionMode::BF16;
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--mode=bf16")
      mode = PrecisionMode::BF16;
    else if (arg == "--mode=fp16")
      mode = PrecisionMode::FP16;
    else if (arg == "--mode=fp8")
      mode = PrecisionMode::FP8;
    else if (arg.rfind("--", 0) == 0) {
      llvm::errs() << "usage: " << argv[0]
                   << " [--mode=bf16|fp16|fp8] [ops ...]\n";
      return 2;
    } else
      sizes.push_back(std::atoll(arg.c_str()));
  }
  if (sizes.empty())
    sizes = {10000, 100000, 1000000};

  DialectRegistry registry;
  registry.insert<MPTDialect, func::FuncDialect>();
  MLIRContext ctx(registry);
  ctx.disableMultithreading();
  ctx.loadAllAvailableDialects();

  llvm::outs() << "assign-precision benchmark, mode "
               << stringifyPrecisionMode(mode) << "\n";
  llvm::outs() << "      ops    build s     pass s    ns/op   casts\n";
  for (int64_t target : sizes) {
    int64_t layers = std::max<int64_t>(1, target / kOpsPerLayer);
    int runs = target >= 1000000 ? 1 : 3;
    double best = 1e30, build = 0;
    int64_t ops = 0, casts = 0;
    for (int run = 0; run < runs; ++run) {
      auto t0 = std::chrono::steady_clock::now();
      OwningOpRef<ModuleOp> module = buildGraph(ctx, layers);
      auto t1 = std::chrono::steady_clock::now();
      build = seconds(t1 - t0);
      PassManager pm(&ctx);
      pm.enableVerifier(false);
      AssignPrecisionPassOptions options;
      options.mode = mode;
      pm.addPass(createAssignPrecisionPass(options));
      auto t2 = std::chrono::steady_clock::now();
      if (failed(pm.run(*module))) {
        llvm::errs() << "pass failed\n";
        return 1;
      }
      auto t3 = std::chrono::steady_clock::now();
      best = std::min(best, seconds(t3 - t2));
      ops = layers * kOpsPerLayer;
      casts = 0;
      module->walk(
          [&](Operation *op) { casts += isa<CastOp, QuantizeOp>(op); });
    }
    llvm::outs() << llvm::format(
        "%9lld %10.3f %10.3f %8.0f %7lld\n", static_cast<long long>(ops), build,
        best, best * 1e9 / ops, static_cast<long long>(casts));
  }
  return 0;
}
