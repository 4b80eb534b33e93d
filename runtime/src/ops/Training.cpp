//===- Training.cpp - decoders for loss scaling and optimizer kernels ----===//
#include "ops/Training.h"
#include "ops/DecodeUtil.h"

#include "mptrt/Communicator.h"
#include "mptrt/Philox.h"

#include <cmath>
#include <limits>
#include <string>

namespace mptrt {
namespace rt {

namespace {

/// Operand i is a 0-d tensor of `dtype`; `what` names it in the message.
Status expectScalarOperand(const KernelView &v, size_t i, DType dtype, const char *what) {
  const TensorDesc &d = v.operand(i);
  if (d.dtype != dtype || d.rank() != 0)
    return v.error(operandLabel(v, i) + " (" + what + ") must be a 0-d " + plan::dtypeName(dtype));
  return Status::ok();
}
Status expectScalarResult(const KernelView &v, size_t i, DType dtype, const char *what) {
  const TensorDesc &d = v.result(i);
  if (d.dtype != dtype || d.rank() != 0)
    return v.error(resultLabel(v, i) + " (" + what + ") must be a 0-d " + plan::dtypeName(dtype));
  return Status::ok();
}

/// Operand i is an f32 tensor of `shape` (optimizer state).
Status expectStateOperand(const KernelView &v, size_t i, const std::vector<int64_t> &shape,
                          const char *what) {
  const TensorDesc &d = v.operand(i);
  if (d.dtype != DType::F32 || d.shape != shape)
    return v.error(operandLabel(v, i) + " (" + what + ") must be f32 of shape " +
                   shapeString(shape));
  return Status::ok();
}
Status expectStateResult(const KernelView &v, size_t i, const std::vector<int64_t> &shape,
                         const char *what) {
  const TensorDesc &d = v.result(i);
  if (d.dtype != DType::F32 || d.shape != shape)
    return v.error(resultLabel(v, i) + " (" + what + ") must be f32 of shape " +
                   shapeString(shape));
  return Status::ok();
}

/// A float attribute that must be finite (and, if `positive`, > 0).
Status getFiniteFloat(const KernelView &v, const char *name, double defaultValue, bool positive,
                      double *out) {
  MPTRT_TRY(v.getFloat(name, defaultValue, out));
  if (!std::isfinite(*out) || (positive && !(*out > 0)))
    return v.error(std::string("attribute '") + name + "' must be a finite" +
                   (positive ? " positive" : "") + " number, got " + std::to_string(*out));
  return Status::ok();
}

/// Cuts every operand into blocks of kBlockElements.
void makeBlocks(const KernelView &v, MultiTensorParams *p) {
  const int64_t size = MultiTensorParams::kBlockElements;
  for (size_t i = 0; i < v.numOperands(); ++i)
    for (int64_t begin = 0; begin < v.operand(i).numel; begin += size)
      p->blocks.push_back(
          {static_cast<uint32_t>(i), begin, std::min(begin + size, v.operand(i).numel)});
}

/// The shared checks of all_finite and global_norm: at least one float
/// operand, one 0-d result of `resultType`.
Status decodeMultiTensor(const KernelView &v, DType resultType, const char *what,
                         MultiTensorParams *p) {
  MPTRT_TRY(v.expectCounts(1, std::numeric_limits<size_t>::max(), 1, 1));
  MPTRT_TRY(v.allowOnly({"over_ranks"}));
  MPTRT_TRY(v.getBool("over_ranks", false, &p->overRanks));
  for (size_t i = 0; i < v.numOperands(); ++i)
    MPTRT_TRY(expectFloatOperand(v, i));
  MPTRT_TRY(expectScalarResult(v, 0, resultType, what));
  makeBlocks(v, p);
  return Status::ok();
}

} // namespace

Status decodeScaleLoss(const KernelView &v, ScaleLossParams *) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  MPTRT_TRY(expectScalarOperand(v, 0, DType::F32, "loss"));
  MPTRT_TRY(expectScalarOperand(v, 1, DType::F32, "scale"));
  return expectScalarResult(v, 0, DType::F32, "scaled loss");
}

Status decodeUnscale(const KernelView &v, UnscaleParams *p) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  MPTRT_TRY(expectFloatOperand(v, 0));
  MPTRT_TRY(expectScalarOperand(v, 1, DType::F32, "scale"));
  MPTRT_TRY(expectStateResult(v, 0, v.operand(0).shape, "unscaled gradient"));
  p->numel = v.operand(0).numel;
  return Status::ok();
}

