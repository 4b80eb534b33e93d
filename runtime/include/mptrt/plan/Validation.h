//===- Validation.h - MPT plan: what the structs must mean -*- C++ -*-===//
//
// verifyPlan checks what a plan's structs mean, independent of the kernel
// kinds: ids in range, storage kinds, arena and constant bounds, bindings.
// The runtime checks each kernel's operands and attributes when it prepares
// the kernel.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_PLAN_VALIDATION_H
#define MPTRT_PLAN_VALIDATION_H

#include "mptrt/plan/Layout.h"

namespace mptrt {
namespace plan {

//===----------------------------------------------------------------------===//
// Verification of the structs.
//===----------------------------------------------------------------------===//

namespace detail {

inline bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

/// `name` quoted for a message: control bytes (a NUL among them) written
/// as \xNN, and a name longer than 64 bytes cut there and followed by its
/// length, so that a hostile 1 MiB name does not become a 1 MiB message.
inline std::string quoteName(const std::string &name) {
  constexpr size_t kShown = 64;
  std::string s = "'";
  for (size_t i = 0; i < name.size() && i < kShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) {
      const char *hex = "0123456789abcdef";
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    } else {
      s += static_cast<char>(c);
    }
  }
  s += name.size() > kShown ? "...' (" + std::to_string(name.size()) + " bytes)" : "'";
  return s;
}

inline std::string tensorLabel(const Plan &plan, uint32_t id) {
  std::string s = "tensor " + std::to_string(id);
  if (id < plan.tensors.size() && !plan.tensors[id].name.empty())
    s += " " + quoteName(plan.tensors[id].name);
  return s;
}

/// Why `name` cannot name a tensor or an entry point, or "" when it can:
/// the C API and the tools pass names as C strings, so a NUL byte would cut
/// the name short, and the format caps a string at kMaxStringBytes.
inline std::string badName(const std::string &name) {
  if (name.size() > kMaxStringBytes)
    return "name longer than the plan format's " + std::to_string(kMaxStringBytes) + " bytes";
  if (name.find('\0') != std::string::npos)
    return "name holds a NUL byte, which the C API and the tools cannot pass";
  return "";
}

/// True if `ids` holds a value twice.
inline bool hasDuplicate(const std::vector<uint32_t> &ids) {
  std::vector<uint32_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

} // namespace detail

/// Checks everything about `plan` that does not depend on kernel kinds.
/// On failure returns false and, if `error` is given, a message naming the
/// offending tensor, kernel or entry point.
inline bool verifyPlan(const Plan &plan, std::string *error) {
  using detail::fail;
  using detail::tensorLabel;
  const uint64_t numTensors = plan.tensors.size();
  if (numTensors > UINT32_MAX || plan.kernels.size() > UINT32_MAX ||
      plan.entries.size() > UINT32_MAX)
    return fail(error, "plan: too many tensors, kernels or entry points");
  if (plan.constants.size() >= kMaxBytes)
    return fail(error, "plan: constants blob too large");

  std::vector<uint64_t> bytes(numTensors, 0);
  for (uint32_t id = 0; id < numTensors; ++id) {
    const Tensor &t = plan.tensors[id];
    const std::string label = tensorLabel(plan, id);
    if (!isValidDType(static_cast<uint8_t>(t.dtype)))
      return fail(error,
                  label + ": invalid dtype code " + std::to_string(static_cast<int>(t.dtype)));
    if (!isValidStorage(static_cast<uint8_t>(t.storage)))
      return fail(error,
                  label + ": invalid storage code " + std::to_string(static_cast<int>(t.storage)));
    if (t.shape.size() > kMaxRank)
      return fail(error, label + ": rank " + std::to_string(t.shape.size()) + " exceeds " +
                             std::to_string(kMaxRank));
    for (int64_t d : t.shape)
      if (d < 0)
        return fail(error, label + ": negative dimension " + std::to_string(d));
    if (!tensorByteSize(t, &bytes[id]))
      return fail(error, label + ": byte size overflows 2^48" +
                             (std::count(t.shape.begin(), t.shape.end(), 0)
                                  ? " (counting its nonzero dimensions only)"
                                  : ""));
    if (std::string why = detail::badName(t.name); !why.empty())
      return fail(error, label + ": " + why);
    if ((t.hasInitializer || t.zeroInitialized) && t.storage != Storage::Parameter)
      return fail(error, label + ": only parameters may have an initializer");
    if (t.hasInitializer && t.zeroInitialized)
      return fail(error, label + ": has both an initial value and the zero flag");
    const bool usesBlob = t.storage == Storage::Constant || t.hasInitializer;
    const bool usesOffset = usesBlob || t.storage == Storage::Arena;
    if (!usesOffset && t.offset != 0)
      return fail(error, label + ": " + storageName(t.storage) + " tensor must have offset 0");
    if (usesOffset && t.offset % kAlignment != 0)
      return fail(error, label + ": offset " + std::to_string(t.offset) + " is not a multiple of " +
                             std::to_string(kAlignment));
    if (usesOffset && t.offset >= kMaxBytes)
      return fail(error, label + ": offset " + std::to_string(t.offset) + " exceeds 2^48");
    if (usesBlob && t.offset + bytes[id] > plan.constants.size())
      return fail(error, label + ": bytes [" + std::to_string(t.offset) + ", " +
                             std::to_string(t.offset + bytes[id]) +
                             ") lie outside the constants blob of " +
                             std::to_string(plan.constants.size()) + " bytes");
    if (t.storage != Storage::Arena && t.storage != Storage::Constant && t.name.empty())
      return fail(error, label + ": " + storageName(t.storage) + " tensors need a name");
  }
  // Parameter, input and output names are unique within their storage kind.
  for (uint32_t a = 0; a < numTensors; ++a) {
    const Tensor &ta = plan.tensors[a];
    if (ta.storage == Storage::Arena || ta.storage == Storage::Constant)
      continue;
    for (uint32_t b = a + 1; b < numTensors; ++b)
      if (plan.tensors[b].storage == ta.storage && plan.tensors[b].name == ta.name)
        return fail(error, std::string("plan: two ") + storageName(ta.storage) +
                               " tensors are named " + detail::quoteName(ta.name) + " (" +
                               std::to_string(a) + " and " + std::to_string(b) + ")");
  }

  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const Kernel &kernel = plan.kernels[k];
    const std::string label = "kernel " + std::to_string(k) + " (" + kernel.kind + ")";
    if (kernel.kind.empty() || kernel.kind.size() > kMaxStringBytes)
      return fail(error, "kernel " + std::to_string(k) + ": empty or overlong kind");
    for (uint32_t id : kernel.operands)
      if (id >= numTensors)
        return fail(error, label + ": operand id " + std::to_string(id) + " out of range (" +
                               std::to_string(numTensors) + " tensors)");
    for (uint32_t id : kernel.results) {
      if (id >= numTensors)
        return fail(error, label + ": result id " + std::to_string(id) + " out of range (" +
                               std::to_string(numTensors) + " tensors)");
      Storage s = plan.tensors[id].storage;
      if (s == Storage::Input || s == Storage::Constant)
        return fail(error, label + ": writes " + tensorLabel(plan, id) + ", a " + storageName(s) +
                               " tensor, which is read-only");
    }
    if (detail::hasDuplicate(kernel.results))
      return fail(error, label + ": a tensor appears twice among the results");
    for (size_t a = 0; a < kernel.attrs.size(); ++a) {
      const Attribute &attr = kernel.attrs[a];
      if (attr.name.empty() || attr.name.size() > kMaxStringBytes)
        return fail(error,
                    label + ": attribute " + std::to_string(a) + " has an empty or overlong name");
      if (!isValidAttrType(static_cast<uint8_t>(attr.type)))
        return fail(error, label + ": attribute '" + attr.name + "' has invalid type code " +
                               std::to_string(static_cast<int>(attr.type)));
      if (attr.s.size() > kMaxStringBytes)
        return fail(error, label + ": attribute '" + attr.name + "' too long");
      for (size_t b = a + 1; b < kernel.attrs.size(); ++b)
        if (kernel.attrs[b].name == attr.name)
          return fail(error, label + ": attribute '" + attr.name + "' given twice");
    }
  }

