//===- MemoryReport.cpp - a lowered plan's memory, by role ----------------===//
//
// Every role is read off the IR the compiler already has; nothing is
// guessed from tensor names:
// - a parameter's role comes from the optimizer kernels that read it (the
//   `param` operand is a master, `exp_avg`/`exp_avg_sq`/`momentum_buffer`
//   are optimizer state) and from the `mpt.updates` results that write it;
// - an arena value's role comes from the kernel that defines it (a cast of a
//   parameter, a gradient operand of an optimizer) and from its live range
//   (defined by an op the `loss` output depends on, read by one that a
//   gradient depends on and the loss does not).
//
//===----------------------------------------------------------------------===//
#include "mpt/Conversion/MemoryReport.h"

#include "LoweringUtils.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPT/IR/MPTOps.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mpt;

void RoleBytes::add(const std::string &dtype, int64_t bytes, int64_t count) {
  total.bytes += bytes;
  total.count += count;
  byDtype[dtype].bytes += bytes;
  byDtype[dtype].count += count;
}

StringRef mpt::persistentRoleName(PersistentRole role) {
  switch (role) {
  case PersistentRole::Masters:
    return "masters";
  case PersistentRole::OptimizerState:
    return "optimizer_state";
  case PersistentRole::TrainingState:
    return "training_state";
  case PersistentRole::Weights:
    return "weights";
  }
  llvm_unreachable("unknown persistent role");
}

StringRef mpt::arenaRoleName(ArenaRole role) {
  switch (role) {
  case ArenaRole::Parameters:
    return "parameters";
  case ArenaRole::Gradients:
    return "gradients";
  case ArenaRole::SavedActivations:
    return "saved_activations";
  case ArenaRole::CastBuffers:
    return "cast_buffers";
  case ArenaRole::Workspace:
    return "workspace";
  case ArenaRole::Temporaries:
    return "temporaries";
  }
  llvm_unreachable("unknown arena role");
}

namespace {

constexpr int64_t kAlignment = 64; // the plan format's arena alignment

int64_t tensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() * ((tensor.getElementTypeBitWidth() + 7) / 8);
}

std::string dtypeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  cast<RankedTensorType>(type).getElementType().print(os);
  return name;
}

/// The parameter name of `v` when it is a parameter argument.
StringAttr paramName(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return {};
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!func)
    return {};
  return func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kParamAttrName);
}

bool isCastKernel(Operation *op) { return isa<rt::CastOp, rt::QuantizeOp>(op); }

/// One arena allocation and the views of it.
struct Buffer {
  Value value; // the kernel result that owns the bytes
  int64_t start, end;
  int64_t aligned;
  ArenaRole role = ArenaRole::Temporaries;
};

/// The ops the function's loss output (role Loss) depends on (the forward
/// part of a training step); every op when there is no such output.
llvm::DenseSet<Operation *> forwardOps(Block &block) {
  llvm::DenseSet<Operation *> forward;
  Operation *terminator = block.getTerminator();
  auto func = cast<func::FuncOp>(block.getParentOp());
  Value loss;
  for (unsigned i = 0, e = terminator->getNumOperands(); i < e; ++i)
    if (auto role =
            func.getResultAttrOfType<OutputRoleAttr>(i, kOutputRoleAttrName);
        role && role.getValue() == OutputRole::Loss)
      loss = terminator->getOperand(i);
  if (!loss) {
    for (Operation &op : block)
      forward.insert(&op);
    return forward;
  }
  SmallVector<Operation *> work;
  if (Operation *def = loss.getDefiningOp())
    work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!forward.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
  }
  return forward;
}

