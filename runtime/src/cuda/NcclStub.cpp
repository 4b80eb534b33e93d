//===- NcclStub.cpp - device collectives in a build without NCCL ----------===//
//
// Built when NCCL's header was not found: a world of one rank needs no
// collectives; anything more, or MPTRT_DEVICE_COLLECTIVES=nccl, is refused,
// saying what is missing.
//
//===----------------------------------------------------------------------===//
#include "cuda/DeviceCollectives.h"

#include "mptrt/Communicator.h"

#include <cstdlib>
#include <string>

namespace mptrt {
namespace rt {
namespace cuda {

Status deviceCollectives(int, DeviceCollectives **out) {
  *out = nullptr;
  std::string why;
  Communicator *world = processCommunicator(&why);
  if (!world)
    return Status::error("no communicator for the data-parallel world: " + why);
  const char *asked = std::getenv("MPTRT_DEVICE_COLLECTIVES");
  const bool ncclAsked = asked && std::string(asked) == "nccl";
  if (world->size() == 1 && !ncclAsked)
    return Status::ok();
  if (ncclAsked)
    return Status::error("MPTRT_DEVICE_COLLECTIVES=nccl, and this runtime was built without "
                         "NCCL's header (nccl.h): install NCCL (or point CMake's "
                         "MPTRT_NCCL_INCLUDE_DIR at it) and rebuild");
  return Status::error("a world of " + std::to_string(world->size()) +
                       " ranks on the CUDA backend needs NCCL, and this runtime was built "
                       "without its header (nccl.h): install NCCL and rebuild");
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
