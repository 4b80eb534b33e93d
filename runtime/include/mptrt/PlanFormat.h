//===- PlanFormat.h - MPT execution plan: structs, writer, reader -*- C++ -*-===//
//
// The in-memory form of an MPT execution plan (`.mptp`) and its byte
// encoding, version 1. docs/plan-format.md specifies the bytes; this header
// is the reference writer and reader. It is header-only and depends on the
// C++17 standard library alone, so the compiler can include it to emit plans.
// It neither throws nor uses RTTI (it builds with -fno-exceptions -fno-rtti).
//
//   mptrt::plan::Plan plan;                 // fill tensors, kernels, entries
//   std::string error;
//   if (!mptrt::plan::verifyPlan(plan, &error)) ...
//   std::vector<uint8_t> bytes = mptrt::plan::serializePlan(plan);
//   mptrt::plan::Plan back;
//   if (!mptrt::plan::parsePlan(bytes.data(), bytes.size(), &back, &error)) ...
//
// parsePlan checks the encoding (magic, version, every length and offset)
// and then calls verifyPlan, which checks what the structs mean (ids in
// range, storage kinds, arena and constant bounds). Neither knows the kernel
// kinds: the runtime checks each kernel's operands and attributes when it
// loads the plan.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PLANFORMAT_H
#define MPTRT_PLANFORMAT_H

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
/// The only version this header reads and writes.
inline constexpr uint32_t kVersion = 1;
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
  I1 = 8,  // one byte per element, 0 or 1
};

/// Where a tensor's bytes live. The numeric codes are part of the format.
enum class Storage : uint8_t {
  Arena = 0,      // at `offset` in the running entry point's arena
  Parameter = 1,  // persistent, bound by name; optional initial value
  Input = 2,      // bound by name before a run; read-only to kernels
  Output = 3,     // written by kernels, read by name after a run
  Constant = 4,   // at `offset` in the constants blob; read-only
};

/// Tensor flag bits.
inline constexpr uint8_t kTensorHasInitializer = 1;  // Parameter only

/// Attribute value kinds. The numeric codes are part of the format.
enum class AttrType : uint8_t {
  Int = 1,      // int64
  Float = 2,    // IEEE binary64
  IntList = 3,  // int64[]
  String = 4,   // bytes
};

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
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F8E4M3FN: return "f8E4M3FN";
  case DType::F8E5M2: return "f8E5M2";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I1: return "i1";
  }
  return "invalid";
}

inline bool isFloatDType(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ||
         t == DType::F8E4M3FN || t == DType::F8E5M2;
}

inline const char *storageName(Storage s) {
  switch (s) {
  case Storage::Arena: return "arena";
  case Storage::Parameter: return "parameter";
  case Storage::Input: return "input";
  case Storage::Output: return "output";
  case Storage::Constant: return "constant";
  }
  return "invalid";
}

//===----------------------------------------------------------------------===//
// The plan as plain structs.
//===----------------------------------------------------------------------===//

struct Tensor {
  std::string name;  // required for parameters, inputs and outputs
  DType dtype = DType::F32;
  Storage storage = Storage::Arena;
  std::vector<int64_t> shape;  // static; rank 0 is a scalar
  /// Arena: byte offset in the arena. Constant: byte offset in the blob.
  /// Parameter with an initializer: byte offset of its initial value in the
  /// blob. Otherwise 0. Offsets are multiples of kAlignment.
  uint64_t offset = 0;
  bool hasInitializer = false;  // Parameter only
};

struct Attribute {
  std::string name;
  AttrType type = AttrType::Int;
  int64_t i = 0;              // Int
  double f = 0.0;             // Float
  std::vector<int64_t> ints;  // IntList
  std::string s;              // String

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
  std::string kind;                // e.g. "gemm"; see docs/runtime.md
  std::vector<uint32_t> operands;  // tensor ids
  std::vector<uint32_t> results;   // tensor ids
  std::vector<Attribute> attrs;

  const Attribute *findAttr(const std::string &n) const {
    for (const Attribute &a : attrs)
      if (a.name == n)
        return &a;
    return nullptr;
  }
};

