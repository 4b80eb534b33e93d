// KernelSchema.def and the CPU backend's kind table name the same kinds, in
// both directions, and the table's count ranges are well formed.

#include "Backend.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

namespace {

struct SchemaKind {
  const char *name;
  size_t minOperands, maxOperands, minResults, maxResults;
};

const SchemaKind kSchema[] = {
#define MPTRT_KERNEL(n, a0, a1, r0, r1) {#n, a0, a1, r0, r1},
#define MPTRT_ATTR(kind, n, type, required)
#include "mptrt/KernelSchema.def"
};

TEST(KernelSchema, EverySchemaKindHasACpuKernel) {
  auto backend = mptrt::rt::createCpuBackend();
  for (const SchemaKind &k : kSchema)
    EXPECT_TRUE(backend->hasKernel(k.name)) << "schema kind '" << k.name << "' has no CPU kernel";
}

TEST(KernelSchema, EveryCpuKernelIsInTheSchema) {
  std::set<std::string> schema;
  for (const SchemaKind &k : kSchema)
    EXPECT_TRUE(schema.insert(k.name).second) << "kind '" << k.name << "' is in the schema twice";
  auto backend = mptrt::rt::createCpuBackend();
  for (const std::string &kind : backend->kernelKinds())
    EXPECT_TRUE(schema.count(kind)) << "CPU kernel kind '" << kind << "' is not in KernelSchema.def";
}

TEST(KernelSchema, CountRangesAreOrdered) {
  for (const SchemaKind &k : kSchema) {
    EXPECT_LE(k.minOperands, k.maxOperands) << k.name;
    EXPECT_LE(k.minResults, k.maxResults) << k.name;
    EXPECT_GE(k.minResults, 1u) << k.name;
  }
}

} // namespace
