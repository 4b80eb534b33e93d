//===- Model.cpp - loading, binding and running a plan -------------------===//
#include "Model.h"
#include "ChannelsLast.h"

#include "HostMemory.h"
#include "mptrt/Numerics.h"
#include "mptrt/plan/Reader.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace mptrt {
namespace rt {

namespace {

const char *kindName(BindingKind kind) {
  switch (kind) {
  case BindingKind::Input:
    return "input";
  case BindingKind::Parameter:
    return "parameter";
  case BindingKind::Output:
    return "output";
  }
  return "tensor";
}

/// Kernel kinds that may write their result over an operand occupying
/// exactly the same bytes with the same type: each output element depends
/// only on the input element at the same position, and the CPU kernels load
/// a block of inputs before storing the block (and the copies use memmove).
bool allowsInPlace(const std::string &kind) {
  static const char *const kinds[] = {
#define MPTRT_UNARY_FUNCTION(Name, kind, kernel, attrs, floating, integer, transcendental, grad,   \
                             positive)                                                             \
  kernel ? #kind : "",
#include "mptrt/generated/UnaryKinds.def"
      "add",  "sub",      "mul",     "div",     "pow",     "max",       "min",  "where",
      "copy", "identity", "reshape", "flatten", "squeeze", "unsqueeze", "cast", "dropout"};
  for (const char *k : kinds)
    if (*k && kind == k)
      return true;
  return false;
}

/// The update kinds (docs/training.md) may write a result over the operand
/// it updates, when the two are the same bytes of the same type: result r
/// over operand kUpdates[k].operand[r] (-1: none). Their kernels read each
/// element's (or scalar's) operands before writing its results.
struct UpdateKind {
  const char *kind;
  int operand[3];
};
const UpdateKind kUpdates[] = {
    {"sgd_update", {0, 2, -1}},        // param, [buf]
    {"adamw_update", {0, 2, 3}},       // param, exp_avg, exp_avg_sq
    {"update_loss_scale", {0, 1, -1}}, // scale, growth_tracker
    {"advance_step", {0, -1, -1}},     // count
    {"update_fp8_scale", {0, 1, -1}},  // amax_history, scale
    {"clip_by_norm", {0, -1, -1}},     // grad
    {"unscale", {0, -1, -1}},          // grad
    {"batch_norm_train", {-1, 3, 4}},  // running_mean, running_var
};

/// The update kind `kind`, or null.
const UpdateKind *findUpdateKind(const std::string &kind) {
  for (const UpdateKind &u : kUpdates)
    if (kind == u.kind)
      return &u;
  return nullptr;
}

/// Whether result `r` of a `kind` kernel may be written over operand `o`
/// when they are the same bytes of the same type.
bool allowsInPlace(const std::string &kind, size_t r, size_t o) {
  if (const UpdateKind *u = findUpdateKind(kind))
    return r < 3 && u->operand[r] == static_cast<int>(o);
  return allowsInPlace(kind);
}

std::string label(const plan::Plan &plan, uint32_t id) {
  const plan::Tensor &t = plan.tensors[id];
  return "tensor " + std::to_string(id) + (t.name.empty() ? "" : " '" + t.name + "'");
}

} // namespace

Status Model::load(const uint8_t *data, size_t size, const std::string &backend,
                   std::unique_ptr<Model> *out, bool checkChecksums) {
  std::unique_ptr<Model> model(new Model());
  std::string error;
  if (!plan::parsePlan(data, size, &model->plan_, &error, checkChecksums))
    return Status::error(error);
  std::vector<std::string> kinds;
  for (const plan::Kernel &k : model->plan_.kernels)
    if (std::find(kinds.begin(), kinds.end(), k.kind) == kinds.end())
      kinds.push_back(k.kind);
  MPTRT_TRY(createBackendFor(backend, kinds, &model->backend_));
  MPTRT_TRY(model->prepare());
  *out = std::move(model);
  return Status::ok();
}

Status Model::copyConstants(uint64_t offset, uint64_t bytes, void *device) {
  if (const uint8_t *p = plan_.constants.find(offset, bytes))
    return backend_->copyToDevice(device, p, bytes);
  // Bytes across pieces of a blob built in memory: gather them first.
  std::vector<uint8_t> gathered;
  MPTRT_TRY(resizeHostBuffer(&gathered, bytes, "gathering constants"));
  plan_.constants.copyOut(offset, bytes, gathered.data());
  return backend_->copyToDevice(device, gathered.data(), bytes);
}

