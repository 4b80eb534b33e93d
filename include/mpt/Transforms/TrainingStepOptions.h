//===- TrainingStepOptions.h - which training options go together -*- C++
//-*-===//
//
// The check of --build-training-step's options that needs no model: the
// FP8 history and margin, the options that need another (master-weights=bf16
// needs optimizer=adamw, warmup_cosine needs total-steps > warmup-steps),
// the freeze globs and the entry names. (A typed option's value, an
// optimizer, a loss kind or a loss scale, is checked by its parser:
// mpt/IR/MPTEnumOptions.h.) The pass runs it before it reads the
// model, and mpt::verifyOptions runs it for every front end before the
// model is imported, so that mpt-compile, the C API, Python and the
// registered pipelines reject the same options with the same message.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TRANSFORMS_TRAININGSTEPOPTIONS_H
#define MPT_TRANSFORMS_TRAININGSTEPOPTIONS_H

#include "mpt/Transforms/Passes.h"

#include <string>

namespace mpt {

/// "" when `options` hold together, else why not, naming the options by
/// their pass names ("master-weights=bf16 needs optimizer=adamw; ...").
std::string
verifyTrainingStepOptions(const BuildTrainingStepPassOptions &options);

} // namespace mpt

#endif // MPT_TRANSFORMS_TRAININGSTEPOPTIONS_H
