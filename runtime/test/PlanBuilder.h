//===- PlanBuilder.h - build small plans in tests ----------------*- C++ -*-===//
//
// A convenience layer over mptrt/PlanFormat.h for tests: it names tensors,
// bump-allocates arena offsets and collects each entry point's bindings from
// the kernels it runs. It is also a compact example of what the compiler's
// lowering produces (minus liveness-based arena reuse).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TEST_PLANBUILDER_H
#define MPTRT_TEST_PLANBUILDER_H

#include "mptrt/plan/Layout.h"
#include "mptrt/plan/Validation.h"
#include "mptrt/plan/Writer.h"

#include <algorithm>
#include <string>
#include <vector>

namespace mptrt {
namespace test {

class PlanBuilder {
public:
  using DType = plan::DType;
  using Storage = plan::Storage;
  using Shape = std::vector<int64_t>;

  uint32_t input(const std::string &name, DType dtype, Shape shape) {
    return add(name, dtype, std::move(shape), Storage::Input, 0);
  }
  /// An output; every entry point that lists it gives it `role`.
  uint32_t output(const std::string &name, DType dtype, Shape shape,
                  plan::OutputRole role = plan::OutputRole::None) {
    uint32_t id = add(name, dtype, std::move(shape), Storage::Output, 0);
    roles.resize(plan.tensors.size(), plan::OutputRole::None);
    roles[id] = role;
    return id;
  }
  /// A parameter, with an initial value in the constants blob if `init`.
  uint32_t param(const std::string &name, DType dtype, Shape shape, const void *init = nullptr,
                 size_t initBytes = 0) {
    uint32_t id = add(name, dtype, std::move(shape), Storage::Parameter, 0);
    if (init) {
      plan.tensors[id].offset = plan::appendConstant(plan, init, initBytes);
      plan.tensors[id].hasInitializer = true;
    }
    return id;
  }
  uint32_t constant(DType dtype, Shape shape, const void *data, size_t bytes,
                    const std::string &name = "") {
    uint64_t offset = plan::appendConstant(plan, data, bytes);
    return add(name, dtype, std::move(shape), Storage::Constant, offset);
  }
  /// A temporary in the arena, at the next free 64-byte-aligned offset.
  uint32_t temp(DType dtype, Shape shape, const std::string &name = "") {
    uint32_t id = add(name, dtype, std::move(shape), Storage::Arena, arenaTop);
    uint64_t bytes = 0;
    plan::tensorByteSize(plan.tensors[id], &bytes);
    arenaTop = plan::alignUp(arenaTop + bytes);
    return id;
  }

  uint32_t kernel(const std::string &kind, std::vector<uint32_t> operands,
                  std::vector<uint32_t> results, std::vector<plan::Attribute> attrs = {}) {
    plan::Kernel k;
    k.kind = kind;
    k.operands = std::move(operands);
    k.results = std::move(results);
    k.attrs = std::move(attrs);
    plan.kernels.push_back(std::move(k));
    return static_cast<uint32_t>(plan.kernels.size() - 1);
  }

  /// Makes an entry point of the kernels added since the previous one; its
  /// bindings are the inputs, parameters and outputs those kernels touch, in
  /// tensor-id order, and its arena covers every temporary so far.
  void entry(const std::string &name) {
    plan::EntryPoint e;
    e.name = name;
    e.arenaBytes = plan::alignUp(arenaTop);
    for (uint32_t k = firstKernel; k < plan.kernels.size(); ++k) {
      e.kernels.push_back(k);
      for (const auto *ids : {&plan.kernels[k].operands, &plan.kernels[k].results})
        for (uint32_t id : *ids) {
          switch (plan.tensors[id].storage) {
          case Storage::Input:
            addOnce(e.inputs, id);
            break;
          case Storage::Parameter:
            addOnce(e.params, id);
            break;
          case Storage::Output:
            addOnce(e.outputs, id);
            break;
          default:
            break;
          }
        }
    }
    for (auto *list : {&e.inputs, &e.params, &e.outputs})
      std::sort(list->begin(), list->end());
    for (uint32_t id : e.outputs)
      e.outputRoles.push_back(id < roles.size() ? roles[id] : plan::OutputRole::None);
    plan.entries.push_back(std::move(e));
    firstKernel = static_cast<uint32_t>(plan.kernels.size());
  }

  std::vector<uint8_t> bytes() const { return plan::serializePlan(plan); }

  plan::Plan plan;

private:
  uint32_t add(const std::string &name, DType dtype, Shape shape, Storage storage,
               uint64_t offset) {
    plan::Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.storage = storage;
    t.shape = std::move(shape);
    t.offset = offset;
    plan.tensors.push_back(std::move(t));
    return static_cast<uint32_t>(plan.tensors.size() - 1);
  }
  static void addOnce(std::vector<uint32_t> &list, uint32_t id) {
    if (std::find(list.begin(), list.end(), id) == list.end())
      list.push_back(id);
  }

  uint64_t arenaTop = 0;
  uint32_t firstKernel = 0;
  std::vector<plan::OutputRole> roles; // per tensor id (outputs only)
};

} // namespace test
} // namespace mptrt

#endif // MPTRT_TEST_PLANBUILDER_H
