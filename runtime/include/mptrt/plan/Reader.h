//===- Reader.h - MPT plan: decoding bytes -*- C++ -*-===//
//
// parsePlan checks the encoding (magic, version, every length and offset)
// and then calls verifyPlan, so a plan it returns is well formed.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PLAN_READER_H
#define MPTRT_PLAN_READER_H

#include "mptrt/Crc32.h"
#include "mptrt/plan/Layout.h"
#include "mptrt/plan/Validation.h"

namespace mptrt {
namespace plan {

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
      error = "truncated " + std::string(what) + " at byte " + std::to_string(pos) + ": needs " +
              std::to_string(n) + " bytes, " + std::to_string(end - pos) +
              " left in the tables section";
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
      error = std::string(what) + " at byte " + std::to_string(pos - 4) + ": length " +
              std::to_string(n) + " exceeds the limit of " + std::to_string(kMaxStringBytes);
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
              std::to_string(*n) + " items cannot fit in the " + std::to_string(end - pos) +
              " bytes left in the tables section";
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

/// Plans of version 3 and older record no output roles: their outputs were
/// found by name, so each output's role is the one its name gives
/// (abi::legacyOutputRole). The one place that derives a role from a name.
inline void deriveOutputRoles(Plan *plan) {
  for (EntryPoint &e : plan->entries) {
    e.outputRoles.resize(e.outputs.size());
    for (size_t o = 0; o < e.outputs.size(); ++o)
      e.outputRoles[o] = abi::legacyOutputRole(plan->tensors[e.outputs[o]].name);
  }
}

} // namespace detail

/// Decodes and verifies a plan held in `data[0, size)`. Versions 2 to 4 are
/// read; in a version 2 or 3 plan each output's role is derived from its
/// name (detail::deriveOutputRoles). On failure returns
/// false and sets `*error` (if given) to a message that starts with "plan:".
/// Never reads outside the given bytes. The header's, the tables' and the
/// constants' CRC-32 are checked unless `checkChecksums` is false (a large
/// plan loads faster; the structure is still checked in full). The plan's
/// constants are a view of `data`, not a copy: keep `data` alive while they
/// are used, or call `out->constants.makeOwned()`.
inline bool parsePlan(const uint8_t *data, size_t size, Plan *out, std::string *error,
                      bool checkChecksums = true) {
  using detail::fail;
  if (!data && size != 0)
    return fail(error, "plan: null data");
  if (size < kHeaderSize)
    return fail(error,
                "plan: " + std::to_string(size) + " bytes is shorter than the 64-byte header");
  if (memcmp(data, kMagic, sizeof(kMagic)) != 0)
    return fail(error, "plan: bad magic (not an MPT plan file)");
  const uint32_t version = detail::readLE32(data + 8);
  if (version < kOldestReadVersion || version > kVersion)
    return fail(error, "plan: unsupported format version " + std::to_string(version) +
                           " (this runtime reads versions " + std::to_string(kOldestReadVersion) +
                           " to " + std::to_string(kVersion) + ")");
  const uint64_t sectionAlignment = version >= 3 ? kSectionAlignment : kAlignment;
  const uint32_t headerCrc = detail::readLE32(data + 12);
  const uint64_t fileSize = detail::readLE64(data + 16);
  const uint64_t tablesOffset = detail::readLE64(data + 24);
  const uint64_t tablesSize = detail::readLE64(data + 32);
  const uint64_t constantsOffset = detail::readLE64(data + 40);
  const uint64_t constantsSize = detail::readLE64(data + 48);
  const uint32_t tablesCrc = detail::readLE32(data + 56);
  const uint32_t constantsCrc = detail::readLE32(data + 60);
  if (checkChecksums) {
    uint8_t header[kHeaderSize];
    memcpy(header, data, kHeaderSize);
    memset(header + 12, 0, 4);
    if (crc32(0, header, kHeaderSize) != headerCrc)
      return fail(error, "plan: header checksum mismatch (the file is corrupt)");
  }
  if (fileSize != size)
    return fail(error, "plan: header says the file has " + std::to_string(fileSize) +
                           " bytes but " + std::to_string(size) +
                           " were given (truncated or padded file)");
  if (tablesOffset != kHeaderSize)
    return fail(error,
                "plan: tables section must start at byte 64, not " + std::to_string(tablesOffset));
  if (tablesSize > size - kHeaderSize)
    return fail(error, "plan: tables section of " + std::to_string(tablesSize) +
                           " bytes runs past the end of the file");
  const uint64_t tablesEnd = kHeaderSize + tablesSize;
  if (constantsOffset % sectionAlignment != 0 || constantsOffset < tablesEnd ||
      constantsOffset - tablesEnd >= sectionAlignment)
    return fail(error, "plan: constants offset " + std::to_string(constantsOffset) +
                           " is not the first multiple of " + std::to_string(sectionAlignment) +
                           " after the tables");
  if (constantsOffset > size || constantsSize != size - constantsOffset)
    return fail(error, "plan: constants section [" + std::to_string(constantsOffset) + ", +" +
                           std::to_string(constantsSize) + ") does not end at the end of the file");
  for (uint64_t p = tablesEnd; p < constantsOffset; ++p)
    if (data[p] != 0)
      return fail(error, "plan: padding byte " + std::to_string(p) + " is not zero");
  if (checkChecksums && crc32(0, data + kHeaderSize, tablesSize) != tablesCrc)
    return fail(error, "plan: tables section checksum mismatch (the file is corrupt)");
  if (checkChecksums && crc32(0, data + constantsOffset, constantsSize) != constantsCrc)
    return fail(error, "plan: constants section checksum mismatch (the file is corrupt: "
                       "initial weights or constants changed)");

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
        return fail(error, "plan: tensor " + std::to_string(i) + ": invalid dtype code " +
                               std::to_string(dtype));
      if (!isValidStorage(storage))
        return fail(error, "plan: tensor " + std::to_string(i) + ": invalid storage code " +
                               std::to_string(storage));
      if (rank > kMaxRank)
        return fail(error, "plan: tensor " + std::to_string(i) + ": rank " + std::to_string(rank) +
                               " exceeds 8");
      if (tflags & ~(kTensorHasInitializer | kTensorZeroInitialized))
        return fail(error, "plan: tensor " + std::to_string(i) + ": unknown flag bits " +
                               std::to_string(tflags));
      t.dtype = static_cast<DType>(dtype);
      t.storage = static_cast<Storage>(storage);
      t.hasInitializer = tflags & kTensorHasInitializer;
      t.zeroInitialized = tflags & kTensorZeroInitialized;
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
      if (version >= 3) {
        uint8_t phase = 0;
        r.str(&k.origin, "kernel origin");
        if (!r.u8(&phase, "kernel phase"))
          break;
        if (!isValidPhase(phase))
          return fail(error, "plan: kernel " + std::to_string(i) + ": invalid phase code " +
                                 std::to_string(phase));
        k.phase = static_cast<Phase>(phase);
      }
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
          return fail(error, "plan: kernel " + std::to_string(i) + " attribute '" + attr.name +
                                 "': invalid type code " + std::to_string(type));
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
      if (version < 4 || r.failed())
        continue;
      // One role byte per output (the count was checked against the bytes
      // left as the ids were read).
      e.outputRoles.resize(e.outputs.size());
      for (size_t o = 0; o < e.outputs.size(); ++o) {
        uint8_t role = 0;
        if (!r.u8(&role, "entry point output role"))
          break;
        if (!isValidOutputRole(role))
          return fail(error, "plan: entry point " + std::to_string(i) + " '" + e.name +
                                 "': output " + std::to_string(o) + ": invalid role code " +
                                 std::to_string(role));
        e.outputRoles[o] = static_cast<OutputRole>(role);
      }
    }
  }
  if (r.failed())
    return fail(error, "plan: " + r.error);
  if (r.remaining() != 0)
    return fail(error, "plan: " + std::to_string(r.remaining()) +
                           " unread bytes at the end of the tables section");
  plan.constants.assignView(data + constantsOffset, size - constantsOffset);
  std::string verifyError;
  if (!verifyPlan(plan, &verifyError))
    return fail(error, "plan: " + verifyError);
  if (version < 4)
    detail::deriveOutputRoles(&plan);
  *out = std::move(plan);
  return true;
}

} // namespace plan
} // namespace mptrt

#endif // MPTRT_PLAN_READER_H
