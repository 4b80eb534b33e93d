//===- MPTRTSchemaTest.cpp - the mptrt dialect against KernelSchema.def ---===//
//
// The compiler's execution dialect and the runtime's kernel table describe
// one contract. This test walks both and fails on any difference, in either
// direction: a kind without an op or an op without a kind, different operand
// or result counts, attribute names, types, required-ness or enum cases.
//
//===----------------------------------------------------------------------===//
#include "mpt/Dialect/MPT/IR/MPTDialect.h"
#include "mpt/Dialect/MPTRT/IR/MPTRTOps.h"

#include "mlir/IR/BuiltinAttributes.h"

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

/// An MPTRT_DEFAULT value: a number (Int, Float, Bool) or a string.
struct SchemaDefault {
  bool present = false, isString = false;
  double number = 0;
  std::string string;
  SchemaDefault() = default;
  SchemaDefault(double v) : present(true), number(v) {}
  SchemaDefault(const char *v) : present(true), isString(true), string(v) {}
};

struct SchemaAttr {
  KernelAttrType type;
  bool required;
  std::string values; // '|'-separated, String attributes only
  SchemaDefault defaultValue;
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
#define MPTRT_KERNEL(kind, family, a0, a1, r0, r1)                             \
  t[#kind] = SchemaKind{a0, a1, r0, r1, {}};
#define MPTRT_ATTR(kind, name, type, required)                                 \
  t[#kind].attrs[#name] = SchemaAttr{type, required, "", {}};
#define MPTRT_DEFAULT(kind, name, value)                                       \
  t[#kind].attrs[#name].defaultValue = SchemaDefault(value);
#define MPTRT_VALUES(kind, name, allowed)                                      \
  t[#kind].attrs[#name].values = allowed;
#include "mptrt/KernelSchema.def"
    return t;
  }();
  return table;
}

const char *typeName(KernelAttrType t) {
  switch (t) {
  case KernelAttrType::Int:
    return "Int";
  case KernelAttrType::Float:
    return "Float";
  case KernelAttrType::IntList:
    return "IntList";
  case KernelAttrType::String:
    return "String";
  case KernelAttrType::Bool:
    return "Bool";
  case KernelAttrType::Unsupported:
    return "Unsupported";
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
}

TEST_F(MPTRTSchema, EveryKernelOpIsAKind) {
  for (const auto &[mnemonic, _] : kernels)
    EXPECT_TRUE(schema().count(mnemonic))
        << "mptrt." << mnemonic << " is not a kind of KernelSchema.def";
  // The only ops that are not kernels: the arena, constants and views (no
  // kernel runs).
  EXPECT_EQ(nonKernels, (std::set<std::string>{"arena", "constant", "view"}));
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

// The compiler leaves an optional kernel attribute unset when the mpt op
// has it at its default, or writes the mpt default; either way the kernel
// must compute what the mpt op means, so the mpt dialect's default-valued
// attributes must equal the schema's defaults (f32 attributes after
// rounding the schema's value to f32).
TEST(MPTRTSchemaDefaults, MptDefaultsAgree) {
  MLIRContext context;
  context.loadDialect<mpt::MPTDialect>();
  int compared = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "mpt")
      continue;
    auto kind = schema().find(name.stripDialect().str());
    if (kind == schema().end())
      continue;
    // A bare instance holds the default-valued attributes' defaults.
    Operation *op = Operation::create(UnknownLoc::get(&context), name, {}, {},
                                      NamedAttrList(), nullptr, {}, 0);
    SmallVector<NamedAttribute> defaults;
    for (StringAttr attrName : name.getAttributeNames())
      if (std::optional<Attribute> value =
              op->getInherentAttr(attrName.getValue()))
        if (*value)
          defaults.emplace_back(attrName, *value);
    op->destroy();
    for (NamedAttribute attr : defaults) {
      auto row = kind->second.attrs.find(attr.getName().str());
      if (row == kind->second.attrs.end() || !row->second.defaultValue.present)
        continue;
      const SchemaDefault &d = row->second.defaultValue;
      std::string what = kind->first + "." + attr.getName().str();
      Attribute value = attr.getValue();
      ++compared;
      if (auto s = dyn_cast<StringAttr>(value)) {
        EXPECT_TRUE(d.isString) << what;
        EXPECT_EQ(s.getValue().str(), d.string) << what;
      } else if (auto b = dyn_cast<BoolAttr>(value)) {
        EXPECT_EQ(b.getValue() ? 1.0 : 0.0, d.number) << what;
      } else if (auto i = dyn_cast<IntegerAttr>(value)) {
        EXPECT_EQ(static_cast<double>(i.getValue().getSExtValue()), d.number)
            << what;
      } else if (auto f = dyn_cast<FloatAttr>(value)) {
        double expected =
            f.getType().isF32()
                ? static_cast<double>(static_cast<float>(d.number))
                : d.number;
        EXPECT_EQ(f.getValueAsDouble(), expected) << what;
      } else {
        --compared;
      }
    }
  }
  EXPECT_GT(compared, 30);
}

} // namespace
