//===- PipelineFlags.h - a pipeline's options as tool flags ---*- C++ -*-===//
//
// mpt-compile takes `--precision=bf16 --lr=3e-4` where mpt-opt takes
// `--mpt-training-pipeline="precision=bf16 lr=3e-4"`. The options are not
// declared again for the tool: each option of the pipeline's options struct
// (an llvm::cl option that only the struct's own parser sees) is also added
// to the top-level command line, with its name, help, category and default.
//
//===----------------------------------------------------------------------===//
#ifndef MPT_DRIVER_PIPELINEFLAGS_H
#define MPT_DRIVER_PIPELINEFLAGS_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"

namespace mpt::driver {

/// A pass pipeline options struct (`OptionsT`, e.g. TrainingPipelineOptions)
/// whose options are also flags of the tool. Construct one, before the
/// command line is parsed, and pass it to the pipeline's builder after. A
/// process may hold only one: a second would register the flags twice.
template <typename OptionsT> class PipelineFlags : public OptionsT {
public:
  PipelineFlags() {
    // The options live in the struct's own sub-command (PassOptions is one);
    // add them to the top level as well.
    for (auto &entry : this->OptionsMap)
      flags.push_back(entry.second);
    llvm::sort(flags, [](llvm::cl::Option *a, llvm::cl::Option *b) {
      return a->ArgStr < b->ArgStr;
    });
    for (llvm::cl::Option *flag : flags) {
      flag->removeArgument();
      flag->addSubCommand(llvm::cl::SubCommand::getTopLevel());
      flag->addArgument();
    }
  }
  ~PipelineFlags() {
    for (llvm::cl::Option *flag : flags)
      flag->removeArgument();
  }
  PipelineFlags(const PipelineFlags &) = delete;
  PipelineFlags &operator=(const PipelineFlags &) = delete;

private:
  llvm::SmallVector<llvm::cl::Option *> flags;
};

} // namespace mpt::driver

#endif // MPT_DRIVER_PIPELINEFLAGS_H
