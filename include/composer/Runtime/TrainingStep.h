//===- TrainingStep.h - The training step's stages --------------*- C++ -*-===//
//
// One training step is a short pipeline of stages:
//
//   selectBatch                      the batch as loaded, before any event
//   forward, loss, backward          per microbatch
//   reduce                           the data-parallel gradient average
//   unscale, clip                    the gradients the optimizer will use
//   optimizerStep, postStep
//
// The trainer drives them and fires Composer's events between them; it never
// knows which algorithms change the step. An algorithm that does implements
// StepStages, overriding the stages it wraps or replaces, and returns itself
// from Algorithm::stepStages; each of its stage methods gets the step and
// `next`, the rest of that stage's chain down to the trainer's own stage, and
// may call `next` once, several times or not at all.
//
// Stages fire no events, so an algorithm may run them again (SAM's second
// gradient, selective backprop's scoring forward) without the other
// algorithms seeing a second step.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_TRAININGSTEP_H
#define COMPOSER_RUNTIME_TRAININGSTEP_H

#include "composer/Runtime/Precision.h"
#include "composer/Runtime/State.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace composer::runtime {

/// A run stopped for a reason the user must see (NaN loss, bad model output).
class TrainingError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The model's predictions for `input` in place of the state's batch's
/// input column (ModelCall), its whole output kept in State::modelOutput.
/// Throws TrainingError when the output holds no predictions.
torch::Tensor forwardModel(State &state, const torch::Tensor &input);

/// Drops every gradient: the optimizer's and the parameters' (which differ
/// under sharded data parallelism).
void zeroGradients(State &state);

class StepStages;
class TrainingStep;

/// The rest of one stage's chain, from the link after the caller's: calling
/// it runs that link's stage method with the next `Next`, and so on down to
/// the trainer's own stage, which ends the chain.
template <typename R, typename... Args> class Next {
public:
  using Stage = R (StepStages::*)(TrainingStep &, Args..., Next);

  Next(TrainingStep &step, Stage stage, size_t link)
      : step_(step), stage_(stage), link_(link) {}

  R operator()(Args... args) const;

private:
  TrainingStep &step_;
  Stage stage_;
  size_t link_;
};

using SelectBatchNext = Next<void>;
using ForwardNext = Next<torch::Tensor, const torch::Tensor &>;
using LossNext =
    Next<torch::Tensor, const torch::Tensor &, const torch::Tensor &, bool>;
using BackwardNext = Next<void, const torch::Tensor &>;
using ReduceNext = Next<void>;
using UnscaleNext = Next<bool>;
using ClipNext = Next<bool, bool>;
using OptimizerStepNext = Next<void, bool>;
using PostStepNext = Next<void>;

/// The stages of a training step, as one link of each stage's chain. Every
/// method passes straight through to `next` unless overridden; the trainer's
/// own link (StandardStages) overrides all of them and ends every chain.
class StepStages {
public:
  virtual ~StepStages();

  /// Once per step, on `step.state().batch` as the loader gave it (on the
  /// device), before AFTER_DATALOADER: what it leaves is what every
  /// algorithm sees.
  virtual void selectBatch(TrainingStep &step, SelectBatchNext next) { next(); }
  /// The model's output for `input` (as one tensor). The caller sets the
  /// autocast and grad modes.
  virtual torch::Tensor forward(TrainingStep &step, const torch::Tensor &input,
                                ForwardNext next) {
    return next(input);
  }
  /// The loss of `outputs` against `target`, per sample when `perSample`.
  virtual torch::Tensor loss(TrainingStep &step, const torch::Tensor &outputs,
                             const torch::Tensor &target, bool perSample,
                             LossNext next) {
    return next(outputs, target, perSample);
  }
  /// Backward of one microbatch's `loss` (already weighted by its share),
  /// scaled when loss scaling is on; the gradient reduction starts during
  /// it when TrainingStep::overlapsReduction().
  virtual void backward(TrainingStep &step, const torch::Tensor &loss,
                        BackwardNext next) {
    next(loss);
  }
  /// After the last backward: the gradients (accumulated over the
  /// microbatches) averaged across ranks.
  virtual void reduce(TrainingStep &step, ReduceNext next) { next(); }
  /// Divides the gradients by the loss scale; returns whether they are all
  /// finite (always true without loss scaling).
  virtual bool unscale(TrainingStep &step, UnscaleNext next) { return next(); }
  /// Leaves the gradients as the optimizer will use them (clipped, SAM's
  /// second gradient), `finite` what unscale found; returns whether the step
  /// is to be taken. A wrapper that does its work after `next` runs after
  /// those of the algorithms later in the recipe, as on AFTER_* events.
  virtual bool clip(TrainingStep &step, bool finite, ClipNext next) {
    return next(finite);
  }
  /// Updates the weights when `finite` (the step is skipped otherwise) and
  /// the loss scale either way.
  virtual void optimizerStep(TrainingStep &step, bool finite,
                             OptimizerStepNext next) {
    next(finite);
  }
  /// After the update, before AFTER_TRAIN_BATCH.
  virtual void postStep(TrainingStep &step, PostStepNext next) { next(); }
};

