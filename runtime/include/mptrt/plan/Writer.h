//===- Writer.h - MPT plan: the byte encoding -*- C++ -*-===//
//
// serializePlan encodes a plan's structs as docs/plan-format.md specifies.
// It does not verify: call verifyPlan first if the plan may be malformed.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PLAN_WRITER_H
#define MPTRT_PLAN_WRITER_H

#include "mptrt/Crc32.h"
#include "mptrt/plan/Layout.h"

namespace mptrt {
namespace plan {

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
  void patchU32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i)
      out[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  std::vector<uint8_t> out;
};

} // namespace detail

/// Encodes `plan` (docs/plan-format.md) through `sink(const uint8_t *data,
/// size_t n)`, in file order: the header and tables, then the constants
/// piece by piece, never gathered in one buffer. Does not verify the plan:
/// call verifyPlan first if it may be malformed.
template <typename Sink> void writePlan(const Plan &plan, Sink &&sink) {
  detail::ByteWriter w;
  // Header; sizes and offsets are patched once the tables are written.
  for (uint8_t b : kMagic)
    w.u8(b);
  w.u32(kVersion);
  w.u32(0);           // header checksum            (patched last, byte 12)
  w.u64(0);           // file size                  (patched, byte 16)
  w.u64(kHeaderSize); // tables offset
  w.u64(0);           // tables size                (patched, byte 32)
  w.u64(0);           // constants offset           (patched, byte 40)
  w.u64(plan.constants.size());
  w.u32(0); // tables checksum            (patched, byte 56)
  w.u32(0); // constants checksum         (patched, byte 60)

  w.u32(static_cast<uint32_t>(plan.tensors.size()));
  for (const Tensor &t : plan.tensors) {
    w.str(t.name);
    w.u8(static_cast<uint8_t>(t.dtype));
    w.u8(static_cast<uint8_t>(t.storage));
    w.u8(static_cast<uint8_t>(t.shape.size()));
    w.u8((t.hasInitializer ? kTensorHasInitializer : 0) |
         (t.zeroInitialized ? kTensorZeroInitialized : 0));
    for (int64_t d : t.shape)
      w.i64(d);
    w.u64(t.offset);
  }
  w.u32(static_cast<uint32_t>(plan.kernels.size()));
  for (const Kernel &k : plan.kernels) {
    w.str(k.kind);
    w.ids(k.operands);
    w.ids(k.results);
    w.str(k.origin);
    w.u8(static_cast<uint8_t>(k.phase));
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
    for (size_t i = 0; i < e.outputs.size(); ++i)
      w.u8(static_cast<uint8_t>(e.outputRole(i)));
  }
  const uint64_t tablesSize = w.out.size() - kHeaderSize;
  const uint64_t constantsOffset = alignUp(w.out.size(), kSectionAlignment);
  w.out.resize(constantsOffset, 0);
  uint32_t constantsCrc = 0;
  plan.constants.forEachRun(
      [&](const uint8_t *data, size_t n) { constantsCrc = crc32(constantsCrc, data, n); });
  w.patchU64(16, constantsOffset + plan.constants.size());
  w.patchU64(32, tablesSize);
  w.patchU64(40, constantsOffset);
  w.patchU32(56, crc32(0, w.out.data() + kHeaderSize, tablesSize));
  w.patchU32(60, constantsCrc);
  w.patchU32(12, crc32(0, w.out.data(), kHeaderSize)); // with its own field 0
  sink(static_cast<const uint8_t *>(w.out.data()), w.out.size());
  plan.constants.forEachRun([&](const uint8_t *data, size_t n) { sink(data, n); });
}

/// The plan's bytes in one vector (writePlan into memory).
inline std::vector<uint8_t> serializePlan(const Plan &plan) {
  std::vector<uint8_t> out;
  writePlan(plan, [&](const uint8_t *data, size_t n) { out.insert(out.end(), data, data + n); });
  return out;
}

} // namespace plan
} // namespace mptrt

#endif // MPTRT_PLAN_WRITER_H
