//===- Callbacks.h - Progress bar and speed monitor -------------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_CALLBACKS_H
#define COMPOSER_RUNTIME_CALLBACKS_H

#include "composer/Runtime/Algorithm.h"

#include <cstdint>
#include <memory>
#include <ostream>

namespace composer::runtime {

/// Shows epoch, batch, loss, throughput and ETA after every batch. An
/// interactive bar redraws one line with '\r'; otherwise (CI logs, files) it
/// prints a line every 10% of an epoch and at the epoch's end.
std::unique_ptr<Callback> createProgressBar(std::ostream &out,
                                            bool interactive);

/// Composer's SpeedMonitor: logs "throughput/batches_per_sec" and
/// "throughput/samples_per_sec" over the last `windowSize` batches once that
/// many have run, and "wall_clock/train" (seconds spent training) after every
/// batch. A batch's time runs from the end of the previous one (so data
/// loading counts) but leaves out evaluation and checkpointing.
std::unique_ptr<Callback> createSpeedMonitor(int64_t windowSize = 20);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_CALLBACKS_H