Model::~Model() {
  if (!backend_)
    return;
  for (void *p : buffers_)
    if (p)
      backend_->deallocate(p);
  for (EntryState &e : entryStates_)
    if (e.arena)
      backend_->deallocate(e.arena);
  if (constants_)
    backend_->deallocate(constants_);
  if (workspace_)
    backend_->deallocate(workspace_);
}

/// What the plan will allocate on the backend, by part: the named tensors,
/// the constants it keeps (at most the blob), every entry point's arena
/// (each allocated at its first run) and the kernels' workspace. More than
/// the backend's memory is refused now, before anything is allocated, with
/// the parts named, instead of failing at some later allocation or run.
Status Model::checkMemoryFits(uint64_t workspaceBytes) const {
  const uint64_t memory = backend_->memoryBytes();
  if (memory == 0)
    return Status::ok();
  auto add = [](uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; };
  uint64_t named = 0, arenas = 0;
  for (size_t id = 0; id < plan_.tensors.size(); ++id) {
    const plan::Storage s = plan_.tensors[id].storage;
    if (s == plan::Storage::Input || s == plan::Storage::Parameter || s == plan::Storage::Output)
      named = add(named, descs_[id].bytes);
  }
  for (const plan::EntryPoint &entry : plan_.entries)
    arenas = add(arenas, entry.arenaBytes);
  const uint64_t constants = plan_.constants.size();
  const uint64_t total = add(add(named, arenas), add(constants, workspaceBytes));
  if (total <= memory)
    return Status::ok();
  return Status::error("plan: needs " + std::to_string(total) + " bytes of " + backend_->name() +
                       " memory (named tensors " + std::to_string(named) + ", arenas " +
                       std::to_string(arenas) + ", constants " + std::to_string(constants) +
                       ", workspace " + std::to_string(workspaceBytes) + "), more than the " +
                       std::to_string(memory) + " bytes it has; nothing was allocated");
}