/// What the model and the loss saw in one microbatch: what SAM replays.
struct Microbatch {
  torch::Tensor input;
  torch::Tensor target;
  /// The batch's other columns, this microbatch's rows.
  std::map<std::string, torch::Tensor> columns;
  /// Its share of the batch's loss: its samples (or, accumulating on
  /// tokens, the loss's terms) over the batch's. The weights of a step's
  /// microbatches sum to 1, so that the accumulated gradient is the whole
  /// batch's mean.
  double weight = 1.0;
};

/// The trainer's own stages: forward through the model, the recipe's loss
/// (State::lossFunction), backward and reduction through the state's
/// communicator, loss scaling by `scaler`, the state's optimizer.
class StandardStages final : public StepStages {
public:
  explicit StandardStages(GradScaler &scaler) : scaler_(scaler) {}

  void selectBatch(TrainingStep &step, SelectBatchNext next) override;
  torch::Tensor forward(TrainingStep &step, const torch::Tensor &input,
                        ForwardNext next) override;
  torch::Tensor loss(TrainingStep &step, const torch::Tensor &outputs,
                     const torch::Tensor &target, bool perSample,
                     LossNext next) override;
  void backward(TrainingStep &step, const torch::Tensor &loss,
                BackwardNext next) override;
  void reduce(TrainingStep &step, ReduceNext next) override;
  bool unscale(TrainingStep &step, UnscaleNext next) override;
  bool clip(TrainingStep &step, bool finite, ClipNext next) override;
  void optimizerStep(TrainingStep &step, bool finite,
                     OptimizerStepNext next) override;
  void postStep(TrainingStep &step, PostStepNext next) override;

private:
  GradScaler &scaler_;
  /// Whether a backward of this step started the reduction.
  bool reductionStarted_ = false;
};

/// The chains of one run's training steps, and the microbatches of the step
/// in progress. Each stage method enters its chain at the outermost link.
class TrainingStep {
public:
  /// A step on `state` whose innermost links are `base` (StandardStages in
  /// a trainer, stand-ins in a test). Both must outlive the step.
  TrainingStep(State &state, StepStages &base);
  TrainingStep(const TrainingStep &) = delete;
  TrainingStep &operator=(const TrainingStep &) = delete;

  /// Puts `stages` inside the links added before and around the base. In
  /// recipe order, the first algorithm's link is the outermost.
  void addStages(StepStages &stages);

  State &state() { return state_; }
  /// The microbatches of the step in progress, in order; whoever drives the
  /// step records each before its forward and clears them after the update.
  std::vector<Microbatch> &microbatches() { return microbatches_; }

  /// Whether the next backward averages the gradients across ranks while it
  /// runs (DDP's overlap), adding what earlier microbatches accumulated;
  /// otherwise it accumulates locally and reduce averages the sum. Only the
  /// last microbatch's backward overlaps, and none while a microbatch may
  /// still fail (auto microbatching): a rank that runs out of memory must
  /// not leave the others waiting in a collective.
  bool overlapsReduction() const { return overlapReduction_; }
  void setOverlapReduction(bool overlap) { overlapReduction_ = overlap; }

  void selectBatch();
  torch::Tensor forward(const torch::Tensor &input);
  torch::Tensor loss(const torch::Tensor &outputs, const torch::Tensor &target,
                     bool perSample = false);
  void backward(const torch::Tensor &loss);
  void reduce();
  bool unscale();
  bool clip(bool finite);
  void optimizerStep(bool finite);
  void postStep();

  /// The gradients again, at the current weights, from the recorded
  /// microbatches: zero, then forward and loss (under the run's autocast)
  /// and backward of each, weighted by its share, reduce and unscale,
  /// through every link but without events or clipping. Returns whether
  /// they are finite.
  bool recomputeGradients();

  /// Link `index` of every chain, outermost first; the base is the last.
  StepStages &link(size_t index);

private:
  State &state_;
  std::vector<StepStages *> links_;
  std::vector<Microbatch> microbatches_;
  bool overlapReduction_ = true;
};

template <typename R, typename... Args>
R Next<R, Args...>::operator()(Args... args) const {
  return (step_.link(link_).*stage_)(step_, args...,
                                     Next(step_, stage_, link_ + 1));
}

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_TRAININGSTEP_H
