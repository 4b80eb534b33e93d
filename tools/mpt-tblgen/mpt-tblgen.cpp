//===- mpt-tblgen.cpp - TableGen backends for the runtime contract --------===//
//
// Reads TableGen records and writes C++ from them:
//
//   - the tables that the runtime (which builds without LLVM) keeps checked
//     in under runtime/include/mptrt/generated/, and their docs:
//
//       mpt-tblgen -gen-unary-kinds -I include \
//           include/mpt/Dialect/MPT/IR/MPTUnaryFunctions.td -o UnaryKinds.def
//
//       mpt-tblgen -gen-kernel-schema -I include -I <mlir include> \
//           include/mpt/Dialect/MPTRT/IR/MPTRTOps.td -o KernelKinds.def
//
//     scripts/regen-generated.sh runs these backends; the ctest
//     `generated-current` fails when a checked-in file differs from their
//     output;
//   - the mpt -> mptrt conversions that only rename, which the build
//     writes itself (never checked in):
//
//       mpt-tblgen -gen-kernel-patterns -I include -I <mlir include> \
//           include/mpt/Conversion/RuntimeKernels.td -o RuntimeKernels.h.inc
//
//   - the ONNX importer's rows that the mpt ops declare (never checked in):
//
//       mpt-tblgen -gen-onnx-imports -I include -I <mlir include> \
//           include/mpt/Dialect/MPT/IR/MPTOps.td -o MPTOnnxImports.h.inc
//
//   - the pipelines' options, which the build writes itself (mpt_tablegen in
//     cmake/MPTTableGen.cmake; never checked in):
//
//       mpt-tblgen -gen-pipeline-options -I include -I <mlir include> \
//           include/mpt/Pipelines/PipelineOptions.td -o PipelineOptions.h.inc
//
//     and each pass's option values as its options struct:
//
//       mpt-tblgen -gen-pass-option-values -I <mlir include> \
//           include/mpt/Transforms/Passes.td -o PassOptionValues.h.inc
//
//     and the option enums' cases and parsers:
//
//       mpt-tblgen -gen-enum-options -I include -I <mlir include> \
//           include/mpt/IR/MPTEnums.td -o MPTEnumOptions.h.inc
//
//===----------------------------------------------------------------------===//
#include "Emitters.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Main.h"
#include "llvm/TableGen/Record.h"

using namespace llvm;

namespace {

enum class Action {
  None,
  UnaryKinds,
  UnaryDocs,
  KernelSchema,
  KernelPatterns,
  OnnxImports,
  PipelineOptions,
  PassOptionValues,
  EnumOptions
};

cl::opt<Action> action(
    cl::desc("Backend"), cl::init(Action::None),
    cl::values(clEnumValN(Action::UnaryKinds, "gen-unary-kinds",
                          "The runtime's UnaryKinds.def (X-macro rows of "
                          "the elementwise unary functions)"),
               clEnumValN(Action::UnaryDocs, "gen-unary-docs",
                          "docs/unary-functions.md (the same records as a "
                          "table)"),
               clEnumValN(Action::KernelSchema, "gen-kernel-schema",
                          "The runtime's KernelKinds.def (the kernel schema's "
                          "rows, from the mptrt kernel ops)"),
               clEnumValN(Action::KernelPatterns, "gen-kernel-patterns",
                          "The mpt -> mptrt conversions that only rename "
                          "(RuntimeKernels.h.inc, from MPT_RuntimeKernel)"),
               clEnumValN(Action::OnnxImports, "gen-onnx-imports",
                          "The ONNX importer's rows that the mpt ops declare "
                          "(MPTOnnxImports.h.inc, from MPT_OnnxImport)"),
               clEnumValN(Action::PipelineOptions, "gen-pipeline-options",
                          "The pass options the pipelines' options structs "
                          "take (PipelineOptions.h.inc)"),
               clEnumValN(Action::PassOptionValues, "gen-pass-option-values",
                          "Each pass's option values as its options struct "
                          "(PassOptionValues.h.inc)"),
               clEnumValN(Action::EnumOptions, "gen-enum-options",
                          "The option enums' cases and llvm::cl parsers "
                          "(MPTEnumOptions.h.inc)")));

bool run(raw_ostream &os, const RecordKeeper &records) {
  switch (action) {
  case Action::UnaryKinds:
    return mpt::tblgen::emitUnaryKinds(records, os);
  case Action::UnaryDocs:
    return mpt::tblgen::emitUnaryDocs(records, os);
  case Action::KernelSchema:
    return mpt::tblgen::emitKernelSchema(records, os);
  case Action::KernelPatterns:
    return mpt::tblgen::emitKernelPatterns(records, os);
  case Action::OnnxImports:
    return mpt::tblgen::emitOnnxImports(records, os);
  case Action::PipelineOptions:
    return mpt::tblgen::emitPipelineOptions(records, os);
  case Action::PassOptionValues:
    return mpt::tblgen::emitPassOptionValues(records, os);
  case Action::EnumOptions:
    return mpt::tblgen::emitEnumOptions(records, os);
  case Action::None:
    break;
  }
  PrintFatalError(
      "mpt-tblgen: name a backend (-gen-unary-kinds, -gen-unary-docs, "
      "-gen-kernel-schema, -gen-pipeline-options, -gen-pass-option-values, "
      "-gen-enum-options)");
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "MPT's TableGen backends\n");
  return TableGenMain(argv[0], &run);
}
