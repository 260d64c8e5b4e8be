//===- ProcessSettings.h - a training process's CPU settings ----*- C++ -*-===//
//
// composer-train applies these before any thread starts; whatever times a
// training step (composer-opt --report-costs) applies them too, so that it
// times what the trainer runs.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_PROCESSSETTINGS_H
#define COMPOSER_RUNTIME_PROCESSSETTINGS_H

namespace composer::runtime {

/// Makes glibc keep freed host memory mapped (process-wide), so training
/// steps stop paying page faults for buffers the previous step freed, and
/// flushes denormal floats to zero on this thread and the threads it starts
/// from now on, unless the environment sets COMPOSER_KEEP_DENORMALS. Call it
/// before LibTorch starts its thread pool.
void applyTrainingProcessSettings();

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_PROCESSSETTINGS_H
