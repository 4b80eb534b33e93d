//===- KernelView.cpp - checked access to a kernel's attributes ----------===//
#include "ops/KernelView.h"

#include <cstring>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

namespace {
const char *typeName(plan::AttrType t) {
  switch (t) {
  case plan::AttrType::Int:
    return "int";
  case plan::AttrType::Float:
    return "float";
  case plan::AttrType::IntList:
    return "int list";
  case plan::AttrType::String:
    return "string";
  }
  return "invalid";
}

/// An MPTRT_DEFAULT row: a number (Int, Float, Bool) or a string.
struct SchemaDefault {
  const char *kind, *name;
  bool isString;
  double number;
  const char *string;
  SchemaDefault(const char *k, const char *n, double v)
      : kind(k), name(n), isString(false), number(v), string("") {}
  SchemaDefault(const char *k, const char *n, const char *v)
      : kind(k), name(n), isString(true), number(0), string(v) {}
};

const SchemaDefault *schemaDefault(const std::string &kind, const char *name) {
  static const SchemaDefault rows[] = {
#define MPTRT_KERNEL(kind, family, minOperands, maxOperands, minResults, maxResults)
#define MPTRT_ATTR(kind, name, type, required)
#define MPTRT_DEFAULT(kind, name, value) {#kind, #name, value},
#include "mptrt/KernelSchema.def"
  };
  for (const SchemaDefault &r : rows)
    if (kind == r.kind && std::strcmp(name, r.name) == 0)
      return &r;
  return nullptr;
}

std::string range(size_t lo, size_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
}
} // namespace

Status KernelView::expectCounts(size_t minOps, size_t maxOps, size_t minRes, size_t maxRes) const {
  if (operands.size() < minOps || operands.size() > maxOps)
    return error("expects " + range(minOps, maxOps) + " operands, got " +
                 std::to_string(operands.size()));
  if (results.size() < minRes || results.size() > maxRes)
    return error("expects " + range(minRes, maxRes) + " results, got " +
                 std::to_string(results.size()));
  return Status::ok();
}

Status KernelView::allowOnly(std::initializer_list<const char *> names) const {
  for (const plan::Attribute &a : kernel.attrs) {
    bool known = false;
    for (const char *n : names)
      known = known || a.name == n;
    if (!known)
      return error("unknown attribute '" + a.name + "'");
  }
  return Status::ok();
}

Status KernelView::allowSchemaAttributes() const {
  struct Row {
    const char *kind, *name;
  };
  static const Row rows[] = {
#define MPTRT_KERNEL(kind, family, minOperands, maxOperands, minResults, maxResults)
#define MPTRT_ATTR(kind, name, type, required) {#kind, #name},
#include "mptrt/KernelSchema.def"
  };
  // The strings a String attribute may hold, '|'-separated.
  struct Values {
    const char *kind, *name, *allowed;
  };
  static const Values values[] = {
#define MPTRT_KERNEL(kind, family, minOperands, maxOperands, minResults, maxResults)
#define MPTRT_ATTR(kind, name, type, required)
#define MPTRT_VALUES(kind, name, allowed) {#kind, #name, allowed},
#include "mptrt/KernelSchema.def"
  };
  for (const plan::Attribute &a : kernel.attrs) {
    bool known = false;
    for (const Row &r : rows)
      known = known || (kind() == r.kind && a.name == r.name);
    if (!known)
      return error("unknown attribute '" + a.name + "'");
    if (a.type != plan::AttrType::String)
      continue;
    for (const Values &v : values) {
      if (kind() != v.kind || a.name != v.name)
        continue;
      std::vector<std::string> cases;
      for (const char *p = v.allowed;;) {
        const char *bar = std::strchr(p, '|');
        cases.emplace_back(p, bar ? static_cast<size_t>(bar - p) : std::strlen(p));
        if (!bar)
          break;
        p = bar + 1;
      }
      bool allowed = false;
      for (const std::string &c : cases)
        allowed = allowed || a.s == c;
      if (allowed)
        continue;
      std::string list;
      if (cases.size() == 2) {
        list = "\"" + cases[0] + "\" or \"" + cases[1] + "\", not";
      } else {
        list = "one of ";
        for (size_t i = 0; i < cases.size(); ++i)
          list += (i ? ", " : "") + cases[i];
        list += "; not";
      }
      return error("attribute '" + a.name + "' must be " + list + " \"" + a.s + "\"");
    }
  }
  return Status::ok();
}

