//===- Model.h - a loaded plan with its bindings and arenas ------*- C++ -*-===//
//
// The state behind a `mptrt_model` handle: the verified plan, the backend
// with every kernel prepared, one buffer per parameter, input and output,
// the constants in device memory, and one arena per entry point (allocated
// on the entry point's first run and kept).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_MODEL_H
#define MPTRT_SRC_MODEL_H

#include "Backend.h"
#include "Status.h"
#include "TensorDesc.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mptrt {
namespace rt {

/// Where a checked run (Model::runChecked) first saw an inf or a NaN.
struct NonFinite {
  bool found = false;
  uint32_t kernel = 0;   // plan kernel id
  uint32_t position = 0; // index in the entry point's kernel list
  uint32_t result = 0;   // which of the kernel's results
  uint64_t element = 0;  // flat index of the first non-finite element
};

/// One floating-point kernel result of an observed run
/// (Model::runObserved), read back to the host and widened to float32.
struct ObservedResult {
  uint32_t kernel = 0;           // plan kernel id
  uint32_t position = 0;         // index in the entry point's kernel list
  uint32_t result = 0;           // which of the kernel's results
  uint32_t tensor = 0;           // the result's plan tensor id
  const float *values = nullptr; // valid during the observer's call only
  uint64_t count = 0;
};
using ResultObserver = void (*)(const ObservedResult &result, void *user);

/// The three kinds of named tensors a user sees.
enum class BindingKind { Input = 0, Parameter = 1, Output = 2 };

class Model {
public:
  /// Parses, verifies and prepares the plan in `data` on `backend` ("" or
  /// "auto": the best available); `checkChecksums` false skips the plan's
  /// CRC-32 checks (the structure is still verified).
  static Status load(const uint8_t *data, size_t size, const std::string &backend,
                     std::unique_ptr<Model> *out, bool checkChecksums = true);
  ~Model();

  Backend &backend() { return *backend_; }

  /// Looks up a named tensor of the given kind.
  Status find(BindingKind kind, const std::string &name, uint32_t *id) const;
  const TensorDesc &desc(uint32_t id) const { return descs_[id]; }

  /// Where the caller's memory of a bind or a read is: the host's, or the
  /// backend's (a CUDA device pointer on the CUDA backend).
  enum class Memory { Host, Device };

  /// Copies data into a parameter or input after checking its dtype, shape
  /// and byte count against the plan.
  Status bind(BindingKind kind, const std::string &name, DType dtype, const int64_t *shape,
              size_t rank, const void *data, size_t bytes, Memory from = Memory::Host);
  /// Copies an output (after a run that computed it) or a parameter out.
  Status read(BindingKind kind, const std::string &name, void *dst, size_t bytes,
              Memory to = Memory::Host) const;

  /// Runs an entry point. Once its arena exists (after its first run) a
  /// successful run allocates nothing (docs/runtime.md, "Prepare, then run").
  Status run(std::string_view entry);
  /// Runs an entry point as `run` does, and after each kernel reads its
  /// floating-point results back to the host and records in `*first` the
  /// first kernel whose result holds an inf or a NaN (docs/runtime.md,
  /// "Finding the first non-finite kernel"). The run goes on to the end, so
  /// it leaves the same state as `run`. The host buffer for the check is
  /// allocated on the first checked run and kept.
  Status runChecked(std::string_view entry, NonFinite *first);
  /// Runs an entry point as `run` does, and hands every floating-point
  /// kernel result, as it is computed, to `observer` (read back and widened
  /// to float32; a later kernel may reuse its bytes). Slower than `run` by
  /// one device-to-host copy per result; the host buffers are allocated on
  /// the first observed run and kept.
  Status runObserved(std::string_view entry, ResultObserver observer, void *user);
  /// Runs an entry point as `run` does, never recorded nor replayed, and
  /// writes each kernel's time in milliseconds to ms[position] (docs/
  /// runtime.md, "Profiling a run"): the backend's clock between kernels,
  /// the host's wall clock on the CPU and CUDA events on the GPU. `count`
  /// must be the entry point's number of kernels.
  Status runProfiled(std::string_view entry, double *ms, size_t count);
  const plan::Kernel &kernel(uint32_t id) const { return plan_.kernels[id]; }