  for (size_t e = 0; e < plan.entries.size(); ++e) {
    const EntryPoint &entry = plan.entries[e];
    const std::string label =
        "entry point " + std::to_string(e) + " " + detail::quoteName(entry.name);
    if (entry.name.empty())
      return fail(error, "entry point " + std::to_string(e) + ": empty name");
    if (std::string why = detail::badName(entry.name); !why.empty())
      return fail(error, label + ": " + why);
    for (size_t o = e + 1; o < plan.entries.size(); ++o)
      if (plan.entries[o].name == entry.name)
        return fail(error, "plan: two entry points are named " + detail::quoteName(entry.name));
    if (entry.arenaBytes % kAlignment != 0 || entry.arenaBytes >= kMaxBytes)
      return fail(error, label + ": arena size " + std::to_string(entry.arenaBytes) +
                             " is not a multiple of 64 below 2^48");
    struct Binding {
      const std::vector<uint32_t> *ids;
      Storage storage;
      const char *what;
    };
    const Binding bindings[] = {{&entry.inputs, Storage::Input, "input"},
                                {&entry.params, Storage::Parameter, "parameter"},
                                {&entry.outputs, Storage::Output, "output"}};
    for (const Binding &b : bindings) {
      for (uint32_t id : *b.ids) {
        if (id >= numTensors)
          return fail(error, label + ": " + b.what + " id " + std::to_string(id) + " out of range");
        if (plan.tensors[id].storage != b.storage)
          return fail(error, label + ": " + b.what + " " + tensorLabel(plan, id) + " has storage " +
                                 storageName(plan.tensors[id].storage));
      }
      if (detail::hasDuplicate(*b.ids))
        return fail(error, label + ": lists the same " + std::string(b.what) + " twice");
    }
    if (!entry.outputRoles.empty() && entry.outputRoles.size() != entry.outputs.size())
      return fail(error, label + ": " + std::to_string(entry.outputRoles.size()) +
                             " output roles for " + std::to_string(entry.outputs.size()) +
                             " outputs");
    for (size_t o = 0; o < entry.outputRoles.size(); ++o) {
      const OutputRole role = entry.outputRoles[o];
      if (!isValidOutputRole(static_cast<uint8_t>(role)))
        return fail(error, label + ": output " + tensorLabel(plan, entry.outputs[o]) +
                               ": invalid role code " + std::to_string(static_cast<int>(role)));
      if (role == OutputRole::None || role == OutputRole::Gradient)
        continue;
      for (size_t p = 0; p < o; ++p)
        if (entry.outputRoles[p] == role)
          return fail(error, label + ": outputs " + tensorLabel(plan, entry.outputs[p]) + " and " +
                                 tensorLabel(plan, entry.outputs[o]) + " both have the role " +
                                 abi::roleName(role));
    }
    auto listed = [](const std::vector<uint32_t> &ids, uint32_t id) {
      for (uint32_t x : ids)
        if (x == id)
          return true;
      return false;
    };
    for (uint32_t k : entry.kernels) {
      if (k >= plan.kernels.size())
        return fail(error, label + ": kernel id " + std::to_string(k) + " out of range (" +
                               std::to_string(plan.kernels.size()) + " kernels)");
      const Kernel &kernel = plan.kernels[k];
      for (int side = 0; side < 2; ++side) {
        for (uint32_t id : side == 0 ? kernel.operands : kernel.results) {
          const Tensor &t = plan.tensors[id];
          const std::string where = label + ", kernel " + std::to_string(k) + " (" + kernel.kind +
                                    "), " + tensorLabel(plan, id);
          switch (t.storage) {
          case Storage::Arena:
            if (t.offset + bytes[id] > entry.arenaBytes)
              return fail(error, where + ": bytes [" + std::to_string(t.offset) + ", " +
                                     std::to_string(t.offset + bytes[id]) +
                                     ") exceed the arena of " + std::to_string(entry.arenaBytes) +
                                     " bytes");
            break;
          case Storage::Input:
            if (!listed(entry.inputs, id))
              return fail(error, where + ": not among the entry point's inputs");
            break;
          case Storage::Parameter:
            if (!listed(entry.params, id))
              return fail(error, where + ": not among the entry point's parameters");
            break;
          case Storage::Output:
            if (!listed(entry.outputs, id))
              return fail(error, where + ": not among the entry point's outputs");
            break;
          case Storage::Constant:
            break;
          }
        }
      }
    }
  }
  return true;
}

} // namespace plan
} // namespace mptrt

#endif // MPTRT_PLAN_VALIDATION_H
