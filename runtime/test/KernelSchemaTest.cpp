// KernelSchema.def and the CPU backend's kind table name the same kinds, in
// both directions, the table's count ranges are well formed, and the
// allowed strings it lists are enforced at load. (The compiler side,
// mpt-mptrt-schema-test, checks the same table against the mptrt dialect.)

#include "Backend.h"
#include "KernelTestUtil.h"
#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>
#include <set>
#include <string>

namespace {

struct SchemaKind {
  const char *name;
  size_t minOperands, maxOperands, minResults, maxResults;
};

const SchemaKind kSchema[] = {
#define MPTRT_KERNEL(n, family, a0, a1, r0, r1) {#n, a0, a1, r0, r1},
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
    EXPECT_TRUE(schema.count(kind))
        << "CPU kernel kind '" << kind << "' is not in KernelSchema.def";
}

TEST(KernelSchema, CountRangesAreOrdered) {
  for (const SchemaKind &k : kSchema) {
    EXPECT_LE(k.minOperands, k.maxOperands) << k.name;
    EXPECT_LE(k.minResults, k.maxResults) << k.name;
    EXPECT_GE(k.minResults, 1u) << k.name;
  }
}

struct SchemaValues {
  const char *kind, *name, *allowed;
};

const SchemaValues kValues[] = {
#define MPTRT_KERNEL(n, family, a0, a1, r0, r1)
#define MPTRT_ATTR(kind, n, type, required)
#define MPTRT_VALUES(kind, n, allowed) {#kind, #n, allowed},
#include "mptrt/KernelSchema.def"
};

// Tests that a string attribute outside its MPTRT_VALUES is rejected when
// the plan is loaded, from the table, before the kind's decoder looks at
// operands (so one f32 operand and result serve every kind).
TEST(KernelSchema, StringValuesAreCheckedAtLoad) {
  ASSERT_GT(sizeof(kValues) / sizeof(kValues[0]), 0u);
  for (const SchemaValues &v : kValues) {
    mptrt::test::HostTensor t(mptrt::plan::DType::F32, {1});
    mptrt::test::KernelRun r = mptrt::test::runKernel(
        v.kind, {t}, {t}, {mptrt::plan::Attribute::makeString(v.name, "no_such_value")});
    ASSERT_FALSE(r.ok) << v.kind << "." << v.name;
    EXPECT_NE(r.error.find(std::string("attribute '") + v.name + "' must be"), std::string::npos)
        << v.kind << ": " << r.error;
    EXPECT_NE(r.error.find("\"no_such_value\""), std::string::npos) << r.error;
  }
}

} // namespace
