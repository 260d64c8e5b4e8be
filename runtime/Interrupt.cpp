//===- Interrupt.cpp - Stopping a run on SIGINT or SIGTERM ----------------===//

#include "composer/Runtime/Interrupt.h"

#include <atomic>
#include <csignal>

namespace composer::runtime {

namespace {

std::atomic<int> received{0};
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler needs a lock-free flag");

void onInterrupt(int signal) {
  // Only the first signal counts; the next one finds the default
  // disposition and terminates the process.
  int none = 0;
  received.compare_exchange_strong(none, signal);
  struct sigaction byDefault = {};
  byDefault.sa_handler = SIG_DFL;
  sigemptyset(&byDefault.sa_mask);
  sigaction(SIGINT, &byDefault, nullptr);
  sigaction(SIGTERM, &byDefault, nullptr);
}

} // namespace

void installInterruptHandlers() {
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  // Both block each other while the handler runs; system calls the signal
  // interrupts (reads, the process group's sockets) resume.
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int interruptSignal() { return received.load(); }

void clearInterruptSignal() { received.store(0); }

std::string signalName(int signal) {
  switch (signal) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "signal " + std::to_string(signal);
  }
}

} // namespace composer::runtime
