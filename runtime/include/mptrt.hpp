//===- mptrt.hpp - thin C++ wrapper over the C API ---------------*- C++ -*-===//
//
// RAII ownership of a model and std::vector/std::string conveniences. Like
// the C API it reports failure by return value (no exceptions), so it can be
// used from code built with -fno-exceptions; the message is lastError().
//
//   mptrt::Model model;
//   if (!model.loadFile("mlp.mptp") || !model.bindInput("x", MPTRT_F32, {8, 784}, x) ||
//       !model.run("forward") || !model.readOutput("logits", &logits))
//     std::cerr << mptrt::lastError() << "\n";
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_HPP
#define MPTRT_HPP

#include "mptrt.h"
#include "mptrt/TrainStepAbi.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mptrt {

inline std::string lastError() { return mptrt_last_error(); }

/// A named tensor's type.
struct TensorInfo {
  mptrt_dtype dtype = MPTRT_F32;
  std::vector<int64_t> shape;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t bytes() const { return static_cast<size_t>(numel()) * mptrt_dtype_size(dtype); }
};

class Model {
public:
  Model() = default;
  ~Model() { reset(); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  Model(Model &&other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), owned_(other.owned_) {}
  Model &operator=(Model &&other) noexcept {
    std::swap(handle_, other.handle_);
    std::swap(owned_, other.owned_);
    return *this;
  }
  /// A Model over a handle its caller owns and frees (after this Model).
  static Model borrow(mptrt_model *handle) {
    Model m;
    m.handle_ = handle;
    m.owned_ = false;
    return m;
  }

  [[nodiscard]] bool loadFile(const std::string &path, const char *backend = nullptr,
                              unsigned flags = 0) {
    reset();
    return mptrt_model_load_file_ex(path.c_str(), backend, flags, &handle_) == MPTRT_OK;
  }
  [[nodiscard]] bool loadMemory(const void *data, size_t size, const char *backend = nullptr,
                                unsigned flags = 0) {
    reset();
    return mptrt_model_load_memory_ex(data, size, backend, flags, &handle_) == MPTRT_OK;
  }
  bool loaded() const { return handle_ != nullptr; }
  mptrt_model *handle() const { return handle_; }
  std::string backend() const { return mptrt_model_backend(handle_); }

  [[nodiscard]] bool bindInput(const std::string &name, mptrt_dtype dtype,
                               const std::vector<int64_t> &shape, const void *data,
                               size_t bytes) {
    return mptrt_bind_input(handle_, name.c_str(), dtype, shape.data(), shape.size(), data,
                            bytes) == MPTRT_OK;
  }
  template <typename T>
  [[nodiscard]] bool bindInput(const std::string &name, mptrt_dtype dtype,
                               const std::vector<int64_t> &shape, const std::vector<T> &v) {
    return bindInput(name, dtype, shape, v.data(), v.size() * sizeof(T));
  }
  [[nodiscard]] bool bindParameter(const std::string &name, mptrt_dtype dtype,
                                   const std::vector<int64_t> &shape, const void *data,
                                   size_t bytes) {
    return mptrt_bind_parameter(handle_, name.c_str(), dtype, shape.data(), shape.size(),
                                data, bytes) == MPTRT_OK;
  }
  template <typename T>
  [[nodiscard]] bool bindParameter(const std::string &name, mptrt_dtype dtype,
                                   const std::vector<int64_t> &shape,
                                   const std::vector<T> &v) {
    return bindParameter(name, dtype, shape, v.data(), v.size() * sizeof(T));
  }

  [[nodiscard]] bool run(const std::string &entry) {
    return mptrt_run(handle_, entry.c_str()) == MPTRT_OK;
  }
  /// mptrt_run_checked: a run that records the first kernel that made an inf
  /// or a NaN in *first.
  [[nodiscard]] bool runChecked(const std::string &entry, mptrt_nonfinite *first) {
    return mptrt_run_checked(handle_, entry.c_str(), first) == MPTRT_OK;
  }
  /// mptrt_run_observed: a run that hands every floating-point kernel
  /// result to `observer`.
  [[nodiscard]] bool runObserved(const std::string &entry, mptrt_result_observer observer,
                                 void *user) {
    return mptrt_run_observed(handle_, entry.c_str(), observer, user) == MPTRT_OK;
  }
  /// mptrt_run_profiled: a run (never a replayed graph) that writes each
  /// kernel's milliseconds to *ms, one per entryKernels() element.
  [[nodiscard]] bool runProfiled(const std::string &entry, std::vector<double> *ms) {
    return mptrt_run_profiled(handle_, entry.c_str(), ms->data(), ms->size()) == MPTRT_OK;
  }

  [[nodiscard]] bool info(mptrt_binding_kind kind, const std::string &name,
                          TensorInfo *out) const {
    int64_t shape[MPTRT_MAX_RANK];
    size_t rank = 0;
    if (mptrt_tensor_info(handle_, kind, name.c_str(), &out->dtype, &rank, shape) != MPTRT_OK)
      return false;
    out->shape.assign(shape, shape + rank);
    return true;
  }

  /// Reads an output's raw bytes (element type as in info()).
  [[nodiscard]] bool readOutput(const std::string &name, std::vector<uint8_t> *bytes) const {
    return readRaw(MPTRT_OUTPUT, name, bytes);
  }
  [[nodiscard]] bool readParameter(const std::string &name, std::vector<uint8_t> *bytes) const {
    return readRaw(MPTRT_PARAMETER, name, bytes);
  }
  /// Reads an output into a vector of T (sizeof(T) must be the element size).
  template <typename T>
  [[nodiscard]] bool readOutput(const std::string &name, std::vector<T> *values) const {
    TensorInfo i;
    if (!info(MPTRT_OUTPUT, name, &i))
      return false;
    values->resize(i.bytes() / sizeof(T));
    return mptrt_read_output(handle_, name.c_str(), values->data(),
                             values->size() * sizeof(T)) == MPTRT_OK;
  }

  std::vector<std::string> entryPoints() const {
    std::vector<std::string> names;
    for (size_t i = 0, e = mptrt_entry_count(handle_); i < e; ++i)
      names.push_back(mptrt_entry_name(handle_, i));
    return names;
  }
  /// The names an entry point binds of one kind; false if no such entry.
  [[nodiscard]] bool entryBindings(const std::string &entry, mptrt_binding_kind kind,
                                   std::vector<std::string> *names) const {
    size_t n;
    if (mptrt_entry_binding_count(handle_, entry.c_str(), kind, &n) != MPTRT_OK)
      return false;
    names->clear();
    for (size_t i = 0; i < n; ++i) {
      const char *name;
      if (mptrt_entry_binding_name(handle_, entry.c_str(), kind, i, &name) != MPTRT_OK)
        return false;
      names->push_back(name);
    }
    return true;
  }

  /// The roles of an entry point's outputs, in entryBindings(MPTRT_OUTPUT)
  /// order; false if no such entry.
  [[nodiscard]] bool entryOutputRoles(const std::string &entry,
                                      std::vector<abi::OutputRole> *roles) const {
    size_t n;
    if (mptrt_entry_binding_count(handle_, entry.c_str(), MPTRT_OUTPUT, &n) != MPTRT_OK)
      return false;
    roles->assign(n, abi::OutputRole::None);
    for (size_t i = 0; i < n; ++i) {
      mptrt_output_role role;
      if (mptrt_entry_output_role(handle_, entry.c_str(), i, &role) != MPTRT_OK)
        return false;
      (*roles)[i] = static_cast<abi::OutputRole>(role);
    }
    return true;
  }
  /// The name of the entry point's output with `role` (one of
  /// abi::kOutputRoles) into *name, "" when it has none; false if no such
  /// entry.
  [[nodiscard]] bool outputWithRole(const std::string &entry, abi::OutputRole role,
                                    std::string *name) const {
    const char *found = nullptr;
    if (mptrt_entry_output_with_role(handle_, entry.c_str(), static_cast<mptrt_output_role>(role),
                                     &found) != MPTRT_OK)
      return false;
    *name = found ? found : "";
    return true;
  }

  /// The kernels an entry point runs, in order; false if no such entry.
  [[nodiscard]] bool entryKernels(const std::string &entry,
                                  std::vector<mptrt_kernel_info> *kernels) const {
    size_t n;
    if (mptrt_entry_kernel_count(handle_, entry.c_str(), &n) != MPTRT_OK)
      return false;
    kernels->assign(n, mptrt_kernel_info());
    for (size_t i = 0; i < n; ++i)
      if (mptrt_entry_kernel(handle_, entry.c_str(), i, &(*kernels)[i]) != MPTRT_OK)
        return false;
    return true;
  }

  /// mptrt_parameter_shard: *worldSize 0 when `name` is not a shard, else
  /// the ranks and the whole tensor's shape.
  [[nodiscard]] bool parameterShard(const std::string &entry, const std::string &name,
                                    int64_t *worldSize, std::vector<int64_t> *wholeShape) const {
    int64_t shape[MPTRT_MAX_RANK];
    size_t rank = 0;
    if (mptrt_parameter_shard(handle_, entry.c_str(), name.c_str(), worldSize, &rank, shape) !=
        MPTRT_OK)
      return false;
    wholeShape->assign(shape, shape + rank);
    return true;
  }

  uint64_t peakArenaBytes() const { return mptrt_peak_arena_bytes(handle_); }
  uint64_t workspaceBytes() const { return mptrt_workspace_bytes(handle_); }

private:
  void reset() {
    if (owned_)
      mptrt_model_free(handle_);
    handle_ = nullptr;
    owned_ = true;
  }
  bool readRaw(mptrt_binding_kind kind, const std::string &name,
               std::vector<uint8_t> *bytes) const {
    TensorInfo i;
    if (!info(kind, name, &i))
      return false;
    bytes->resize(i.bytes());
    int rc = kind == MPTRT_OUTPUT
                 ? mptrt_read_output(handle_, name.c_str(), bytes->data(), bytes->size())
                 : mptrt_read_parameter(handle_, name.c_str(), bytes->data(), bytes->size());
    return rc == MPTRT_OK;
  }

  mptrt_model *handle_ = nullptr;
  bool owned_ = true; // false: borrow()ed
};

} // namespace mptrt

#endif // MPTRT_HPP
