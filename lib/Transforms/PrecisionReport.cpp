//===- PrecisionReport.cpp - the decision report and summary --------------===//
//
// The JSON report lists every op with a float value: its node name, the
// precision chosen, why (category, propagation or override), its
// accumulation type; then the totals: ops converted, casts inserted.
// docs/precision.md shows the format.
//
//===----------------------------------------------------------------------===//
#include "PrecisionPlan.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;

namespace mpt::precision {
namespace {

std::string typeName(Type type) {
  if (!type)
    return {};
  std::string text;
  llvm::raw_string_ostream os(text);
  elementTypeOf(type).print(os);
  return text;
}

bool listed(const OpRecord &rec) {
  return rec.op && rec.kind != OpKind::Ignored && rec.kind != OpKind::Return &&
         rec.kind != OpKind::Inserted;
}

/// The totals of one function or of all.
struct Totals {
  unsigned ops = 0, converted = 0, keptF32 = 0, unknown = 0;
  RewriteStats stats;
  std::map<std::string, unsigned> reasons;

  void add(const FunctionReport &report) {
    const auto &records = report.plan.records;
    for (size_t i = 0; i < records.size(); ++i) {
      const OpRecord &rec = records[i];
      if (!listed(rec))
        continue;
      ++ops;
      unknown += rec.kind == OpKind::Unknown;
      if (rec.kind == OpKind::Policy)
        (report.lowCompute[i] ? converted : keptF32) += 1;
      ++reasons[stringifyReason(rec.reason).str()];
    }
    stats.castsInserted += report.stats.castsInserted;
    stats.quantizesInserted += report.stats.quantizesInserted;
    stats.constantsConverted += report.stats.constantsConverted;
    stats.staleCastsRemoved += report.stats.staleCastsRemoved;
    stats.scaleArguments += report.stats.scaleArguments;
    stats.retypedInputs += report.stats.retypedInputs;
    stats.retypedOutputs += report.stats.retypedOutputs;
  }