Status Model::prepare() {
  const size_t numTensors = plan_.tensors.size();
  descs_.resize(numTensors);
  for (size_t i = 0; i < numTensors; ++i)
    descs_[i] = makeDesc(plan_.tensors[i].dtype, plan_.tensors[i].shape);

  // Prepare every kernel; the backend checks kinds, types and attributes.
  kernels_.resize(plan_.kernels.size());
  for (uint32_t k = 0; k < plan_.kernels.size(); ++k) {
    const plan::Kernel &kernel = plan_.kernels[k];
    const std::string where = "plan: kernel " + std::to_string(k) + " (" + kernel.kind + ")";
    std::vector<const TensorDesc *> operands, results;
    for (uint32_t id : kernel.operands)
      operands.push_back(&descs_[id]);
    for (uint32_t id : kernel.results)
      results.push_back(&descs_[id]);
    KernelView view(kernel, std::move(operands), std::move(results));
    if (isChannelsLast(kernel))
      MPTRT_TRY(prepareChannelsLast(*backend_, view, &kernels_[k]).withContext(where));
    else
      MPTRT_TRY(backend_->prepareKernel(view, &kernels_[k]).withContext(where));
    MPTRT_TRY(checkAliasing(k).withContext(where));
  }

  // One workspace for the kernels' scratch, as large as the largest asks
  // for, and room in the run's argument lists for the widest kernel: a run
  // allocates nothing (docs/runtime.md, "Prepare, then run").
  uint64_t workspaceBytes = 0;
  size_t maxOperands = 0, maxResults = 0;
  for (uint32_t k = 0; k < plan_.kernels.size(); ++k) {
    workspaceBytes = std::max(workspaceBytes, kernels_[k]->workspaceBytes());
    maxOperands = std::max(maxOperands, plan_.kernels[k].operands.size());
    maxResults = std::max(maxResults, plan_.kernels[k].results.size());
  }
  MPTRT_TRY(checkMemoryFits(workspaceBytes));
  if (workspaceBytes)
    MPTRT_TRY(backend_->allocate(workspaceBytes, &workspace_)
                  .withContext("plan: the kernels' workspace"));
  args_.operands.reserve(maxOperands);
  args_.results.reserve(maxResults);
  args_.workspace = workspace_;
  workspaceBytes_ = workspaceBytes;

  // Named tensors: one buffer each. Parameters start from their initial
  // value if the plan has one, otherwise from zero and unbound.
  buffers_.assign(numTensors, nullptr);
  bound_.assign(numTensors, 0);
  computed_.assign(numTensors, 0);
  for (uint32_t id = 0; id < numTensors; ++id) {
    const plan::Tensor &t = plan_.tensors[id];
    BindingKind kind;
    switch (t.storage) {
    case plan::Storage::Input:
      kind = BindingKind::Input;
      break;
    case plan::Storage::Parameter:
      kind = BindingKind::Parameter;
      break;
    case plan::Storage::Output:
      kind = BindingKind::Output;
      break;
    default:
      continue;
    }
    names_[static_cast<int>(kind)][t.name] = id;
    MPTRT_TRY(backend_->allocate(descs_[id].bytes, &buffers_[id]).withContext(label(plan_, id)));
    if (t.hasInitializer) {
      MPTRT_TRY(copyConstants(t.offset, descs_[id].bytes, buffers_[id]));
      bound_[id] = 1;
    } else {
      MPTRT_TRY(backend_->fillZero(buffers_[id], descs_[id].bytes));
      bound_[id] = t.zeroInitialized ? 1 : 0;
    }
  }
  // Parameters now hold their initial values; the device keeps only the
  // byte ranges that constant tensors use (merged where they overlap),
  // packed, and the host copy of the blob goes. A plan's weights are then
  // in memory once, not twice.
  std::map<uint64_t, uint64_t> ranges; // start -> end, in the blob
  for (uint32_t id = 0; id < numTensors; ++id) {
    const plan::Tensor &t = plan_.tensors[id];
    if (t.storage == plan::Storage::Constant) {
      uint64_t &end = ranges[t.offset];
      end = std::max(end, t.offset + descs_[id].bytes);
    }
  }
  std::vector<std::pair<uint64_t, uint64_t>> merged; // [start, end)
  for (auto [start, end] : ranges) {
    if (!merged.empty() && start <= merged.back().second)
      merged.back().second = std::max(merged.back().second, end);
    else
      merged.push_back({start, end});
  }
  std::vector<uint8_t> packed;
  std::vector<uint64_t> packedStart;
  for (auto [start, end] : merged) {
    const size_t at = plan::alignUp(packed.size());
    packedStart.push_back(at);
    packed.resize(at + (end - start), 0);
    plan_.constants.copyOut(start, end - start, packed.data() + at);
  }
  for (plan::Tensor &t : plan_.tensors) {
    if (t.storage != plan::Storage::Constant)
      continue;
    // The merged range holding t (starts are 64-aligned, so t stays aligned).
    size_t r =
        std::upper_bound(merged.begin(), merged.end(), std::make_pair(t.offset, UINT64_MAX)) -
        merged.begin() - 1;
    t.offset = packedStart[r] + (t.offset - merged[r].first);
  }
  plan_.constants.clear();
  MPTRT_TRY(backend_->allocate(packed.size(), &constants_));
  MPTRT_TRY(backend_->copyToDevice(constants_, packed.data(), packed.size()));

  entryStates_.resize(plan_.entries.size());
  for (size_t e = 0; e < plan_.entries.size(); ++e)
    entryIndex_[plan_.entries[e].name] = e;
  return Status::ok();
}

