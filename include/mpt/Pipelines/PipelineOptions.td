//===- PipelineOptions.td - the pass options the pipelines take -*- tablegen -*-===//
//
// The pipelines' options structs (Pipelines.h) take most of their options
// from the passes they run. Each of those options is declared once, by its
// pass in Passes.td (name, type, default, help text and extra flags); a
// record here says which pass's options a struct takes, in which help
// category, and which of them it leaves out or renames.
//
// `mpt-tblgen -gen-pipeline-options` writes, for each record R, the section
// GEN_PIPELINE_OPTIONS_R of the build's mpt/Pipelines/PipelineOptions.h.inc:
// the options as members of the struct, and a member function
// `<pass>Options()` that returns the pass's options struct with their
// values. An option added to the pass is thus a pipeline option too, and a
// flag of mpt-compile, unless its record excludes it.
//
//===----------------------------------------------------------------------===//

#ifndef MPT_PIPELINES_PIPELINEOPTIONS_TD
#define MPT_PIPELINES_PIPELINEOPTIONS_TD

include "mpt/Transforms/Passes.td"

// A pass option the pipeline takes under another name: `argument` in the
// pipeline's option string (and mpt-compile's flag), `cppName` in its
// struct. The help text stays the pass's.
class MPT_PipelineRename<string passArgumentArg, string argumentArg,
                         string cppNameArg> {
  string passArgument = passArgumentArg;
  string argument = argumentArg;
  string cppName = cppNameArg;
}

// The options of `passArg` that a pipeline options struct takes, listed
// under `categoryArg` (a C++ expression of type llvm::cl::OptionCategory &).
class MPT_PipelineOptions<PassBase passArg, string categoryArg> {
  PassBase pass = passArg;
  string category = categoryArg;
  // Arguments of the pass's options that the pipeline does not take.
  list<string> excluded = [];
  list<MPT_PipelineRename> renamed = [];
}

// InferencePipelineOptions (and so TrainingPipelineOptions):
// --assign-precision's target, report, profile and its margins. Its mode is
// the pipeline's `precision`, declared in Pipelines.h (it adds `none`:
// no precision passes); the op and node overrides, the summary and the
// warnings are mpt-opt's alone.
def PrecisionOptions
    : MPT_PipelineOptions<AssignPrecisionPass, "getPipelineOptionsCategory()"> {
  let excluded = ["mode", "keep-fp32", "force-low", "keep-fp32-nodes",
                  "force-low-nodes", "summary", "warn-unknown",
                  "keep-io-types"];
  let renamed = [
    MPT_PipelineRename<"report", "precision-report", "precisionReport">,
    MPT_PipelineRename<"profile", "precision-profile", "precisionProfile">,
  ];
}

// TrainingPipelineOptions: every option of --build-training-step but
// `entry`; the pipeline's training entry point is always train_step, the
// name the runtime's ABI gives it (mptrt/TrainStepAbi.h).
def TrainingStepOptions
    : MPT_PipelineOptions<BuildTrainingStepPass, "getTrainingOptionsCategory()"> {
  let excluded = ["entry"];
}

#endif // MPT_PIPELINES_PIPELINEOPTIONS_TD
