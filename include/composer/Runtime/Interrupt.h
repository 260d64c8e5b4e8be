//===- Interrupt.h - Stopping a run on SIGINT or SIGTERM --------*- C++ -*-===//
//
// A program that trains (composer-train and the rank processes its launcher
// starts) installs these handlers; the first SIGINT or SIGTERM then asks the
// Trainer to stop after the batch in progress, as a stopper does, so the
// run's end (evaluation, final checkpoint) happens as usual. A second one
// terminates the process at once. A process that loads the runtime as a
// library (Python) keeps its own handling: without the handlers, no run
// stops this way.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_INTERRUPT_H
#define COMPOSER_RUNTIME_INTERRUPT_H

#include <string>

namespace composer::runtime {

/// Handles SIGINT and SIGTERM in this process: the first records its
/// signal (interruptSignal()) and restores the default disposition of both,
/// so that the next one terminates the process. The handler only stores
/// the signal number (async-signal-safe).
void installInterruptHandlers();

/// The first SIGINT or SIGTERM received since installInterruptHandlers(),
/// or 0.
int interruptSignal();

/// Forgets the signal received, before a process that trains more than once
/// (Python) installs the handlers again.
void clearInterruptSignal();

/// "SIGINT", "SIGTERM", or "signal N".
std::string signalName(int signal);

/// The exit status of a program stopped by `signal`, as a shell reports
/// one killed by it: 128 + signal (130 for SIGINT, 143 for SIGTERM).
inline int interruptExitStatus(int signal) { return 128 + signal; }

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_INTERRUPT_H
