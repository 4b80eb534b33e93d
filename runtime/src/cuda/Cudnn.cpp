//===- Cudnn.cpp - cuDNN for the CUDA backend, opened at run time ---------===//
//
// Cudnn.h: the MPTRT_CUDA_CONV choice, and (in a build with cudnn.h) the
// library opened on first use, the context's handle and the descriptors.
//
//===----------------------------------------------------------------------===//
#include "cuda/Cudnn.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#ifdef MPTRT_HAVE_CUDNN
#include <dlfcn.h>
#include <type_traits>
#endif

namespace mptrt {
namespace rt {
namespace cuda {

Status convPathFromEnvironment(ConvPath *out) {
  const char *env = std::getenv("MPTRT_CUDA_CONV");
  const std::string v = env ? env : "";
  if (v.empty() || v == "auto")
    *out = ConvPath::Auto;
  else if (v == "cudnn")
    *out = ConvPath::Cudnn;
  else if (v == "direct")
    *out = ConvPath::Direct;
  else
    return Status::error("MPTRT_CUDA_CONV must be \"auto\", \"cudnn\" or \"direct\", not \"" + v +
                         "\"");
  return Status::ok();
}

#ifndef MPTRT_HAVE_CUDNN

std::string convDescription() {
  return "direct convolutions (this build has no cuDNN: cudnn.h was not found)";
}

void releaseCudnn(Context &) {}

#else

namespace {

/// Opens libcudnn.so.9: from the loader's path, else from the folder the
/// build found cuDNN in (MPTRT_CUDNN_LIBRARY_DIR), whose sub-libraries are
/// opened first by full path so that libcudnn.so.9 finds them by name.
void *openCudnn(std::string *why) {
  if (void *lib = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL))
    return lib;
  std::string first = dlerror() ? dlerror() : "";
#ifdef MPTRT_CUDNN_LIBRARY_DIR
  const std::string dir = MPTRT_CUDNN_LIBRARY_DIR;
  for (const char *sub : {"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9",
                          "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9",
                          "libcudnn_ops.so.9", "libcudnn_cnn.so.9", "libcudnn_adv.so.9"})
    dlopen((dir + "/" + sub).c_str(), RTLD_NOW | RTLD_GLOBAL); // optional: may be absent
  if (void *lib = dlopen((dir + "/libcudnn.so.9").c_str(), RTLD_NOW | RTLD_LOCAL))
    return lib;
  const char *again = dlerror();
  *why = "cuDNN is not found (dlopen libcudnn.so.9: " + first + "; in " + dir + ": " +
         (again ? again : "?") + ")";
#else
  *why = "cuDNN is not found (dlopen libcudnn.so.9: " + first + ")";
#endif
  *why += ": install it (the CUDA toolkit's cuDNN 9 or Python's nvidia-cudnn-cu13 wheel) where "
          "the loader finds it (LD_LIBRARY_PATH)";
  return nullptr;
}

bool loadApi(CudnnApi *api, std::string *why) {
  void *lib = openCudnn(why);
  if (!lib)
    return false;
  auto find = [&](auto *fn, const char *name) {
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(lib, name));
    if (!*fn)
      *why = std::string("libcudnn.so.9 has no ") + name + ": cuDNN 9 is needed";
    return *fn != nullptr;
  };
  if (!(find(&api->getVersion, "cudnnGetVersion") &&
        find(&api->getErrorString, "cudnnGetErrorString") &&
        find(&api->getLastErrorString, "cudnnGetLastErrorString") &&
        find(&api->create, "cudnnCreate") && find(&api->destroy, "cudnnDestroy") &&
        find(&api->setStream, "cudnnSetStream") &&
        find(&api->createDescriptor, "cudnnBackendCreateDescriptor") &&
        find(&api->destroyDescriptor, "cudnnBackendDestroyDescriptor") &&
        find(&api->setAttribute, "cudnnBackendSetAttribute") &&
        find(&api->getAttribute, "cudnnBackendGetAttribute") &&
        find(&api->finalize, "cudnnBackendFinalize") && find(&api->execute, "cudnnBackendExecute")))
    return false;
  const size_t version = api->getVersion();
  if (version < 90000 || version >= 100000) {
    *why = "libcudnn.so.9 reports version " + std::to_string(version) + ": cuDNN 9 is needed";
    return false;
  }
  return true;
}

std::string versionText(size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

} // namespace

const CudnnApi *cudnnApi(std::string *why) {
  static std::once_flag once;
  static CudnnApi api;
  static bool ok = false;
  static std::string failure;
  std::call_once(once, [] { ok = loadApi(&api, &failure); });
  if (!ok) {
    if (why)
      *why = failure;
    return nullptr;
  }
  return &api;
}

std::string convDescription() {
  std::string why;
  const CudnnApi *api = cudnnApi(&why);
  if (!api)
    return "direct convolutions (" + why + ")";
  return "cuDNN " + versionText(api->getVersion()) + " convolutions";
}

Status cudnnCheck(cudnnStatus_t s, const char *what) {
  if (s == CUDNN_STATUS_SUCCESS)
    return Status::ok();
  const CudnnApi *api = cudnnApi(nullptr);
  std::string text = api ? api->getErrorString(s) : std::to_string(static_cast<int>(s));
  if (api) {
    char last[512] = {0};
    api->getLastErrorString(last, sizeof last);
    if (last[0])
      text += " (" + std::string(last) + ")";
  }
  return Status::error(std::string("cudnn: ") + what + ": " + text);
}

Status cudnnHandleOf(const Context &c, cudnnHandle_t *out) {
  std::string why;
  const CudnnApi *api = cudnnApi(&why);
  if (!api)
    return Status::error(why);
  if (!c.cudnn) {
    cudnnHandle_t h = nullptr;
    MPTRT_TRY(cudnnCheck(api->create(&h), "cudnnCreate"));
    const cudnnStatus_t s = api->setStream(h, reinterpret_cast<cudaStream_t>(c.stream));
    if (s != CUDNN_STATUS_SUCCESS) {
      api->destroy(h);
      return cudnnCheck(s, "cudnnSetStream");
    }
    c.cudnn = h;
  }
  *out = static_cast<cudnnHandle_t>(c.cudnn);
  return Status::ok();
}

void releaseCudnn(Context &c) {
  if (!c.cudnn)
    return;
  if (const CudnnApi *api = cudnnApi(nullptr))
    api->destroy(static_cast<cudnnHandle_t>(c.cudnn));
  c.cudnn = nullptr;
}

CudnnDescriptor &CudnnDescriptor::operator=(CudnnDescriptor &&o) noexcept {
  if (this != &o) {
    reset();
    d_ = o.d_;
    o.d_ = nullptr;
  }
  return *this;
}

void CudnnDescriptor::reset() {
  if (d_)
    if (const CudnnApi *api = cudnnApi(nullptr))
      api->destroyDescriptor(d_);
  d_ = nullptr;
}

Status CudnnDescriptor::create(cudnnBackendDescriptorType_t type) {
  std::string why;
  const CudnnApi *api = cudnnApi(&why);
  if (!api)
    return Status::error(why);
  reset();
  return cudnnCheck(api->createDescriptor(type, &d_), "cudnnBackendCreateDescriptor");
}

Status CudnnDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                            int64_t count, const void *values) {
  const std::string what =
      "cudnnBackendSetAttribute(" + std::to_string(static_cast<int>(name)) + ")";
  return cudnnCheck(cudnnApi(nullptr)->setAttribute(d_, name, type, count, values), what.c_str());
}

Status CudnnDescriptor::finalize() {
  return cudnnCheck(cudnnApi(nullptr)->finalize(d_), "cudnnBackendFinalize");
}

#endif // MPTRT_HAVE_CUDNN

} // namespace cuda
} // namespace rt
} // namespace mptrt
