//===- MPTRTSchemaTest.cpp - the mptrt dialect against KernelSchema.def ---===//
//
// The compiler's execution dialect and the runtime's kernel table describe
// one contract. This test walks both and fails on any difference, in either
// direction: a kind without an op or an op without a kind, different operand
// or result counts, attribute names, types, required-ness or enum cases.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

using namespace mlir;
using mpt::rt::KernelAttrType;

namespace {

struct SchemaAttr {
  KernelAttrType type;
  bool required;
  std::string values; // '|'-separated, String attributes only
};

struct SchemaKind {
  size_t minOperands, maxOperands, minResults, maxResults;
  std::map<std::string, SchemaAttr> attrs;
};

constexpr KernelAttrType Int = KernelAttrType::Int;
constexpr KernelAttrType Float = KernelAttrType::Float;
constexpr KernelAttrType IntList = KernelAttrType::IntList;
constexpr KernelAttrType String = KernelAttrType::String;
constexpr KernelAttrType Bool = KernelAttrType::Bool;
constexpr bool REQUIRED = true;
constexpr bool OPTIONAL = false;

const std::map<std::string, SchemaKind> &schema() {
  static const std::map<std::string, SchemaKind> table = [] {
    std::map<std::string, SchemaKind> t;
#define MPTRT_KERNEL(kind, a0, a1, r0, r1) t[#kind] = SchemaKind{a0, a1, r0, r1, {}};
#define MPTRT_ATTR(kind, name, type, required) t[#kind].attrs[#name] = SchemaAttr{type, required, ""};
#define MPTRT_VALUES(kind, name, allowed) t[#kind].attrs[#name].values = allowed;
#include "mptrt/KernelSchema.def"
    return t;
  }();
  return table;
}

const char *typeName(KernelAttrType t) {
  switch (t) {
  case KernelAttrType::Int: return "Int";
  case KernelAttrType::Float: return "Float";
  case KernelAttrType::IntList: return "IntList";
  case KernelAttrType::String: return "String";
  case KernelAttrType::Bool: return "Bool";
  case KernelAttrType::Unsupported: return "Unsupported";
  }
  return "?";
}

size_t bound(int max) { return max < 0 ? SIZE_MAX : static_cast<size_t>(max); }

/// Every mptrt op, by mnemonic: whether it is a kernel, and if so its
/// interface's view of itself.
struct DialectKind {
  size_t minOperands, maxOperands, minResults, maxResults;
  std::vector<mpt::rt::KernelAttrInfo> attrs;
};

class MPTRTSchema : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<mpt::rt::MPTRTDialect>();
    for (RegisteredOperationName name : context.getRegisteredOperations()) {
      if (name.getDialectNamespace() != "mptrt")
        continue;
      std::string mnemonic = name.stripDialect().str();
      if (!name.hasInterface<mpt::rt::KernelOpInterface>()) {
        nonKernels.insert(mnemonic);
        continue;
      }
      // An empty instance is enough to ask the interface: everything it
      // reports is static, from the op's ODS definition.
      Operation *op = Operation::create(UnknownLoc::get(&context), name, {}, {},
                                        NamedAttrList(), nullptr, {}, 0);
      auto kernel = cast<mpt::rt::KernelOpInterface>(op);
      EXPECT_EQ(kernel.getKernelKind().str(), mnemonic);
      DialectKind k{kernel.getMinOperands(), bound(kernel.getMaxOperands()),
                    kernel.getMinResults(), bound(kernel.getMaxResults()),
                    std::vector<mpt::rt::KernelAttrInfo>(
                        kernel.getKernelAttrInfo().begin(),
                        kernel.getKernelAttrInfo().end())};
      kernels.emplace(mnemonic, std::move(k));
      op->destroy();
    }
  }

  MLIRContext context;
  std::map<std::string, DialectKind> kernels;
  std::set<std::string> nonKernels;
};

TEST_F(MPTRTSchema, EveryKindHasExactlyOneOp) {
  for (const auto &[kind, _] : schema())
    EXPECT_TRUE(kernels.count(kind))
        << "kernel kind '" << kind << "' has no mptrt op";
  EXPECT_EQ(schema().size(), 82u) << "KernelSchema.def changed size; update this count";
}

TEST_F(MPTRTSchema, EveryKernelOpIsAKind) {
  for (const auto &[mnemonic, _] : kernels)
    EXPECT_TRUE(schema().count(mnemonic))
        << "mptrt." << mnemonic << " is not a kind of KernelSchema.def";
  // The only ops that are not kernels: constants and views (no kernel runs).
  EXPECT_EQ(nonKernels, (std::set<std::string>{"constant", "view"}));
}

TEST_F(MPTRTSchema, CountsAgree) {
  for (const auto &[mnemonic, k] : kernels) {
    auto it = schema().find(mnemonic);
    if (it == schema().end())
      continue;
    const SchemaKind &s = it->second;
    EXPECT_EQ(k.minOperands, s.minOperands) << mnemonic << ": fewest operands";
    EXPECT_EQ(k.maxOperands, s.maxOperands) << mnemonic << ": most operands";
    EXPECT_EQ(k.minResults, s.minResults) << mnemonic << ": fewest results";
    EXPECT_EQ(k.maxResults, s.maxResults) << mnemonic << ": most results";
  }
}

TEST_F(MPTRTSchema, AttributesAgree) {
  for (const auto &[mnemonic, k] : kernels) {
    auto it = schema().find(mnemonic);
    if (it == schema().end())
      continue;
    const SchemaKind &s = it->second;
    std::set<std::string> seen;
    for (const mpt::rt::KernelAttrInfo &a : k.attrs) {
      seen.insert(a.name);
      auto row = s.attrs.find(a.name);
      if (row == s.attrs.end()) {
        ADD_FAILURE() << "mptrt." << mnemonic << " has attribute '" << a.name
                      << "', which KernelSchema.def does not list";
        continue;
      }
      EXPECT_STREQ(typeName(a.type), typeName(row->second.type))
          << mnemonic << "." << a.name << ": type";
      EXPECT_EQ(a.required, row->second.required)
          << mnemonic << "." << a.name << ": required";
      EXPECT_EQ(std::string(a.allowed), row->second.values)
          << mnemonic << "." << a.name << ": allowed values (enum cases)";
    }
    for (const auto &[name, _] : s.attrs)
      EXPECT_TRUE(seen.count(name))
          << "KernelSchema.def lists " << mnemonic << "." << name
          << ", which mptrt." << mnemonic << " does not declare";
  }
}

} // namespace