FailureOr<EntryMemory> analyzeEntry(func::FuncOp func) {
  EntryMemory entry;
  entry.name = func.getSymName().str();
  bool broken;
  Block *body = loweringBody(func, broken);
  if (!body) {
    if (broken)
      return failure();
    return entry;
  }
  for (auto arena : body->getOps<rt::ArenaOp>())
    entry.arenaBytes = arena.getSize();

  SmallVector<Buffer> buffers;
  DenseMap<Value, unsigned> bufferOf;
  DenseMap<Operation *, int64_t> index;
  int64_t position = 0;
  for (Operation &op : *body) {
    int64_t at = position++;
    index[&op] = at;
    if (auto view = dyn_cast<rt::ViewOp>(op)) {
      if (auto it = bufferOf.find(view.getSource()); it != bufferOf.end())
        bufferOf[view.getResult()] = it->second;
      continue;
    }
    auto kernel = dyn_cast<rt::KernelOpInterface>(op);
    if (!kernel)
      continue;
    DenseI64ArrayAttr offsets = kernel.getArenaOffsets();
    if (!offsets || offsets.size() != static_cast<int64_t>(op.getNumResults()))
      return op.emitOpError("has no arena offsets; the memory report needs "
                            "IR after mpt-plan-memory"),
             failure();
    for (auto [result, offset] :
         llvm::zip(op.getResults(), offsets.asArrayRef())) {
      if (offset < 0)
        continue;
      int64_t size = tensorBytes(result.getType());
      bufferOf[result] = buffers.size();
      buffers.push_back(
          {result, at, at, (size + kAlignment - 1) / kAlignment * kAlignment});
    }
  }
  for (Operation &op : *body)
    for (Value operand : op.getOperands())
      if (auto it = bufferOf.find(operand); it != bufferOf.end())
        buffers[it->second].end = std::max(buffers[it->second].end, index[&op]);

  // Roles: a value keeps the first that applies (ArenaRole's order).
  llvm::DenseSet<Operation *> forward = forwardOps(*body);
  auto setRole = [&](unsigned id, ArenaRole role) {
    if (role < buffers[id].role)
      buffers[id].role = role;
  };
  for (auto [id, buffer] : llvm::enumerate(buffers)) {
    Operation *def = buffer.value.getDefiningOp();
    if (isCastKernel(def))
      setRole(id, paramName(def->getOperand(0)) ? ArenaRole::Parameters
                                                : ArenaRole::CastBuffers);
  }
  SmallVector<Value> grads;
  for (Operation &op : *body) {
    if (auto adam = dyn_cast<rt::AdamWUpdateOp>(op))
      grads.push_back(adam.getGrad());
    else if (auto sgd = dyn_cast<rt::SGDUpdateOp>(op))
      grads.push_back(sgd.getGrad());
  }
  // The backward part: the ops the gradients depend on, less the forward.
  llvm::DenseSet<Operation *> backward;
  SmallVector<Operation *> work;
  for (Value grad : grads)
    if (Operation *def = grad.getDefiningOp())
      work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (forward.contains(op) || !backward.insert(op).second)
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        work.push_back(def);
  }
  for (Operation *op : backward)
    for (Value operand : op->getOperands())
      if (auto it = bufferOf.find(operand);
          it != bufferOf.end() &&
          forward.contains(buffers[it->second].value.getDefiningOp()))
        setRole(it->second, ArenaRole::SavedActivations);
  // A cast of a gradient is that gradient in another dtype (the bf16
  // gradient of a bf16 weight copy, cast to FP32 for its master), and a
  // collective's result the mean of that gradient over the ranks (a
  // reduce_scatter's, this rank's shard of it).
  while (!grads.empty()) {
    Value grad = grads.pop_back_val();
    auto it = bufferOf.find(grad);
    if (it == bufferOf.end() ||
        buffers[it->second].role == ArenaRole::Gradients)
      continue;
    buffers[it->second].role = ArenaRole::Gradients;
    Operation *def = buffers[it->second].value.getDefiningOp();
    if (isCastKernel(def))
      grads.push_back(def->getOperand(0));
    else if (isa<rt::AllReduceOp, rt::ReduceScatterOp>(def))
      grads.push_back(def->getOperand(cast<OpResult>(grad).getResultNumber()));
  }

  // The peak: the op with the most aligned bytes live (the first of them).
  SmallVector<int64_t> delta(position + 1, 0);
  for (const Buffer &b : buffers) {
    delta[b.start] += b.aligned;
    delta[b.end + 1] -= b.aligned;
  }
  int64_t running = 0;
  for (int64_t i = 0; i < position; ++i) {
    running += delta[i];
    if (running > entry.peakLiveBytes) {
      entry.peakLiveBytes = running;
      entry.peakOpIndex = i;
    }
  }
  if (entry.peakOpIndex >= 0) {
    Operation *peakOp =
        std::next(body->begin(), entry.peakOpIndex).operator->();
    entry.peakKernel = peakOp->getName().getStringRef().str();
    entry.peakNode = onnxNodeName(peakOp->getLoc()).str();
  }
  for (const Buffer &b : buffers) {
    RoleBytes &role = entry.roles[static_cast<unsigned>(b.role)];
    std::string dtype = dtypeName(b.value.getType());
    role.add(dtype, tensorBytes(b.value.getType()));
    if (b.start <= entry.peakOpIndex && entry.peakOpIndex <= b.end) {
      role.total.atPeak += b.aligned;
      role.byDtype[dtype].atPeak += b.aligned;
    }
  }
  return entry;
}

} // namespace

