//===- MpiStub.cpp - no MPI in this build ---------------------------------===//
#include "comm/MpiCommunicator.h"

namespace mptrt {
namespace comm {

bool mpiBuilt() { return false; }

std::unique_ptr<Communicator> makeMpiCommunicator(const WorldInfo &, std::string *error) {
  *error = "this runtime was built without MPI";
  return nullptr;
}

} // namespace comm
} // namespace mptrt
