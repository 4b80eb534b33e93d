//===- DataParallel.cpp - mpt-train's place in a data-parallel run --------===//
#include "DataParallel.h"

#include "mptrt/Crc32.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace mptrt {
namespace tools {

namespace {

bool fileCrc(const std::string &path, uint32_t *crc, std::string *error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read plan '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::vector<char> buffer(1 << 20);
  uint32_t c = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    c = mptrt::crc32(c, buffer.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) {
    *error = "cannot read plan '" + path + "'";
    return false;
  }
  *crc = c;
  return true;
}

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "%08" PRIx64, v);
  return text;
}

} // namespace

bool joinWorld(const std::string &planPath, World *out, std::string *error) {
  std::string why;
  Communicator *comm = processCommunicator(&why);
  if (!comm) {
    *error = "data-parallel run: " + why;
    return false;
  }
  out->comm = comm;
  out->rank = comm->rank();
  out->ranks = comm->size();
  if (out->ranks == 1)
    return true;
  // A rank that cannot read the plan still takes part in the exchange, so
  // that no other rank waits for it.
  uint32_t crc = 0;
  std::string readError;
  const bool read = fileCrc(planPath, &crc, &readError);
  const uint64_t mine = read ? crc : UINT64_MAX;
  std::vector<uint64_t> all;
  if (!comm->allGather(mine, &all, error))
    return false;
  if (!read) {
    *error = "rank " + std::to_string(out->rank) + ": " + readError;
    return false;
  }
  std::string differ;
  for (size_t r = 0; r < all.size(); ++r)
    if (all[r] != all[0])
      differ += (differ.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) +
                (all[r] == UINT64_MAX ? " cannot read it" : " has CRC-32 " + hex(all[r]));
  if (!differ.empty()) {
    *error = "the ranks disagree on the plan '" + planPath + "': rank 0 has CRC-32 " + hex(all[0]) +
             ", " + differ + "; every rank must run the same plan";
    return false;
  }
  return true;
}

bool checkDataParallelPlan(const train::Trainer &trainer, const std::string &entry,
                           const World &world, std::string *error) {
  if (world.ranks == 1)
    return true;
  std::vector<mptrt_kernel_info> kernels;
  if (!trainer.model().entryKernels(entry, &kernels)) {
    *error = "cannot list the kernels of entry point '" + entry + "'";
    return false;
  }
  for (const mptrt_kernel_info &k : kernels)
    if (std::strcmp(k.kind, "all_reduce") == 0)
      return true;
  *error = "a world of " + std::to_string(world.ranks) + " ranks, but entry point '" + entry +
           "' averages no gradients (it has no all_reduce kernel): compile the plan with "
           "mpt-compile --train --data-parallel, or run one process";
  return false;
}

} // namespace tools
} // namespace mptrt
