//===- Checkpoint.h - training checkpoints ------------------------*- C++ -*-===//
//
// A checkpoint holds the number of steps run and every parameter of the
// train_step entry point (weights, optimizer state, loss-scaler state and
// step counters all are parameters). Format version 1, all integers
// little-endian:
//
//   header   magic "MPTCKPT\0" (8 bytes), u32 version = 1, u32 tensor count,
//            u64 steps run
//   tensor   u32 name length, the name (UTF-8, no NUL), u32 dtype (the plan
//   (count   format's code: 1 f32, 2 f16, 3 bf16, 4 f8E4M3FN, 5 f8E5M2,
//    times)  6 i64, 7 i32, 8 i1), u32 rank (<= 8), rank x i64 dims, u64 data
//            byte count (= elements x element size), the data (C order), u32
//            CRC-32 of this record from its name length to its last data byte
//   trailer  "MPTCKEND" (8 bytes), u32 CRC-32 of every byte before it
//
// CRC-32 is the IEEE / zlib one (polynomial 0xEDB88320; Python's
// zlib.crc32). Files are written atomically: a temporary file in the target's
// directory is written, flushed and fsync'ed, renamed over the target, and
// the directory is fsync'ed, so the target is always either the previous
// file or the complete new one. On Linux the temporary has no name until it
// is complete (O_TMPFILE, then linkat), so a crash or SIGKILL mid-write
// leaves nothing behind (a kill between the link and the rename leaves a
// complete .NAME.tmp.PID.N, which the next process saving there removes).
//
// Testing crashes: the environment variable MPT_TRAIN_TEST_SAVE_FAULT
// ("K:WHERE:ACTION", docs/mpt-train.md) makes the K-th checkpoint write of
// the process stop at WHERE (after N bytes of the file, or "renamed": after
// the rename) and kill itself with SIGKILL ("kill") or sleep ("pause=MS",
// "wait" for a signal).
//
// This is the one implementation of the format: mpt-train, the C API
// (mptrt_checkpoint_save, mptrt_trainer_save, ...) and the Python package
// all write and read checkpoints here.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TRAIN_CHECKPOINT_H
#define MPTRT_TRAIN_CHECKPOINT_H

#include "mptrt.hpp"
#include "mptrt/Communicator.h"
#include "mptrt/Crc32.h"

#include <atomic>
#include <cstdint>

#include <cstdio>
#include <string>
#include <vector>

namespace mptrt {
namespace train {

/// CRC-32 (IEEE) of `n` bytes, continuing from `crc` (0 to start): the one
/// plans use too (mptrt/Crc32.h).
using ::mptrt::crc32;

struct CheckpointTensor {
  std::string name;
  TensorInfo info;
  std::vector<uint8_t> bytes;
};

struct Checkpoint {
  uint64_t steps = 0;
  std::vector<CheckpointTensor> tensors;
};

/// Where a checkpoint of `steps` steps given the path `path` is written:
/// sets `*target` to the file `path` names, through any symlinks (the link
/// stays, and the file it points to gets the checkpoint; a dangling link
/// creates its target). Fails, with a message naming `path`, when that file
/// exists and is not a regular file (a device, a FIFO, a directory), is a
/// non-empty file that is not a checkpoint (a plan, a data file: a
/// checkpoint never replaces one), or is a checkpoint of more than `steps`
/// steps (the old one is kept: a run never replaces later training with
/// earlier). CheckpointWriter::open checks this before it writes.
bool checkpointTarget(const std::string &path, uint64_t steps, std::string *target,
                      std::string *error);

/// Writes a checkpoint one tensor at a time into a temporary file next to
/// `path` (the file checkpointTarget names); commit() moves it over that. A writer destroyed before
/// a successful commit() removes its temporary file.
class CheckpointWriter {
public:
  CheckpointWriter() = default;
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter &) = delete;
  CheckpointWriter &operator=(const CheckpointWriter &) = delete;

  bool open(const std::string &path, uint64_t steps, uint32_t count, std::string *error);
  bool add(const std::string &name, const TensorInfo &info, const void *data, size_t bytes,
           std::string *error);
  bool commit(std::string *error);

private:
  bool write(const void *data, size_t n, std::string *error);
  bool nameTemporary(std::string *error);
  std::string tempLabel() const;
  void discard();

  /// tempPath_ is the temporary's name once it has one (named_): from
  /// mkstemp at once, or, for an O_TMPFILE file, tempPrefix_ + a suffix
  /// when complete.
  std::string path_, tempPath_, tempPrefix_;
  bool named_ = false;
  FILE *file_ = nullptr;
  uint32_t fileCrc_ = 0, expected_ = 0, added_ = 0;
  uint64_t written_ = 0;
  bool faultArmed_ = false; // MPT_TRAIN_TEST_SAVE_FAULT names this write
};

/// For the tests' MPT_TRAIN_TEST_SAVE_FAULT "wait" action: the paused
/// write goes on once `*flag` is nonzero (mpt-train passes the flag its
/// SIGINT/SIGTERM handler sets).
void setSaveFaultWakeup(const std::atomic<int> *flag);

/// Reads and checks a whole checkpoint: magic, version, every record's
/// bounds, types and CRC, the trailer and the file CRC. The message names
/// the file and says what is wrong (truncated, corrupt, unsupported).
bool readCheckpoint(const std::string &path, Checkpoint *out, std::string *error);
/// The same on a file's bytes; `path` is for the messages.
bool parseCheckpoint(const std::vector<uint8_t> &bytes, const std::string &path, Checkpoint *out,
                     std::string *error);

/// A parameter the plan expects, for matchCheckpoint.
struct ParameterSpec {
  std::string name;
  /// As the plan binds it: for sharded optimizer state, this rank's shard.
  TensorInfo info;
  /// Sharded optimizer state (--shard-optimizer-state): the number of
  /// ranks it is sharded over, and the whole tensor, which the checkpoint
  /// holds; 0 and `info` otherwise.
  int64_t shardWorld = 0;
  TensorInfo whole;
};

/// The parameters of entry point `entry`, in the plan's order. False with
/// the runtime's message.
bool entryParameters(const Model &model, const std::string &entry, std::vector<ParameterSpec> *out,
                     std::string *error);

/// Checks that the checkpoint holds exactly `params` (names, dtypes,
/// shapes), in any order.
bool matchCheckpoint(const std::string &path, const Checkpoint &checkpoint,
                     const std::vector<ParameterSpec> &params, const std::string &entry,
                     std::string *error);

/// Writes `params` (their current values in `model`) and `steps` to `path`.
/// Sharded optimizer state is gathered whole from every rank: in a world of
/// several ranks every rank calls it (at the same step), and rank 0 alone
/// writes the file, which then holds the same tensors as a checkpoint of
/// the plan compiled without sharding, under any world size.
bool saveCheckpoint(const Model &model, const std::vector<ParameterSpec> &params,
                    const std::string &path, uint64_t steps, std::string *error);

/// Reads the checkpoint at `path` and checks that it holds exactly `params`
/// (of entry point `entry`).
bool readCheckpointFor(const std::string &path, const std::vector<ParameterSpec> &params,
                       const std::string &entry, Checkpoint *out, std::string *error);

/// Binds every tensor of `checkpoint` (read from `path`, matched against
/// `params`) as a parameter; a sharded one gets this rank's shard of it.
bool restoreCheckpoint(Model &model, const Checkpoint &checkpoint,
                       const std::vector<ParameterSpec> &params, const std::string &path,
                       std::string *error);

} // namespace train
} // namespace mptrt

#endif // MPTRT_TRAIN_CHECKPOINT_H