/// A result may not share bytes with another result, nor with an operand
/// unless the two are the same bytes with the same type and either the kind
/// computes elementwise (an in-place update such as `w = w - g`) or it is an
/// update kind writing the operand it updates (`param' = sgd(param, ...)`).
Status Model::checkAliasing(uint32_t kernelId) const {
  const plan::Kernel &kernel = plan_.kernels[kernelId];
  auto overlap = [&](uint32_t a, uint32_t b, bool *identical) {
    const plan::Tensor &ta = plan_.tensors[a], &tb = plan_.tensors[b];
    *identical = false;
    if (a == b) {
      *identical = true;
      return true;
    }
    if (ta.storage != plan::Storage::Arena || tb.storage != plan::Storage::Arena)
      return false;
    uint64_t aEnd = ta.offset + descs_[a].bytes, bEnd = tb.offset + descs_[b].bytes;
    if (descs_[a].bytes == 0 || descs_[b].bytes == 0)
      return false;
    *identical = ta.offset == tb.offset && descs_[a].bytes == descs_[b].bytes;
    return ta.offset < bEnd && tb.offset < aEnd;
  };
  for (size_t r = 0; r < kernel.results.size(); ++r) {
    uint32_t res = kernel.results[r];
    for (size_t o = r + 1; o < kernel.results.size(); ++o) {
      bool identical;
      if (overlap(res, kernel.results[o], &identical))
        return Status::error("results " + label(plan_, res) + " and " +
                             label(plan_, kernel.results[o]) + " overlap in the arena");
    }
    for (size_t o = 0; o < kernel.operands.size(); ++o) {
      const uint32_t op = kernel.operands[o];
      bool identical;
      if (!overlap(res, op, &identical))
        continue;
      bool sameType =
          descs_[res].dtype == descs_[op].dtype && descs_[res].numel == descs_[op].numel;
      if (identical && sameType && allowsInPlace(kernel.kind, r, o))
        continue;
      std::string why;
      if (allowsInPlace(kernel.kind, r, o))
        why = " without being the same bytes of the same type";
      else if (findUpdateKind(kernel.kind))
        why = " and this kind can write result " + std::to_string(r) +
              " only over the operand it updates";
      else
        why = " and this kind cannot run in place";
      return Status::error("result " + label(plan_, res) + " overlaps operand " + label(plan_, op) +
                           why);
    }
  }
  return Status::ok();
}

Status Model::find(BindingKind kind, const std::string &name, uint32_t *id) const {
  const auto &names = names_[static_cast<int>(kind)];
  auto it = names.find(name);
  if (it == names.end()) {
    std::string known;
    for (const auto &kv : names)
      known += (known.empty() ? "" : ", ") + ("'" + kv.first + "'");
    return Status::error(std::string("no ") + kindName(kind) + " named '" + name +
                         "' (the plan has: " + (known.empty() ? "none" : known) + ")");
  }
  *id = it->second;
  return Status::ok();
}

Status Model::findEntry(std::string_view name, size_t *index) const {
  auto it = entryIndex_.find(name);
  if (it == entryIndex_.end()) {
    std::string known;
    for (const auto &kv : entryIndex_)
      known += (known.empty() ? "" : ", ") + ("'" + kv.first + "'");
    return Status::error("no entry point named '" + std::string(name) +
                         "' (the plan has: " + (known.empty() ? "none" : known) + ")");
  }
  *index = it->second;
  return Status::ok();
}

Status Model::bind(BindingKind kind, const std::string &name, DType dtype, const int64_t *shape,
                   size_t rank, const void *data, size_t bytes, Memory from) {
  if (kind == BindingKind::Output)
    return Status::error("outputs cannot be bound");
  uint32_t id;
  MPTRT_TRY(find(kind, name, &id));
  const TensorDesc &d = descs_[id];
  std::vector<int64_t> given(shape, shape + (shape ? rank : 0));
  if (!plan::isValidDType(static_cast<uint8_t>(dtype)) || dtype != d.dtype || given != d.shape) {
    std::string givenType = plan::isValidDType(static_cast<uint8_t>(dtype))
                                ? describeType(dtype, given)
                                : "invalid dtype";
    return Status::error(std::string(kindName(kind)) + " '" + name + "' has type " + describe(d) +
                         ", but " + givenType + " was given");
  }
  if (bytes != d.bytes)
    return Status::error(std::string(kindName(kind)) + " '" + name + "' needs " +
                         std::to_string(d.bytes) + " bytes, " + std::to_string(bytes) +
                         " were given");
  if (!data && bytes != 0)
    return Status::error(std::string(kindName(kind)) + " '" + name + "': null data");
  MPTRT_TRY(from == Memory::Device ? backend_->copyOnDevice(buffers_[id], data, bytes)
                                   : backend_->copyToDevice(buffers_[id], data, bytes));
  bound_[id] = 1;
  return Status::ok();
}

