//===- Algorithm.h - Runtime algorithms and callbacks -----------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_ALGORITHM_H
#define COMPOSER_RUNTIME_ALGORITHM_H

#include "composer/Runtime/Event.h"
#include "composer/Runtime/Logger.h"
#include "composer/Runtime/State.h"
#include "composer/Runtime/TrainingStep.h"

#include <torch/torch.h>

#include <string>

namespace composer::runtime {

/// A training-loop method (METHODS.md, "runtime"). It acts in one or both
/// of two ways:
///  - on events: the engine calls `apply` on every event for which `match`
///    holds, in recipe order, AFTER_* events in reverse order (Composer's
///    rule: an algorithm undoes its change inside those made after it);
///  - on the training step: `stepStages` returns the stages it wraps or
///    replaces (TrainingStep.h), linked in recipe order, the first
///    outermost.
class Algorithm {
public:
  virtual ~Algorithm();
  /// Composer's name: "label_smoothing", "mixup", ...
  virtual std::string name() const = 0;
  virtual bool match(Event event, const State &state) const { return false; }
  virtual void apply(Event event, State &state, Logger &logger) {}
  /// The training step's stages this algorithm wraps, or null. They must
  /// live as long as the algorithm.
  virtual StepStages *stepStages() { return nullptr; }
  /// Whether it interpolates the loss (Composer's `interpolate_loss`); two
  /// such algorithms in one run draw a warning.
  virtual bool interpolatesLoss() const { return false; }
  /// Throws std::invalid_argument, naming the algorithm and the column,
  /// when the training data is not what it works on (images, class-index
  /// targets; requireImages, requireClassTargets). The trainer asks before
  /// INIT.
  virtual void checkData(const SampleSpec &spec) const {}
  /// Whether apply at `event` reads or writes the model's weights as whole
  /// tensors (EMA, SWA). full_shard keeps only chunks of them: it gathers
  /// them for that apply, and takes them back when it changed them.
  virtual bool readsWholeWeights(Event event) const { return false; }
  /// What a checkpoint must carry for an exact resume (EMA weights, ...).
  virtual void saveState(torch::serialize::OutputArchive &archive) const {}
  virtual void loadState(torch::serialize::InputArchive &archive) {}
};

/// Throws std::invalid_argument unless the samples' input is an image
/// ([C, H, W]): "<algorithm> needs image inputs; the training data's column
/// '<name>' holds ...".
void requireImages(const std::string &algorithm, const SampleSpec &spec);
/// Throws std::invalid_argument unless the samples' targets are class
/// indices (integers: one per sample, or per token).
void requireClassTargets(const std::string &algorithm, const SampleSpec &spec);

/// Observes every event: progress bar, speed monitor, checkpointing.
class Callback {
public:
  virtual ~Callback();
  virtual void runEvent(Event event, State &state, Logger &logger) = 0;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ALGORITHM_H
