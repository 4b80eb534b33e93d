//===- Layout.h - MPT plan: constants, codes and structs -*- C++ -*-===//
//
// The in-memory form of an MPT execution plan (`.mptp`), version 4: the
// format's constants and numeric codes, and the plain structs a plan is made
// of, with the size helpers every other part uses. docs/plan-format.md
// specifies the bytes. Header-only, C++17 standard library alone, no
// exceptions or RTTI, so the compiler can include it to emit plans.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PLAN_LAYOUT_H
#define MPTRT_PLAN_LAYOUT_H

#include "mptrt/TrainStepAbi.h"
#include "mptrt/plan/ConstantBlob.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace mptrt {
namespace plan {

//===----------------------------------------------------------------------===//
// Constants of the format.
//===----------------------------------------------------------------------===//

/// The first 8 bytes of every plan: "MPTPLAN" and a NUL.
inline constexpr uint8_t kMagic[8] = {'M', 'P', 'T', 'P', 'L', 'A', 'N', 0};
/// The version this header writes. Version 2 added the CRC-32 checksums of
/// the header and both sections, and zero-initialized parameters; version 3
/// starts the constants section at a page boundary (kSectionAlignment) and
/// gives each kernel its origin (Kernel::origin, Kernel::phase); version 4
/// gives each entry point's output its role (EntryPoint::outputRoles).
inline constexpr uint32_t kVersion = 4;
/// The oldest version this header reads (its constants section is only
/// 64-byte aligned).
inline constexpr uint32_t kOldestReadVersion = 2;
/// Alignment of the constants section from version 3 on: a page, so
/// that the section can be mapped on its own and its bytes used in place.
inline constexpr uint64_t kSectionAlignment = 4096;
/// Size of the fixed header; the tables section starts right after it.
inline constexpr uint64_t kHeaderSize = 64;
/// Alignment of arena offsets, constant offsets, arena sizes and of the
/// constants section within the file.
inline constexpr uint64_t kAlignment = 64;
/// Largest tensor rank.
inline constexpr uint32_t kMaxRank = 8;
/// Every tensor, arena and the constants blob is smaller than this (2^48).
inline constexpr uint64_t kMaxBytes = uint64_t{1} << 48;
/// Largest string (names, kinds, string attributes), in bytes.
inline constexpr uint32_t kMaxStringBytes = 1u << 20;

/// Element types. The numeric codes are part of the format.
enum class DType : uint8_t {
  F32 = 1,
  F16 = 2,
  BF16 = 3,
  F8E4M3FN = 4,
  F8E5M2 = 5,
  I64 = 6,
  I32 = 7,
  I1 = 8, // one byte per element, 0 or 1
};

/// Where a tensor's bytes live. The numeric codes are part of the format.
enum class Storage : uint8_t {
  Arena = 0,     // at `offset` in the running entry point's arena
  Parameter = 1, // persistent, bound by name; optional initial value
  Input = 2,     // bound by name before a run; read-only to kernels
  Output = 3,    // written by kernels, read by name after a run
  Constant = 4,  // at `offset` in the constants blob; read-only
};

/// Tensor flag bits.
inline constexpr uint8_t kTensorHasInitializer = 1;  // Parameter only
inline constexpr uint8_t kTensorZeroInitialized = 2; // Parameter only

/// Attribute value kinds. The numeric codes are part of the format.
enum class AttrType : uint8_t {
  Int = 1,     // int64
  Float = 2,   // IEEE binary64
  IntList = 3, // int64[]
  String = 4,  // bytes
};

/// Which pass over the model a kernel belongs to. The numeric codes are part
/// of the format.
enum class Phase : uint8_t {
  Unknown = 0,  // not known (version 2 plans, or a writer that did not say)
  Forward = 1,  // computes the model's values
  Backward = 2, // computes gradients (built by autodiff)
};

inline bool isValidPhase(uint8_t v) { return v <= 2; }
/// "forward", "backward" or "unknown".
inline const char *phaseName(Phase p) {
  switch (p) {
  case Phase::Forward:
    return "forward";
  case Phase::Backward:
    return "backward";
  case Phase::Unknown:
    break;
  }
  return "unknown";
}

/// What an entry point's output is in the train-step ABI (loss, skipped,
/// grad_norm, loss_scale, lr, a gradient, or none). The numeric codes are
/// part of the format: mptrt/TrainStepAbi.h defines them.
using OutputRole = abi::OutputRole;
using abi::isValidOutputRole;

inline bool isValidDType(uint8_t v) { return v >= 1 && v <= 8; }
inline bool isValidStorage(uint8_t v) { return v <= 4; }
inline bool isValidAttrType(uint8_t v) { return v >= 1 && v <= 4; }

/// Bytes per element.
inline uint64_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F8E4M3FN:
  case DType::F8E5M2:
  case DType::I1:
    return 1;
  case DType::I64:
    return 8;
  }
  return 0;
}

/// The MLIR spelling of an element type ("f32", "bf16", "f8E4M3FN", "i1").
inline const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F8E4M3FN:
    return "f8E4M3FN";
  case DType::F8E5M2:
    return "f8E5M2";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  case DType::I1:
    return "i1";
  }
  return "invalid";
}

inline bool isFloatDType(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F8E4M3FN ||
         t == DType::F8E5M2;
}

