//===- StepTestUtils.h - A training step without a trainer ------*- C++ -*-===//
//
// Algorithms that wrap the training step's stages, tested on a step whose
// innermost links stand in for the trainer's: each stage does the least it
// can unless a test sets what it does.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_UNITTESTS_RUNTIME_STEPTESTUTILS_H
#define COMPOSER_UNITTESTS_RUNTIME_STEPTESTUTILS_H

#include "composer/Runtime/Algorithm.h"

#include <functional>
#include <memory>

namespace composer::runtime::testutils {

/// The trainer's links stood in for: forward runs the state's model, loss
/// is the state's recipe loss, backward is plain autograd, reduce does
/// nothing, unscale finds the gradients finite, the optimizer step steps the
/// state's optimizer (if any) when they are.
struct StandInStages final : StepStages {
  std::function<torch::Tensor(State &, const torch::Tensor &)> forwardWith;
  std::function<torch::Tensor(const torch::Tensor &, const torch::Tensor &,
                              bool)>
      lossWith;
  std::function<void(const torch::Tensor &)> backwardWith;
  std::function<bool()> unscaleWith;

  void selectBatch(TrainingStep &, SelectBatchNext) override {}
  torch::Tensor forward(TrainingStep &step, const torch::Tensor &input,
                        ForwardNext) override {
    if (forwardWith)
      return forwardWith(step.state(), input);
    return forwardModel(step.state(), input);
  }
  torch::Tensor loss(TrainingStep &step, const torch::Tensor &outputs,
                     const torch::Tensor &target, bool perSample,
                     LossNext) override {
    if (lossWith)
      return lossWith(outputs, target, perSample);
    return step.state().lossFunction->compute(outputs, target, perSample);
  }
  void backward(TrainingStep &, const torch::Tensor &loss,
                BackwardNext) override {
    if (backwardWith)
      backwardWith(loss);
    else
      loss.backward();
  }
  void reduce(TrainingStep &, ReduceNext) override {}
  bool unscale(TrainingStep &, UnscaleNext) override {
    return unscaleWith ? unscaleWith() : true;
  }
  bool clip(TrainingStep &, bool finite, ClipNext) override { return finite; }
  void optimizerStep(TrainingStep &step, bool finite,
                     OptimizerStepNext) override {
    if (finite && step.state().optimizer)
      step.state().optimizer->step();
  }
  void postStep(TrainingStep &, PostStepNext) override {}
};

/// A step over `state` with `algorithms`' links (in that order, the first
/// outermost) around stand-ins.
struct StepRig {
  StandInStages base;
  TrainingStep step;

  StepRig(State &state, std::initializer_list<Algorithm *> algorithms)
      : step(state, base) {
    for (Algorithm *algorithm : algorithms)
      if (StepStages *stages = algorithm->stepStages())
        step.addStages(*stages);
  }
};

/// Runs `event` through `algorithm` if it matches; returns whether it did.
inline bool fire(Algorithm &algorithm, Event event, State &state,
                 Logger &logger) {
  if (!algorithm.match(event, state))
    return false;
  algorithm.apply(event, state, logger);
  return true;
}

} // namespace composer::runtime::testutils

#endif // COMPOSER_UNITTESTS_RUNTIME_STEPTESTUTILS_H
