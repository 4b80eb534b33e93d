//===- BackendRegistry.cpp - the backends this build has ------------------===//
//
// Every backend registers itself through its `register<Name>Backend`
// function; the registry calls the ones compiled into this build. Choosing a
// backend by name, or `auto`, happens here and nowhere else.
//
//===----------------------------------------------------------------------===//
#include "Backend.h"

#include <algorithm>

namespace mptrt {
namespace rt {

BackendRegistry &BackendRegistry::get() {
  static BackendRegistry registry = [] {
    BackendRegistry r;
    registerCpuBackend(r);
#ifdef MPTRT_HAVE_CUDA
    registerCudaBackend(r);
#endif
    return r;
  }();
  return registry;
}

void BackendRegistry::add(BackendFactory factory) { factories_.push_back(std::move(factory)); }

const BackendFactory *BackendRegistry::find(const std::string &name) const {
  for (const BackendFactory &f : factories_)
    if (f.name == name)
      return &f;
  return nullptr;
}

std::string BackendRegistry::names() const {
  std::string out;
  for (const BackendFactory &f : factories_)
    out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

Status createBackend(const std::string &name, std::unique_ptr<Backend> *out) {
  return createBackendFor(name, {}, out);
}

Status createBackendFor(const std::string &name, const std::vector<std::string> &kinds,
                        std::unique_ptr<Backend> *out) {
  const BackendRegistry &registry = BackendRegistry::get();
  if (name.empty() || name == "auto") {
    // The best available backend that has every kind; if none has, the
    // best available one (its prepare then names the kind it lacks).
    const BackendFactory *best = nullptr, *bestCovering = nullptr;
    std::string detail;
    for (const BackendFactory &f : registry.factories()) {
      if (!f.probe(&detail))
        continue;
      if (!best || f.rank > best->rank)
        best = &f;
      const std::vector<std::string> has = f.kinds();
      bool covers = true;
      for (const std::string &k : kinds)
        covers = covers && std::find(has.begin(), has.end(), k) != has.end();
      if (covers && (!bestCovering || f.rank > bestCovering->rank))
        bestCovering = &f;
    }
    if (!best)
      return Status::error("no backend of this build (" + registry.names() +
                           ") can run on this host");
    *out = (bestCovering ? bestCovering : best)->create();
    return Status::ok();
  }
  const BackendFactory *f = registry.find(name);
  if (!f)
    return Status::error("unknown backend '" + name + "' (this build has: " + registry.names() +
                         "; or auto)");
  std::string detail;
  if (!f->probe(&detail))
    return Status::error("backend '" + name + "' cannot run on this host: " + detail);
  *out = f->create();
  return Status::ok();
}

} // namespace rt
} // namespace mptrt
