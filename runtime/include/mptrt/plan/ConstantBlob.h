//===- ConstantBlob.h - MPT plan: the constants section -*- C++ -*-===//
//
// A plan's constants section as pieces laid end to end at kAlignment
// boundaries, each either owned by the blob or a view of bytes that live
// elsewhere: a plan file the reader was given, or the compiler's weight
// blobs. Neither loading nor writing a large plan then copies its weights
// into one contiguous buffer. The gaps between pieces read as zeros, as the
// format's alignment padding does. Header-only, C++17 standard library.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PLAN_CONSTANTBLOB_H
#define MPTRT_PLAN_CONSTANTBLOB_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace mptrt {
namespace plan {

class ConstantBlob {
public:
  ConstantBlob() = default;
  /// An owned blob of exactly these bytes (tests build small plans so).
  ConstantBlob(std::initializer_list<uint8_t> bytes) {
    if (bytes.size())
      append(bytes.begin(), bytes.size(), 1);
  }

  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  /// Appends a copy of `n` bytes at the next multiple of `alignment` and
  /// returns their offset.
  uint64_t append(const void *data, size_t n, uint64_t alignment);
  /// Appends `n` bytes by reference at the next multiple of `alignment` and
  /// returns their offset. The bytes must outlive every use of the blob.
  uint64_t appendView(const void *data, size_t n, uint64_t alignment);
  /// Makes the blob a view of `n` bytes at `data` (a plan file's section).
  void assignView(const uint8_t *data, uint64_t n) {
    clear();
    if (n)
      appendView(data, n, 1);
  }
  /// Copies every view into owned storage (for a blob that must outlive the
  /// bytes it views).
  void makeOwned();
  void clear() {
    pieces_.clear();
    size_ = 0;
  }

  /// The bytes [offset, offset + n) when they lie in one piece, else null.
  const uint8_t *find(uint64_t offset, uint64_t n) const;
  /// Copies [offset, offset + n), across pieces; gaps read as zeros. The
  /// range must lie within size().
  void copyOut(uint64_t offset, uint64_t n, void *dst) const;
  /// Calls fn(const uint8_t *data, size_t n) over the whole blob in order,
  /// gaps included (as zeros).
  template <typename Fn> void forEachRun(Fn &&fn) const;
  /// All the bytes in one vector (tests and small plans).
  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> out(size_);
    copyOut(0, size_, out.data());
    return out;
  }

private:
  struct Piece {
    uint64_t offset = 0;
    uint64_t size = 0;
    const uint8_t *view = nullptr; // null: `owned` holds the bytes
    std::vector<uint8_t> owned;
    const uint8_t *data() const { return view ? view : owned.data(); }
  };
  uint64_t nextOffset(uint64_t alignment) const {
    return alignment <= 1 ? size_ : (size_ + alignment - 1) / alignment * alignment;
  }
  std::vector<Piece> pieces_;
  uint64_t size_ = 0;
};

inline uint64_t ConstantBlob::append(const void *data, size_t n, uint64_t alignment) {
  const uint64_t offset = nextOffset(alignment);
  const uint8_t *p = static_cast<const uint8_t *>(data);
  // Small constants go on the end of the last owned piece, padding and all,
  // so that a plan's many scalars are one piece.
  if (pieces_.empty() || pieces_.back().view) {
    pieces_.emplace_back();
    pieces_.back().offset = offset;
  }
  Piece &last = pieces_.back();
  last.owned.resize(offset - last.offset, 0);
  last.owned.insert(last.owned.end(), p, p + n);
  last.size = last.owned.size();
  size_ = offset + n;
  return offset;
}

inline uint64_t ConstantBlob::appendView(const void *data, size_t n, uint64_t alignment) {
  const uint64_t offset = nextOffset(alignment);
  Piece piece;
  piece.offset = offset;
  piece.size = n;
  piece.view = static_cast<const uint8_t *>(data);
  pieces_.push_back(std::move(piece));
  size_ = offset + n;
  return offset;
}

inline void ConstantBlob::makeOwned() {
  for (Piece &p : pieces_)
    if (p.view) {
      p.owned.assign(p.view, p.view + p.size);
      p.view = nullptr;
    }
}

inline const uint8_t *ConstantBlob::find(uint64_t offset, uint64_t n) const {
  // The last piece that starts at or before `offset`.
  auto it = std::upper_bound(pieces_.begin(), pieces_.end(), offset,
                             [](uint64_t o, const Piece &p) { return o < p.offset; });
  if (it == pieces_.begin())
    return nullptr;
  const Piece &p = *(it - 1);
  if (offset - p.offset > p.size || n > p.size - (offset - p.offset))
    return nullptr;
  return p.data() + (offset - p.offset);
}

inline void ConstantBlob::copyOut(uint64_t offset, uint64_t n, void *dst) const {
  if (n == 0) // `dst` may be null then (an empty vector's data())
    return;
  uint8_t *out = static_cast<uint8_t *>(dst);
  std::memset(out, 0, n);
  const uint64_t end = offset + n;
  for (const Piece &p : pieces_) {
    const uint64_t lo = std::max(offset, p.offset), hi = std::min(end, p.offset + p.size);
    if (lo < hi)
      std::memcpy(out + (lo - offset), p.data() + (lo - p.offset), hi - lo);
  }
}

template <typename Fn> void ConstantBlob::forEachRun(Fn &&fn) const {
  static const uint8_t zeros[256] = {};
  uint64_t at = 0;
  for (const Piece &p : pieces_) {
    for (uint64_t gap = p.offset - at; gap > 0;) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(gap, sizeof(zeros)));
      fn(zeros, chunk);
      gap -= chunk;
    }
    if (p.size)
      fn(p.data(), static_cast<size_t>(p.size));
    at = p.offset + p.size;
  }
}

} // namespace plan
} // namespace mptrt

#endif // MPTRT_PLAN_CONSTANTBLOB_H