struct EntryPoint {
  std::string name;
  uint64_t arenaBytes = 0;        // multiple of kAlignment
  std::vector<uint32_t> kernels;  // kernel ids, run in this order
  std::vector<uint32_t> inputs;   // tensor ids of Input storage
  std::vector<uint32_t> params;   // tensor ids of Parameter storage
  std::vector<uint32_t> outputs;  // tensor ids of Output storage
};

struct Plan {
  std::vector<Tensor> tensors;
  std::vector<Kernel> kernels;
  std::vector<EntryPoint> entries;
  std::vector<uint8_t> constants;  // the constants blob
};

/// Rounds `v` up to a multiple of kAlignment.
inline uint64_t alignUp(uint64_t v) {
  return (v + kAlignment - 1) / kAlignment * kAlignment;
}

/// Element count of `shape`, or false if a dim is negative or the count
/// reaches kMaxBytes.
inline bool elementCount(const std::vector<int64_t> &shape, uint64_t *count) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d != 0 && n > (kMaxBytes - 1) / static_cast<uint64_t>(d))
      return false;
    n *= static_cast<uint64_t>(d);
  }
  *count = n;
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

/// Appends `size` bytes to the constants blob at the next aligned offset and
/// returns that offset (for Tensor::offset).
inline uint64_t appendConstant(Plan &plan, const void *data, size_t size) {
  uint64_t offset = alignUp(plan.constants.size());
  plan.constants.resize(offset, 0);
  const uint8_t *p = static_cast<const uint8_t *>(data);
  plan.constants.insert(plan.constants.end(), p, p + size);
  return offset;
}

//===----------------------------------------------------------------------===//
// Verification of the structs.
//===----------------------------------------------------------------------===//

