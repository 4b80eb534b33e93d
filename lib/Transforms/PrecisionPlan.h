//===- PrecisionPlan.h - precision decisions of one function ----*- C++ -*-===//
//
// The data `--assign-precision` passes between its steps: the overrides
// (PrecisionOverrides.cpp), the whole-graph analysis that decides every op
// (PrecisionPropagation.cpp), the rewrite that applies the decisions
// (PrecisionRewrite.cpp) and the report (PrecisionReport.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MPT_LIB_TRANSFORMS_PRECISIONPLAN_H
#define MPT_LIB_TRANSFORMS_PRECISIONPLAN_H

#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Interfaces/PrecisionPolicyOpInterface.h"
#include "mpt/Transforms/PrecisionMode.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

#include <optional>
#include <string>
#include <vector>

namespace mpt::precision {

/// How an op takes part in the plan.
enum class OpKind : uint8_t {
  /// Has a precision policy and float values: the analysis decides it.
  Policy,
  /// Has a policy but no float operand it computes on (constants, ranges of
  /// integers): its results are sources that consumers convert as needed.
  Source,
  /// A conversion (`fixed` category): types kept as written.
  Fixed,
  /// A cast or quantize a previous run inserted: looked through, re-derived,
  /// and erased once unused.
  Inserted,
  /// The function's return: the graph outputs.
  Return,
  /// No policy but float values: kept FP32 and counted.
  Unknown,
  /// No float values at all (shape arithmetic on integers).
  Ignored,
};

/// What an analysed op computes in.
enum class Decision : uint8_t {
  /// Not decided by the analysis (see OpKind).
  None,
  /// The mode's low-precision type.
  Low,
  /// FP32.
  F32,
  /// A `clear` op without float results (a comparison, `shape`): it takes
  /// the type its inputs end up with, since it changes no value.
  MatchInputs,
};

/// Why an op got its decision; the report prints these.
enum class Reason : uint8_t {
  Category,
  BetweenLowOps,
  FeedsLowOnly,
  DownstreamOfF32,
  NoLowInput,
  NoLowUser,
  MatchesInputs,
  KeepFP32Type,
  ForceLowType,
  KeepFP32Node,
  ForceLowNode,
  Attribute,
  FP16Range,
  ProfileOverflow,
  ProfileUnderflow,
  ModeFP32,
  Source,
  Fixed,
  Unknown,
  Output,
};

/// The reason as the report spells it ("between-low-ops", ...).
llvm::StringRef stringifyReason(Reason reason);

/// The decision for one op.
struct OpRecord {
  mlir::Operation *op = nullptr;
  PrecisionPolicyOpInterface policy;
  OpKind kind = OpKind::Ignored;
  /// The category after overrides.
  PrecisionCategory category = PrecisionCategory::Clear;
  Decision decision = Decision::None;
  Reason reason = Reason::Category;
  /// Forward walk: every float input is low or free and one is low.
  bool lowInputs = false;
  /// Forward walk: the op's float inputs are free (parameters, inputs,
  /// constants and exact ops over them only).
  bool freeInputs = false;
  /// fp16 mode: a float input or result may exceed the FP16 range.
  bool large = false;
  /// A `wide-result` op's result element type when it differs from the
  /// compute type (an FP32 result of a bf16 contraction).
  mlir::Type resultElementType;
  /// Compute operands go to FP8 with scales (fp8 mode).
  bool fp8Operands = false;
  /// The op carried FP8 scales that a previous run attached.
  bool hasScales = false;
  /// A profile reason: the node's measured max |x| and the fraction of its
  /// values fp16 would flush (for the report).
  double measuredMaxAbs = 0, measuredFlush = 0;
};

/// The user's overrides, compiled.
class PrecisionOverrides {
public:
  /// Builds the overrides; fails with a message in `error` on an op type
  /// that names no mpt op, or a bad glob.
  static llvm::FailureOr<PrecisionOverrides>
  create(mlir::MLIRContext *ctx, llvm::ArrayRef<std::string> keepFP32Types,
         llvm::ArrayRef<std::string> forceLowTypes,
         llvm::ArrayRef<std::string> keepFP32Nodes,
         llvm::ArrayRef<std::string> forceLowNodes, std::string &error);

  /// An override: the category it sets and why.
  struct Override {
    PrecisionCategory category;
    Reason reason;
  };

