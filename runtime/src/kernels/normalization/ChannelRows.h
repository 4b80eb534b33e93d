//===- ChannelRows.h - walking channels-last activations by position ------===//
//
// The CPU batch norms' channels-last kernels: each thread takes a range of
// channels of activations stored [positions, C] and walks the positions in
// order, so each channel's sums add their terms in the channels-first
// kernels' order. A tile of rows is loaded at once where that range is
// every channel (the rows of consecutive positions are then contiguous),
// else one row of the range per position.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_KERNELS_NORMALIZATION_CHANNELROWS_H
#define MPTRT_SRC_KERNELS_NORMALIZATION_CHANNELROWS_H

#include <algorithm>
#include <cstdint>

namespace mptrt {
namespace rt {
namespace cpu {

/// The floats one tile of rows holds at most (a row of C when C is larger):
/// the per-thread row buffer the kernels' scratch sizes.
inline int64_t channelRowsBuffer(int64_t C) { return std::max<int64_t>(C, 1024); }

/// The fewest channels a thread takes: 16 (rows of at least 16 elements;
/// one row per call costs more than its elements below that), or all C,
/// and at least `grain`, the count the work per channel asks for.
inline int64_t channelRowsGrain(int64_t C, int64_t grain) {
  return std::max(grain, std::min<int64_t>(C, 16));
}

/// Channels [begin, end) of C, over `positions` positions.
struct ChannelRows {
  ChannelRows(int64_t C, int64_t begin, int64_t end)
      : C(C), begin(begin), len(end - begin),
        tile(len == C ? std::max<int64_t>(1, channelRowsBuffer(C) / std::max<int64_t>(C, 1)) : 1) {}

  /// The element at which position `pos`'s row of the range starts.
  int64_t offset(int64_t pos) const { return pos * C + begin; }

  /// Calls fn(pos, rows) for the tiles of positions [from, to) in order:
  /// `rows` positions from `pos`, whose len * rows elements are contiguous
  /// from offset(pos) (rows is 1 unless the range is every channel).
  template <typename Fn> void forTiles(int64_t from, int64_t to, const Fn &fn) const {
    for (int64_t pos = from; pos < to; pos += tile)
      fn(pos, std::min(tile, to - pos));
  }

  int64_t C, begin, len, tile;
};

} // namespace cpu
} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_KERNELS_NORMALIZATION_CHANNELROWS_H
