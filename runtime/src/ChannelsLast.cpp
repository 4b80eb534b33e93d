//===- ChannelsLast.cpp - conv and batch norm on channels-last activations ===//
//
// ChannelsLast.h: a channels-last kernel as its channels-first form between
// the backend's transposes, the copies in the workspace.
//
//===----------------------------------------------------------------------===//
#include "ChannelsLast.h"
#include "mptrt/ChannelsLastSlots.h"

#include <deque>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

namespace {

/// [N, spatial..., C] -> [N, C, spatial...], and the perms of the two
/// transposes (into channels first, back to channels last).
std::vector<int64_t> channelsFirstShape(const std::vector<int64_t> &last) {
  std::vector<int64_t> first = {last.front(), last.back()};
  first.insert(first.end(), last.begin() + 1, last.end() - 1);
  return first;
}
std::vector<int64_t> intoFirstPerm(int rank) {
  std::vector<int64_t> perm = {0, rank - 1};
  for (int d = 1; d + 1 < rank; ++d)
    perm.push_back(d);
  return perm;
}
std::vector<int64_t> intoLastPerm(int rank) {
  std::vector<int64_t> perm = {0};
  for (int d = 2; d < rank; ++d)
    perm.push_back(d);
  perm.push_back(1);
  return perm;
}

class ChannelsLastKernel final : public PreparedKernel {
public:
  /// One prepared kernel of the sequence and its argument lists (sized at
  /// prepare; run only sets data pointers): a transpose of the kernel's
  /// operand `arg` into copy `slot`, the channels-first kernel, or a
  /// transpose of copy `slot` into the kernel's result `arg`.
  enum class Role { IntoFirst, Kernel, IntoLast };
  struct Step {
    Role role = Role::Kernel;
    size_t arg = 0;
    int slot = -1;
    plan::Kernel kernel;
    std::unique_ptr<PreparedKernel> prepared;
    KernelArgs args;
  };

  Status prepare(Backend &backend, const KernelView &v) {
    std::vector<size_t> actOperands, actResults;
    if (!channelsLastSlots(v.kind(), v.numOperands(), &actOperands, &actResults))
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
      scratch = plan::alignUp(scratch + descs_.back().bytes);
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
    auto add = [&](Role role, size_t arg, int slot, plan::Kernel kernel,
                   std::vector<const TensorDesc *> ops,
                   std::vector<const TensorDesc *> res) -> Status {
      steps_.emplace_back();
      Step &step = steps_.back();
      step.role = role;
      step.arg = arg;
      step.slot = slot;
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
      MPTRT_TRY(add(Role::IntoFirst, i, isActOperand_[i], transpose(intoFirstPerm(last.rank())),
                    {&last}, {&descs_[isActOperand_[i]]}));
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
    MPTRT_TRY(add(Role::Kernel, 0, -1, std::move(inner), ops, res));
    for (size_t i : actResults) {
      const TensorDesc &last = v.result(i);
      MPTRT_TRY(add(Role::IntoLast, i, isActResult_[i], transpose(intoLastPerm(last.rank())),
                    {&descs_[isActResult_[i]]}, {&last}));
    }
    stepsWorkspace_ = plan::alignUp(scratch);
    workspaceBytes_ = stepsWorkspace_ + workspace;
    return Status::ok();
  }

  uint64_t workspaceBytes() const override { return workspaceBytes_; }

  Status run(const KernelArgs &args) override {
    auto *ws = static_cast<uint8_t *>(args.workspace);
    void *stepsWs = workspaceBytes_ > stepsWorkspace_ ? ws + stepsWorkspace_ : nullptr;
    auto scratch = [&](int slot) { return static_cast<void *>(ws + offsets_[slot]); };
    for (Step &step : steps_) {
      step.args.workspace = stepsWs;
      switch (step.role) {
      case Role::IntoFirst:
        step.args.operands[0].data = args.operands[step.arg].data;
        step.args.results[0].data = scratch(step.slot);
        break;
      case Role::Kernel:
        for (size_t i = 0; i < isActOperand_.size(); ++i)
          step.args.operands[i].data =
              isActOperand_[i] >= 0 ? scratch(isActOperand_[i]) : args.operands[i].data;
        for (size_t i = 0; i < isActResult_.size(); ++i)
          step.args.results[i].data =
              isActResult_[i] >= 0 ? scratch(isActResult_[i]) : args.results[i].data;
        break;
      case Role::IntoLast:
        step.args.operands[0].data = scratch(step.slot);
        step.args.results[0].data = args.results[step.arg].data;
        break;
      }
      MPTRT_TRY(step.prepared->run(step.args));
    }
    return Status::ok();
  }

private:
  std::deque<TensorDesc> descs_;                // channels-first types; stable addresses
  std::vector<uint64_t> offsets_;               // each one's copy in the workspace
  std::vector<int> isActOperand_, isActResult_; // index into descs_, or -1
  std::deque<Step> steps_;                      // in order: into channels first, the kernel, back
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
