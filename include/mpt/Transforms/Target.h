//===- Target.h - the compile target a user states ---------------*- C++
//-*-===//
//
// `target` (the pipelines' and --assign-precision's option): `cpu` or a CUDA
// architecture sm_XY (with an optional suffix: sm_90a, sm_100f). Nothing is
// detected at compile time; the choices made for it are `precision=auto`
// (PrecisionMode.h) and `conv-layout=auto` (resolveConvLayout).
//
//===----------------------------------------------------------------------===//
#ifndef MPT_TRANSFORMS_TARGET_H
#define MPT_TRANSFORMS_TARGET_H

#include "mpt/IR/MPTEnumOptions.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"
#include <string>

namespace mpt {

/// A parsed target: the CPU, or a CUDA compute capability (90 for sm_90a).
struct Target {
  bool cpu = false;
  unsigned capability = 0;
};

/// Parses `cpu` or sm_XY; fails, with a message in `error` that names the
/// target and the accepted forms, for anything else (the empty string
/// included).
llvm::FailureOr<Target> parseTarget(llvm::StringRef target, std::string &error);

/// The layout `conv-layout=auto` picks for `target` (empty: none stated):
/// NHWC for sm_70 and newer, whose tensor-core convolutions cuDNN runs on
/// NHWC activations, for the CPU, whose default `fast` numerics run
/// oneDNN's convolutions on NHWC activations as they are stored (the
/// `reference` mode's run channels first, between transposes:
/// `conv-layout=nchw` for it), and without a target (a plan for any
/// backend: both defaults prefer NHWC); NCHW for GPUs older than sm_70. A
/// layout other than auto is returned as it is; `target` must parse or be
/// empty.
ConvLayout resolveConvLayout(ConvLayout layout, llvm::StringRef target);

} // namespace mpt

#endif // MPT_TRANSFORMS_TARGET_H
