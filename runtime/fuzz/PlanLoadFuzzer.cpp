//===- PlanLoadFuzzer.cpp - libFuzzer target: plan bytes to a model ------===//
//
// Hands arbitrary bytes to the runtime the way an embedding user would, with
// mptrt_model_load_memory_ex: decoding, verifyPlan, and the CPU backend's
// prepare of every kernel. A plan that loads is then inspected through the
// C API and, when its tensors are small, every entry point is run once with
// zero inputs: a kernel that prepared must be safe to run.
//
// Checksums are skipped (MPTRT_LOAD_SKIP_CHECKSUMS): a mutated plan would
// almost never get past them, and the structure behind them is what is
// fuzzed. Plans whose tensors would need more than kMaxTensorBytes are
// skipped before loading: asking for a lot of memory is legal, and the
// fuzzer's memory limit would report it as a crash.
//
// Built as a libFuzzer binary with MPT_ENABLE_FUZZERS (scripts/fuzz.sh), and
// always as mptrt-plan-fuzz-replay, which runs saved inputs through this same
// function in the normal test suite.
//
//===----------------------------------------------------------------------===//
#include "mptrt.h"
#include "mptrt/plan/Reader.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

constexpr uint64_t kMaxTensorBytes = uint64_t{16} << 20;
/// Entry points are run only when every tensor is this small, so that one
/// input stays fast whatever its kernels compute.
constexpr uint64_t kMaxRunTensorBytes = uint64_t{16} << 10;

/// The largest tensor (or arena) the plan declares, or UINT64_MAX when it
/// does not decode.
uint64_t largestAllocation(const uint8_t *data, size_t size) {
  mptrt::plan::Plan plan;
  if (!mptrt::plan::parsePlan(data, size, &plan, nullptr, /*checkChecksums=*/false))
    return UINT64_MAX;
  uint64_t largest = 0;
  for (const mptrt::plan::Tensor &t : plan.tensors) {
    uint64_t bytes = 0;
    mptrt::plan::tensorByteSize(t, &bytes);
    largest = std::max(largest, bytes);
  }
  for (const mptrt::plan::EntryPoint &e : plan.entries)
    largest = std::max(largest, e.arenaBytes);
  return largest;
}

/// Walks the model's entry points and bindings; binds zeros to every input
/// and runs each entry point once.
void exercise(mptrt_model *model, bool run) {
  size_t numEntries = mptrt_entry_count(model);
  for (size_t e = 0; e < numEntries; ++e) {
    const char *entry = mptrt_entry_name(model, e);
    uint64_t arena = 0;
    mptrt_entry_arena_bytes(model, entry, &arena);
    for (mptrt_binding_kind kind : {MPTRT_INPUT, MPTRT_PARAMETER, MPTRT_OUTPUT}) {
      size_t count = 0;
      mptrt_entry_binding_count(model, entry, kind, &count);
      for (size_t i = 0; i < count; ++i) {
        const char *name = nullptr;
        if (mptrt_entry_binding_name(model, entry, kind, i, &name) != MPTRT_OK)
          continue;
        mptrt_output_role role;
        if (kind == MPTRT_OUTPUT)
          mptrt_entry_output_role(model, entry, i, &role);
        mptrt_dtype dtype;
        size_t rank = 0;
        int64_t shape[MPTRT_MAX_RANK];
        if (mptrt_tensor_info(model, kind, name, &dtype, &rank, shape) != MPTRT_OK)
          continue;
        if (kind != MPTRT_INPUT || !run)
          continue;
        size_t bytes = mptrt_dtype_size(dtype);
        for (size_t d = 0; d < rank; ++d)
          bytes *= static_cast<size_t>(shape[d]);
        std::vector<uint8_t> zeros(bytes, 0);
        mptrt_bind_input(model, name, dtype, shape, rank, zeros.data(), bytes);
      }
    }
    for (int role = MPTRT_ROLE_LOSS; role <= MPTRT_ROLE_LR; ++role) {
      const char *name = nullptr;
      mptrt_entry_output_with_role(model, entry, static_cast<mptrt_output_role>(role), &name);
    }
  }
  if (!run)
    return;
  for (size_t e = 0; e < numEntries; ++e)
    mptrt_run(model, mptrt_entry_name(model, e));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const uint64_t largest = largestAllocation(data, size);
  if (largest != UINT64_MAX && largest > kMaxTensorBytes)
    return -1; // do not add to the corpus
  mptrt_model *model = nullptr;
  if (mptrt_model_load_memory_ex(data, size, "cpu", MPTRT_LOAD_SKIP_CHECKSUMS, &model) != MPTRT_OK)
    return 0;
  exercise(model, largest <= kMaxRunTensorBytes);
  mptrt_model_free(model);
  return 0;
}
