//===- CollectiveWatchdog.cpp - no collective waits forever ---------------===//
#include "comm/CollectiveWatchdog.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace mptrt {
namespace comm {

namespace {

constexpr double kDefaultTimeoutSeconds = 600;

/// A number of seconds, >= 0 and finite.
bool parseSeconds(const char *text, double *out) {
  errno = 0;
  char *end = nullptr;
  const double v = std::strtod(text, &end);
  if (errno || end == text || *end || !std::isfinite(v) || v < 0)
    return false;
  *out = v;
  return true;
}

} // namespace

std::unique_ptr<CollectiveWatchdog> CollectiveWatchdog::fromEnvironment(int rank, int size,
                                                                        std::string *error) {
  double seconds = kDefaultTimeoutSeconds;
  if (const char *text = std::getenv("MPTRT_COLLECTIVE_TIMEOUT"); text && *text)
    if (!parseSeconds(text, &seconds)) {
      *error = std::string("MPTRT_COLLECTIVE_TIMEOUT='") + text +
               "' is not a number of seconds (0 or more; 0: never)";
      return nullptr;
    }
  std::unique_ptr<CollectiveWatchdog> dog(new CollectiveWatchdog(rank, size, seconds));
  if (const char *stall = std::getenv("MPTRT_TEST_COLLECTIVE_STALL"); stall && *stall) {
    unsigned long long call = 0;
    int stallRank = -1, used = 0;
    double stallSeconds = 0;
    if (std::sscanf(stall, "%d:%llu:%lf%n", &stallRank, &call, &stallSeconds, &used) != 3 ||
        stall[used] != '\0' || stallRank < 0 || call == 0 || !(stallSeconds >= 0)) {
      *error = std::string("MPTRT_TEST_COLLECTIVE_STALL='") + stall +
               "' is not RANK:CALL:SECONDS (CALL from 1)";
      return nullptr;
    }
    dog->stallRank_ = stallRank;
    dog->stallCall_ = call;
    dog->stallSeconds_ = stallSeconds;
  }
  return dog;
}

CollectiveWatchdog::CollectiveWatchdog(int rank, int size, double seconds)
    : rank_(rank), size_(size), seconds_(seconds) {
  if (seconds_ > 0 && size_ > 1)
    thread_ = std::thread([this] { loop(); });
}

CollectiveWatchdog::~CollectiveWatchdog() {
  if (!thread_.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

CollectiveWatchdog::Scope CollectiveWatchdog::watch(const char *call, size_t count) {
  ++calls_;
  if (rank_ == stallRank_ && calls_ == stallCall_)
    std::this_thread::sleep_for(std::chrono::duration<double>(stallSeconds_));
  if (thread_.joinable()) {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = true;
    call_ = call;
    count_ = count;
    deadline_ = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(seconds_));
  }
  wake_.notify_one();
  return Scope(this);
}

void CollectiveWatchdog::disarm() {
  if (!thread_.joinable())
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
}

void CollectiveWatchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!quit_) {
    if (!armed_) {
      wake_.wait(lock);
      continue;
    }
    const auto deadline = deadline_;
    if (wake_.wait_until(lock, deadline) == std::cv_status::timeout && armed_ &&
        deadline_ == deadline && !quit_) {
      std::fprintf(stderr,
                   "mptrt: rank %d of %d: %s of %zu elements has waited %g s for the other "
                   "ranks (collective call %llu of this rank): one of them is stuck or dead; "
                   "ending this rank so that the launcher ends the job "
                   "(MPTRT_COLLECTIVE_TIMEOUT=%g s)\n",
                   rank_, size_, call_, count_, seconds_, static_cast<unsigned long long>(calls_),
                   seconds_);
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
}

} // namespace comm
} // namespace mptrt
