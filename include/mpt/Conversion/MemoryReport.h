//===- MemoryReport.h - a lowered plan's memory, by role --------*- C++ -*-===//
//
// Breaks the memory of a module lowered to `mptrt` (after mpt-plan-memory)
// down by role and dtype: the plan's persistent parameters (FP32 masters,
// optimizer state, training state, fixed weights) and, per entry point, the
// arena values (low-precision parameter copies, gradients, saved
// activations, cast buffers, workspace, temporaries), with the arena's peak
// and the kernel at which it occurs. `mpt-compile --memory-report` writes it;
// docs/memory-report.md documents the roles and the JSON.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_CONVERSION_MEMORYREPORT_H
#define MPT_CONVERSION_MEMORYREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mpt {

/// The bytes of one role, in all and per dtype (`f32`, `bf16`, ...).
struct RoleBytes {
  struct Share {
    int64_t bytes = 0;  // tensor bytes of the role's values, all together
    int64_t atPeak = 0; // arena bytes (64-byte aligned) live at the peak
    int64_t count = 0;  // values
  };
  Share total;
  std::map<std::string, Share> byDtype;

  void add(const std::string &dtype, int64_t bytes, int64_t count = 1);
};

/// Roles of the plan's parameters: they live for the whole plan, outside
/// the arena. Every parameter has exactly one.
enum class PersistentRole { Masters, OptimizerState, TrainingState, Weights };
inline constexpr unsigned kNumPersistentRoles = 4;

/// Roles of an entry point's arena values. Every arena value has exactly
/// one: the first that applies, in this order.
enum class ArenaRole {
  Parameters,       // a cast (or FP8 quantize) of a plan parameter
  Gradients,        // an optimizer's gradient operand, or a cast feeding it
  SavedActivations, // computed for the loss, read after it (the backward)
  CastBuffers,      // any other cast or quantize result
  Workspace,        // kernel scratch memory in the plan (none today)
  Temporaries,      // everything else
};
inline constexpr unsigned kNumArenaRoles = 6;

llvm::StringRef persistentRoleName(PersistentRole role);
llvm::StringRef arenaRoleName(ArenaRole role);

struct EntryMemory {
  std::string name;
  int64_t arenaBytes = 0;    // the mptrt.arena size
  int64_t peakLiveBytes = 0; // largest sum of aligned values live at one op
  int64_t peakOpIndex = -1;  // that op's position in the body (first one)
  std::string peakKernel;    // e.g. "mptrt.gemm"
  std::string peakNode;      // its ONNX node name; empty when unknown
  RoleBytes roles[kNumArenaRoles];
};

struct MemoryReport {
  RoleBytes persistent[kNumPersistentRoles];
  int64_t persistentBytes = 0;   // all parameters: the plan's parameter bytes
  int64_t trainableElements = 0; // elements of the masters
  /// --shard-optimizer-state: the ranks the optimizer state is sharded
  /// over (its bytes above are one rank's); 0 when it is not.
  int64_t shardWorldSize = 0;
  std::vector<EntryMemory> entries;
};

/// Analyses `module`, lowered by `--lower-to-runtime` (every intermediate
/// has its arena offset). Fails, with a diagnostic, on IR not in that form.
mlir::FailureOr<MemoryReport> analyzeMemory(mlir::ModuleOp module);

/// The report as JSON (docs/memory-report.md). `planParameterBytes`, when
/// known, is the emitted plan's own count, written beside ours.
void writeMemoryReportJSON(const MemoryReport &report, llvm::raw_ostream &os,
                           std::optional<uint64_t> planParameterBytes);

/// A few lines for a terminal.
void printMemorySummary(const MemoryReport &report, llvm::raw_ostream &os);

} // namespace mpt

#endif // MPT_CONVERSION_MEMORYREPORT_H
