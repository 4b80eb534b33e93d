//===- KernelView.h - a plan kernel with its tensors' types ------*- C++ -*-===//
//
// What a kernel's decoder sees when the plan is loaded: the plan record,
// the types of its operands and results, and checked attribute accessors.
// Every accessor fails with a message naming the attribute; `allowOnly`
// rejects attributes a kernel kind does not know (catching misspellings in
// the compiler's lowering).
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_OPS_KERNELVIEW_H
#define MPTRT_SRC_OPS_KERNELVIEW_H

#include "Status.h"
#include "TensorDesc.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

class KernelView {
public:
  KernelView(const plan::Kernel &kernel, std::vector<const TensorDesc *> operands,
             std::vector<const TensorDesc *> results)
      : kernel(kernel), operands(std::move(operands)), results(std::move(results)) {}

  const std::string &kind() const { return kernel.kind; }
  size_t numOperands() const { return operands.size(); }
  size_t numResults() const { return results.size(); }
  const TensorDesc &operand(size_t i) const { return *operands[i]; }
  const TensorDesc &result(size_t i) const { return *results[i]; }

  /// Fails unless minOps <= #operands <= maxOps and the same for results.
  Status expectCounts(size_t minOps, size_t maxOps, size_t minRes, size_t maxRes) const;
  /// Fails if an attribute outside `names` is present.
  Status allowOnly(std::initializer_list<const char *> names) const;
  /// Fails on an attribute that KernelSchema.def does not list for this kind,
  /// and on a string attribute whose value is not one of its MPTRT_VALUES.
  Status allowSchemaAttributes() const;

  bool has(const char *name) const { return kernel.findAttr(name) != nullptr; }
  const std::vector<plan::Attribute> &attributes() const { return kernel.attrs; }
  Status getInt(const char *name, int64_t defaultValue, int64_t *out) const;
  Status getRequiredInt(const char *name, int64_t *out) const;
  /// A boolean is an int attribute holding 0 or 1.
  Status getBool(const char *name, bool defaultValue, bool *out) const;
  /// Float attributes also accept an int value.
  Status getFloat(const char *name, double defaultValue, double *out) const;
  Status getInts(const char *name, std::vector<int64_t> defaultValue,
                 std::vector<int64_t> *out) const;
  Status getRequiredInts(const char *name, std::vector<int64_t> *out) const;
  Status getString(const char *name, const std::string &defaultValue, std::string *out) const;

  Status error(const std::string &message) const { return Status::error(message); }

private:
  /// Fails when KernelSchema.def gives `name` a default other than the
  /// decoder's (a number, or `string` for String attributes).
  Status checkDefault(const char *name, double number, const char *string) const;
  const plan::Attribute *find(const char *name, plan::AttrType type, bool required,
                              Status *status) const;

  const plan::Kernel &kernel;
  std::vector<const TensorDesc *> operands;
  std::vector<const TensorDesc *> results;
};

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_OPS_KERNELVIEW_H
