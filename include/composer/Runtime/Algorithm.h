//===- Algorithm.h - Runtime algorithms and callbacks -----------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_ALGORITHM_H
#define COMPOSER_RUNTIME_ALGORITHM_H

#include "composer/Runtime/Event.h"
#include "composer/Runtime/Logger.h"
#include "composer/Runtime/State.h"

#include <torch/torch.h>

#include <string>

namespace composer::runtime {

/// A training-loop method (METHODS.md, "runtime"): the engine calls `apply`
/// on every event for which `match` holds, in recipe order, with Composer's
/// two exceptions: AFTER_* events go to algorithms in reverse order (so an
/// algorithm undoes its change inside those made after it), and `runsFirst`
/// algorithms come first on every event.
class Algorithm {
public:
  virtual ~Algorithm();
  /// Composer's name: "label_smoothing", "mixup", ...
  virtual std::string name() const = 0;
  virtual bool match(Event event, const State &state) const = 0;
  virtual void apply(Event event, State &state, Logger &logger) = 0;
  /// Runs before every other algorithm on each event (Composer's rule for
  /// selective backprop: its scoring forward must see the batch before any
  /// augmentation does).
  virtual bool runsFirst() const { return false; }
  /// Whether it interpolates the loss (Composer's `interpolate_loss`); two
  /// such algorithms in one run draw a warning.
  virtual bool interpolatesLoss() const { return false; }
  /// What a checkpoint must carry for an exact resume (EMA weights, ...).
  virtual void saveState(torch::serialize::OutputArchive &archive) const {}
  virtual void loadState(torch::serialize::InputArchive &archive) {}
};

/// Observes every event: progress bar, speed monitor, checkpointing.
class Callback {
public:
  virtual ~Callback();
  virtual void runEvent(Event event, State &state, Logger &logger) = 0;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ALGORITHM_H
