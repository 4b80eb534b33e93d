//===- KindTable.h - a backend's kernel kinds and prepare functions -*- C++ -*-===//
//
// Every backend's kind table is KernelSchema.def: each kind is prepared by
// its family's prepare<Family> function, which each backend defines in its
// own namespace with its own signature. A backend writes
//
//   const KindEntry<PrepareFn> kKinds[] = {
//   #define MPTRT_KERNEL(kind, family, ...) {#kind, prepare##family},
//   #define MPTRT_ATTR(kind, name, type, required)
//   #include "mptrt/KernelSchema.def"
//   };
//
// and looks kinds up with the functions below.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_KINDTABLE_H
#define MPTRT_SRC_KINDTABLE_H

#include <cstddef>
#include <string>
#include <vector>

namespace mptrt {
namespace rt {

template <typename PrepareFn> struct KindEntry {
  const char *kind;
  PrepareFn prepare;
};

/// The entry for `kind`, or null.
template <typename PrepareFn, size_t N>
const KindEntry<PrepareFn> *findKind(const KindEntry<PrepareFn> (&table)[N],
                                     const std::string &kind) {
  for (const KindEntry<PrepareFn> &entry : table)
    if (kind == entry.kind)
      return &entry;
  return nullptr;
}

template <typename PrepareFn, size_t N>
std::vector<std::string> kindNames(const KindEntry<PrepareFn> (&table)[N]) {
  std::vector<std::string> names;
  for (const KindEntry<PrepareFn> &entry : table)
    names.push_back(entry.kind);
  return names;
}

} // namespace rt
} // namespace mptrt

#endif // MPTRT_SRC_KINDTABLE_H
