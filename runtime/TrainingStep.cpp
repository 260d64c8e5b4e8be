//===- TrainingStep.cpp - The training step's stages ----------------------===//

#include "composer/Runtime/TrainingStep.h"
#include "composer/Runtime/Distributed.h"

#include <stdexcept>

namespace composer::runtime {

torch::Tensor forwardModel(State &state, const torch::Tensor &input) {
  auto [arguments, keywords] = state.modelCall.arguments(state.batch, input);
  state.modelOutput = state.model.forward(std::move(arguments), keywords);
  try {
    return state.modelCall.predictions(state.modelOutput);
  } catch (const std::invalid_argument &e) {
    throw TrainingError(e.what());
  }
}

void zeroGradients(State &state) {
  if (state.optimizer)
    state.optimizer->zeroGrad();
  for (auto &[name, parameter] : state.parameters)
    parameter.mutable_grad().reset();
}

StepStages::~StepStages() = default;

//===----------------------------------------------------------------------===//
// The trainer's own stages
//===----------------------------------------------------------------------===//

void StandardStages::selectBatch(TrainingStep &, SelectBatchNext) {}

torch::Tensor StandardStages::forward(TrainingStep &step,
                                      const torch::Tensor &input, ForwardNext) {
  return forwardModel(step.state(), input);
}

torch::Tensor StandardStages::loss(TrainingStep &step,
                                   const torch::Tensor &outputs,
                                   const torch::Tensor &target, bool perSample,
                                   LossNext) {
  State &state = step.state();
  if (!state.modelCall.lossFromModel)
    return state.lossFunction->compute(outputs, target, perSample);
  if (perSample)
    throw TrainingError("loss: model gives one loss for the batch; per-sample "
                        "losses (selective_backprop) need a named loss");
  try {
    return state.modelCall.loss(state.modelOutput);
  } catch (const std::invalid_argument &e) {
    throw TrainingError(e.what());
  }
}

// A failed collective surfaces in whichever of backward (the all-reduces
// autograd hooks start) and reduce (waiting for them) notices it; either
// turns it into a DistributedError naming the lost rank.
void StandardStages::backward(TrainingStep &step, const torch::Tensor &loss,
                              BackwardNext) {
  Communicator *communicator = step.state().communicator;
  if (!communicator || !step.overlapsReduction()) {
    scaler_.scale(loss).backward();
    return;
  }
  reductionStarted_ = true;
  communicator->prepareForBackward(loss);
  try {
    scaler_.scale(loss).backward();
  } catch (const DistributedError &) {
    throw;
  } catch (const std::exception &e) {
    communicator->fail(e.what());
  }
}

void StandardStages::reduce(TrainingStep &step, ReduceNext) {
  Communicator *communicator = step.state().communicator;
  if (!communicator)
    return;
  bool started = reductionStarted_;
  reductionStarted_ = false;
  try {
    if (started)
      communicator->finishBackward();
    else
      communicator->averageAccumulatedGradients();
  } catch (const DistributedError &) {
    throw;
  } catch (const std::exception &e) {
    communicator->fail(e.what());
  }
}

bool StandardStages::unscale(TrainingStep &step, UnscaleNext) {
  if (!scaler_.enabled())
    return true;
  std::vector<torch::Tensor> parameters;
  for (const auto &[name, parameter] : step.state().parameters)
    parameters.push_back(parameter);
  return scaler_.unscale(parameters);
}

bool StandardStages::clip(TrainingStep &, bool finite, ClipNext) {
  return finite;
}

void StandardStages::optimizerStep(TrainingStep &step, bool finite,
                                   OptimizerStepNext) {
  if (finite)
    step.state().optimizer->step();
  scaler_.update(finite);
}

void StandardStages::postStep(TrainingStep &, PostStepNext) {}

//===----------------------------------------------------------------------===//
// The chains
//===----------------------------------------------------------------------===//

TrainingStep::TrainingStep(State &state, StepStages &base)
    : state_(state), links_{&base} {}

void TrainingStep::addStages(StepStages &stages) {
  links_.insert(links_.end() - 1, &stages);
}

StepStages &TrainingStep::link(size_t index) {
  // Only a base that leaves a stage to StepStages' pass-through (a test's
  // stand-in) gets here.
  if (index >= links_.size())
    throw std::logic_error("a training step stage has no link after the "
                           "base's; the base must implement it");
  return *links_[index];
}

void TrainingStep::selectBatch() {
  SelectBatchNext(*this, &StepStages::selectBatch, 0)();
}

torch::Tensor TrainingStep::forward(const torch::Tensor &input) {
  return ForwardNext(*this, &StepStages::forward, 0)(input);
}

torch::Tensor TrainingStep::loss(const torch::Tensor &outputs,
                                 const torch::Tensor &target, bool perSample) {
  return LossNext(*this, &StepStages::loss, 0)(outputs, target, perSample);
}

void TrainingStep::backward(const torch::Tensor &loss) {
  BackwardNext(*this, &StepStages::backward, 0)(loss);
}

void TrainingStep::reduce() { ReduceNext(*this, &StepStages::reduce, 0)(); }

bool TrainingStep::unscale() {
  return UnscaleNext(*this, &StepStages::unscale, 0)();
}

bool TrainingStep::clip(bool finite) {
  return ClipNext(*this, &StepStages::clip, 0)(finite);
}

void TrainingStep::optimizerStep(bool finite) {
  OptimizerStepNext(*this, &StepStages::optimizerStep, 0)(finite);
}

void TrainingStep::postStep() {
  PostStepNext(*this, &StepStages::postStep, 0)();
}

bool TrainingStep::recomputeGradients() {
  zeroGradients(state_);
  const Batch batch = state_.batch;
  bool overlap = overlapReduction_;
  for (size_t index = 0; index < microbatches_.size(); ++index) {
    const Microbatch &microbatch = microbatches_[index];
    // The model's other inputs come from the state's batch.
    state_.batch.columns = microbatch.columns;
    state_.batch.target = microbatch.target;
    torch::Tensor loss;
    {
      AutocastGuard autocast(state_.precision, state_.device);
      loss = this->loss(forward(microbatch.input), microbatch.target);
    }
    overlapReduction_ = overlap && index + 1 == microbatches_.size();
    backward(microbatch.weight == 1.0 ? loss : loss * microbatch.weight);
  }
  overlapReduction_ = overlap;
  state_.batch = batch;
  reduce();
  return unscale();
}

} // namespace composer::runtime
