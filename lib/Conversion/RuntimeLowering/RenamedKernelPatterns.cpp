//===- RenamedKernelPatterns.cpp - the ops whose kernel is a rename -------===//
//
// Every mpt op that declares MPT_RuntimeKernel in its record becomes that
// kernel through KernelPattern: the rows are generated from the records
// (include/mpt/Conversion/RuntimeKernels.td), as are the unary functions'
// from theirs (mptrt/generated/UnaryKinds.def).
//
//===----------------------------------------------------------------------===//
#include "KernelPatterns.h"

using namespace mlir;
using namespace mpt;

void mpt::populateRenamedKernelPatterns(RewritePatternSet &patterns) {
#define MPT_RENAMED_KERNEL(Op, Kernel)                                         \
  patterns.add<KernelPattern<Op, rt::Kernel>>(patterns.getContext());
#include "mpt/Conversion/RuntimeKernels.h.inc"
#undef MPT_RENAMED_KERNEL

#define MPTRT_UNARY_PLAIN_KERNEL(Name, kind)                                   \
  patterns.add<KernelPattern<Name##Op, rt::Name##Op>>(patterns.getContext());
#include "mptrt/generated/UnaryKinds.def"
}
