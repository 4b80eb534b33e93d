//===- CApi.cpp - the C API over rt::Model ------------------------------===//
#include "mptrt.h"

#include "Backend.h"
#include "LastError.h"
#include "MappedFile.h"
#include "Model.h"

#include <cstdio>
#include <string>
#include <vector>

using mptrt::rt::BindingKind;
using mptrt::rt::Model;
using mptrt::rt::NonFinite;
namespace plan = mptrt::plan;
using mptrt::rt::Status;

struct mptrt_model {
  std::unique_ptr<Model> impl;
};

namespace {

thread_local std::string lastError;

int report(const Status &status) {
  if (status)
    return MPTRT_OK;
  lastError = status.message();
  return MPTRT_ERROR;
}

int fail(const std::string &message) { return report(Status::error(message)); }

bool validKind(mptrt_binding_kind kind) {
  return kind == MPTRT_INPUT || kind == MPTRT_PARAMETER || kind == MPTRT_OUTPUT;
}

} // namespace

int mptrt::rt::setLastError(const std::string &message) { return fail(message); }

extern "C" {

const char *mptrt_last_error(void) { return lastError.c_str(); }

const char *mptrt_dtype_name(mptrt_dtype dtype) {
  if (!mptrt::plan::isValidDType(static_cast<uint8_t>(dtype)))
    return "invalid";
  return mptrt::plan::dtypeName(static_cast<mptrt::plan::DType>(dtype));
}

size_t mptrt_dtype_size(mptrt_dtype dtype) {
  if (!mptrt::plan::isValidDType(static_cast<uint8_t>(dtype)))
    return 0;
  return mptrt::plan::dtypeSize(static_cast<mptrt::plan::DType>(dtype));
}

int mptrt_model_load_memory(const void *data, size_t size, const char *backend, mptrt_model **out) {
  return mptrt_model_load_memory_ex(data, size, backend, 0, out);
}

int mptrt_model_load_memory_ex(const void *data, size_t size, const char *backend, unsigned flags,
                               mptrt_model **out) {
  if (!out)
    return fail("mptrt_model_load_memory: null output handle");
  *out = nullptr;
  std::unique_ptr<Model> impl;
  Status s = Model::load(static_cast<const uint8_t *>(data), size, backend ? backend : "", &impl,
                         !(flags & MPTRT_LOAD_SKIP_CHECKSUMS));
  if (!s)
    return report(s);
  *out = new mptrt_model{std::move(impl)};
  return MPTRT_OK;
}

size_t mptrt_backend_count(void) { return mptrt::rt::BackendRegistry::get().factories().size(); }

const char *mptrt_backend_name(size_t index) {
  const auto &factories = mptrt::rt::BackendRegistry::get().factories();
  return index < factories.size() ? factories[index].name.c_str() : nullptr;
}

const char *mptrt_backend_resolve(const char *backend) {
  std::unique_ptr<mptrt::rt::Backend> impl;
  if (report(mptrt::rt::createBackend(backend ? backend : "", &impl)))
    return nullptr;
  // The name lives in the registry, which outlives every caller.
  return mptrt::rt::BackendRegistry::get().find(impl->name())->name.c_str();
}

int mptrt_backend_probe(const char *backend, int *available, const char **detail) {
  if (!backend || !available)
    return fail("mptrt_backend_probe: null argument");
  const mptrt::rt::BackendFactory *f = mptrt::rt::BackendRegistry::get().find(backend);
  if (!f)
    return fail(std::string("unknown backend '") + backend +
                "' (this build has: " + mptrt::rt::BackendRegistry::get().names() + ")");
  thread_local std::string probeDetail;
  probeDetail.clear();
  *available = f->probe(&probeDetail) ? 1 : 0;
  if (detail)
    *detail = probeDetail.c_str();
  return MPTRT_OK;
}

/// The kernel kinds of a backend of this build: a named one's from its
/// factory (no device needed), auto's from the backend it resolves to.
static int backendKinds(const char *backend, std::vector<std::string> *kinds) {
  const std::string name = backend ? backend : "";
  if (!name.empty() && name != "auto") {
    const mptrt::rt::BackendFactory *f = mptrt::rt::BackendRegistry::get().find(name);
    if (!f)
      return fail("unknown backend '" + name +
                  "' (this build has: " + mptrt::rt::BackendRegistry::get().names() + "; or auto)");
    *kinds = f->kinds();
    return MPTRT_OK;
  }
  std::unique_ptr<mptrt::rt::Backend> impl;
  if (int rc = report(mptrt::rt::createBackend(name, &impl)))
    return rc;
  *kinds = impl->kernelKinds();
  return MPTRT_OK;
}

int mptrt_backend_kind_count(const char *backend, size_t *count) {
  if (!count)
    return fail("mptrt_backend_kind_count: null argument");
  std::vector<std::string> kinds;
  if (int rc = backendKinds(backend, &kinds))
    return rc;
  *count = kinds.size();
  return MPTRT_OK;
}

int mptrt_backend_kind_name(const char *backend, size_t index, const char **kind) {
  if (!kind)
    return fail("mptrt_backend_kind_name: null argument");
  thread_local std::vector<std::string> kinds;
  if (int rc = backendKinds(backend, &kinds))
    return rc;
  if (index >= kinds.size())
    return fail("mptrt_backend_kind_name: index " + std::to_string(index) + " of " +
                std::to_string(kinds.size()) + " kinds");
  *kind = kinds[index].c_str();
  return MPTRT_OK;
}

int mptrt_backend_has_kernel(const char *backend, const char *kind, int *has) {
  if (!kind || !has)
    return fail("mptrt_backend_has_kernel: null argument");
  std::vector<std::string> kinds;
  if (int rc = backendKinds(backend, &kinds))
    return rc;
  *has = 0;
  for (const std::string &k : kinds)
    *has = *has || k == kind;
  return MPTRT_OK;
}

int mptrt_model_load_file(const char *path, const char *backend, mptrt_model **out) {
  return mptrt_model_load_file_ex(path, backend, 0, out);
}

int mptrt_model_load_file_ex(const char *path, const char *backend, unsigned flags,
                             mptrt_model **out) {
  if (!out)
    return fail("mptrt_model_load_file: null output handle");
  *out = nullptr;
  if (!path)
    return fail("mptrt_model_load_file: null path");
  // The model copies what it keeps while it loads; the mapping then goes.
  mptrt::rt::MappedFile file;
  if (int rc = report(file.open(path)))
    return rc;
  std::unique_ptr<Model> impl;
  Status s = Model::load(file.data(), file.size(), backend ? backend : "", &impl,
                         !(flags & MPTRT_LOAD_SKIP_CHECKSUMS));
  if (!s)
    return fail(std::string(path) + ": " + s.message());
  *out = new mptrt_model{std::move(impl)};
  return MPTRT_OK;
}

void mptrt_model_free(mptrt_model *model) { delete model; }

const char *mptrt_model_backend(const mptrt_model *model) {
  return model ? model->impl->backend().name() : "";
}

#define MPTRT_CHECK_MODEL(fn)                                                                      \
  if (!model)                                                                                      \
  return fail(#fn ": null model")
#define MPTRT_CHECK_NAME(fn, what)                                                                 \
  if (!what)                                                                                       \
  return fail(#fn ": null " #what)

int mptrt_bind_parameter(mptrt_model *model, const char *name, mptrt_dtype dtype,
                         const int64_t *shape, size_t rank, const void *data, size_t bytes) {
  MPTRT_CHECK_MODEL(mptrt_bind_parameter);
  MPTRT_CHECK_NAME(mptrt_bind_parameter, name);
  return report(model->impl->bind(BindingKind::Parameter, name,
                                  static_cast<mptrt::plan::DType>(dtype), shape, rank, data,
                                  bytes));
}

int mptrt_bind_input(mptrt_model *model, const char *name, mptrt_dtype dtype, const int64_t *shape,
                     size_t rank, const void *data, size_t bytes) {
  MPTRT_CHECK_MODEL(mptrt_bind_input);
  MPTRT_CHECK_NAME(mptrt_bind_input, name);
  return report(model->impl->bind(BindingKind::Input, name, static_cast<mptrt::plan::DType>(dtype),
                                  shape, rank, data, bytes));
}

int mptrt_bind_input_device(mptrt_model *model, const char *name, mptrt_dtype dtype,
                            const int64_t *shape, size_t rank, const void *data, size_t bytes) {
  MPTRT_CHECK_MODEL(mptrt_bind_input_device);
  MPTRT_CHECK_NAME(mptrt_bind_input_device, name);
  return report(model->impl->bind(BindingKind::Input, name, static_cast<mptrt::plan::DType>(dtype),
                                  shape, rank, data, bytes, mptrt::rt::Model::Memory::Device));
}

int mptrt_run(mptrt_model *model, const char *entry) {
  MPTRT_CHECK_MODEL(mptrt_run);
  MPTRT_CHECK_NAME(mptrt_run, entry);
  return report(model->impl->run(entry));
}

int mptrt_run_checked(mptrt_model *model, const char *entry, mptrt_nonfinite *first) {
  MPTRT_CHECK_MODEL(mptrt_run_checked);
  MPTRT_CHECK_NAME(mptrt_run_checked, entry);
  if (!first)
    return fail("mptrt_run_checked: null first");
  NonFinite seen;
  int rc = report(model->impl->runChecked(entry, &seen));
  *first = mptrt_nonfinite();
  first->kind = "";
  first->origin = "";
  first->phase = "unknown";
  if (rc != MPTRT_OK || !seen.found)
    return rc;
  const plan::Kernel &k = model->impl->kernel(seen.kernel);
  first->found = 1;
  first->kernel = seen.kernel;
  first->position = seen.position;
  first->result = seen.result;
  first->element = seen.element;
  first->kind = k.kind.c_str();
  first->origin = k.origin.c_str();
  first->phase = plan::phaseName(k.phase);
  return rc;
}

namespace {
struct ObserverAdapter {
  const mptrt::rt::Model *model;
  mptrt_result_observer observer;
  void *user;
};
void adaptObserved(const mptrt::rt::ObservedResult &r, void *user) {
  const auto *a = static_cast<const ObserverAdapter *>(user);
  const plan::Kernel &k = a->model->kernel(r.kernel);
  mptrt_result_view view = {};
  view.kernel = r.kernel;
  view.position = r.position;
  view.result = r.result;
  view.kind = k.kind.c_str();
  view.origin = k.origin.c_str();
  view.phase = plan::phaseName(k.phase);
  view.tensor = a->model->tensorName(r.tensor).c_str();
  view.dtype = static_cast<mptrt_dtype>(a->model->tensorDType(r.tensor));
  view.values = r.values;
  view.count = r.count;
  a->observer(&view, a->user);
}
} // namespace

int mptrt_run_observed(mptrt_model *model, const char *entry, mptrt_result_observer observer,
                       void *user) {
  MPTRT_CHECK_MODEL(mptrt_run_observed);
  MPTRT_CHECK_NAME(mptrt_run_observed, entry);
  if (!observer)
    return fail("mptrt_run_observed: null observer");
  ObserverAdapter adapter{model->impl.get(), observer, user};
  return report(model->impl->runObserved(entry, adaptObserved, &adapter));
}

int mptrt_run_profiled(mptrt_model *model, const char *entry, double *ms, size_t count) {
  MPTRT_CHECK_MODEL(mptrt_run_profiled);
  MPTRT_CHECK_NAME(mptrt_run_profiled, entry);
  return report(model->impl->runProfiled(entry, ms, count));
}

int mptrt_read_output(const mptrt_model *model, const char *name, void *dst, size_t bytes) {
  MPTRT_CHECK_MODEL(mptrt_read_output);
  MPTRT_CHECK_NAME(mptrt_read_output, name);
  return report(model->impl->read(BindingKind::Output, name, dst, bytes));
}

int mptrt_read_output_device(const mptrt_model *model, const char *name, void *dst, size_t bytes) {
  MPTRT_CHECK_MODEL(mptrt_read_output_device);
  MPTRT_CHECK_NAME(mptrt_read_output_device, name);
  return report(
      model->impl->read(BindingKind::Output, name, dst, bytes, mptrt::rt::Model::Memory::Device));
}

int mptrt_read_parameter(const mptrt_model *model, const char *name, void *dst, size_t bytes) {
  MPTRT_CHECK_MODEL(mptrt_read_parameter);
  MPTRT_CHECK_NAME(mptrt_read_parameter, name);
  return report(model->impl->read(BindingKind::Parameter, name, dst, bytes));
}

int mptrt_tensor_info(const mptrt_model *model, mptrt_binding_kind kind, const char *name,
                      mptrt_dtype *dtype, size_t *rank, int64_t *shape) {
  MPTRT_CHECK_MODEL(mptrt_tensor_info);
  MPTRT_CHECK_NAME(mptrt_tensor_info, name);
  if (!validKind(kind))
    return fail("mptrt_tensor_info: invalid binding kind");
  uint32_t id;
  if (int rc = report(model->impl->find(static_cast<BindingKind>(kind), name, &id)))
    return rc;
  const auto &d = model->impl->desc(id);
  if (dtype)
    *dtype = static_cast<mptrt_dtype>(d.dtype);
  if (rank)
    *rank = d.shape.size();
  if (shape)
    for (size_t i = 0; i < d.shape.size(); ++i)
      shape[i] = d.shape[i];
  return MPTRT_OK;
}

size_t mptrt_entry_count(const mptrt_model *model) { return model ? model->impl->numEntries() : 0; }

const char *mptrt_entry_name(const mptrt_model *model, size_t index) {
  if (!model || index >= model->impl->numEntries()) {
    fail("mptrt_entry_name: index out of range");
    return nullptr;
  }
  return model->impl->entry(index).name.c_str();
}

namespace {
const std::vector<uint32_t> *bindingList(const mptrt::plan::EntryPoint &e,
                                         mptrt_binding_kind kind) {
  switch (kind) {
  case MPTRT_INPUT:
    return &e.inputs;
  case MPTRT_PARAMETER:
    return &e.params;
  case MPTRT_OUTPUT:
    return &e.outputs;
  }
  return nullptr;
}
} // namespace

int mptrt_entry_binding_count(const mptrt_model *model, const char *entry, mptrt_binding_kind kind,
                              size_t *count) {
  MPTRT_CHECK_MODEL(mptrt_entry_binding_count);
  MPTRT_CHECK_NAME(mptrt_entry_binding_count, entry);
  MPTRT_CHECK_NAME(mptrt_entry_binding_count, count);
  if (!validKind(kind))
    return fail("mptrt_entry_binding_count: invalid binding kind");
  size_t index;
  if (int rc = report(model->impl->findEntry(entry, &index)))
    return rc;
  *count = bindingList(model->impl->entry(index), kind)->size();
  return MPTRT_OK;
}

int mptrt_entry_binding_name(const mptrt_model *model, const char *entry, mptrt_binding_kind kind,
                             size_t i, const char **name) {
  MPTRT_CHECK_MODEL(mptrt_entry_binding_name);
  MPTRT_CHECK_NAME(mptrt_entry_binding_name, entry);
  MPTRT_CHECK_NAME(mptrt_entry_binding_name, name);
  if (!validKind(kind))
    return fail("mptrt_entry_binding_name: invalid binding kind");
  size_t index;
  if (int rc = report(model->impl->findEntry(entry, &index)))
    return rc;
  const std::vector<uint32_t> &list = *bindingList(model->impl->entry(index), kind);
  if (i >= list.size())
    return fail("mptrt_entry_binding_name: index " + std::to_string(i) + " out of range (" +
                std::to_string(list.size()) + ")");
  *name = model->impl->tensorName(list[i]).c_str();
  return MPTRT_OK;
}

namespace {
using mptrt::abi::OutputRole;
static_assert(MPTRT_ROLE_NONE == static_cast<int>(OutputRole::None) &&
                  MPTRT_ROLE_LOSS == static_cast<int>(OutputRole::Loss) &&
                  MPTRT_ROLE_SKIPPED == static_cast<int>(OutputRole::Skipped) &&
                  MPTRT_ROLE_GRAD_NORM == static_cast<int>(OutputRole::GradNorm) &&
                  MPTRT_ROLE_LOSS_SCALE == static_cast<int>(OutputRole::LossScale) &&
                  MPTRT_ROLE_LR == static_cast<int>(OutputRole::Lr) &&
                  MPTRT_ROLE_GRADIENT == static_cast<int>(OutputRole::Gradient) &&
                  MPTRT_ROLE_GRADIENT == mptrt::abi::kMaxOutputRole,
              "mptrt_output_role's values are the plan's role codes");
} // namespace

int mptrt_entry_output_role(const mptrt_model *model, const char *entry, size_t i,
                            mptrt_output_role *role) {
  MPTRT_CHECK_MODEL(mptrt_entry_output_role);
  MPTRT_CHECK_NAME(mptrt_entry_output_role, entry);
  MPTRT_CHECK_NAME(mptrt_entry_output_role, role);
  size_t index;
  if (int rc = report(model->impl->findEntry(entry, &index)))
    return rc;
  const plan::EntryPoint &e = model->impl->entry(index);
  if (i >= e.outputs.size())
    return fail("mptrt_entry_output_role: index " + std::to_string(i) + " out of range (" +
                std::to_string(e.outputs.size()) + ")");
  *role = static_cast<mptrt_output_role>(e.outputRole(i));
  return MPTRT_OK;
}

int mptrt_entry_output_with_role(const mptrt_model *model, const char *entry,
                                 mptrt_output_role role, const char **name) {
  MPTRT_CHECK_MODEL(mptrt_entry_output_with_role);
  MPTRT_CHECK_NAME(mptrt_entry_output_with_role, entry);
  MPTRT_CHECK_NAME(mptrt_entry_output_with_role, name);
  if (role < MPTRT_ROLE_LOSS || role > MPTRT_ROLE_LR)
    return fail("mptrt_entry_output_with_role: role " + std::to_string(static_cast<int>(role)) +
                " is not one of MPTRT_ROLE_LOSS to MPTRT_ROLE_LR");
  size_t index;
  if (int rc = report(model->impl->findEntry(entry, &index)))
    return rc;
  const plan::EntryPoint &e = model->impl->entry(index);
  *name = nullptr;
  for (size_t i = 0; i < e.outputs.size(); ++i)
    if (static_cast<mptrt_output_role>(e.outputRole(i)) == role)
      *name = model->impl->tensorName(e.outputs[i]).c_str();
  return MPTRT_OK;
}

int mptrt_entry_arena_bytes(const mptrt_model *model, const char *entry, uint64_t *bytes) {
  MPTRT_CHECK_MODEL(mptrt_entry_arena_bytes);
  MPTRT_CHECK_NAME(mptrt_entry_arena_bytes, entry);
  MPTRT_CHECK_NAME(mptrt_entry_arena_bytes, bytes);
  size_t index;
  if (int rc = report(model->impl->findEntry(entry, &index)))
    return rc;
  *bytes = model->impl->entry(index).arenaBytes;
  return MPTRT_OK;
}

int mptrt_entry_kernel_count(const mptrt_model *model, const char *entry, size_t *count) {
  MPTRT_CHECK_MODEL(mptrt_entry_kernel_count);
  MPTRT_CHECK_NAME(mptrt_entry_kernel_count, entry);
  MPTRT_CHECK_NAME(mptrt_entry_kernel_count, count);
  size_t index;
  if (int rc = report(model->impl->findEntry(entry, &index)))
    return rc;
  *count = model->impl->entry(index).kernels.size();
  return MPTRT_OK;
}

int mptrt_entry_kernel(const mptrt_model *model, const char *entry, size_t position,
                       mptrt_kernel_info *info) {
  MPTRT_CHECK_MODEL(mptrt_entry_kernel);
  MPTRT_CHECK_NAME(mptrt_entry_kernel, entry);
  MPTRT_CHECK_NAME(mptrt_entry_kernel, info);
  size_t index;
  if (int rc = report(model->impl->findEntry(entry, &index)))
    return rc;
  const std::vector<uint32_t> &kernels = model->impl->entry(index).kernels;
  if (position >= kernels.size())
    return fail("mptrt_entry_kernel: position " + std::to_string(position) + " of entry point '" +
                entry + "', which has " + std::to_string(kernels.size()) + " kernels");
  const plan::Kernel &k = model->impl->kernel(kernels[position]);
  info->kernel = kernels[position];
  info->kind = k.kind.c_str();
  info->origin = k.origin.c_str();
  info->phase = plan::phaseName(k.phase);
  return MPTRT_OK;
}

int mptrt_parameter_shard(const mptrt_model *model, const char *entry, const char *name,
                          int64_t *world_size, size_t *rank, int64_t *shape) {
  MPTRT_CHECK_MODEL(mptrt_parameter_shard);
  MPTRT_CHECK_NAME(mptrt_parameter_shard, entry);
  MPTRT_CHECK_NAME(mptrt_parameter_shard, name);
  MPTRT_CHECK_NAME(mptrt_parameter_shard, world_size);
  size_t index;
  if (int rc = report(model->impl->findEntry(entry, &index)))
    return rc;
  uint32_t id;
  if (int rc = report(model->impl->find(BindingKind::Parameter, name, &id)))
    return rc;
  *world_size = 0;
  const std::vector<uint32_t> &kernels = model->impl->entry(index).kernels;
  // The update kernels whose parameter operand a `shard` kernel made; their
  // moments (operands 2 and, for adamw_update, 3) are shards of that
  // kernel's operand.
  for (uint32_t k : kernels) {
    const plan::Kernel &update = model->impl->kernel(k);
    const size_t moments = update.kind == "adamw_update"                                ? 2
                           : update.kind == "sgd_update" && update.operands.size() == 6 ? 1
                                                                                        : 0;
    if (moments == 0 || update.operands.empty())
      continue;
    bool isMoment = false;
    for (size_t m = 0; m < moments; ++m)
      isMoment |= update.operands[2 + m] == id;
    if (!isMoment)
      continue;
    for (uint32_t s : kernels) {
      const plan::Kernel &shard = model->impl->kernel(s);
      if (shard.kind != "shard" || shard.results.size() != 1 ||
          shard.results[0] != update.operands[0] || shard.operands.size() != 1)
        continue;
      const plan::Attribute *world = shard.findAttr("world_size");
      const auto &whole = model->impl->desc(shard.operands[0]);
      *world_size = world ? world->i : 0;
      if (rank)
        *rank = whole.shape.size();
      if (shape)
        for (size_t i = 0; i < whole.shape.size(); ++i)
          shape[i] = whole.shape[i];
      return MPTRT_OK;
    }
  }
  return MPTRT_OK;
}

uint64_t mptrt_peak_arena_bytes(const mptrt_model *model) {
  return model ? model->impl->peakArenaBytes() : 0;
}

uint64_t mptrt_workspace_bytes(const mptrt_model *model) {
  return model ? model->impl->workspaceBytes() : 0;
}

} // extern "C"