const plan::Attribute *KernelView::find(const char *name, plan::AttrType type, bool required,
                                        Status *status) const {
  const plan::Attribute *a = kernel.findAttr(name);
  if (!a) {
    if (required)
      *status = error(std::string("missing required attribute '") + name + "'");
    return nullptr;
  }
  bool ok = a->type == type || (type == plan::AttrType::Float && a->type == plan::AttrType::Int);
  if (!ok) {
    *status = error(std::string("attribute '") + name + "' must be " + typeName(type) + ", not " +
                    typeName(a->type));
    return nullptr;
  }
  return a;
}

Status KernelView::checkDefault(const char *name, double number, const char *string) const {
  const SchemaDefault *d = schemaDefault(kind(), name);
  if (!d || (d->isString ? string && std::strcmp(string, d->string) == 0
                         : !string && number == d->number))
    return Status::ok();
  return error(std::string("the decoder's default for attribute '") + name +
               "' differs from KernelSchema.def's");
}

Status KernelView::getInt(const char *name, int64_t defaultValue, int64_t *out) const {
  Status s;
  const plan::Attribute *a = find(name, plan::AttrType::Int, false, &s);
  if (!a)
    MPTRT_TRY(checkDefault(name, static_cast<double>(defaultValue), nullptr));
  *out = a ? a->i : defaultValue;
  return s;
}

Status KernelView::getRequiredInt(const char *name, int64_t *out) const {
  Status s;
  const plan::Attribute *a = find(name, plan::AttrType::Int, true, &s);
  if (a)
    *out = a->i;
  return s;
}

Status KernelView::getBool(const char *name, bool defaultValue, bool *out) const {
  int64_t v;
  MPTRT_TRY(getInt(name, defaultValue ? 1 : 0, &v));
  if (v != 0 && v != 1)
    return error(std::string("attribute '") + name + "' must be 0 or 1, got " + std::to_string(v));
  *out = v == 1;
  return Status::ok();
}

Status KernelView::getFloat(const char *name, double defaultValue, double *out) const {
  Status s;
  const plan::Attribute *a = find(name, plan::AttrType::Float, false, &s);
  if (!a)
    MPTRT_TRY(checkDefault(name, defaultValue, nullptr));
  *out = !a ? defaultValue : a->type == plan::AttrType::Int ? static_cast<double>(a->i) : a->f;
  return s;
}

Status KernelView::getInts(const char *name, std::vector<int64_t> defaultValue,
                           std::vector<int64_t> *out) const {
  Status s;
  const plan::Attribute *a = find(name, plan::AttrType::IntList, false, &s);
  *out = a ? a->ints : std::move(defaultValue);
  return s;
}

Status KernelView::getRequiredInts(const char *name, std::vector<int64_t> *out) const {
  Status s;
  const plan::Attribute *a = find(name, plan::AttrType::IntList, true, &s);
  if (a)
    *out = a->ints;
  return s;
}

Status KernelView::getString(const char *name, const std::string &defaultValue,
                             std::string *out) const {
  Status s;
  const plan::Attribute *a = find(name, plan::AttrType::String, false, &s);
  if (!a)
    MPTRT_TRY(checkDefault(name, 0, defaultValue.c_str()));
  *out = a ? a->s : defaultValue;
  return s;
}

} // namespace rt
} // namespace mptrt
