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

} // namespace mpt::tblgen

#endif // MPT_TOOLS_MPT_TBLGEN_EMITTERS_H
