//===- Signals.cpp - how mpt-train answers signals -----------------------===//
#include "Signals.h"

#include <csignal>

#include <unistd.h>

namespace mptrt {
namespace tools {

namespace {

std::atomic<int> stopSignalValue{0};
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<int> saveRequested{0};

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

extern "C" void onSaveSignal(int) { saveRequested.store(1); }

extern "C" void onStopSignal(int sig) {
  // Only async-signal-safe calls here: write, sigaction, raise.
  if (stopSignalValue.exchange(sig) != 0) {
    const char text[] = "\nmpt-train: interrupted again: aborting now\n";
    (void)!::write(STDERR_FILENO, text, sizeof(text) - 1);
    struct sigaction fallback = {};
    fallback.sa_handler = SIG_DFL;
    ::sigaction(sig, &fallback, nullptr);
    ::raise(sig); // delivered, by the default action, when the handler returns
    return;
  }
  const char text[] = "\nmpt-train: interrupted: stopping after the current step "
                      "(interrupt again to abort now)\n";
  (void)!::write(STDERR_FILENO, text, sizeof(text) - 1);
}

} // namespace

void installSignalHandlers() {
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  for (int sig : kStopSignals)
    sigaddset(&action.sa_mask, sig);
  action.sa_flags = SA_RESTART;
  for (int sig : kStopSignals) {
    struct sigaction old = {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    ::sigaction(sig, &action, nullptr);
  }
  struct sigaction save = {};
  save.sa_handler = onSaveSignal;
  sigemptyset(&save.sa_mask);
  save.sa_flags = SA_RESTART;
  ::sigaction(SIGUSR1, &save, nullptr);
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

const std::atomic<int> &stopSignal() { return stopSignalValue; }

bool takeSaveRequest() { return saveRequested.exchange(0) != 0; }

const char *signalName(int sig) {
  switch (sig) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  case SIGHUP:
    return "SIGHUP";
  case SIGQUIT:
    return "SIGQUIT";
  default:
    return "a signal";
  }
}

} // namespace tools
} // namespace mptrt