namespace detail {

inline bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

inline std::string tensorLabel(const Plan &plan, uint32_t id) {
  std::string s = "tensor " + std::to_string(id);
  if (id < plan.tensors.size() && !plan.tensors[id].name.empty())
    s += " '" + plan.tensors[id].name + "'";
  return s;
}

/// True if `ids` holds a value twice.
inline bool hasDuplicate(const std::vector<uint32_t> &ids) {
  std::vector<uint32_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

} // namespace detail

/// Checks everything about `plan` that does not depend on kernel kinds.
/// On failure returns false and, if `error` is given, a message naming the
/// offending tensor, kernel or entry point.
inline bool verifyPlan(const Plan &plan, std::string *error) {
  using detail::fail;
  using detail::tensorLabel;
  const uint64_t numTensors = plan.tensors.size();
  if (numTensors > UINT32_MAX || plan.kernels.size() > UINT32_MAX ||
      plan.entries.size() > UINT32_MAX)
    return fail(error, "plan: too many tensors, kernels or entry points");
  if (plan.constants.size() >= kMaxBytes)
    return fail(error, "plan: constants blob too large");

  std::vector<uint64_t> bytes(numTensors, 0);
  for (uint32_t id = 0; id < numTensors; ++id) {
    const Tensor &t = plan.tensors[id];
    const std::string label = tensorLabel(plan, id);
    if (!isValidDType(static_cast<uint8_t>(t.dtype)))
      return fail(error, label + ": invalid dtype code " +
                             std::to_string(static_cast<int>(t.dtype)));
    if (!isValidStorage(static_cast<uint8_t>(t.storage)))
      return fail(error, label + ": invalid storage code " +
                             std::to_string(static_cast<int>(t.storage)));
    if (t.shape.size() > kMaxRank)
      return fail(error, label + ": rank " + std::to_string(t.shape.size()) +
                             " exceeds " + std::to_string(kMaxRank));
    for (int64_t d : t.shape)
      if (d < 0)
        return fail(error, label + ": negative dimension " + std::to_string(d));
    if (!tensorByteSize(t, &bytes[id]))
      return fail(error, label + ": byte size overflows 2^48");
    if (t.name.size() > kMaxStringBytes)
      return fail(error, label + ": name too long");
    if (t.hasInitializer && t.storage != Storage::Parameter)
      return fail(error, label + ": only parameters may have an initializer");
    const bool usesBlob = t.storage == Storage::Constant || t.hasInitializer;
    const bool usesOffset = usesBlob || t.storage == Storage::Arena;
    if (!usesOffset && t.offset != 0)
      return fail(error, label + ": " + storageName(t.storage) +
                             " tensor must have offset 0");
    if (usesOffset && t.offset % kAlignment != 0)
      return fail(error, label + ": offset " + std::to_string(t.offset) +
                             " is not a multiple of " + std::to_string(kAlignment));
    if (usesOffset && t.offset >= kMaxBytes)
      return fail(error, label + ": offset " + std::to_string(t.offset) +
                             " exceeds 2^48");
    if (usesBlob && t.offset + bytes[id] > plan.constants.size())
      return fail(error, label + ": bytes [" + std::to_string(t.offset) + ", " +
                             std::to_string(t.offset + bytes[id]) +
                             ") lie outside the constants blob of " +
                             std::to_string(plan.constants.size()) + " bytes");
    if (t.storage != Storage::Arena && t.storage != Storage::Constant &&
        t.name.empty())
      return fail(error, label + ": " + storageName(t.storage) +
                             " tensors need a name");
  }
  // Parameter, input and output names are unique within their storage kind.
  for (uint32_t a = 0; a < numTensors; ++a) {
    const Tensor &ta = plan.tensors[a];
    if (ta.storage == Storage::Arena || ta.storage == Storage::Constant)
      continue;
    for (uint32_t b = a + 1; b < numTensors; ++b)
      if (plan.tensors[b].storage == ta.storage && plan.tensors[b].name == ta.name)
        return fail(error, std::string("plan: two ") + storageName(ta.storage) +
                               " tensors are named '" + ta.name + "' (" +
                               std::to_string(a) + " and " + std::to_string(b) + ")");
  }

  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const Kernel &kernel = plan.kernels[k];
    const std::string label = "kernel " + std::to_string(k) + " (" + kernel.kind + ")";
    if (kernel.kind.empty() || kernel.kind.size() > kMaxStringBytes)
      return fail(error, "kernel " + std::to_string(k) + ": empty or overlong kind");
    for (uint32_t id : kernel.operands)
      if (id >= numTensors)
        return fail(error, label + ": operand id " + std::to_string(id) +
                               " out of range (" + std::to_string(numTensors) +
                               " tensors)");
    for (uint32_t id : kernel.results) {
      if (id >= numTensors)
        return fail(error, label + ": result id " + std::to_string(id) +
                               " out of range (" + std::to_string(numTensors) +
                               " tensors)");
      Storage s = plan.tensors[id].storage;
      if (s == Storage::Input || s == Storage::Constant)
        return fail(error, label + ": writes " + tensorLabel(plan, id) + ", a " +
                               storageName(s) + " tensor, which is read-only");
    }
    if (detail::hasDuplicate(kernel.results))
      return fail(error, label + ": a tensor appears twice among the results");
    for (size_t a = 0; a < kernel.attrs.size(); ++a) {
      const Attribute &attr = kernel.attrs[a];
      if (attr.name.empty() || attr.name.size() > kMaxStringBytes)
        return fail(error, label + ": attribute " + std::to_string(a) +
                               " has an empty or overlong name");
      if (!isValidAttrType(static_cast<uint8_t>(attr.type)))
        return fail(error, label + ": attribute '" + attr.name +
                               "' has invalid type code " +
                               std::to_string(static_cast<int>(attr.type)));
      if (attr.s.size() > kMaxStringBytes)
        return fail(error, label + ": attribute '" + attr.name + "' too long");
      for (size_t b = a + 1; b < kernel.attrs.size(); ++b)
        if (kernel.attrs[b].name == attr.name)
          return fail(error, label + ": attribute '" + attr.name + "' given twice");
    }
  }