Status decodeAllFinite(const KernelView &v, MultiTensorParams *p) {
  return decodeMultiTensor(v, DType::I1, "finite", p);
}

Status decodeGlobalNorm(const KernelView &v, MultiTensorParams *p) {
  return decodeMultiTensor(v, DType::F32, "norm", p);
}

Status decodeAllReduce(const KernelView &v, AllReduceParams *p) {
  MPTRT_TRY(
      v.expectCounts(1, std::numeric_limits<size_t>::max(), 1, std::numeric_limits<size_t>::max()));
  MPTRT_TRY(v.allowOnly({"reduce_in_f32", "sum"}));
  MPTRT_TRY(v.getBool("sum", false, &p->sum));
  if (v.numResults() != v.numOperands())
    return v.error("has " + std::to_string(v.numOperands()) + " operands and " +
                   std::to_string(v.numResults()) + " results: one result per operand");
  MPTRT_TRY(v.getBool("reduce_in_f32", false, &p->reduceInF32));
  for (size_t i = 0; i < v.numOperands(); ++i) {
    MPTRT_TRY(expectFloatOperand(v, i));
    const TensorDesc &in = v.operand(i), &out = v.result(i);
    if (out.dtype != in.dtype || out.shape != in.shape)
      return v.error(resultLabel(v, i) + " must have its operand's type " + describe(in));
    p->numel.push_back(in.numel);
    p->total += in.numel;
  }
  return Status::ok();
}

