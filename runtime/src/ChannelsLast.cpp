//===- ChannelsLast.cpp - conv and batch norm on channels-last activations ===//
//
// ChannelsLast.h: a channels-last kernel's channels-first form, and the
// kernel run as that form between the backend's transposes, the copies in
// the workspace, where the backend has no channels-last kernel of its own.
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
  /// operand `arg` into its channels-first copy, the channels-first kernel,
  /// or a transpose of that copy into the kernel's result `arg`.
  enum class Role { IntoFirst, Kernel, IntoLast };
  struct Step {
    Role role = Role::Kernel;
    size_t arg = 0;
    plan::Kernel kernel;
    std::unique_ptr<PreparedKernel> prepared;
    KernelArgs args;
  };

  Status prepare(Backend &backend, const KernelView &v) {
    MPTRT_TRY(form_.build(v));
    const KernelView first = form_.view();
    // Each activation's channels-first copy in the workspace.
    operandAt_.assign(v.numOperands(), -1);
    resultAt_.assign(v.numResults(), -1);
    uint64_t scratch = 0;
    auto place = [&](const TensorDesc &t) {
      const int64_t at = static_cast<int64_t>(scratch);
      scratch = plan::alignUp(scratch + t.bytes);
      return at;
    };
    for (size_t i : form_.actOperands())
      operandAt_[i] = place(first.operand(i));
    for (size_t i : form_.actResults())
      resultAt_[i] = place(first.result(i));
    // The transposes into channels first, the kernel, the transposes back.
    uint64_t workspace = 0;
    auto add = [&](Role role, size_t arg, plan::Kernel kernel, std::vector<const TensorDesc *> ops,
                   std::vector<const TensorDesc *> res) -> Status {
      steps_.emplace_back();
      Step &step = steps_.back();
      step.role = role;
      step.arg = arg;
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
    for (size_t i : form_.actOperands())
      MPTRT_TRY(add(Role::IntoFirst, i, transpose(intoFirstPerm(v.operand(i).rank())),
                    {&v.operand(i)}, {&first.operand(i)}));
    std::vector<const TensorDesc *> ops, res;
    for (size_t i = 0; i < first.numOperands(); ++i)
      ops.push_back(&first.operand(i));
    for (size_t i = 0; i < first.numResults(); ++i)
      res.push_back(&first.result(i));
    plan::Kernel inner;
    inner.kind = first.kind();
    inner.attrs = first.attributes();
    MPTRT_TRY(add(Role::Kernel, 0, std::move(inner), ops, res));
    for (size_t i : form_.actResults())
      MPTRT_TRY(add(Role::IntoLast, i, transpose(intoLastPerm(v.result(i).rank())),
                    {&first.result(i)}, {&v.result(i)}));
    stepsWorkspace_ = plan::alignUp(scratch);
    workspaceBytes_ = stepsWorkspace_ + workspace;
    return Status::ok();
  }

  uint64_t workspaceBytes() const override { return workspaceBytes_; }

  Status run(const KernelArgs &args) override {
    auto *ws = static_cast<uint8_t *>(args.workspace);
    void *stepsWs = workspaceBytes_ > stepsWorkspace_ ? ws + stepsWorkspace_ : nullptr;
    auto copy = [&](int64_t at) { return static_cast<void *>(ws + at); };
    for (Step &step : steps_) {
      step.args.workspace = stepsWs;
      switch (step.role) {
      case Role::IntoFirst:
        step.args.operands[0].data = args.operands[step.arg].data;
        step.args.results[0].data = copy(operandAt_[step.arg]);
        break;
      case Role::Kernel:
        for (size_t i = 0; i < operandAt_.size(); ++i)
          step.args.operands[i].data =
              operandAt_[i] >= 0 ? copy(operandAt_[i]) : args.operands[i].data;
        for (size_t i = 0; i < resultAt_.size(); ++i)
          step.args.results[i].data = resultAt_[i] >= 0 ? copy(resultAt_[i]) : args.results[i].data;
        break;
      case Role::IntoLast:
        step.args.operands[0].data = copy(resultAt_[step.arg]);
        step.args.results[0].data = args.results[step.arg].data;
        break;
      }
      MPTRT_TRY(step.prepared->run(step.args));
    }
    return Status::ok();
  }

private:
  ChannelsFirstForm form_;
  std::vector<int64_t> operandAt_, resultAt_; // each activation's copy in the workspace, or -1
  std::deque<Step> steps_;                    // in order: into channels first, the kernel, back
  uint64_t stepsWorkspace_ = 0, workspaceBytes_ = 0;
};

} // namespace

Status ChannelsFirstForm::build(const KernelView &v) {
  if (!channelsLastSlots(v.kind(), v.numOperands(), &actOperands_, &actResults_))
    return Status::error(v.kind() + " has no channels-last form");
  // A malformed plan may lack them; the kernel's own decoder says what it
  // needs once the slots are there.
  for (size_t i : actOperands_)
    if (i >= v.numOperands())
      return Status::error(v.kind() + ": " + std::to_string(v.numOperands()) +
                           " operands, too few for its channels-last form");
  for (size_t i : actResults_)
    if (i >= v.numResults())
      return Status::error(v.kind() + ": " + std::to_string(v.numResults()) +
                           " results, too few for its channels-last form");
  auto first = [&](const TensorDesc &last, const std::string &what) -> Status {
    if (last.rank() < 3)
      return Status::error(v.kind() + ": the channels-last " + what + " must be [N, ..., C], not " +
                           describe(last));
    descs_.push_back(makeDesc(last.dtype, channelsFirstShape(last.shape)));
    return Status::ok();
  };
  operands_.clear();
  results_.clear();
  for (size_t i = 0; i < v.numOperands(); ++i)
    operands_.push_back(&v.operand(i));
  for (size_t i = 0; i < v.numResults(); ++i)
    results_.push_back(&v.result(i));
  for (size_t i : actOperands_) {
    MPTRT_TRY(first(v.operand(i), "operand " + std::to_string(i)));
    operands_[i] = &descs_.back();
  }
  for (size_t i : actResults_) {
    MPTRT_TRY(first(v.result(i), "result " + std::to_string(i)));
    results_[i] = &descs_.back();
  }
  kernel_.kind = v.kind();
  kernel_.attrs.clear();
  for (const plan::Attribute &a : v.attributes())
    if (a.name != "layout")
      kernel_.attrs.push_back(a);
  return Status::ok();
}

bool isChannelsLast(const plan::Kernel &kernel) {
  const plan::Attribute *a = kernel.findAttr("layout");
  return a && a->type == plan::AttrType::String && a->s == "nhwc";
}

Status prepareChannelsLast(Backend &backend, const KernelView &view,
                           std::unique_ptr<PreparedKernel> *out) {
  MPTRT_TRY(backend.prepareChannelsLastKernel(view, out));
  if (*out)
    return Status::ok();
  auto k = std::make_unique<ChannelsLastKernel>();
  MPTRT_TRY(k->prepare(backend, view));
  *out = std::move(k);
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
