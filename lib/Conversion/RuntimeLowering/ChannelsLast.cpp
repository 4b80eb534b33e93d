//===- ChannelsLast.cpp - NHWC activations for convolution chains ---------===//
//
// Finds the convolution chains of a function and stores their activations
// channels last, with transposes at the chains' edges only. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "LoweringUtils.h"
#include "mpt/Conversion/Passes.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"
#include "mptrt/ChannelsLastSlots.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mpt {
#define GEN_PASS_DEF_MPTCHANNELSLAST
#include "mpt/Conversion/Passes.h.inc"
} // namespace mpt

using namespace mlir;
using namespace mpt;
namespace rtir = mpt::rt;

namespace {

/// The activation operands and results of a layout-aware kernel (false for
/// any other op; mptrt/ChannelsLastSlots.h, the runtime adapter's table); a
/// chain joins through these alone.
bool activationSlots(Operation *op, std::vector<size_t> &operands,
                     std::vector<size_t> &results) {
  if (!isa<rtir::KernelOpInterface>(op))
    return false;
  return mptrt::channelsLastSlots(op->getName().stripDialect(),
                                  op->getNumOperands(), &operands, &results);
}

bool isConvolution(Operation *op) {
  return isa<rtir::ConvOp, rtir::ConvGradInputOp, rtir::ConvGradWeightOp>(op);
}

/// 4-D: [N, C, H, W].
bool isImage(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 4;
}

/// The kinds whose every result element is computed from the elements at
/// the same index of its operands (given one shape): the kernel schema's
/// elementwise families.
bool isElementwiseKind(StringRef kind) {
  static const llvm::StringSet<> kinds = [] {
    llvm::StringSet<> set;
    auto add = [&](const char *kind, std::string_view family) {
      if (family == "Unary" || family == "Binary" || family == "UnaryGrad" ||
          family == "Cast" || family == "Copy")
        set.insert(kind);
    };
#define MPTRT_KERNEL(kind, family, minOps, maxOps, minRes, maxRes)             \
  add(#kind, #family);
#define MPTRT_ATTR(kind, name, type, required)
#include "mptrt/KernelSchema.def"
    return set;
  }();
  return kinds.contains(kind);
}

/// An elementwise kernel whose operands and results all have one 4-D shape,
/// or an expand of a 4-D tensor to a 4-D shape stated by its type (a
/// broadcast, which permuting both shapes alike keeps: the global average
/// pool's gradient [N, C, 1, 1] -> [N, C, H, W]): layout does not matter to
/// it.
bool isLayoutFree(Operation *op) {
  if (auto expand = dyn_cast<rtir::ExpandOp>(op))
    return !expand.getShape() && isImage(expand.getInput()) &&
           isImage(expand.getOutput());
  if (!isa<rtir::KernelOpInterface>(op) || op->getNumResults() != 1 ||
      !isElementwiseKind(op->getName().stripDialect()))
    return false;
  auto shapeOf = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (!isImage(op->getResult(0)))
    return false;
  for (Value v : op->getOperands())
    if (!isImage(v) || shapeOf(v) != shapeOf(op->getResult(0)))
      return false;
  return true;
}

/// Whether permuting `shape` by `perm` keeps its elements in order (every
/// axis it moves past another has extent 1): then the bytes are the same,
/// and a reshape, which the memory planner makes a view, does it.
bool permutesUnitAxesOnly(ArrayRef<int64_t> shape, ArrayRef<int64_t> perm) {
  int64_t last = -1;
  for (int64_t axis : perm) {
    if (shape[axis] == 1)
      continue;
    if (axis < last)
      return false;
    last = axis;
  }
  return true;
}

/// [N, C, H, W] -> [N, H, W, C] of the same element type.
RankedTensorType channelsLastType(Type t) {
  auto type = cast<RankedTensorType>(t);
  ArrayRef<int64_t> s = type.getShape();
  return RankedTensorType::get({s[0], s[2], s[3], s[1]}, type.getElementType());
}

/// Where a value comes from, for the report: its ONNX node, or for a
/// function argument its binding ("input x", "param w") or position.
std::string describeValue(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return onnxNodeName(v.getLoc()).str();
  auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  const unsigned i = arg.getArgNumber();
  if (func)
    for (StringRef kind : {"input", "param"})
      if (auto name = func.getArgAttrOfType<StringAttr>(
              i, (kind == "input" ? kInputAttrName : kParamAttrName)))
        return (kind + " " + name.getValue()).str();
  return "argument " + std::to_string(i);
}

/// What the pass did to one function, for the report.
struct FunctionLayout {
  std::string name;
  /// The layout-aware kernels now `layout = nhwc` and the layout-free ones
  /// inside a chain: (kernel kind, ONNX node).
  std::vector<std::pair<std::string, std::string>> nhwcKernels;
  unsigned layoutFree = 0;
  /// The transposes inserted: (into "nhwc" or "nchw", the value's node, or
  /// for an argument its binding: "input x").
  std::vector<std::pair<std::string, std::string>> transposes;
  /// The same for the layout changes that move only unit axes, done by a
  /// reshape (a view of the same bytes) instead of a transpose.
  std::vector<std::pair<std::string, std::string>> reshapes;
};

struct ChannelsLastPass
    : public mpt::impl::MPTChannelsLastBase<ChannelsLastPass> {
  using MPTChannelsLastBase::MPTChannelsLastBase;

  void runOnOperation() override {
    if (report == "-") {
      getOperation().emitError()
          << "mpt-channels-last: report must be a file (the layout is added "
             "to the JSON report there), not '-'";
      return signalPassFailure();
    }
    std::vector<FunctionLayout> functions;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FunctionLayout layout;
      layout.name = func.getSymName().str();
      if (failed(runOnFunction(func, layout)))
        return signalPassFailure();
      if (!layout.nhwcKernels.empty())
        functions.push_back(std::move(layout));
    }
    // Without a chain the report stays as it was: no layout section.
    if (!report.empty() && !functions.empty() && failed(writeReport(functions)))
      return signalPassFailure();
  }

  LogicalResult runOnFunction(func::FuncOp func, FunctionLayout &layout) {
    bool broken;
    Block *body = loweringBody(func, broken);
    if (!body)
      return failure(broken);

    // The chains: from every 2-D convolution's activations, through the
    // kernels that join them (their activations) and the layout-free ones.
    llvm::SetVector<Value> chain;
    SmallVector<Value> work;
    auto reach = [&](Operation *op, Value through) {
      std::vector<size_t> operands, results;
      if (activationSlots(op, operands, results)) {
        bool joins = false;
        for (size_t i : operands)
          joins = joins || op->getOperand(i) == through;
        for (size_t i : results)
          joins = joins || op->getResult(i) == through;
        if (!joins)
          return;
        for (size_t i : operands)
          work.push_back(op->getOperand(i));
        for (size_t i : results)
          work.push_back(op->getResult(i));
      } else if (isLayoutFree(op)) {
        for (Value v : op->getOperands())
          work.push_back(v);
        work.push_back(op->getResult(0));
      }
    };
    for (Operation &op : *body) {
      std::vector<size_t> operands, results;
      if (!isConvolution(&op) || !activationSlots(&op, operands, results))
        continue;
      bool images = true;
      for (size_t i : operands)
        images = images && isImage(op.getOperand(i));
      for (size_t i : results)
        images = images && isImage(op.getResult(i));
      if (!images)
        continue; // 1-D and 3-D convolutions keep their layout
      for (size_t i : operands)
        work.push_back(op.getOperand(i));
      for (size_t i : results)
        work.push_back(op.getResult(i));
    }
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (!isImage(v) || !chain.insert(v))
        continue;
      if (Operation *def = v.getDefiningOp())
        reach(def, v);
      for (Operation *user : v.getUsers())
        reach(user, v);
    }
    if (chain.empty())
      return success();

    // The kernels inside a chain (every activation, or every value of a
    // layout-free kernel, is in it) and the operands each reads channels
    // last. Decided before any type changes.
    struct Inside {
      bool layoutAware = false;
      std::vector<size_t> operands;
    };
    llvm::DenseMap<Operation *, Inside> insideOps;
    for (Operation &op : *body) {
      Inside in;
      std::vector<size_t> results;
      if ((in.layoutAware = activationSlots(&op, in.operands, results))) {
        if (!results.empty() ? chain.contains(op.getResult(results[0]))
                             : chain.contains(op.getOperand(in.operands[0])))
          insideOps[&op] = std::move(in);
      } else if (isLayoutFree(&op) && chain.contains(op.getResult(0))) {
        for (unsigned i = 0; i < op.getNumOperands(); ++i)
          in.operands.push_back(i);
        insideOps[&op] = std::move(in);
      }
    }
    auto inside = [&](Operation *op) { return insideOps.contains(op); };
    OpBuilder b(&getContext());
    const auto intoLast = b.getDenseI64ArrayAttr({0, 2, 3, 1});
    const auto intoFirst = b.getDenseI64ArrayAttr({0, 3, 1, 2});
    // v as `type` in the other layout: a transpose, or a reshape where only
    // unit axes move.
    auto relayout = [&](Value v, Type type, DenseI64ArrayAttr perm,
                        const char *into, const std::string &node) -> Value {
      b.setInsertionPointAfterValue(v);
      if (permutesUnitAxesOnly(cast<RankedTensorType>(v.getType()).getShape(),
                               perm.asArrayRef())) {
        layout.reshapes.emplace_back(into, node);
        return rtir::ReshapeOp::create(b, v.getLoc(), type, v, Value(),
                                       nullptr);
      }
      layout.transposes.emplace_back(into, node);
      return rtir::TransposeOp::create(b, v.getLoc(), type, v, perm, nullptr);
    };
    for (Value v : chain) {
      Operation *def = v.getDefiningOp();
      const bool madeInside = def && inside(def);
      // Who reads v channels first (outside the chain) or channels last.
      SmallVector<OpOperand *> outsideUses, insideUses;
      for (OpOperand &use : v.getUses()) {
        auto it = insideOps.find(use.getOwner());
        const bool asActivation =
            it != insideOps.end() &&
            llvm::is_contained(it->second.operands,
                               size_t(use.getOperandNumber()));
        (asActivation ? insideUses : outsideUses).push_back(&use);
      }
      const std::string node = describeValue(v);
      if (madeInside) {
        const Type first = v.getType();
        v.setType(channelsLastType(first));
        if (!outsideUses.empty()) {
          // (v, channels last by now, is the transpose's source)
          Value back = relayout(v, first, intoFirst, "nchw", node);
          for (OpOperand *use : outsideUses)
            use->set(back);
        }
      } else if (!insideUses.empty()) {
        Value last =
            relayout(v, channelsLastType(v.getType()), intoLast, "nhwc", node);
        for (OpOperand *use : insideUses)
          use->set(last);
      }
    }
    for (Operation &op : *body) {
      auto it = insideOps.find(&op);
      if (it == insideOps.end())
        continue;
      layout.nhwcKernels.emplace_back(op.getName().stripDialect().str(),
                                      onnxNodeName(op.getLoc()).str());
      if (!it->second.layoutAware) {
        ++layout.layoutFree;
        continue;
      }
      op.setAttr("layout", rtir::LayoutAttr::get(&getContext(), Layout::nhwc));
    }
    return success();
  }