Status decodeClipByNorm(const KernelView &v, ClipByNormParams *p) {
  MPTRT_TRY(v.expectCounts(2, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({"max_norm"}));
  if (!v.has("max_norm"))
    return v.error("missing required attribute 'max_norm'");
  MPTRT_TRY(getFiniteFloat(v, "max_norm", 0, /*positive=*/true, &p->maxNorm));
  MPTRT_TRY(expectFloatOperand(v, 0));
  MPTRT_TRY(expectScalarOperand(v, 1, DType::F32, "norm"));
  MPTRT_TRY(expectStateResult(v, 0, v.operand(0).shape, "clipped gradient"));
  p->numel = v.operand(0).numel;
  return Status::ok();
}

Status decodeSgdUpdate(const KernelView &v, SgdParams *p) {
  MPTRT_TRY(v.allowOnly({"momentum", "dampening", "nesterov", "weight_decay"}));
  MPTRT_TRY(getFiniteFloat(v, "momentum", 0, false, &p->momentum));
  MPTRT_TRY(getFiniteFloat(v, "dampening", 0, false, &p->dampening));
  MPTRT_TRY(getFiniteFloat(v, "weight_decay", 0, false, &p->weightDecay));
  MPTRT_TRY(v.getBool("nesterov", false, &p->nesterov));
  // PyTorch's checks: momentum >= 0, weight_decay >= 0.
  if (p->momentum < 0 || p->weightDecay < 0)
    return v.error("attributes 'momentum' and 'weight_decay' must be >= 0");
  p->hasBuffer = p->momentum != 0;
  // PyTorch's rule: Nesterov momentum needs a momentum and no dampening.
  if (p->nesterov && (!p->hasBuffer || p->dampening != 0))
    return v.error("nesterov needs a non-zero 'momentum' and zero 'dampening'");
  // param, grad, [buf], step, lr, finite -> param', [buf'].
  const size_t n = p->hasBuffer ? 6 : 5;
  if (v.numOperands() != n || v.numResults() != n - 4)
    return v.error(std::string("expects ") + std::to_string(n) + " operands and " +
                   std::to_string(n - 4) + " result" + (p->hasBuffer ? "s" : "") +
                   (p->hasBuffer ? " (momentum != 0: param, grad, buf, step, lr, finite)"
                                 : " (momentum 0: param, grad, step, lr, finite)") +
                   ", got " + std::to_string(v.numOperands()) + " and " +
                   std::to_string(v.numResults()));
  const std::vector<int64_t> &shape = v.operand(0).shape;
  MPTRT_TRY(expectStateOperand(v, 0, shape, "param"));
  MPTRT_TRY(expectFloatOperand(v, 1));
  if (v.operand(1).shape != shape)
    return v.error(operandLabel(v, 1) + " (grad) must have the shape of the param, " +
                   shapeString(shape));
  const size_t s = n - 3; // step, lr, finite follow
  if (p->hasBuffer)
    MPTRT_TRY(expectStateOperand(v, 2, shape, "momentum buffer"));
  MPTRT_TRY(expectScalarOperand(v, s, DType::I64, "step"));
  MPTRT_TRY(expectScalarOperand(v, s + 1, DType::F32, "lr"));
  MPTRT_TRY(expectScalarOperand(v, s + 2, DType::I1, "finite"));
  MPTRT_TRY(expectStateResult(v, 0, shape, "param"));
  if (p->hasBuffer)
    MPTRT_TRY(expectStateResult(v, 1, shape, "momentum buffer"));
  p->numel = v.operand(0).numel;
  return Status::ok();
}

Status decodeAdamWUpdate(const KernelView &v, AdamWParams *p) {
  MPTRT_TRY(v.expectCounts(7, 8, 3, 3));
  MPTRT_TRY(v.allowOnly(
      {"beta1", "beta2", "eps", "weight_decay", "stochastic_rounding", "stream", "sharded"}));
  MPTRT_TRY(v.getBool("stochastic_rounding", false, &p->stochasticRounding));
  MPTRT_TRY(v.getBool("sharded", false, &p->sharded));
  if (p->sharded && !p->stochasticRounding)
    return v.error("attribute 'sharded' is meaningful only with stochastic_rounding");
  int64_t stream;
  MPTRT_TRY(v.getInt("stream", 0, &stream));
  if (stream < 0 || stream > int64_t(0xffffffff))
    return v.error("attribute 'stream' must be in [0, 2^32), got " + std::to_string(stream));
  p->stream = static_cast<uint32_t>(stream);
  if (p->stochasticRounding != (v.numOperands() == 8))
    return v.error(p->stochasticRounding
                       ? "stochastic_rounding needs the seed operand (param, grad, "
                         "exp_avg, exp_avg_sq, step, lr, finite, seed)"
                       : "the seed operand is only meaningful with stochastic_rounding");
  MPTRT_TRY(getFiniteFloat(v, "beta1", 0.9, false, &p->beta1));
  MPTRT_TRY(getFiniteFloat(v, "beta2", 0.999, false, &p->beta2));
  MPTRT_TRY(getFiniteFloat(v, "eps", 1e-8, false, &p->eps));
  MPTRT_TRY(getFiniteFloat(v, "weight_decay", 0.01, false, &p->weightDecay));
  // PyTorch's checks: 0 <= beta < 1, eps >= 0, weight_decay >= 0.
  if (!(p->beta1 >= 0 && p->beta1 < 1) || !(p->beta2 >= 0 && p->beta2 < 1))
    return v.error("attributes 'beta1' and 'beta2' must be in [0, 1)");
  if (p->eps < 0 || p->weightDecay < 0)
    return v.error("attributes 'eps' and 'weight_decay' must be >= 0");
  const std::vector<int64_t> &shape = v.operand(0).shape;
  // The master weight: f32, or bf16 (rounded to nearest even, or
  // stochastically); param' has the param's dtype.
  p->bf16Param = v.operand(0).dtype == DType::BF16;
  if (p->bf16Param) {
    if (v.result(0).dtype != DType::BF16 || v.result(0).shape != shape)
      return v.error(resultLabel(v, 0) + " (param) must be bf16 of shape " + shapeString(shape) +
                     ", as the param");
  } else {
    MPTRT_TRY(expectStateOperand(v, 0, shape, "param"));
    MPTRT_TRY(expectStateResult(v, 0, shape, "param"));
  }
  if (p->stochasticRounding) {
    if (!p->bf16Param)
      return v.error("stochastic_rounding needs a bf16 param, got " +
                     std::string(plan::dtypeName(v.operand(0).dtype)));
    MPTRT_TRY(expectScalarOperand(v, 7, DType::I64, "seed"));
    if (v.operand(0).numel > philox::kMaxStreamElements)
      return v.error("stochastic rounding covers at most 2^34 elements per tensor");
  }
  MPTRT_TRY(expectFloatOperand(v, 1));
  if (v.operand(1).shape != shape)
    return v.error(operandLabel(v, 1) + " (grad) must have the shape of the param, " +
                   shapeString(shape));
  MPTRT_TRY(expectStateOperand(v, 2, shape, "exp_avg"));
  MPTRT_TRY(expectStateOperand(v, 3, shape, "exp_avg_sq"));
  MPTRT_TRY(expectScalarOperand(v, 4, DType::I64, "step"));
  MPTRT_TRY(expectScalarOperand(v, 5, DType::F32, "lr"));
  MPTRT_TRY(expectScalarOperand(v, 6, DType::I1, "finite"));
  MPTRT_TRY(expectStateResult(v, 1, shape, "exp_avg"));
  MPTRT_TRY(expectStateResult(v, 2, shape, "exp_avg_sq"));
  p->numel = v.operand(0).numel;
  if (p->sharded) { // this rank's shard's place in the whole parameter
    MPTRT_TRY(rankElementOffset(v, p->numel, &p->elementOffset));
    if (p->elementOffset + p->numel > philox::kMaxStreamElements)
      return v.error("stochastic rounding covers at most 2^34 elements per tensor; this "
                     "rank's shard ends past that");
  }
  return Status::ok();
}

Status rankElementOffset(const KernelView &v, int64_t numel, int64_t *offset) {
  std::string why;
  Communicator *comm = processCommunicator(&why);
  if (!comm)
    return v.error("no communicator for the data-parallel world: " + why);
  *offset = int64_t(comm->rank()) * numel;
  return Status::ok();
}

Status decodeUpdateLossScale(const KernelView &v, LossScaleParams *p) {
  MPTRT_TRY(v.expectCounts(3, 3, 2, 2));
  MPTRT_TRY(v.allowOnly({"growth_factor", "backoff_factor", "growth_interval"}));
  MPTRT_TRY(getFiniteFloat(v, "growth_factor", 2.0, true, &p->growthFactor));
  MPTRT_TRY(getFiniteFloat(v, "backoff_factor", 0.5, true, &p->backoffFactor));
  MPTRT_TRY(v.getInt("growth_interval", 2000, &p->growthInterval));
  if (p->growthInterval < 1)
    return v.error("attribute 'growth_interval' must be >= 1, got " +
                   std::to_string(p->growthInterval));
  MPTRT_TRY(expectScalarOperand(v, 0, DType::F32, "scale"));
  MPTRT_TRY(expectScalarOperand(v, 1, DType::I64, "growth_tracker"));
  MPTRT_TRY(expectScalarOperand(v, 2, DType::I1, "finite"));
  MPTRT_TRY(expectScalarResult(v, 0, DType::F32, "scale"));
  return expectScalarResult(v, 1, DType::I64, "growth_tracker");
}

Status decodeLrSchedule(const KernelView &v, LrScheduleParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"schedule", "lr", "warmup_steps", "total_steps", "min_lr"}));
  std::string schedule; // the default is the compiler's (mpt.lr_schedule)
  MPTRT_TRY(v.getString("schedule", "constant", &schedule));
  if (schedule == "warmup_cosine")
    p->warmupCosine = true;
  else if (schedule != "constant")
    return v.error("attribute 'schedule' must be \"constant\" or \"warmup_cosine\", not \"" +
                   schedule + "\"");
  if (!v.has("lr"))
    return v.error("missing required attribute 'lr'");
  MPTRT_TRY(getFiniteFloat(v, "lr", 0, false, &p->lr));
  MPTRT_TRY(getFiniteFloat(v, "min_lr", 0, false, &p->minLr));
  MPTRT_TRY(v.getInt("warmup_steps", 0, &p->warmupSteps));
  MPTRT_TRY(v.getInt("total_steps", 0, &p->totalSteps));
  if (p->warmupSteps < 0 || p->totalSteps < 0)
    return v.error("attributes 'warmup_steps' and 'total_steps' must be >= 0");
  MPTRT_TRY(expectScalarOperand(v, 0, DType::I64, "step"));
  return expectScalarResult(v, 0, DType::F32, "lr");
}

