//===- RuntimeKernels.td - the mpt ops' runtime kernels ----*- tablegen -*-===//
//
// Both dialects' records, for `mpt-tblgen -gen-kernel-patterns`: the
// conversions of the mpt ops that declare MPT_RuntimeKernel, each checked
// against the mptrt kernel op it names (RuntimeKernels.h.inc, read by
// lib/Conversion/RuntimeLowering/RenamedKernelPatterns.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MPT_CONVERSION_RUNTIMEKERNELS_TD
#define MPT_CONVERSION_RUNTIMEKERNELS_TD

include "mpt/Dialect/MPT/IR/MPTOps.td"
include "mpt/Dialect/MPTRT/IR/MPTRTOps.td"

#endif // MPT_CONVERSION_RUNTIMEKERNELS_TD
