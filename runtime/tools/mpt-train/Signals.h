//===- Signals.h - how mpt-train answers signals ------------------*- C++ -*-===//
//
// SIGINT, SIGTERM, SIGHUP and SIGQUIT stop the run after the current step,
// with a checkpoint if --save (a second one aborts at once); SIGUSR1 asks
// for a checkpoint after the current step and the run goes on (for
// schedulers that warn before they preempt); SIGPIPE is ignored, so a
// closed pipe on stdout or stderr stops the output, not the training.
// docs/mpt-train.md, "Interrupting a run".
//
//===----------------------------------------------------------------------===//
#ifndef MPTRT_TOOLS_MPTTRAIN_SIGNALS_H
#define MPTRT_TOOLS_MPTTRAIN_SIGNALS_H

#include <atomic>

namespace mptrt {
namespace tools {

/// Installs the handlers above. A stop signal the parent ignores (SIGINT
/// for a background job of a non-interactive shell, SIGHUP under nohup)
/// stays ignored.
void installSignalHandlers();

/// The stop signal received, or 0. A lock-free atomic: async-signal-safe,
/// and well defined when the signal lands on a runtime worker thread.
const std::atomic<int> &stopSignal();

/// Whether SIGUSR1 arrived since the last call.
bool takeSaveRequest();

/// "SIGINT", "SIGTERM", "SIGHUP" or "SIGQUIT".
const char *signalName(int sig);

} // namespace tools
} // namespace mptrt

#endif // MPTRT_TOOLS_MPTTRAIN_SIGNALS_H