Status Model::read(BindingKind kind, const std::string &name, void *dst, size_t bytes,
                   Memory to) const {
  if (kind == BindingKind::Input)
    return Status::error("inputs cannot be read back");
  uint32_t id;
  MPTRT_TRY(find(kind, name, &id));
  const TensorDesc &d = descs_[id];
  if (bytes != d.bytes)
    return Status::error(std::string(kindName(kind)) + " '" + name + "' has " +
                         std::to_string(d.bytes) + " bytes (" + describe(d) + "), " +
                         std::to_string(bytes) + " were asked for");
  if (kind == BindingKind::Output && !computed_[id])
    return Status::error("output '" + name + "' has not been computed by a run");
  if (kind == BindingKind::Parameter && !bound_[id])
    return Status::error("parameter '" + name + "' has no value");
  if (!dst && bytes != 0)
    return Status::error("null destination");
  return to == Memory::Device ? backend_->copyOnDevice(dst, buffers_[id], bytes)
                              : backend_->copyToHost(dst, buffers_[id], bytes);
}

void *Model::address(uint32_t tensor, void *arena) const {
  const plan::Tensor &t = plan_.tensors[tensor];
  switch (t.storage) {
  case plan::Storage::Arena:
    return static_cast<uint8_t *>(arena) + t.offset;
  case plan::Storage::Constant:
    return static_cast<uint8_t *>(constants_) + t.offset;
  default:
    return buffers_[tensor];
  }
}

Status Model::run(std::string_view entryName) { return runImpl(entryName, nullptr); }

Status Model::runObserved(std::string_view entryName, ResultObserver observer, void *user) {
  if (!observer)
    return Status::error("runObserved: no observer");
  if (observeBuffer_.empty()) {
    uint64_t largest = 1, most = 1;
    for (const TensorDesc &d : descs_) {
      largest = std::max(largest, d.bytes);
      most = std::max<uint64_t>(most, static_cast<uint64_t>(d.numel));
    }
    MPTRT_TRY(resizeHostBuffer(&checkBuffer_, std::max<uint64_t>(checkBuffer_.size(), largest),
                               "a copy of the largest result (an observed run)"));
    MPTRT_TRY(
        resizeHostBuffer(&observeBuffer_, most, "the largest result in float32 (an observed run)"));
  }
  return runImpl(entryName, nullptr, observer, user);
}

Status Model::observe(const TensorArg &result, ObservedResult *view, ResultObserver observer,
                      void *user) {
  const TensorDesc &d = *result.desc;
  if (d.bytes == 0 || !plan::isFloatDType(d.dtype))
    return Status::ok();
  MPTRT_TRY(backend_->copyToHost(checkBuffer_.data(), result.data, d.bytes));
  const uint8_t *p = checkBuffer_.data();
  float *out = observeBuffer_.data();
  const uint64_t n = static_cast<uint64_t>(d.numel);
  for (uint64_t i = 0; i < n; ++i) {
    switch (d.dtype) {
    case DType::F32:
      std::memcpy(&out[i], p + 4 * i, 4);
      break;
    case DType::F16: {
      uint16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      out[i] = numerics::f16ToF32(v);
      break;
    }
    case DType::BF16: {
      uint16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      out[i] = numerics::bf16ToF32(v);
      break;
    }
    case DType::F8E4M3FN:
      out[i] = numerics::f8E4M3FNToF32(p[i]);
      break;
    case DType::F8E5M2:
      out[i] = numerics::f8E5M2ToF32(p[i]);
      break;
    default:
      out[i] = 0.0f;
      break;
    }
  }
  view->values = out;
  view->count = n;
  observer(*view, user);
  return Status::ok();
}

Status Model::runProfiled(std::string_view entryName, double *ms, size_t count) {
  size_t index;
  MPTRT_TRY(findEntry(entryName, &index));
  const size_t kernels = plan_.entries[index].kernels.size();
  if (count != kernels)
    return Status::error("entry point '" + std::string(entryName) + "' has " +
                         std::to_string(kernels) + " kernels, room for " + std::to_string(count) +
                         " times was given");
  if (!ms && count)
    return Status::error("runProfiled: null times");
  return runImpl(entryName, nullptr, nullptr, nullptr, ms);
}