  for (size_t e = 0; e < plan.entries.size(); ++e) {
    const EntryPoint &entry = plan.entries[e];
    const std::string label = "entry point " + std::to_string(e) + " '" + entry.name + "'";
    if (entry.name.empty() || entry.name.size() > kMaxStringBytes)
      return fail(error, "entry point " + std::to_string(e) + ": empty or overlong name");
    for (size_t o = e + 1; o < plan.entries.size(); ++o)
      if (plan.entries[o].name == entry.name)
        return fail(error, "plan: two entry points are named '" + entry.name + "'");
    if (entry.arenaBytes % kAlignment != 0 || entry.arenaBytes >= kMaxBytes)
      return fail(error, label + ": arena size " + std::to_string(entry.arenaBytes) +
                             " is not a multiple of 64 below 2^48");
    struct Binding {
      const std::vector<uint32_t> *ids;
      Storage storage;
      const char *what;
    };
    const Binding bindings[] = {{&entry.inputs, Storage::Input, "input"},
                                {&entry.params, Storage::Parameter, "parameter"},
                                {&entry.outputs, Storage::Output, "output"}};
    for (const Binding &b : bindings) {
      for (uint32_t id : *b.ids) {
        if (id >= numTensors)
          return fail(error, label + ": " + b.what + " id " + std::to_string(id) +
                                 " out of range");
        if (plan.tensors[id].storage != b.storage)
          return fail(error, label + ": " + b.what + " " + tensorLabel(plan, id) +
                                 " has storage " +
                                 storageName(plan.tensors[id].storage));
      }
      if (detail::hasDuplicate(*b.ids))
        return fail(error, label + ": lists the same " + std::string(b.what) + " twice");
    }
    auto listed = [](const std::vector<uint32_t> &ids, uint32_t id) {
      for (uint32_t x : ids)
        if (x == id)
          return true;
      return false;
    };
    for (uint32_t k : entry.kernels) {
      if (k >= plan.kernels.size())
        return fail(error, label + ": kernel id " + std::to_string(k) +
                               " out of range (" + std::to_string(plan.kernels.size()) +
                               " kernels)");
      const Kernel &kernel = plan.kernels[k];
      for (int side = 0; side < 2; ++side) {
        for (uint32_t id : side == 0 ? kernel.operands : kernel.results) {
          const Tensor &t = plan.tensors[id];
          const std::string where = label + ", kernel " + std::to_string(k) + " (" +
                                    kernel.kind + "), " + tensorLabel(plan, id);
          switch (t.storage) {
          case Storage::Arena:
            if (t.offset + bytes[id] > entry.arenaBytes)
              return fail(error, where + ": bytes [" + std::to_string(t.offset) +
                                     ", " + std::to_string(t.offset + bytes[id]) +
                                     ") exceed the arena of " +
                                     std::to_string(entry.arenaBytes) + " bytes");
            break;
          case Storage::Input:
            if (!listed(entry.inputs, id))
              return fail(error, where + ": not among the entry point's inputs");
            break;
          case Storage::Parameter:
            if (!listed(entry.params, id))
              return fail(error, where + ": not among the entry point's parameters");
            break;
          case Storage::Output:
            if (!listed(entry.outputs, id))
              return fail(error, where + ": not among the entry point's outputs");
            break;
          case Storage::Constant:
            break;
          }
        }
      }
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Writer.
//===----------------------------------------------------------------------===//

namespace detail {

class ByteWriter {
public:
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void i64(int64_t v) { u64(static_cast<uint64_t>(v)); }
  void f64(double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    u64(bits);
  }
  void str(const std::string &s) {
    u32(static_cast<uint32_t>(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
  void ids(const std::vector<uint32_t> &v) {
    u32(static_cast<uint32_t>(v.size()));
    for (uint32_t x : v)
      u32(x);
  }
  void patchU64(size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i)
      out[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  std::vector<uint8_t> out;
};

} // namespace detail

/// Encodes `plan` (docs/plan-format.md). Does not verify it: call
/// verifyPlan first if the plan may be malformed.
inline std::vector<uint8_t> serializePlan(const Plan &plan) {
  detail::ByteWriter w;
  // Header; sizes and offsets are patched once the tables are written.
  for (uint8_t b : kMagic)
    w.u8(b);
  w.u32(kVersion);
  w.u32(0);  // flags
  w.u64(0);  // file size                  (patched, byte 16)
  w.u64(kHeaderSize);  // tables offset
  w.u64(0);  // tables size                (patched, byte 32)
  w.u64(0);  // constants offset           (patched, byte 40)
  w.u64(plan.constants.size());
  w.u64(0);  // reserved

  w.u32(static_cast<uint32_t>(plan.tensors.size()));
  for (const Tensor &t : plan.tensors) {
    w.str(t.name);
    w.u8(static_cast<uint8_t>(t.dtype));
    w.u8(static_cast<uint8_t>(t.storage));
    w.u8(static_cast<uint8_t>(t.shape.size()));
    w.u8(t.hasInitializer ? kTensorHasInitializer : 0);
    for (int64_t d : t.shape)
      w.i64(d);
    w.u64(t.offset);
  }
  w.u32(static_cast<uint32_t>(plan.kernels.size()));
  for (const Kernel &k : plan.kernels) {
    w.str(k.kind);
    w.ids(k.operands);
    w.ids(k.results);
    w.u32(static_cast<uint32_t>(k.attrs.size()));
    for (const Attribute &a : k.attrs) {
      w.str(a.name);
      w.u8(static_cast<uint8_t>(a.type));
      switch (a.type) {
      case AttrType::Int:
        w.i64(a.i);
        break;
      case AttrType::Float:
        w.f64(a.f);
        break;
      case AttrType::IntList:
        w.u32(static_cast<uint32_t>(a.ints.size()));
        for (int64_t v : a.ints)
          w.i64(v);
        break;
      case AttrType::String:
        w.str(a.s);
        break;
      }
    }
  }
  w.u32(static_cast<uint32_t>(plan.entries.size()));
  for (const EntryPoint &e : plan.entries) {
    w.str(e.name);
    w.u64(e.arenaBytes);
    w.ids(e.kernels);
    w.ids(e.inputs);
    w.ids(e.params);
    w.ids(e.outputs);
  }
  const uint64_t tablesSize = w.out.size() - kHeaderSize;
  const uint64_t constantsOffset = alignUp(w.out.size());
  w.out.resize(constantsOffset, 0);
  w.out.insert(w.out.end(), plan.constants.begin(), plan.constants.end());
  w.patchU64(16, w.out.size());
  w.patchU64(32, tablesSize);
  w.patchU64(40, constantsOffset);
  return std::move(w.out);
}

//===----------------------------------------------------------------------===//
// Reader.
//===----------------------------------------------------------------------===//

namespace detail {

/// Bounds-checked little-endian reads from [begin, end). The first failure
/// records a message with the byte offset; later reads then fail too.
class ByteReader {
public:
  ByteReader(const uint8_t *data, uint64_t begin, uint64_t limit)
      : file(data), pos(begin), end(limit) {}

  bool failed() const { return !error.empty(); }
  uint64_t offset() const { return pos; }
  uint64_t remaining() const { return end - pos; }

  bool need(uint64_t n, const char *what) {
    if (failed())
      return false;
    if (n > end - pos) {
      error = "truncated " + std::string(what) + " at byte " + std::to_string(pos) +
              ": needs " + std::to_string(n) + " bytes, " +
              std::to_string(end - pos) + " left in the tables section";
      return false;
    }
    return true;
  }
  bool u8(uint8_t *v, const char *what) {
    if (!need(1, what))
      return false;
    *v = file[pos++];
    return true;
  }
  bool u32(uint32_t *v, const char *what) {
    if (!need(4, what))
      return false;
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i)
      r |= static_cast<uint32_t>(file[pos + i]) << (8 * i);
    pos += 4;
    *v = r;
    return true;
  }
  bool u64(uint64_t *v, const char *what) {
    if (!need(8, what))
      return false;
    uint64_t r = 0;
    for (int i = 0; i < 8; ++i)
      r |= static_cast<uint64_t>(file[pos + i]) << (8 * i);
    pos += 8;
    *v = r;
    return true;
  }
  bool i64(int64_t *v, const char *what) {
    uint64_t u;
    if (!u64(&u, what))
      return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  bool f64(double *v, const char *what) {
    uint64_t u;
    if (!u64(&u, what))
      return false;
    memcpy(v, &u, sizeof(*v));
    return true;
  }
  bool str(std::string *s, const char *what) {
    uint32_t n;
    if (!u32(&n, what))
      return false;
    if (n > kMaxStringBytes) {
      error = std::string(what) + " at byte " + std::to_string(pos - 4) +
              ": length " + std::to_string(n) + " exceeds the limit of " +
              std::to_string(kMaxStringBytes);
      return false;
    }
    if (!need(n, what))
      return false;
    s->assign(reinterpret_cast<const char *>(file + pos), n);
    pos += n;
    return true;
  }
  /// Reads a count of items that take at least `minItemBytes` each, and
  /// rejects counts the remaining bytes cannot hold (so a corrupt count
  /// never triggers a huge allocation).
  bool count(uint32_t *n, uint64_t minItemBytes, const char *what) {
    if (!u32(n, what))
      return false;
    if (static_cast<uint64_t>(*n) * minItemBytes > end - pos) {
      error = std::string(what) + " at byte " + std::to_string(pos - 4) + ": " +
              std::to_string(*n) + " items cannot fit in the " +
              std::to_string(end - pos) + " bytes left in the tables section";
      return false;
    }
    return true;
  }
  bool ids(std::vector<uint32_t> *v, const char *what) {
    uint32_t n;
    if (!count(&n, 4, what))
      return false;
    v->resize(n);
    for (uint32_t i = 0; i < n; ++i)
      if (!u32(&(*v)[i], what))
        return false;
    return true;
  }

  std::string error;

private:
  const uint8_t *file;
  uint64_t pos;
  uint64_t end;
};

inline uint64_t readLE64(const uint8_t *p) {
  uint64_t r = 0;
  for (int i = 0; i < 8; ++i)
    r |= static_cast<uint64_t>(p[i]) << (8 * i);
  return r;
}

inline uint32_t readLE32(const uint8_t *p) {
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<uint32_t>(p[i]) << (8 * i);
  return r;
}

} // namespace detail

/// Decodes and verifies a plan held in `data[0, size)`. On failure returns
/// false and sets `*error` (if given) to a message that starts with "plan:".
/// Never reads outside the given bytes.
inline bool parsePlan(const uint8_t *data, size_t size, Plan *out,
                      std::string *error) {
  using detail::fail;
  if (!data && size != 0)
    return fail(error, "plan: null data");
  if (size < kHeaderSize)
    return fail(error, "plan: " + std::to_string(size) +
                           " bytes is shorter than the 64-byte header");
  if (memcmp(data, kMagic, sizeof(kMagic)) != 0)
    return fail(error, "plan: bad magic (not an MPT plan file)");
  const uint32_t version = detail::readLE32(data + 8);
  if (version != kVersion)
    return fail(error, "plan: unsupported format version " + std::to_string(version) +
                           " (this runtime reads version " +
                           std::to_string(kVersion) + ")");
  const uint32_t flags = detail::readLE32(data + 12);
  const uint64_t fileSize = detail::readLE64(data + 16);
  const uint64_t tablesOffset = detail::readLE64(data + 24);
  const uint64_t tablesSize = detail::readLE64(data + 32);
  const uint64_t constantsOffset = detail::readLE64(data + 40);
  const uint64_t constantsSize = detail::readLE64(data + 48);
  const uint64_t reserved = detail::readLE64(data + 56);
  if (flags != 0 || reserved != 0)
    return fail(error, "plan: header flags and reserved bytes must be zero");
  if (fileSize != size)
    return fail(error, "plan: header says the file has " + std::to_string(fileSize) +
                           " bytes but " + std::to_string(size) +
                           " were given (truncated or padded file)");
  if (tablesOffset != kHeaderSize)
    return fail(error, "plan: tables section must start at byte 64, not " +
                           std::to_string(tablesOffset));
  if (tablesSize > size - kHeaderSize)
    return fail(error, "plan: tables section of " + std::to_string(tablesSize) +
                           " bytes runs past the end of the file");
  const uint64_t tablesEnd = kHeaderSize + tablesSize;
  if (constantsOffset % kAlignment != 0 || constantsOffset < tablesEnd ||
      constantsOffset - tablesEnd >= kAlignment)
    return fail(error, "plan: constants offset " + std::to_string(constantsOffset) +
                           " is not the first multiple of 64 after the tables");
  if (constantsOffset > size || constantsSize != size - constantsOffset)
    return fail(error, "plan: constants section [" + std::to_string(constantsOffset) +
                           ", +" + std::to_string(constantsSize) +
                           ") does not end at the end of the file");
  for (uint64_t p = tablesEnd; p < constantsOffset; ++p)
    if (data[p] != 0)
      return fail(error, "plan: padding byte " + std::to_string(p) + " is not zero");

  Plan plan;
  detail::ByteReader r(data, kHeaderSize, tablesEnd);
  uint32_t n;
  // Smallest encodings, with empty strings and lists: a tensor is
  // 4 + 4 + 8 bytes, a kernel 4 + 4 + 4 + 4, an attribute 4 + 1 + 4 (a
  // list or string value), an entry point 4 + 8 + 4 * 4.
  if (r.count(&n, 16, "tensor count")) {
    plan.tensors.resize(n);
    for (uint32_t i = 0; i < n && !r.failed(); ++i) {
      Tensor &t = plan.tensors[i];
      uint8_t dtype = 0, storage = 0, rank = 0, tflags = 0;
      r.str(&t.name, "tensor name");
      r.u8(&dtype, "tensor dtype");
      r.u8(&storage, "tensor storage");
      r.u8(&rank, "tensor rank");
      r.u8(&tflags, "tensor flags");
      if (r.failed())
        break;
      if (!isValidDType(dtype))
        return fail(error, "plan: tensor " + std::to_string(i) +
                               ": invalid dtype code " + std::to_string(dtype));
      if (!isValidStorage(storage))
        return fail(error, "plan: tensor " + std::to_string(i) +
                               ": invalid storage code " + std::to_string(storage));
      if (rank > kMaxRank)
        return fail(error, "plan: tensor " + std::to_string(i) + ": rank " +
                               std::to_string(rank) + " exceeds 8");
      if (tflags & ~kTensorHasInitializer)
        return fail(error, "plan: tensor " + std::to_string(i) +
                               ": unknown flag bits " + std::to_string(tflags));
      t.dtype = static_cast<DType>(dtype);
      t.storage = static_cast<Storage>(storage);
      t.hasInitializer = tflags & kTensorHasInitializer;
      t.shape.resize(rank);
      for (uint8_t d = 0; d < rank; ++d)
        r.i64(&t.shape[d], "tensor dimension");
      r.u64(&t.offset, "tensor offset");
    }
  }
  if (!r.failed() && r.count(&n, 16, "kernel count")) {
    plan.kernels.resize(n);
    for (uint32_t i = 0; i < n && !r.failed(); ++i) {
      Kernel &k = plan.kernels[i];
      r.str(&k.kind, "kernel kind");
      r.ids(&k.operands, "kernel operands");
      r.ids(&k.results, "kernel results");
      uint32_t numAttrs;
      if (!r.count(&numAttrs, 9, "attribute count"))
        break;
      k.attrs.resize(numAttrs);
      for (uint32_t a = 0; a < numAttrs && !r.failed(); ++a) {
        Attribute &attr = k.attrs[a];
        uint8_t type = 0;
        r.str(&attr.name, "attribute name");
        if (!r.u8(&type, "attribute type"))
          break;
        if (!isValidAttrType(type))
          return fail(error, "plan: kernel " + std::to_string(i) + " attribute '" +
                                 attr.name + "': invalid type code " +
                                 std::to_string(type));
        attr.type = static_cast<AttrType>(type);
        switch (attr.type) {
        case AttrType::Int:
          r.i64(&attr.i, "int attribute");
          break;
        case AttrType::Float:
          r.f64(&attr.f, "float attribute");
          break;
        case AttrType::IntList: {
          uint32_t len;
          if (!r.count(&len, 8, "int list attribute"))
            break;
          attr.ints.resize(len);
          for (uint32_t j = 0; j < len; ++j)
            r.i64(&attr.ints[j], "int list attribute");
          break;
        }
        case AttrType::String:
          r.str(&attr.s, "string attribute");
          break;
        }
      }
    }
  }
  if (!r.failed() && r.count(&n, 28, "entry point count")) {
    plan.entries.resize(n);
    for (uint32_t i = 0; i < n && !r.failed(); ++i) {
      EntryPoint &e = plan.entries[i];
      r.str(&e.name, "entry point name");
      r.u64(&e.arenaBytes, "entry point arena size");
      r.ids(&e.kernels, "entry point kernels");
      r.ids(&e.inputs, "entry point inputs");
      r.ids(&e.params, "entry point parameters");
      r.ids(&e.outputs, "entry point outputs");
    }
  }
  if (r.failed())
    return fail(error, "plan: " + r.error);
  if (r.remaining() != 0)
    return fail(error, "plan: " + std::to_string(r.remaining()) +
                           " unread bytes at the end of the tables section");
  plan.constants.assign(data + constantsOffset, data + size);
  std::string verifyError;
  if (!verifyPlan(plan, &verifyError))
    return fail(error, "plan: " + verifyError);
  *out = std::move(plan);
  return true;
}

} // namespace plan
} // namespace mptrt

#endif // MPTRT_PLANFORMAT_H
