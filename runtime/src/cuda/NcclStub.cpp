//===- NcclStub.cpp - device collectives in a build without NCCL ----------===//
//
// Built when NCCL's header was not found: a world of one rank needs no
// collectives; anything more is refused, saying what is missing.
//
//===----------------------------------------------------------------------===//
#include "cuda/DeviceCollectives.h"

#include "mptrt/Communicator.h"

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
  if (world->size() == 1)
    return Status::ok();
  return Status::error("a world of " + std::to_string(world->size()) +
                       " ranks on the CUDA backend needs NCCL, and this runtime was built "
                       "without its header (nccl.h): install NCCL and rebuild");
}

} // namespace cuda
} // namespace rt
} // namespace mptrt