  /// Sets `result` to the override of `op`, if any. Fails with a
  /// diagnostic at `op` on a bad `mpt.precision` value.
  llvm::LogicalResult lookup(mlir::Operation *op,
                             std::optional<Override> &result) const;

private:
  llvm::StringSet<> keepFP32Types, forceLowTypes;
  std::vector<llvm::GlobPattern> keepFP32Nodes, forceLowNodes;
};

/// The largest finite FP16 value.
inline constexpr double kFP16Max = 65504.0;

/// Ranges measured by `mpt-train --collect-ranges` (PrecisionProfile.cpp),
/// per ONNX node: what its forward results held.
class PrecisionProfile {
public:
  /// Reads a ranges file; fails with a message in `error`. `margin` is in
  /// doublings (binades) below fp16's largest value; `flushLimit` the
  /// largest fraction of values fp16 may flush to zero.
  static llvm::FailureOr<PrecisionProfile> load(llvm::StringRef path,
                                                double margin,
                                                double flushLimit,
                                                std::string &error);
  struct NodeRange {
    double maxAbs = 0;  // the largest |x| of its forward results
    double flushed = 0; // values fp16 would flush to zero
    double count = 0;   // values seen
  };
  enum class Verdict { Fits, Overflows, Underflows };
  /// Whether the node's measured values fit fp16 (nodes not measured fit).
  Verdict fp16Verdict(llvm::StringRef node) const;
  const NodeRange *find(llvm::StringRef node) const;

  std::string path;
  double margin = 1.0, flushLimit = 0.01;

private:
  llvm::StringMap<NodeRange> nodes;
};

/// Inputs to the analysis.
struct PlanOptions {
  PrecisionMode mode = PrecisionMode::BF16;
  const PrecisionOverrides *overrides = nullptr;
  /// Measured ranges (fp16 mode): nodes that overflow or flush stay FP32.
  const PrecisionProfile *profile = nullptr;
  bool keepIOTypes = true;
};

/// The decisions for one function, in pre-order.
struct PrecisionPlan {
  mlir::func::FuncOp func;
  PrecisionMode mode = PrecisionMode::BF16;
  /// The low-precision element type (bf16 or f16); null in fp32 mode.
  mlir::Type lowType;
  std::vector<OpRecord> records;
  llvm::DenseMap<mlir::Operation *, unsigned> index;
  /// Operand types of Fixed, Unknown and Return ops as they were before
  /// the rewrite: those ops keep them.
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Type, 2>>
      keptOperandTypes;

  const OpRecord *find(mlir::Operation *op) const {
    auto it = index.find(op);
    return it == index.end() ? nullptr : &records[it->second];
  }
};

/// Decides every op of `func`: one forward and one backward walk over the
/// whole graph. Fails (after a diagnostic) on a bad override attribute.
llvm::FailureOr<PrecisionPlan> analyzePrecision(mlir::func::FuncOp func,
                                                const PlanOptions &options);

/// Counts of what the rewrite did.
struct RewriteStats {
  unsigned castsInserted = 0;
  unsigned quantizesInserted = 0;
  unsigned constantsConverted = 0;
  unsigned staleCastsRemoved = 0;
  unsigned scaleArguments = 0;
  unsigned retypedInputs = 0;
  unsigned retypedOutputs = 0;
};

/// Applies `plan` to its function: converts operands (one cast per producer
/// and type), sets result types, adds FP8 scale arguments, erases inserted
/// casts left unused.
RewriteStats applyPrecisionPlan(PrecisionPlan &plan, bool keepIOTypes);

/// Per-function results for the report.
struct FunctionReport {
  PrecisionPlan plan;
  RewriteStats stats;
  /// One entry per record: the element type the op computes in, as text,
  /// and its result type where different (taken after the rewrite).
  std::vector<std::string> computeTypes, resultTypes;
  /// One entry per record: the op computes below FP32.
  std::vector<bool> lowCompute;
};

/// Fills `computeTypes`/`resultTypes` of `report` from the rewritten IR.
void describeDecisions(FunctionReport &report);

/// Writes the JSON report to `path` ("-" for stdout).
llvm::LogicalResult writeReport(llvm::StringRef path,
                                llvm::ArrayRef<FunctionReport> functions,
                                PrecisionMode mode, llvm::StringRef target,
                                std::string &error);

/// Prints the readable summary.
void printSummary(llvm::raw_ostream &os,
                  llvm::ArrayRef<FunctionReport> functions, PrecisionMode mode);

} // namespace mpt::precision

#endif // MPT_LIB_TRANSFORMS_PRECISIONPLAN_H