FailureOr<MemoryReport> mpt::analyzeMemory(ModuleOp module) {
  MemoryReport report;
  // Each parameter name once, with its strongest role in any entry point.
  llvm::StringMap<std::pair<PersistentRole, Type>> params;
  SmallVector<StringRef> order;
  auto mark = [&](Value v, PersistentRole role) {
    // Sharded, an update takes its rank's shard of the parameter.
    if (auto shard = v.getDefiningOp<rt::ShardOp>()) {
      report.shardWorldSize = static_cast<int64_t>(shard.getWorldSize());
      v = shard.getInput();
    }
    if (StringAttr name = paramName(v)) {
      auto &entry = params.find(name.getValue())->second;
      entry.first = std::min(entry.first, role);
    }
  };
  for (auto func : module.getOps<func::FuncOp>())
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
      if (auto name = func.getArgAttrOfType<StringAttr>(i, kParamAttrName))
        if (params.try_emplace(name.getValue(), PersistentRole::Weights, type)
                .second)
          order.push_back(name.getValue());
  for (auto func : module.getOps<func::FuncOp>()) {
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto name = func.getResultAttrOfType<StringAttr>(i, kUpdatesAttrName))
        if (auto it = params.find(name.getValue()); it != params.end())
          it->second.first =
              std::min(it->second.first, PersistentRole::TrainingState);
    func.walk([&](Operation *op) {
      if (auto adam = dyn_cast<rt::AdamWUpdateOp>(op)) {
        mark(adam.getParam(), PersistentRole::Masters);
        mark(adam.getExpAvg(), PersistentRole::OptimizerState);
        mark(adam.getExpAvgSq(), PersistentRole::OptimizerState);
      } else if (auto sgd = dyn_cast<rt::SGDUpdateOp>(op)) {
        mark(sgd.getParam(), PersistentRole::Masters);
        if (Value buffer = sgd.getMomentumBuffer())
          mark(buffer, PersistentRole::OptimizerState);
      }
    });
  }
  for (StringRef name : order) {
    auto [role, type] = params.find(name)->second;
    int64_t bytes = tensorBytes(type);
    report.persistent[static_cast<unsigned>(role)].add(dtypeName(type), bytes);
    report.persistentBytes += bytes;
    if (role == PersistentRole::Masters)
      report.trainableElements += cast<RankedTensorType>(type).getNumElements();
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    FailureOr<EntryMemory> entry = analyzeEntry(func);
    if (failed(entry))
      return failure();
    if (!func.isExternal())
      report.entries.push_back(std::move(*entry));
  }
  return report;
}

