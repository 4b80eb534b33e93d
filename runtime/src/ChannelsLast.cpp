//===- ChannelsLast.cpp - conv and batch norm on channels-last activations ===//
//
// ChannelsLast.h: a channels-last kernel as its channels-first form between
// the backend's transposes, the copies in the workspace.
//
//===----------------------------------------------------------------------===//
#include "ChannelsLast.h"

#include <deque>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

namespace {

/// The operands and results of `kind` that are activations ([N, C, ...] in
/// its channels-first form); the others (weights, scales, statistics) keep
/// their layout.
bool activationSlots(const KernelView &v, std::vector<size_t> *operands,
                     std::vector<size_t> *results) {
  const std::string &kind = v.kind();
  if (kind == "conv" || kind == "conv_grad_input") {
    *operands = {0};
    *results = {0};
  } else if (kind == "conv_grad_weight") {
    *operands = {0, 1};
    *results = {};
  } else if (kind == "batch_norm" || kind == "batch_norm_train") {
    *operands = {0};
    if (v.numOperands() == 6)
      operands->push_back(5); // the residual
    *results = {0};
  } else if (kind == "batch_norm_grad") {
    *operands = {0, 2};
    if (v.numOperands() == 4)
      operands->push_back(3); // the forward output of a fused relu
    *results = {0};
  } else {
    return false;
  }
  return true;
}

/// [N, spatial..., C] -> [N, C, spatial...], and the perms of the two
/// transposes (into channels first, back to channels last).
std::vector<int64_t> channelsFirstShape(const std::vector<int64_t> &last) {
  std::vector<int64_t> first = {last.front(), last.back()};
  first.insert(first.end(), last.begin() + 1, last.end() - 1);
  return first;
}
std::vector<int64_t> intoFirstPerm(size_t rank) {
  std::vector<int64_t> perm = {0, static_cast<int64_t>(rank) - 1};
  for (size_t d = 1; d + 1 < rank; ++d)
    perm.push_back(static_cast<int64_t>(d));
  return perm;
}
std::vector<int64_t> intoLastPerm(size_t rank) {
  std::vector<int64_t> perm = {0};
  for (size_t d = 2; d < rank; ++d)
    perm.push_back(static_cast<int64_t>(d));
  perm.push_back(1);
  return perm;
}

uint64_t align64(uint64_t n) { return (n + 63) / 64 * 64; }

class ChannelsLastKernel final : public PreparedKernel {
public:
  /// One prepared kernel of the sequence and its argument lists (sized at
  /// prepare; run only sets data pointers).
  struct Step {
    plan::Kernel kernel;
    std::unique_ptr<PreparedKernel> prepared;
    KernelArgs args;
  };

  Status prepare(Backend &backend, const KernelView &v) {
    std::vector<size_t> actOperands, actResults;
    if (!activationSlots(v, &actOperands, &actResults))
      return Status::error(v.kind() + " has no channels-last form");
    // A malformed plan may lack them; the kernel's own decoder says what it
    // needs once the slots are there.
    for (size_t i : actOperands)
      if (i >= v.numOperands())
        return Status::error(v.kind() + ": " + std::to_string(v.numOperands()) +
                             " operands, too few for its channels-last form");
    for (size_t i : actResults)
      if (i >= v.numResults())
        return Status::error(v.kind() + ": " + std::to_string(v.numResults()) +
                             " results, too few for its channels-last form");
    isActOperand_.assign(v.numOperands(), -1);
    isActResult_.assign(v.numResults(), -1);
    uint64_t scratch = 0;
    auto firstDesc = [&](const TensorDesc &last, std::string what) -> Status {
      if (last.rank() < 3)
        return Status::error(v.kind() + ": the channels-last " + what +
                             " must be [N, ..., C], not " + describe(last));
      descs_.push_back(makeDesc(last.dtype, channelsFirstShape(last.shape)));
      offsets_.push_back(scratch);
      scratch = align64(scratch + descs_.back().bytes);
      return Status::ok();
    };
    for (size_t i : actOperands) {
      MPTRT_TRY(firstDesc(v.operand(i), "operand " + std::to_string(i)));
      isActOperand_[i] = static_cast<int>(descs_.size() - 1);
    }
    for (size_t i : actResults) {
      MPTRT_TRY(firstDesc(v.result(i), "result " + std::to_string(i)));
      isActResult_[i] = static_cast<int>(descs_.size() - 1);
    }
    // The transposes into channels first, the kernel, the transposes back.
    uint64_t workspace = 0;
    auto add = [&](plan::Kernel kernel, std::vector<const TensorDesc *> ops,
                   std::vector<const TensorDesc *> res) -> Status {
      steps_.emplace_back();
      Step &step = steps_.back();
      step.kernel = std::move(kernel);
      const KernelView view(step.kernel, ops, res);
      MPTRT_TRY(backend.prepareKernel(view, &step.prepared));
      workspace = std::max(workspace, step.prepared->workspaceBytes());
      step.args.operands.resize(ops.size());
      step.args.results.resize(res.size());
      for (size_t i = 0; i < ops.size(); ++i)
        step.args.operands[i].desc = ops[i];
      for (size_t i = 0; i < res.size(); ++i)
        step.args.results[i].desc = res[i];
      return Status::ok();
    };
    auto transpose = [&](const std::vector<int64_t> &perm) {
      plan::Kernel t;
      t.kind = "transpose";
      t.attrs.push_back(plan::Attribute::makeInts("perm", perm));
      return t;
    };
    for (size_t i : actOperands) {
      const TensorDesc &last = v.operand(i);
      MPTRT_TRY(
          add(transpose(intoFirstPerm(last.shape.size())), {&last}, {&descs_[isActOperand_[i]]}));
    }
    plan::Kernel inner;
    inner.kind = v.kind();
    for (const plan::Attribute &a : v.attributes())
      if (a.name != "layout")
        inner.attrs.push_back(a);
    std::vector<const TensorDesc *> ops, res;
    for (size_t i = 0; i < v.numOperands(); ++i)
      ops.push_back(isActOperand_[i] >= 0 ? &descs_[isActOperand_[i]] : &v.operand(i));
    for (size_t i = 0; i < v.numResults(); ++i)
      res.push_back(isActResult_[i] >= 0 ? &descs_[isActResult_[i]] : &v.result(i));
    innerStep_ = steps_.size();
    MPTRT_TRY(add(std::move(inner), ops, res));
    for (size_t i : actResults) {
      const TensorDesc &last = v.result(i);
      MPTRT_TRY(
          add(transpose(intoLastPerm(last.shape.size())), {&descs_[isActResult_[i]]}, {&last}));
    }
    stepsWorkspace_ = align64(scratch);
    workspaceBytes_ = stepsWorkspace_ + workspace;
    return Status::ok();
  }

