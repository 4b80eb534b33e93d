//===- PlanMemory.cpp - liveness-based arena placement --------------------===//
//
// Gives every intermediate value of a function an offset in one arena so
// that values whose live ranges overlap never share bytes. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "llvm/ADT/STLExtras.h"

namespace mpt {
#define GEN_PASS_DEF_MPTPLANMEMORY
#include "mpt/Conversion/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;

namespace {

constexpr int64_t kAlignment = 64; // the plan format's arena alignment

int64_t alignUp(int64_t v) {
  return (v + kAlignment - 1) / kAlignment * kAlignment;
}

int64_t byteSize(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
  return type.getNumElements() * bytes;
}

/// Kernels that only reinterpret their operand's bytes with another shape.
bool isShapeOnly(Operation *op) {
  return isa<rt::ReshapeOp, rt::FlattenOp, rt::SqueezeOp, rt::UnsqueezeOp,
             rt::IdentityOp>(op);
}

/// One arena allocation: a value and the views that alias it.
struct Buffer {
  int64_t start, end; // first and last op index where the bytes are live
  int64_t size;       // aligned
  int64_t offset = -1;
};

/// Greedy by size: each buffer, largest first, goes to the lowest offset
/// that no already placed buffer with an overlapping live range occupies.
/// Returns the peak.
int64_t place(MutableArrayRef<Buffer> buffers) {
  SmallVector<unsigned> order(llvm::to_vector(
      llvm::seq<unsigned>(0, static_cast<unsigned>(buffers.size()))));
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].start < buffers[b].start;
  });
  SmallVector<unsigned> placed;
  int64_t peak = 0;
  SmallVector<std::pair<int64_t, int64_t>> busy;
  for (unsigned id : order) {
    Buffer &buffer = buffers[id];
    busy.clear();
    for (unsigned other : placed) {
      const Buffer &o = buffers[other];
      if (o.start <= buffer.end && buffer.start <= o.end)
        busy.push_back({o.offset, o.offset + o.size});
    }
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + buffer.size <= begin)
        break;
      offset = std::max(offset, end);
    }
    buffer.offset = offset;
    peak = std::max(peak, offset + buffer.size);
    placed.push_back(id);
  }
  return peak;
}

struct PlanMemoryPass : public mpt::impl::MPTPlanMemoryBase<PlanMemoryPass> {
  using MPTPlanMemoryBase::MPTPlanMemoryBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    bool broken;
    Block *body = loweringBody(func, broken);
    if (!body)
      return broken ? signalPassFailure() : void();
    Block &block = *body;
    Operation *terminator = block.getTerminator();
    llvm::SmallPtrSet<Value, 8> returned(terminator->operand_begin(),
                                         terminator->operand_end());

    SmallVector<Buffer> buffers;
    DenseMap<Value, unsigned> bufferOf;
    DenseMap<Operation *, int64_t> index;
    SmallVector<Operation *> views; // shape-only kernels and existing views
    int64_t position = 0;
    for (Operation &op : block) {
      int64_t at = position++;
      index[&op] = at;
      if (&op == terminator || isa<rt::ConstantOp, rt::ArenaOp>(op))
        continue;
      if (op.getNumRegions() != 0) {
        op.emitOpError("has regions; the runtime lowering cannot place them");
        return signalPassFailure();
      }
      bool aliases = isa<rt::ViewOp>(op) || isShapeOnly(&op);
      if (aliases && bufferOf.count(op.getOperand(0)) &&
          !returned.contains(op.getResult(0))) {
        bufferOf[op.getResult(0)] = bufferOf[op.getOperand(0)];
        views.push_back(&op);
        continue;
      }
      if (!isa<rt::KernelOpInterface>(op)) {
        op.emitOpError(
            "is not an mptrt kernel; run --mpt-convert-to-mptrt first");
        return signalPassFailure();
      }
      for (Value result : op.getResults()) {
        if (returned.contains(result))
          continue;
        bufferOf[result] = buffers.size();
        buffers.push_back({at, at, alignUp(byteSize(result))});
      }
    }
    for (Operation &op : block)
      for (Value operand : op.getOperands())
        if (auto it = bufferOf.find(operand); it != bufferOf.end())
          buffers[it->second].end =
              std::max(buffers[it->second].end, index[&op]);

    int64_t peak = place(buffers);
    int64_t unshared = 0;
    for (const Buffer &b : buffers)
      unshared += b.size;
    // No placement can beat the largest set of values live at one op.
    int64_t bound = 0;
    if (reportPeak) {
      SmallVector<int64_t> live(position + 1, 0);
      for (const Buffer &b : buffers) {
        live[b.start] += b.size;
        live[b.end + 1] -= b.size;
      }
      int64_t running = 0;
      for (int64_t delta : live)
        bound = std::max(bound, running += delta);
    }

    for (Operation &op : block) {
      auto kernel = dyn_cast<rt::KernelOpInterface>(op);
      if (!kernel)
        continue;
      SmallVector<int64_t> offsets;
      for (Value result : op.getResults()) {
        auto it = bufferOf.find(result);
        offsets.push_back(it == bufferOf.end() ? -1
                                               : buffers[it->second].offset);
      }
      kernel.setArenaOffsets(offsets);
    }
    // A shape-only kernel of an arena value runs nothing: it becomes a view
    // of its operand's bytes.
    for (Operation *op : views) {
      int64_t offset = buffers[bufferOf[op->getResult(0)]].offset;
      OpBuilder builder(op);
      auto view =
          rt::ViewOp::create(builder, op->getLoc(), op->getResult(0).getType(),
                             op->getOperand(0), offset);
      op->getResult(0).replaceAllUsesWith(view.getResult());
      op->erase();
    }
    for (auto stale : llvm::make_early_inc_range(block.getOps<rt::ArenaOp>()))
      stale->erase();
    OpBuilder builder = OpBuilder::atBlockBegin(&block);
    rt::ArenaOp::create(builder, func.getLoc(), peak);
    if (reportPeak)
      emitRemark(func.getLoc())
          << "arena peak for @" << func.getSymName() << ": " << peak
          << " bytes for " << buffers.size() << " buffers (" << unshared
          << " bytes without reuse; largest live set " << bound << " bytes)";
  }
};

} // namespace