Status Model::runChecked(std::string_view entryName, NonFinite *first) {
  *first = NonFinite();
  // Set up once. Not keyed on checkBuffer_, which an observed run sizes too
  // (FiniteCheck.AfterAnObservedRun).
  if (constantNonFinite_.size() != descs_.size()) {
    uint64_t largest = 1;
    for (const TensorDesc &d : descs_)
      largest = std::max(largest, d.bytes);
    MPTRT_TRY(resizeHostBuffer(&checkBuffer_, std::max<uint64_t>(checkBuffer_.size(), largest),
                               "a copy of the largest result (a run checked after every kernel)"));
    constantNonFinite_.assign(descs_.size(), 0);
    nonFinite_.assign(descs_.size(), 0);
    // A constant that is not finite (the -inf of an attention mask) is
    // deliberate: kernels that pass it on did not make it.
    for (uint32_t id = 0; id < descs_.size(); ++id) {
      if (plan_.tensors[id].storage != plan::Storage::Constant)
        continue;
      bool found = false;
      uint64_t element = 0;
      MPTRT_TRY(hasNonFinite({&descs_[id], address(id, nullptr)}, &found, &element));
      constantNonFinite_[id] = found;
    }
  }
  nonFinite_ = constantNonFinite_; // same size: no allocation
  return runImpl(entryName, first);
}

namespace {

/// Whether a value of each floating-point format is an inf or a NaN: all
/// exponent bits set (E4M3FN has no inf, and its NaN is S.1111.111).
bool nonFiniteF32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return (v & 0x7F800000u) == 0x7F800000u;
}
bool nonFinite16(const uint8_t *p, uint16_t exponent) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return (v & exponent) == exponent;
}

} // namespace

Status Model::hasNonFinite(const TensorArg &result, bool *found, uint64_t *element) {
  *found = false;
  const TensorDesc &d = *result.desc;
  if (d.bytes == 0 || !plan::isFloatDType(d.dtype))
    return Status::ok();
  MPTRT_TRY(backend_->copyToHost(checkBuffer_.data(), result.data, d.bytes));
  const uint8_t *p = checkBuffer_.data();
  const uint64_t size = plan::dtypeSize(d.dtype);
  for (uint64_t i = 0; i < static_cast<uint64_t>(d.numel); ++i, p += size) {
    bool bad = false;
    switch (d.dtype) {
    case DType::F32:
      bad = nonFiniteF32(p);
      break;
    case DType::F16:
      bad = nonFinite16(p, 0x7C00);
      break;
    case DType::BF16:
      bad = nonFinite16(p, 0x7F80);
      break;
    case DType::F8E4M3FN:
      bad = (*p & 0x7F) == 0x7F;
      break;
    case DType::F8E5M2:
      bad = (*p & 0x7C) == 0x7C;
      break;
    default:
      break;
    }
    if (bad) {
      *found = true;
      *element = i;
      return Status::ok();
    }
  }
  return Status::ok();
}

