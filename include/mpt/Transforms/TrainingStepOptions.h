//===- TrainingStepOptions.h - which training options go together -*- C++
//-*-===//
//
// The check of --build-training-step's options that needs no model: each
// closed set's value (optimizer, master weights, schedule, loss scale, FP8
// scaling, loss kind), the options that need another (master-weights=bf16
// needs optimizer=adamw, warmup_cosine needs total-steps > warmup-steps),
// the freeze globs and the entry names. The pass runs it before it reads
// the model, and mpt::verifyOptions runs it for every front end before the
// model is imported, so that mpt-compile, the C API, Python and the
// registered pipelines reject the same options with the same message.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TRANSFORMS_TRAININGSTEPOPTIONS_H
#define MPT_TRANSFORMS_TRAININGSTEPOPTIONS_H

#include "mpt/Transforms/Passes.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mpt {

/// "" when `options` hold together, else why not, naming the options by
/// their pass names ("master-weights=bf16 needs optimizer=adamw; ...").
std::string
verifyTrainingStepOptions(const BuildTrainingStepPassOptions &options);

/// The value of `loss-scale`.
struct LossScaleSpec {
  enum class Kind { Auto, None, Dynamic, Static };
  Kind kind = Kind::Auto;
  /// The scale of `static:S`.
  double staticScale = 0;
};

/// `loss-scale`'s value, or none when it is not auto, none, dynamic or
/// static:S with S > 0.
std::optional<LossScaleSpec> parseLossScale(llvm::StringRef spec);

} // namespace mpt

#endif // MPT_TRANSFORMS_TRAININGSTEPOPTIONS_H
