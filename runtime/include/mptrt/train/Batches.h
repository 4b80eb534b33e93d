//===- Batches.h - the batches a training step is fed ------------*- C++ -*-===//
//
// An input of the train_step entry point has a static shape [B, ...]. A data
// array of shape [N, ...] (same trailing dims and dtype, N >= B) is cut
// along its first axis into floor(N / B) batches of B rows; step s (0-based)
// uses batch s mod floor(N / B). An array whose shape equals the plan's
// shape exactly is one batch (this is also the rule for 0-d inputs).
//
// Synthetic inputs are random instead: float inputs N(0, 1), integer inputs
// uniform in [0, R), i1 inputs uniform in {0, 1}. The values depend only on
// the seed, the 0-based step and the input's name (a counter-based
// generator: splitmix64 over a key mixed from the three), so a step always
// sees the same data, on every machine and across a resumed run.
//
// A data-parallel run of R ranks (docs/distributed.md) reads the same
// arrays on every rank: step s takes global batch s mod floor(N / (R * B))
// of R * B rows, and rank r trains on its r-th block of B rows, so R ranks
// with batch B see what one process with batch R * B sees. A 0-d input is
// the same on every rank; any other input needs at least R * B rows.
//
// The arrays are in memory: reading them from files (.npy, .pb) is the
// caller's business (mpt-train's InputFiles.h, NumPy in Python).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAIN_BATCHES_H
#define MPTRT_TRAIN_BATCHES_H

#include "mptrt.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mptrt {
namespace train {

/// A data array in memory, and how to name it in messages.
struct Array {
  std::string source;              // where it came from ("x.npy"), for messages
  std::string typeName;            // its element type as the source spells it
  std::vector<mptrt_dtype> dtypes; // the plan dtypes its bytes can be
  std::vector<int64_t> shape;      // [N, ...]
  std::vector<uint8_t> bytes;      // little-endian elements, C order

  /// An array of plan dtype `dtype` (typeName is the dtype's name).
  static Array of(mptrt_dtype dtype, std::vector<int64_t> shape, const void *data, size_t bytes,
                  std::string source);
};

/// Which slice of each global batch this process trains on: rank `rank`
/// of `ranks` (one process: 0 of 1).
struct DataSlice {
  int rank = 0;
  int ranks = 1;
};

/// A data array bound to one plan input, cut into batches.
struct BatchedInput {
  std::string name;          // the plan input
  std::string file;          // where the array came from (Array::source)
  TensorInfo info;           // the plan input's dtype and (batch) shape
  std::vector<uint8_t> data; // the whole array, little-endian, C order
  int64_t batches = 0;       // floor(N / (ranks * B)), or 1 for an exact-shape array
  int64_t unusedRows = 0;    // N mod (ranks * B): rows at the end no batch uses
  DataSlice slice;           // this process's block of each global batch

  size_t batchBytes() const { return info.bytes(); }
  /// The bytes of this process's block of global batch `b` (0 <= b < batches).
  const uint8_t *batch(int64_t b) const {
    return data.data() + (b * slice.ranks + slice.rank) * batchBytes();
  }
};

/// Cuts `array` into batches for plan input `name` of type `info`. False
/// with a message naming the input, the array's source, its type and shape
/// and what the plan expects.
bool cutBatches(const std::string &name, Array array, const TensorInfo &info, BatchedInput *out,
                std::string *error, DataSlice slice = {});

/// Fills `out` (resized to info.bytes()) with the synthetic data of 0-based
/// step `step` for input `name`. Integer inputs draw from [0, intRange).
/// False with a message if the range does not fit the input's dtype.
bool syntheticBatch(const std::string &name, const TensorInfo &info, uint64_t seed, int64_t step,
                    int64_t intRange, std::vector<uint8_t> *out, std::string *error);

/// "f32 [2, 3]".
std::string describeType(mptrt_dtype dtype, const std::vector<int64_t> &shape);
std::string shapeText(const std::vector<int64_t> &shape);
/// "'a', 'b'", or "none": names in a message.
std::string joinNames(const std::vector<std::string> &names);

} // namespace train
} // namespace mptrt

#endif // MPTRT_TRAIN_BATCHES_H
