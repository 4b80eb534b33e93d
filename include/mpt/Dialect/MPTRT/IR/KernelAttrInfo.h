//===- KernelAttrInfo.h - what a kernel op says about its attributes -*- C++
//-*-===//
#ifndef MPT_DIALECT_MPTRT_IR_KERNELATTRINFO_H
#define MPT_DIALECT_MPTRT_IR_KERNELATTRINFO_H

namespace mpt::rt {

/// The schema types of KernelSchema.def (Bool is stored as an int).
enum class KernelAttrType { Int, Float, IntList, String, Bool, Unsupported };

/// One kernel attribute as its op's ODS definition declares it (computed by
/// MPTRT_KernelOp in MPTRTOps.td).
struct KernelAttrInfo {
  const char *name;
  KernelAttrType type;
  bool required;
  /// For enums, the allowed strings separated by '|'; else empty.
  const char *allowed;
};

} // namespace mpt::rt

#endif // MPT_DIALECT_MPTRT_IR_KERNELATTRINFO_H
