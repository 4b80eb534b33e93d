//===- Emitters.h - mpt-tblgen's backends -----------------------*- C++ -*-===//
#ifndef MPT_TOOLS_MPT_TBLGEN_EMITTERS_H
#define MPT_TOOLS_MPT_TBLGEN_EMITTERS_H

namespace llvm {
class RecordKeeper;
class raw_ostream;
} // namespace llvm

namespace mpt::tblgen {

/// runtime/include/mptrt/generated/UnaryKinds.def from the MPT_UnaryFunction
/// records (include/mpt/Dialect/MPT/IR/MPTUnaryFunctions.td). Returns true
/// on error, as TableGen backends do.
bool emitUnaryKinds(const llvm::RecordKeeper &records, llvm::raw_ostream &os);

/// docs/unary-functions.md: the same records as a Markdown table.
bool emitUnaryDocs(const llvm::RecordKeeper &records, llvm::raw_ostream &os);

/// runtime/include/mptrt/generated/KernelKinds.def (the rows of
/// mptrt/KernelSchema.def) from the MPTRT_KernelOp records
/// (include/mpt/Dialect/MPTRT/IR/MPTRTOps.td).
bool emitKernelSchema(const llvm::RecordKeeper &records, llvm::raw_ostream &os);

/// The mpt -> mptrt conversions that only rename (RuntimeKernels.h.inc),
/// from the MPT_RuntimeKernel records (include/mpt/Conversion/
/// RuntimeKernels.td), each checked against its kernel op.
bool emitKernelPatterns(const llvm::RecordKeeper &records,
                        llvm::raw_ostream &os);

/// The ONNX importer's rows that the mpt ops declare (MPTOnnxImports.h.inc),
/// from the MPT_OnnxImport records (include/mpt/Dialect/MPT/IR/MPTOps.td).
bool emitOnnxImports(const llvm::RecordKeeper &records, llvm::raw_ostream &os);

/// The section GEN_PIPELINE_OPTIONS_<record> of the build's
/// mpt/Pipelines/PipelineOptions.h.inc for each MPT_PipelineOptions record
/// (include/mpt/Pipelines/PipelineOptions.td): a pass's options as members
/// of a pipeline options struct, and the copy into the pass's options.
bool emitPipelineOptions(const llvm::RecordKeeper &records,
                         llvm::raw_ostream &os);

/// The section GEN_PASS_OPTION_VALUES_<pass> of a build's
/// PassOptionValues.h.inc for each pass with options: a member function
/// `<pass>Options optionValues() const` for the pass's class.
bool emitPassOptionValues(const llvm::RecordKeeper &records,
                          llvm::raw_ostream &os);

/// mpt/IR/MPTEnumOptions.h.inc from the MPT_OptionEnum records
/// (include/mpt/IR/MPTEnums.td): each enum's cases as an option's values,
/// and the llvm::cl parser of options of its type.
bool emitEnumOptions(const llvm::RecordKeeper &records, llvm::raw_ostream &os);

} // namespace mpt::tblgen

#endif // MPT_TOOLS_MPT_TBLGEN_EMITTERS_H
