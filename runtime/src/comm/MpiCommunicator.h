//===- MpiCommunicator.h - the communicator over MPI_COMM_WORLD ---*- C++ -*-===//
//
// Built only when the runtime is built with MPI (MpiCommunicator.cpp); the
// stub (MpiStub.cpp) otherwise says it is not there.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_COMM_MPICOMMUNICATOR_H
#define MPTRT_SRC_COMM_MPICOMMUNICATOR_H

#include "mptrt/Communicator.h"

#include <memory>
#include <string>

namespace mptrt {
namespace comm {

bool mpiBuilt();
/// Initialises MPI (MPI_THREAD_SERIALIZED; finalised at exit) and returns
/// the communicator of MPI_COMM_WORLD, or null with a message, also when
/// MPI's world is not the one `launcher` describes (a torchrun-style
/// launch, whose processes MPI does not join).
std::unique_ptr<Communicator> makeMpiCommunicator(const WorldInfo &launcher, std::string *error);

} // namespace comm
} // namespace mptrt

#endif // MPTRT_SRC_COMM_MPICOMMUNICATOR_H
