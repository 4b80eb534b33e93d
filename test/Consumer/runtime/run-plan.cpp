// Writes a one-kernel plan (y = x + b) with the installed plan-format
// headers, loads it through the C++ API, runs it and checks the result.
#include "mptrt.hpp"
#include "mptrt/PlanFormat.h"

#include <cstdio>
#include <vector>

namespace plan = mptrt::plan;

int main() {
  plan::Plan p;
  auto tensor = [&](const char *name, plan::Storage storage, uint64_t offset) {
    plan::Tensor t;
    t.name = name;
    t.dtype = plan::DType::F32;
    t.shape = {4};
    t.storage = storage;
    t.offset = offset;
    p.tensors.push_back(t);
    return static_cast<uint32_t>(p.tensors.size() - 1);
  };
  const float b[4] = {1, 2, 3, 4};
  uint32_t x = tensor("x", plan::Storage::Input, 0);
  uint32_t bias = tensor("b", plan::Storage::Parameter,
                         plan::appendConstant(p, b, sizeof(b)));
  p.tensors[bias].hasInitializer = true;
  uint32_t y = tensor("y", plan::Storage::Output, 0);
  plan::Kernel k;
  k.kind = "add";
  k.operands = {x, bias};
  k.results = {y};
  p.kernels.push_back(k);
  plan::EntryPoint e;
  e.name = "forward";
  e.kernels = {0};
  e.inputs = {x};
  e.params = {bias};
  e.outputs = {y};
  p.entries.push_back(e);
  std::string error;
  if (!plan::verifyPlan(p, &error)) {
    std::fprintf(stderr, "plan: %s\n", error.c_str());
    return 1;
  }
  std::vector<uint8_t> bytes = plan::serializePlan(p);

  mptrt::Model model;
  if (!model.loadMemory(bytes.data(), bytes.size())) {
    std::fprintf(stderr, "load: %s\n", mptrt::lastError().c_str());
    return 1;
  }
  std::vector<float> in = {10, 20, 30, 40}, out;
  if (!model.bindInput("x", MPTRT_F32, {4}, in) || !model.run("forward") ||
      !model.readOutput("y", &out)) {
    std::fprintf(stderr, "run: %s\n", mptrt::lastError().c_str());
    return 1;
  }
  std::printf("y = %g %g %g %g on %s\n", out[0], out[1], out[2], out[3],
              model.backend().c_str());
  return out == std::vector<float>{11, 22, 33, 44} ? 0 : 1;
}
