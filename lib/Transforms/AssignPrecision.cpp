//===- AssignPrecision.cpp - the --assign-precision pass ------------------===//
//
// Resolves the mode (auto from the target), compiles the overrides, then for
// every function: analyses (PrecisionPropagation.cpp), rewrites
// (PrecisionRewrite.cpp), and finally writes the report and the summary
// (PrecisionReport.cpp).
//
//===----------------------------------------------------------------------===//
#include "PrecisionPlan.h"

#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Transforms/Passes.h"
#include "mpt/Transforms/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mpt {
#define GEN_PASS_DEF_ASSIGNPRECISIONPASS
#include "mpt/Transforms/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;
using namespace mpt::precision;

namespace {

/// The oldest CUDA architecture with fast arithmetic in each mode.
std::optional<unsigned> minimumCapability(PrecisionMode mode) {
  switch (mode) {
  case PrecisionMode::BF16:
    return 80;
  case PrecisionMode::FP16:
    return 70;
  case PrecisionMode::FP8:
    return 89;
  default:
    return std::nullopt;
  }
}

struct AssignPrecisionPass
    : public mpt::impl::AssignPrecisionPassBase<AssignPrecisionPass> {
  using Base::Base;

  /// Accepts the mode bare: `assign-precision=bf16` and
  /// `assign-precision{fp16 report=r.json}` mean `mode=...`.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    StringRef trimmed = options.ltrim();
    StringRef first = trimmed.take_until([](char c) { return c == ' '; });
    if (!first.empty() && !first.contains('='))
      return Pass::initializeOptions(("mode=" + trimmed).str(), errorHandler);
    return Pass::initializeOptions(options, errorHandler);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    PrecisionMode resolved = mode;
    if (resolved == PrecisionMode::None) {
      // Only a C++ caller can set it: the option's values leave it out.
      module.emitError() << "assign-precision: 'none' is not a mode; leave "
                            "the pass out to keep the model's types";
      return signalPassFailure();
    }
    if (resolved == PrecisionMode::Auto) {
      std::string error;
      auto chosen = resolveAutoMode(target, error);
      if (failed(chosen)) {
        module.emitError() << "assign-precision: " << error;
        return signalPassFailure();
      }
      resolved = *chosen;
    } else if (!target.empty()) {
      std::string error;
      FailureOr<Target> t = parseTarget(target, error);
      if (failed(t)) {
        module.emitError() << "assign-precision: " << error;
        return signalPassFailure();
      }
      auto minimum = minimumCapability(resolved);
      if (minimum && !t->cpu && t->capability < *minimum)
        module.emitWarning()
            << "assign-precision: mode " << stringifyPrecisionMode(resolved)
            << " is forced on " << target << ", which has no fast "
            << stringifyPrecisionMode(resolved) << " arithmetic";
    }

    std::string error;
    auto overrides = PrecisionOverrides::create(
        &getContext(), keepFP32, forceLow, keepFP32Nodes, forceLowNodes, error);
    if (failed(overrides)) {
      module.emitError() << "assign-precision: " << error;
      return signalPassFailure();
    }

    std::optional<PrecisionProfile> profiled;
    if (!profile.empty()) {
      auto loaded = PrecisionProfile::load(profile, profileMargin,
                                           profileFlushLimit, error);
      if (failed(loaded)) {
        module.emitError() << "assign-precision: " << error;
        return signalPassFailure();
      }
      if (resolved != PrecisionMode::FP16) {
        StringRef why = resolved == PrecisionMode::BF16
                            ? "bf16 has FP32's range"
                        : resolved == PrecisionMode::FP8
                            ? "fp8 tensors are scaled from their measured amax"
                            : "nothing computes in a narrow format";
        module.emitWarning()
            << "assign-precision: the precision profile '" << profile
            << "' is used in fp16 mode only, not in "
            << stringifyPrecisionMode(resolved) << " mode (" << why << ")";
      }
      profiled = std::move(*loaded);
    }

    PlanOptions options;
    options.mode = resolved;
    options.overrides = &*overrides;
    options.profile = profiled ? &*profiled : nullptr;
    options.keepIOTypes = keepIOTypes;
    std::vector<FunctionReport> reports;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      auto plan = analyzePrecision(func, options);
      if (failed(plan))
        return signalPassFailure();
      FunctionReport report;
      report.plan = std::move(*plan);
      report.stats = applyPrecisionPlan(report.plan, keepIOTypes);
      if (warnUnknown)
        for (const OpRecord &rec : report.plan.records)
          if (rec.kind == OpKind::Unknown)
            rec.op->emitWarning()
                << "assign-precision: '" << rec.op->getName()
                << "' declares no precision policy; kept in its types";
      reports.push_back(std::move(report));
    }

    if (!report.empty() || summary)
      for (FunctionReport &r : reports)
        describeDecisions(r);
    if (!report.empty() &&
        failed(writeReport(report, reports, resolved, target, error))) {
      module.emitError() << "assign-precision: " << error;
      return signalPassFailure();
    }
    if (summary)
      printSummary(llvm::errs(), reports, resolved);
  }
};

} // namespace
