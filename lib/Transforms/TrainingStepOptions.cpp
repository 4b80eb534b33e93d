//===- TrainingStepOptions.cpp - which training options go together -------===//
#include "mpt/Transforms/TrainingStepOptions.h"

#include "FP8Scaling.h"
#include "MasterWeights.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/GlobPattern.h"

using namespace mpt;

std::optional<LossScaleSpec> mpt::parseLossScale(llvm::StringRef spec) {
  using Kind = LossScaleSpec::Kind;
  if (spec == "auto")
    return LossScaleSpec{Kind::Auto};
  if (spec == "none")
    return LossScaleSpec{Kind::None};
  if (spec == "dynamic")
    return LossScaleSpec{Kind::Dynamic};
  double scale;
  if (spec.consume_front("static:") && !spec.getAsDouble(scale) && scale > 0)
    return LossScaleSpec{Kind::Static, scale};
  return std::nullopt;
}

std::string
mpt::verifyTrainingStepOptions(const BuildTrainingStepPassOptions &o) {
  const std::string &optimizer = o.optimizer;
  if (optimizer != "sgd" && optimizer != "momentum" && optimizer != "adamw")
    return "optimizer must be sgd, momentum or adamw; got '" + optimizer + "'";
  std::optional<MasterWeights> masters = parseMasterWeights(o.masterWeights);
  if (!masters)
    return "master-weights must be fp32, bf16 or bf16-sr; got '" +
           o.masterWeights + "'";
  if (*masters != MasterWeights::FP32 && optimizer != "adamw")
    return "master-weights=" + o.masterWeights +
           " needs optimizer=adamw; got '" + optimizer + "'";
  if (o.schedule != "constant" && o.schedule != "warmup_cosine")
    return "lr-schedule must be constant or warmup_cosine; got '" + o.schedule +
           "'";
  if (o.schedule == "warmup_cosine" && o.totalSteps <= o.warmupSteps)
    return "lr-schedule=warmup_cosine needs total-steps > warmup-steps";
  if (!parseLossScale(o.lossScale))
    return "loss-scale must be none, dynamic, static:S (S > 0) or auto; got '" +
           o.lossScale + "'";
  if (std::string bad = FP8Scaling::check(o.fp8Scaling, o.fp8AmaxHistory,
                                          o.fp8AmaxAlgo, o.fp8Margin);
      !bad.empty())
    return bad;
  const std::string &kind = o.lossKind;
  if (!kind.empty() && kind != "cross_entropy" && kind != "mse" &&
      kind != "nll")
    return "unknown loss-kind '" + kind +
           "'; expected cross_entropy, mse or nll";
  for (const std::string &pattern : o.freeze)
    if (auto glob = llvm::GlobPattern::create(pattern); !glob)
      return "bad freeze pattern '" + pattern +
             "': " + llvm::toString(glob.takeError());
  if (!o.evalEntry.empty() && o.evalEntry == o.entry)
    return "eval-entry and entry are both '" + o.entry + "'";
  return "";
}