  uint64_t workspaceBytes() const override { return workspaceBytes_; }

  Status run(const KernelArgs &args) override {
    auto *ws = static_cast<uint8_t *>(args.workspace);
    void *stepsWs = workspaceBytes_ > stepsWorkspace_ ? ws + stepsWorkspace_ : nullptr;
    auto scratch = [&](int slot) { return static_cast<void *>(ws + offsets_[slot]); };
    size_t s = 0;
    for (size_t i = 0; i < isActOperand_.size(); ++i) // into channels first
      if (isActOperand_[i] >= 0) {
        Step &step = steps_[s++];
        step.args.operands[0].data = args.operands[i].data;
        step.args.results[0].data = scratch(isActOperand_[i]);
        step.args.workspace = stepsWs;
        MPTRT_TRY(step.prepared->run(step.args));
      }
    Step &inner = steps_[innerStep_];
    for (size_t i = 0; i < isActOperand_.size(); ++i)
      inner.args.operands[i].data =
          isActOperand_[i] >= 0 ? scratch(isActOperand_[i]) : args.operands[i].data;
    for (size_t i = 0; i < isActResult_.size(); ++i)
      inner.args.results[i].data =
          isActResult_[i] >= 0 ? scratch(isActResult_[i]) : args.results[i].data;
    inner.args.workspace = stepsWs;
    MPTRT_TRY(inner.prepared->run(inner.args));
    s = innerStep_ + 1;
    for (size_t i = 0; i < isActResult_.size(); ++i) // back to channels last
      if (isActResult_[i] >= 0) {
        Step &step = steps_[s++];
        step.args.operands[0].data = scratch(isActResult_[i]);
        step.args.results[0].data = args.results[i].data;
        step.args.workspace = stepsWs;
        MPTRT_TRY(step.prepared->run(step.args));
      }
    return Status::ok();
  }

private:
  std::deque<TensorDesc> descs_;                // channels-first types; stable addresses
  std::vector<uint64_t> offsets_;               // each one's copy in the workspace
  std::vector<int> isActOperand_, isActResult_; // index into descs_, or -1
  std::deque<Step> steps_;
  size_t innerStep_ = 0;
  uint64_t stepsWorkspace_ = 0, workspaceBytes_ = 0;
};

} // namespace

bool isChannelsLast(const plan::Kernel &kernel) {
  const plan::Attribute *a = kernel.findAttr("layout");
  return a && a->type == plan::AttrType::String && a->s == "nhwc";
}

Status prepareChannelsLast(Backend &backend, const KernelView &view,
                           std::unique_ptr<PreparedKernel> *out) {
  auto k = std::make_unique<ChannelsLastKernel>();
  MPTRT_TRY(k->prepare(backend, view));
  *out = std::move(k);
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
