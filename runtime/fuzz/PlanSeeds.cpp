//===- PlanSeeds.cpp - write the plan fuzzer's seed corpus ---------------===//
//
//   mptrt-plan-fuzz-seeds <dir>
//
// Writes well-formed plans into <dir> for the plan-load fuzzer to start
// from: the two-layer MLP of the runtime's tests, and one plan per kernel
// kind of KernelSchema.def (the fewest operands and results it takes, every
// tensor f32 [4, 4], every required attribute set), so that mutations start
// next to each kernel's decoder. Not every seed prepares (a kind may want
// other shapes or an attribute value from a set); each still reaches its
// kind's checks.
//
//===----------------------------------------------------------------------===//
#include "MlpPlan.h"
#include "PlanBuilder.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using mptrt::plan::AttrType;
using mptrt::plan::DType;

namespace {

struct KindSeed {
  std::string kind;
  size_t operands, results;
  std::vector<mptrt::plan::Attribute> attrs;
};

enum SchemaType { Int, Float, IntList, String, Bool };
enum Required { REQUIRED, OPTIONAL };

std::vector<KindSeed> schemaSeeds() {
  std::vector<KindSeed> seeds;
#define MPTRT_KERNEL(kind, family, minOperands, maxOperands, minResults, maxResults)               \
  seeds.push_back({#kind, minOperands, minResults, {}});
#define MPTRT_ATTR(kind, name, type, required) addAttr(seeds.back(), #name, type, required);
  auto addAttr = [](KindSeed &seed, const char *name, SchemaType type, Required required) {
    if (required != REQUIRED)
      return;
    mptrt::plan::Attribute a;
    a.name = name;
    switch (type) {
    case Int:
      a.type = AttrType::Int;
      a.i = 1;
      break;
    case Bool:
      a.type = AttrType::Int;
      a.i = 0;
      break;
    case Float:
      a.type = AttrType::Float;
      a.f = 0.5;
      break;
    case IntList:
      a.type = AttrType::IntList;
      a.ints = {1};
      break;
    case String:
      a.type = AttrType::String;
      break;
    }
    seed.attrs.push_back(a);
  };
#include "mptrt/KernelSchema.def"
  return seeds;
}

bool write(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <dir>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  int written = 0;
  if (!write(dir + "/mlp.mptp",
             mptrt::plan::serializePlan(mptrt::test::Mlp(2, 4, 8, 3, 1).plan()))) {
    std::fprintf(stderr, "%s: cannot write into '%s'\n", argv[0], dir.c_str());
    return 1;
  }
  ++written;
  for (const KindSeed &seed : schemaSeeds()) {
    mptrt::test::PlanBuilder b;
    std::vector<uint32_t> operands, results;
    for (size_t i = 0; i < seed.operands; ++i)
      operands.push_back(b.input("x" + std::to_string(i), DType::F32, {4, 4}));
    for (size_t i = 0; i < seed.results; ++i)
      results.push_back(b.output("y" + std::to_string(i), DType::F32, {4, 4}));
    b.kernel(seed.kind, operands, results, seed.attrs);
    b.entry("run");
    if (!write(dir + "/" + seed.kind + ".mptp", b.bytes())) {
      std::fprintf(stderr, "%s: cannot write '%s/%s.mptp'\n", argv[0], dir.c_str(),
                   seed.kind.c_str());
      return 1;
    }
    ++written;
  }
  std::printf("wrote %d seed plans into %s\n", written, dir.c_str());
  return 0;
}