Status Model::runImpl(std::string_view entryName, NonFinite *first, ResultObserver observer,
                      void *user, double *profile) {
  size_t index;
  MPTRT_TRY(findEntry(entryName, &index));
  const plan::EntryPoint &entry = plan_.entries[index];
  // Messages are built only on failure: the success path allocates nothing
  // once the entry point's arena exists.
  auto where = [&] { return "entry point '" + std::string(entryName) + "'"; };
  for (uint32_t id : entry.inputs)
    if (!bound_[id])
      return Status::error(where() + ": input '" + plan_.tensors[id].name + "' is not bound");
  for (uint32_t id : entry.params)
    if (!bound_[id])
      return Status::error(where() + ": parameter '" + plan_.tensors[id].name +
                           "' is not bound and the plan has no initial value for it");

  EntryState &state = entryStates_[index];
  if (!state.allocated) {
    MPTRT_TRY(backend_->allocate(entry.arenaBytes, &state.arena).withContext(where()));
    state.allocated = true;
    arenaBytesAllocated_ += entry.arenaBytes;
  }

  for (uint32_t id : entry.outputs)
    computed_[id] = 0;
  // A backend that records (CUDA graphs) records the second plain run (the
  // first warms up what initialises lazily) and replays it from then on:
  // every pointer a kernel was given is fixed at load, and every value
  // that changes between runs is read on the device.
  // A profiled run times each kernel, so it is never recorded or replayed.
  const bool plain = !first && !observer && !profile;
  if (plain && state.recorded) {
    if (Status s = backend_->replay(*state.recorded); !s)
      return s.withContext(where());
    return finishRun(entry, entryName);
  }
  const bool record = plain && backend_->canRecord() && state.plainRuns++ >= 1;
  if (record)
    MPTRT_TRY(backend_->beginRecording().withContext(where()));
  if (profile)
    MPTRT_TRY(backend_->beginTiming(entry.kernels.size()).withContext(where()));
  if (Status s =
          runKernels(entry, entryName, state.arena, first, observer, user, profile != nullptr);
      !s) {
    if (record)
      (void)backend_->endRecording(nullptr);
    return s;
  }
  if (record) {
    MPTRT_TRY(backend_->endRecording(&state.recorded).withContext(where()));
    if (Status s = backend_->replay(*state.recorded); !s)
      return s.withContext(where());
  }
  MPTRT_TRY(finishRun(entry, entryName));
  if (profile)
    MPTRT_TRY(backend_->endTiming(profile, entry.kernels.size()).withContext(where()));
  return Status::ok();
}

Status Model::finishRun(const plan::EntryPoint &entry, std::string_view entryName) {
  if (Status s = backend_->synchronize(); !s)
    return s.withContext("entry point '" + std::string(entryName) + "'");
  for (uint32_t id : entry.outputs)
    computed_[id] = 1;
  return Status::ok();
}

Status Model::runKernels(const plan::EntryPoint &entry, std::string_view entryName, void *arena,
                         NonFinite *first, ResultObserver observer, void *user, bool timed) {
  auto where = [&] { return "entry point '" + std::string(entryName) + "'"; };
  KernelArgs &args = args_; // capacity reserved at prepare
  for (size_t position = 0; position < entry.kernels.size(); ++position) {
    const uint32_t k = entry.kernels[position];
    const plan::Kernel &kernel = plan_.kernels[k];
    args.operands.resize(kernel.operands.size());
    args.results.resize(kernel.results.size());
    for (size_t i = 0; i < kernel.operands.size(); ++i)
      args.operands[i] = {&descs_[kernel.operands[i]], address(kernel.operands[i], arena)};
    for (size_t i = 0; i < kernel.results.size(); ++i)
      args.results[i] = {&descs_[kernel.results[i]], address(kernel.results[i], arena)};
    if (Status s = kernels_[k]->run(args); !s)
      return s.withContext(where() + ", kernel " + std::to_string(k) + " (" + kernel.kind + ")");
    if (timed)
      if (Status s = backend_->markKernel(position); !s)
        return s.withContext(where() + ", timing kernel " + std::to_string(k));
    for (size_t i = 0; observer && i < args.results.size(); ++i) {
      ObservedResult view;
      view.kernel = k;
      view.position = static_cast<uint32_t>(position);
      view.result = static_cast<uint32_t>(i);
      view.tensor = kernel.results[i];
      if (Status s = observe(args.results[i], &view, observer, user); !s)
        return s.withContext(where() + ", observing kernel " + std::to_string(k));
    }
    if (first && !first->found) {
      // The result may live in arena bytes a later kernel reuses: check now.
      // A non-finite input or parameter counts as made by the kernel that
      // reads it; one passed on from a constant or an earlier kernel does not.
      bool passedOn = false;
      for (uint32_t id : kernel.operands)
        passedOn = passedOn || nonFinite_[id];
      for (size_t i = 0; i < args.results.size() && !first->found; ++i) {
        bool found = false;
        uint64_t element = 0;
        if (Status s = hasNonFinite(args.results[i], &found, &element); !s)
          return s.withContext(where() + ", checking kernel " + std::to_string(k));
        nonFinite_[kernel.results[i]] = found;
        if (found && !passedOn) {
          first->found = true;
          first->kernel = k;
          first->position = static_cast<uint32_t>(position);
          first->result = static_cast<uint32_t>(i);
          first->element = element;
        }
      }
    }
  }
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