namespace {

void writeRole(llvm::json::OStream &json, StringRef name, const RoleBytes &role,
               bool arena) {
  auto share = [&](const RoleBytes::Share &s) {
    json.attribute("bytes", s.bytes);
    if (arena)
      json.attribute("at_peak", s.atPeak);
    json.attribute("count", s.count);
  };
  json.attributeObject(name, [&] {
    share(role.total);
    json.attributeObject("by_dtype", [&] {
      for (const auto &[dtype, s] : role.byDtype)
        json.attributeObject(dtype, [&] { share(s); });
    });
  });
}

} // namespace

void mpt::writeMemoryReportJSON(const MemoryReport &report,
                                llvm::raw_ostream &os,
                                std::optional<uint64_t> planParameterBytes) {
  llvm::json::OStream json(os, 2);
  json.object([&] {
    json.attributeObject("persistent", [&] {
      json.attribute("trainable_elements", report.trainableElements);
      if (report.shardWorldSize > 0)
        json.attribute("shard_world_size", report.shardWorldSize);
      json.attributeObject("roles", [&] {
        for (unsigned r = 0; r < kNumPersistentRoles; ++r)
          writeRole(json, persistentRoleName(static_cast<PersistentRole>(r)),
                    report.persistent[r], /*arena=*/false);
      });
      json.attribute("bytes", report.persistentBytes);
      if (planParameterBytes)
        json.attribute("plan_parameter_bytes",
                       static_cast<int64_t>(*planParameterBytes));
    });
    json.attributeArray("entry_points", [&] {
      for (const EntryMemory &entry : report.entries)
        json.object([&] {
          json.attribute("name", entry.name);
          json.attribute("arena_bytes", entry.arenaBytes);
          json.attributeObject("roles", [&] {
            for (unsigned r = 0; r < kNumArenaRoles; ++r)
              writeRole(json, arenaRoleName(static_cast<ArenaRole>(r)),
                        entry.roles[r], /*arena=*/true);
          });
          json.attributeObject("peak", [&] {
            json.attribute("live_bytes", entry.peakLiveBytes);
            json.attribute("op_index", entry.peakOpIndex);
            json.attribute("kernel", entry.peakKernel);
            json.attribute("node", entry.peakNode);
          });
        });
    });
  });
  os << "\n";
}

void mpt::printMemorySummary(const MemoryReport &report,
                             llvm::raw_ostream &os) {
  os << "memory: persistent";
  if (report.shardWorldSize > 0)
    os << " (per rank, optimizer state sharded over " << report.shardWorldSize
       << " ranks)";
  for (unsigned r = 0; r < kNumPersistentRoles; ++r) {
    const RoleBytes &role = report.persistent[r];
    os << " " << persistentRoleName(static_cast<PersistentRole>(r)) << " "
       << role.total.bytes;
    // The masters' dtypes (f32, or bf16 with --master-weights=bf16|bf16-sr).
    if (static_cast<PersistentRole>(r) == PersistentRole::Masters &&
        !role.byDtype.empty()) {
      os << " (";
      llvm::interleave(
          role.byDtype, os, [&](const auto &d) { os << d.first; }, ", ");
      os << ")";
    }
  }
  os << " = " << report.persistentBytes << " bytes";
  if (report.trainableElements > 0)
    os << " ("
       << llvm::format("%.2f", static_cast<double>(report.persistentBytes) /
                                   report.trainableElements)
       << " per trainable parameter)";
  os << "\n";
  for (const EntryMemory &entry : report.entries) {
    os << "memory: '" << entry.name << "' at the peak:";
    for (unsigned r = 0; r < kNumArenaRoles; ++r)
      os << " " << arenaRoleName(static_cast<ArenaRole>(r)) << " "
         << entry.roles[r].total.atPeak;
    os << " = " << entry.peakLiveBytes << " bytes live at " << entry.peakKernel;
    if (!entry.peakNode.empty())
      os << " (" << entry.peakNode << ")";
    os << "; arena " << entry.arenaBytes << " bytes\n";
  }
}