  void write(llvm::json::OStream &j) const {
    j.attribute("ops", ops);
    j.attribute("converted", converted);
    j.attribute("kept_f32", keptF32);
    j.attribute("unknown_ops", unknown);
    j.attribute("casts_inserted", stats.castsInserted);
    j.attribute("quantizes_inserted", stats.quantizesInserted);
    j.attribute("constants_converted", stats.constantsConverted);
    j.attribute("inserted_casts_removed", stats.staleCastsRemoved);
    j.attribute("fp8_scale_inputs", stats.scaleArguments);
    j.attribute("retyped_inputs", stats.retypedInputs);
    j.attribute("retyped_outputs", stats.retypedOutputs);
    j.attributeObject("reasons", [&] {
      for (const auto &[reason, count] : reasons)
        j.attribute(reason, count);
    });
  }
};
} // namespace

void describeDecisions(FunctionReport &report) {
  auto &records = report.plan.records;
  report.computeTypes.assign(records.size(), {});
  report.resultTypes.assign(records.size(), {});
  report.lowCompute.assign(records.size(), false);
  for (size_t i = 0; i < records.size(); ++i) {
    const OpRecord &rec = records[i];
    if (!listed(rec))
      continue;
    Operation *op = rec.op;
    PrecisionPolicyOpInterface policy = rec.policy;
    Type compute, result;
    if (rec.kind == OpKind::Policy) {
      for (OpOperand &operand : op->getOpOperands())
        if (isFloatLike(operand.get().getType()) &&
            policy.getOperandPrecisionRole(operand.getOperandNumber()) ==
                PrecisionRole::Compute) {
          compute = operand.get().getType();
          break;
        }
      for (OpResult r : op->getResults())
        if (isFloatLike(r.getType()) &&
            policy.getResultPrecisionRole(r.getResultNumber()) ==
                PrecisionRole::Compute) {
          result = r.getType();
          break;
        }
    } else {
      for (Type t : op->getResultTypes())
        if (isFloatLike(t)) {
          compute = t;
          break;
        }
      if (!compute)
        for (Type t : op->getOperandTypes())
          if (isFloatLike(t)) {
            compute = t;
            break;
          }
    }
    if (!compute)
      compute = result;
    report.computeTypes[i] = typeName(compute);
    report.lowCompute[i] = compute && isBelowF32(compute);
    if (result && elementTypeOf(result) != elementTypeOf(compute))
      report.resultTypes[i] = typeName(result);
  }
}

LogicalResult writeReport(StringRef path, ArrayRef<FunctionReport> functions,
                          PrecisionMode mode, StringRef target,
                          std::string &error) {
  std::error_code ec;
  std::unique_ptr<llvm::raw_fd_ostream> file;
  if (path != "-") {
    file = std::make_unique<llvm::raw_fd_ostream>(path, ec,
                                                  llvm::sys::fs::OF_Text);
    if (ec) {
      error = ("cannot write report '" + path + "': " + ec.message()).str();
      return failure();
    }
  }
  llvm::raw_ostream &os = file ? *file : llvm::outs();
  llvm::json::OStream j(os, /*IndentSize=*/2);
  Totals all;
  j.object([&] {
    j.attribute("mode", stringifyPrecisionMode(mode));
    if (!target.empty())
      j.attribute("target", target);
    j.attributeArray("functions", [&] {
      for (const FunctionReport &report : functions) {
        Totals totals;
        totals.add(report);
        all.add(report);
        j.object([&] {
          func::FuncOp func = report.plan.func;
          j.attribute("name", func.getSymName());
          j.attributeArray("ops", [&] {
            const auto &records = report.plan.records;
            for (size_t i = 0; i < records.size(); ++i) {
              const OpRecord &rec = records[i];
              if (!listed(rec))
                continue;
              PrecisionPolicyOpInterface policy = rec.policy;
              j.object([&] {
                j.attribute("node", onnxNodeName(rec.op->getLoc()));
                j.attribute("op", rec.op->getName().getStringRef());
                if (policy)
                  j.attribute("category", stringifyPrecisionCategory(
                                              policy.getPrecisionCategory()));
                j.attribute("precision", report.computeTypes[i]);
                if (!report.resultTypes[i].empty())
                  j.attribute("result", report.resultTypes[i]);
                if (policy)
                  if (Type acc = policy.getAccumulationType())
                    j.attribute("accumulation", typeName(acc));
                j.attribute("reason", stringifyReason(rec.reason));
                if (rec.reason == Reason::ProfileOverflow ||
                    rec.reason == Reason::ProfileUnderflow)
                  j.attributeObject("measured", [&] {
                    j.attribute("max_abs", rec.measuredMaxAbs);
                    j.attribute("fp16_flush", rec.measuredFlush);
                  });
              });
            }
          });
          j.attributeObject("totals", [&] { totals.write(j); });
        });
      }
    });
    j.attributeObject("totals", [&] { all.write(j); });
  });
  os << "\n";
  return success();
}

void printSummary(llvm::raw_ostream &os, ArrayRef<FunctionReport> functions,
                  PrecisionMode mode) {
  Totals all;
  for (const FunctionReport &report : functions)
    all.add(report);
  StringRef low = mode == PrecisionMode::FP16   ? "f16"
                  : mode == PrecisionMode::FP32 ? "low precision"
                                                : "bf16";
  os << "assign-precision: mode " << stringifyPrecisionMode(mode)
     << ": converted " << all.converted << "/" << (all.converted + all.keptF32)
     << " ops to " << low << " using " << all.stats.castsInserted << " casts";
  if (all.stats.quantizesInserted)
    os << " and " << all.stats.quantizesInserted << " fp8 quantizes ("
       << all.stats.scaleArguments << " scale inputs)";
  os << "\n";
  os << "  " << all.stats.constantsConverted << " constants converted, "
     << all.stats.staleCastsRemoved << " earlier inserted casts removed, "
     << all.unknown << " ops without a policy kept FP32\n";
  os << "  reasons:";
  for (const auto &[reason, count] : all.reasons)
    os << " " << reason << "=" << count;
  os << "\n";
}

} // namespace mpt::precision