  /// Adds the layout decisions to the JSON report at `report` (creating it
  /// when absent): `"layout": "nhwc"` on each reported op whose node has a
  /// kernel inside a chain, and the `layout` section.
  LogicalResult writeReport(const std::vector<FunctionLayout> &functions) {
    ModuleOp module = getOperation();
    llvm::json::Object root;
    if (llvm::sys::fs::exists(report)) {
      auto text = llvm::MemoryBuffer::getFile(report);
      if (!text)
        return module.emitError()
               << "mpt-channels-last: cannot read report '" << report
               << "': " << text.getError().message();
      llvm::Expected<llvm::json::Value> parsed =
          llvm::json::parse((*text)->getBuffer());
      if (!parsed || !parsed->getAsObject())
        return module.emitError()
               << "mpt-channels-last: report '" << report
               << "' is not a JSON object"
               << (parsed ? std::string()
                          : ": " + llvm::toString(parsed.takeError()));
      root = std::move(*parsed->getAsObject());
    }
    llvm::StringSet<> chainNodes;
    for (const FunctionLayout &f : functions)
      for (const auto &kernel : f.nhwcKernels)
        if (!kernel.second.empty())
          chainNodes.insert(kernel.second);
    if (llvm::json::Array *reported = root.getArray("functions"))
      for (llvm::json::Value &f : *reported)
        if (llvm::json::Object *fo = f.getAsObject())
          if (llvm::json::Array *ops = fo->getArray("ops"))
            for (llvm::json::Value &op : *ops)
              if (llvm::json::Object *o = op.getAsObject())
                if (std::optional<StringRef> node = o->getString("node");
                    node && chainNodes.contains(*node))
                  (*o)["layout"] = "nhwc";
    llvm::json::Array sections;
    for (const FunctionLayout &f : functions) {
      llvm::json::Array kernels, transposes, reshapes;
      for (const auto &[kind, node] : f.nhwcKernels)
        kernels.push_back(llvm::json::Object{{"kind", kind}, {"node", node}});
      for (const auto &[into, node] : f.transposes)
        transposes.push_back(
            llvm::json::Object{{"into", into}, {"node", node}});
      for (const auto &[into, node] : f.reshapes)
        reshapes.push_back(llvm::json::Object{{"into", into}, {"node", node}});
      sections.push_back(llvm::json::Object{
          {"name", f.name},
          {"nhwc_kernels", static_cast<int64_t>(f.nhwcKernels.size())},
          {"layout_free_kernels", static_cast<int64_t>(f.layoutFree)},
          {"transposes_inserted", static_cast<int64_t>(f.transposes.size())},
          {"reshapes_inserted", static_cast<int64_t>(f.reshapes.size())},
          {"kernels", std::move(kernels)},
          {"transposes", std::move(transposes)},
          {"reshapes", std::move(reshapes)}});
    }
    root["layout"] = llvm::json::Object{{"pass", "mpt-channels-last"},
                                        {"activations", "nhwc"},
                                        {"functions", std::move(sections)}};
    std::error_code ec;
    llvm::raw_fd_ostream os(report, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return module.emitError() << "mpt-channels-last: cannot write report '"
                                << report << "': " << ec.message();
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    return success();
  }
};

} // namespace
