//===- Batches.h - the batches mpt-train feeds a training step ---*- C++ -*-===//
//
// An input of the train_step entry point has a static shape [B, ...]. A data
// array of shape [N, ...] (same trailing dims and dtype, N >= B) is cut
// along its first axis into floor(N / B) batches of B rows; step s (0-based)
// uses batch s mod floor(N / B). An array whose shape equals the plan's
// shape exactly is one batch (this is also the rule for 0-d inputs).
//
// --synthetic inputs are random instead: float inputs N(0, 1), integer
// inputs uniform in [0, R), i1 inputs uniform in {0, 1}. The values depend
// only on the seed, the 0-based step and the input's name (a counter-based
// generator: splitmix64 over a key mixed from the three), so a step always
// sees the same data, on every machine and across --resume.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPTTRAIN_BATCHES_H
#define MPTRT_TOOLS_MPTTRAIN_BATCHES_H

#include "mptrt.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mptrt {
namespace tools {

/// A data array bound to one plan input, cut into batches.
struct BatchedInput {
  std::string name;          // the plan input
  std::string file;          // where the array came from
  TensorInfo info;           // the plan input's dtype and (batch) shape
  std::vector<uint8_t> data; // the whole array, little-endian, C order
  int64_t batches = 0;       // floor(N / B), or 1 for an exact-shape array
  int64_t unusedRows = 0;    // N mod B: rows at the end no batch uses

  size_t batchBytes() const { return info.bytes(); }
  /// The bytes of batch `b` (0 <= b < batches).
  const uint8_t *batch(int64_t b) const { return data.data() + b * batchBytes(); }
};

/// Reads the .npy / .pb `file` for plan input `name` of type `info` and cuts
/// it into batches. False with a message naming the input, the file, the
/// file's type and shape and what the plan expects.
bool loadBatchedInput(const std::string &name, const std::string &file, const TensorInfo &info,
                      BatchedInput *out, std::string *error);

/// Fills `out` (resized to info.bytes()) with the synthetic data of 0-based
/// step `step` for input `name`. Integer inputs draw from [0, intRange).
/// False with a message if the range does not fit the input's dtype.
bool syntheticBatch(const std::string &name, const TensorInfo &info, uint64_t seed, int64_t step,
                    int64_t intRange, std::vector<uint8_t> *out, std::string *error);

/// "f32 [2, 3]".
std::string describeType(mptrt_dtype dtype, const std::vector<int64_t> &shape);
std::string shapeText(const std::vector<int64_t> &shape);

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPTTRAIN_BATCHES_H