Status decodeAdvanceStep(const KernelView &v, AdvanceStepParams *p) {
  MPTRT_TRY(v.expectCounts(1, 2, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  MPTRT_TRY(expectScalarOperand(v, 0, DType::I64, "count"));
  p->hasFinite = v.numOperands() == 2;
  if (p->hasFinite)
    MPTRT_TRY(expectScalarOperand(v, 1, DType::I1, "finite"));
  return expectScalarResult(v, 0, DType::I64, "count");
}

Status decodeAmax(const KernelView &v, AmaxParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({}));
  MPTRT_TRY(expectFloatOperand(v, 0));
  MPTRT_TRY(expectScalarResult(v, 0, DType::F32, "amax"));
  makeBlocks(v, &p->blocks);
  return Status::ok();
}

Status decodeUpdateFp8Scale(const KernelView &v, Fp8ScaleParams *p) {
  MPTRT_TRY(v.expectCounts(3, 3, 2, 2));
  MPTRT_TRY(v.allowOnly({"fp8_max", "margin", "amax_compute_algo"}));
  std::string algo;
  MPTRT_TRY(v.getString("amax_compute_algo", "max", &algo));
  if (algo != "max" && algo != "most_recent")
    return v.error("attribute 'amax_compute_algo' must be \"max\" or \"most_recent\", not \"" +
                   algo + "\"");
  p->mostRecent = algo == "most_recent";
  MPTRT_TRY(getFiniteFloat(v, "fp8_max", 448, /*positive=*/true, &p->fp8Max));
  MPTRT_TRY(v.getInt("margin", 0, &p->margin));
  if (p->margin < -126 || p->margin > 126)
    return v.error("attribute 'margin' must be in [-126, 126], got " + std::to_string(p->margin));
  const TensorDesc &history = v.operand(0);
  if (history.dtype != DType::F32 || history.rank() != 1 || history.numel < 1)
    return v.error(operandLabel(v, 0) + " (amax_history) must be a non-empty 1-D f32");
  MPTRT_TRY(expectScalarOperand(v, 1, DType::F32, "scale"));
  MPTRT_TRY(expectScalarOperand(v, 2, DType::F32, "amax"));
  MPTRT_TRY(expectStateResult(v, 0, history.shape, "amax_history"));
  MPTRT_TRY(expectScalarResult(v, 1, DType::F32, "scale"));
  p->history = history.numel;
  return Status::ok();
}

namespace {

/// The shared checks of reduce_scatter, all_gather and shard: `world_size`
/// >= 1, one result per operand, float types, and each shard (operand or
/// result, as `shardsAreResults` says) the 1-D shard of its whole tensor
/// with the whole tensor's dtype.
Status decodeSharding(const KernelView &v, bool shardsAreResults, ShardParams *p) {
  MPTRT_TRY(v.getRequiredInt("world_size", &p->worldSize));
  if (p->worldSize < 1)
    return v.error("world_size must be at least 1; got " + std::to_string(p->worldSize));
  if (v.numResults() != v.numOperands())
    return v.error("has " + std::to_string(v.numOperands()) + " operands and " +
                   std::to_string(v.numResults()) + " results: one result per operand");
  for (size_t i = 0; i < v.numOperands(); ++i) {
    MPTRT_TRY(expectFloatOperand(v, i));
    const TensorDesc &whole = shardsAreResults ? v.operand(i) : v.result(i);
    const TensorDesc &part = shardsAreResults ? v.result(i) : v.operand(i);
    const int64_t shard = (whole.numel + p->worldSize - 1) / p->worldSize;
    if (part.dtype != whole.dtype || part.shape != std::vector<int64_t>{shard})
      return v.error(std::string(shardsAreResults ? "result " : "operand ") + std::to_string(i) +
                     " must be the shard of " + describe(whole) + " over " +
                     std::to_string(p->worldSize) + " ranks, a 1-D tensor of " +
                     std::to_string(shard) + " elements of its dtype; got " + describe(part));
    p->numel.push_back(whole.numel);
    p->shard.push_back(shard);
    p->offset.push_back(p->shardTotal);
    p->shardTotal += shard;
  }
  return Status::ok();
}

} // namespace

Status decodeReduceScatter(const KernelView &v, ShardParams *p) {
  MPTRT_TRY(
      v.expectCounts(1, std::numeric_limits<size_t>::max(), 1, std::numeric_limits<size_t>::max()));
  MPTRT_TRY(v.allowOnly({"world_size", "reduce_in_f32"}));
  MPTRT_TRY(v.getBool("reduce_in_f32", false, &p->reduceInF32));
  return decodeSharding(v, /*shardsAreResults=*/true, p);
}

Status decodeAllGather(const KernelView &v, ShardParams *p) {
  MPTRT_TRY(
      v.expectCounts(1, std::numeric_limits<size_t>::max(), 1, std::numeric_limits<size_t>::max()));
  MPTRT_TRY(v.allowOnly({"world_size"}));
  return decodeSharding(v, /*shardsAreResults=*/false, p);
}

Status decodeShard(const KernelView &v, ShardParams *p) {
  MPTRT_TRY(v.expectCounts(1, 1, 1, 1));
  MPTRT_TRY(v.allowOnly({"world_size"}));
  return decodeSharding(v, /*shardsAreResults=*/true, p);
}

} // namespace rt
} // namespace mptrt