  size_t numEntries() const { return plan_.entries.size(); }
  const plan::EntryPoint &entry(size_t i) const { return plan_.entries[i]; }
  Status findEntry(std::string_view name, size_t *index) const;
  const std::string &tensorName(uint32_t id) const { return plan_.tensors[id].name; }
  DType tensorDType(uint32_t id) const { return descs_[id].dtype; }

  /// Sum of the arenas allocated so far (each entry point's arena is
  /// allocated on its first run and kept, so this is also the peak).
  uint64_t peakArenaBytes() const { return arenaBytesAllocated_; }
  /// The kernels' workspace, allocated at load (the largest asked for).
  uint64_t workspaceBytes() const { return workspaceBytes_; }

private:
  Model() = default;
  Status prepare();
  Status checkMemoryFits(uint64_t workspaceBytes) const;
  /// Copies `bytes` constants-blob bytes at `offset` into a device buffer.
  Status copyConstants(uint64_t offset, uint64_t bytes, void *device);
  Status checkAliasing(uint32_t kernelId) const;
  /// The run loop; `first`, `observer` (with `user`) and `profile` (one
  /// double per kernel) are optional.
  Status runImpl(std::string_view entry, NonFinite *first, ResultObserver observer = nullptr,
                 void *user = nullptr, double *profile = nullptr);
  /// Enqueues every kernel of `entry` (checking or observing results when
  /// `first` or `observer` is given, marking each kernel's end for the
  /// backend's timing when `timed`).
  Status runKernels(const plan::EntryPoint &entry, std::string_view entryName, void *arena,
                    NonFinite *first, ResultObserver observer, void *user, bool timed = false);
  /// Waits for the run and marks the entry point's outputs computed.
  Status finishRun(const plan::EntryPoint &entry, std::string_view entryName);
  /// Reads `result` back and hands it to `observer` as float32 values.
  Status observe(const TensorArg &result, ObservedResult *view, ResultObserver observer,
                 void *user);
  /// Whether the floating-point tensor `result` holds an inf or a NaN (read
  /// back through the backend); sets *element to the first such element.
  Status hasNonFinite(const TensorArg &result, bool *found, uint64_t *element);
  void *address(uint32_t tensor, void *arena) const;

  plan::Plan plan_;
  std::unique_ptr<Backend> backend_;
  std::vector<TensorDesc> descs_;
  std::vector<std::unique_ptr<PreparedKernel>> kernels_;
  std::vector<void *> buffers_; // parameter, input and output tensors
  std::vector<char> bound_;     // parameter / input: holds a value
  std::vector<char> computed_;  // output: written by a successful run
  void *constants_ = nullptr;
  void *workspace_ = nullptr; // the largest kernel's workspaceBytes()
  uint64_t workspaceBytes_ = 0;
  KernelArgs args_;                     // reused by every run: run allocates nothing
  std::vector<uint8_t> checkBuffer_;    // host copy of a result, checked runs
  std::vector<float> observeBuffer_;    // a result widened to float32, observed runs
  std::vector<char> constantNonFinite_; // per tensor: a constant with an inf or NaN
  std::vector<char> nonFinite_;         // per tensor, during a checked run: holds one
  struct EntryState {
    void *arena = nullptr;
    bool allocated = false;
    uint64_t plainRuns = 0;                // runs without a check or an observer
    std::unique_ptr<RecordedRun> recorded; // replayed by later plain runs
  };
  std::vector<EntryState> entryStates_;
  uint64_t arenaBytesAllocated_ = 0;
  std::map<std::string, uint32_t> names_[3];              // by BindingKind
  std::map<std::string, size_t, std::less<>> entryIndex_; // looked up by string_view
};

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_MODEL_H