inline const char *storageName(Storage s) {
  switch (s) {
  case Storage::Arena:
    return "arena";
  case Storage::Parameter:
    return "parameter";
  case Storage::Input:
    return "input";
  case Storage::Output:
    return "output";
  case Storage::Constant:
    return "constant";
  }
  return "invalid";
}

//===----------------------------------------------------------------------===//
// The plan as plain structs.
//===----------------------------------------------------------------------===//

struct Tensor {
  std::string name; // required for parameters, inputs and outputs
  DType dtype = DType::F32;
  Storage storage = Storage::Arena;
  std::vector<int64_t> shape; // static; rank 0 is a scalar
  /// Arena: byte offset in the arena. Constant: byte offset in the blob.
  /// Parameter with an initializer: byte offset of its initial value in the
  /// blob. Otherwise 0. Offsets are multiples of kAlignment.
  uint64_t offset = 0;
  bool hasInitializer = false; // Parameter only
  /// Parameter only: starts as zeros, which the plan does not store (an
  /// optimizer moment, a gradient accumulator). Counts as initialized.
  bool zeroInitialized = false;
};

struct Attribute {
  std::string name;
  AttrType type = AttrType::Int;
  int64_t i = 0;             // Int
  double f = 0.0;            // Float
  std::vector<int64_t> ints; // IntList
  std::string s;             // String

  static Attribute makeInt(std::string name, int64_t v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::Int;
    a.i = v;
    return a;
  }
  static Attribute makeFloat(std::string name, double v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::Float;
    a.f = v;
    return a;
  }
  static Attribute makeInts(std::string name, std::vector<int64_t> v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::IntList;
    a.ints = std::move(v);
    return a;
  }
  static Attribute makeString(std::string name, std::string v) {
    Attribute a;
    a.name = std::move(name);
    a.type = AttrType::String;
    a.s = std::move(v);
    return a;
  }
};

struct Kernel {
  std::string kind;               // e.g. "gemm"; see docs/runtime.md
  std::vector<uint32_t> operands; // tensor ids
  std::vector<uint32_t> results;  // tensor ids
  std::vector<Attribute> attrs;
  // Where the kernel came from (version 3; empty and Unknown in version 2):
  // the ONNX node name, or a name the compiler gave ("train_step"), empty
  // when there is none, and whether it belongs to the forward or the
  // backward pass (the compiler always says which).
  std::string origin;
  Phase phase = Phase::Unknown;

  const Attribute *findAttr(const std::string &n) const {
    for (const Attribute &a : attrs)
      if (a.name == n)
        return &a;
    return nullptr;
  }
};

struct EntryPoint {
  std::string name;
  uint64_t arenaBytes = 0;       // multiple of kAlignment
  std::vector<uint32_t> kernels; // kernel ids, run in this order
  std::vector<uint32_t> inputs;  // tensor ids of Input storage
  std::vector<uint32_t> params;  // tensor ids of Parameter storage
  std::vector<uint32_t> outputs; // tensor ids of Output storage
  /// Each output's role, in the order of `outputs`; empty: every output
  /// has none (a writer that does not say). The reader always fills it.
  std::vector<OutputRole> outputRoles;

  /// The role of outputs[i].
  OutputRole outputRole(size_t i) const {
    return i < outputRoles.size() ? outputRoles[i] : OutputRole::None;
  }
};

struct Plan {
  std::vector<Tensor> tensors;
  std::vector<Kernel> kernels;
  std::vector<EntryPoint> entries;
  ConstantBlob constants; // the constants section
};

/// Rounds `v` up to a multiple of `alignment` (kAlignment by default).
inline uint64_t alignUp(uint64_t v, uint64_t alignment = kAlignment) {
  return (v + alignment - 1) / alignment * alignment;
}

/// Element count of `shape`, or false if a dim is negative or the product
/// of the nonzero dims reaches kMaxBytes. Zero dims are left out of that
/// bound so that an empty tensor cannot carry huge other dims: any product
/// of a valid shape's dims then fits in an int64_t.
inline bool elementCount(const std::vector<int64_t> &shape, uint64_t *count) {
  uint64_t n = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > (kMaxBytes - 1) / static_cast<uint64_t>(d))
      return false;
    n *= static_cast<uint64_t>(d);
  }
  *count = empty ? 0 : n;
  return true;
}

/// Byte size of a tensor, or false if its shape or dtype is invalid or the
/// size reaches kMaxBytes.
inline bool tensorByteSize(const Tensor &t, uint64_t *bytes) {
  uint64_t n;
  if (!isValidDType(static_cast<uint8_t>(t.dtype)) || !elementCount(t.shape, &n))
    return false;
  uint64_t b = n * dtypeSize(t.dtype);
  if (b >= kMaxBytes)
    return false;
  *bytes = b;
  return true;
}

/// Appends a copy of `size` bytes to the constants blob at the next aligned
/// offset and returns that offset (for Tensor::offset).
inline uint64_t appendConstant(Plan &plan, const void *data, size_t size) {
  return plan.constants.append(data, size, kAlignment);
}

/// Appends `size` bytes by reference, as appendConstant does; they must
/// outlive the plan's use (a compiler's weights while it writes the plan).
inline uint64_t appendConstantView(Plan &plan, const void *data, size_t size) {
  return plan.constants.appendView(data, size, kAlignment);
}

} // namespace plan
} // namespace mptrt

#endif // MPTRT_PLAN_LAYOUT_H
