//===- TrainingStepOptions.cpp - which training options go together -------===//
#include "mpt/Transforms/TrainingStepOptions.h"

#include "FP8Scaling.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/GlobPattern.h"

using namespace mpt;

std::string
mpt::verifyTrainingStepOptions(const BuildTrainingStepPassOptions &o) {
  if (o.masterWeights != MasterWeights::FP32 && o.optimizer != Optimizer::AdamW)
    return "master-weights=" + stringifyMasterWeights(o.masterWeights).str() +
           " needs optimizer=" + stringifyOptimizer(Optimizer::AdamW).str() +
           "; got '" + stringifyOptimizer(o.optimizer).str() + "'";
  if (o.schedule == LrSchedule::warmup_cosine && o.totalSteps <= o.warmupSteps)
    return "lr-schedule=warmup_cosine needs total-steps > warmup-steps";
  if (std::string bad = FP8Scaling::check(o.fp8AmaxHistory, o.fp8Margin);
      !bad.empty())
    return bad;
  for (const std::string &pattern : o.freeze)
    if (auto glob = llvm::GlobPattern::create(pattern); !glob)
      return "bad freeze pattern '" + pattern +
             "': " + llvm::toString(glob.takeError());
  if (o.dataParallel && !(o.bucketMb > 0 && o.bucketMb <= 1e6))
    return "bucket-mb must be above 0 and at most 1e6 MiB; got " +
           std::to_string(o.bucketMb);
  if (o.shardOptimizerState < 0 || o.shardOptimizerState > (int64_t(1) << 20))
    return "shard-optimizer-state is the number of ranks, from 1 to 2^20 (0: "
           "off); got " +
           std::to_string(o.shardOptimizerState);
  if (o.shardOptimizerState > 0) {
    if (o.emitGradients)
      return "shard-optimizer-state and emit-gradients do not go together: "
             "each rank holds only its shard of each gradient";
    if (!(o.bucketMb > 0 && o.bucketMb <= 1e6))
      return "bucket-mb must be above 0 and at most 1e6 MiB; got " +
             std::to_string(o.bucketMb);
  }
  if (!o.evalEntry.empty() && o.evalEntry == o.entry)
    return "eval-entry and entry are both '" + o.entry + "'";
  return "";
}
