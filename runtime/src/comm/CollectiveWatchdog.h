//===- CollectiveWatchdog.h - no collective waits forever --------*- C++ -*-===//
//
// A rank that hangs (a deadlock, a stopped process, a machine that stopped
// answering) leaves the others waiting in their next collective; MPI has no
// timeout of its own, and mpirun only notices a rank that exits. The
// watchdog is a thread that each collective call arms with a deadline: when
// a call outlives MPTRT_COLLECTIVE_TIMEOUT seconds (default 600; 0 never),
// it prints which call on which rank waited how long, and ends the process
// with status 1, so the launcher ends the job (docs/distributed.md).
//
// The test hook MPTRT_TEST_COLLECTIVE_STALL=RANK:CALL:SECONDS makes rank
// RANK sleep SECONDS before its CALL-th collective (1-based), as a hung
// rank would.
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_SRC_COMM_COLLECTIVEWATCHDOG_H
#define MPTRT_SRC_COMM_COLLECTIVEWATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace mptrt {
namespace comm {

class CollectiveWatchdog {
public:
  /// Reads MPTRT_COLLECTIVE_TIMEOUT and MPTRT_TEST_COLLECTIVE_STALL; null
  /// with a message naming the variable when one is malformed.
  static std::unique_ptr<CollectiveWatchdog> fromEnvironment(int rank, int size,
                                                             std::string *error);
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog &) = delete;
  CollectiveWatchdog &operator=(const CollectiveWatchdog &) = delete;

  /// Arms the watchdog for one collective call (`call`, e.g.
  /// "MPI_Allreduce", of `count` elements) until destroyed.
  class Scope {
  public:
    explicit Scope(CollectiveWatchdog *dog) : dog(dog) {}
    ~Scope() { dog->disarm(); }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    CollectiveWatchdog *dog;
  };
  Scope watch(const char *call, size_t count);

  double timeoutSeconds() const { return seconds_; }

private:
  CollectiveWatchdog(int rank, int size, double seconds);
  void disarm();
  void loop();

  const int rank_, size_;
  const double seconds_;
  // The test hook: rank stallRank_ sleeps stallSeconds_ before its
  // stallCall_-th collective.
  int stallRank_ = -1;
  uint64_t stallCall_ = 0;
  double stallSeconds_ = 0;
  uint64_t calls_ = 0;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool armed_ = false, quit_ = false;
  std::chrono::steady_clock::time_point deadline_;
  const char *call_ = "";
  size_t count_ = 0;
  std::thread thread_;
};

} // namespace comm
} // namespace mptrt

#endif // MPTRT_SRC_COMM_COLLECTIVEWATCHDOG_H
