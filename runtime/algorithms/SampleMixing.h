//===- SampleMixing.h - What MixUp and CutMix share -------------*- C++ -*-===//
//
// Both mix each sample with another one of the batch (a permutation drawn at
// BEFORE_FORWARD) and mix the targets the same way at BEFORE_LOSS, once the
// number of classes is known from the outputs.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_ALGORITHMS_SAMPLEMIXING_H
#define COMPOSER_RUNTIME_ALGORITHMS_SAMPLEMIXING_H

#include "composer/Runtime/Algorithm.h"

namespace composer::runtime {

/// z ~ Beta(a, a) as G1 / (G1 + G2), G ~ Gamma(a, 1): LibTorch has no Beta
/// sampler that takes a generator, but its gamma does.
double sampleBeta(double alpha, torch::Generator &generator);

class SampleMixing : public Algorithm {
public:
  bool match(Event event, const State &state) const final;
  void apply(Event event, State &state, Logger &logger) final;

protected:
  /// Whether this batch's inputs can be mixed.
  virtual bool canMix(const Batch &batch) const = 0;
  /// Mixes `state.batch.input` with a permutation of its rows drawn from
  /// `generator`; returns the weight of the original samples in the targets
  /// and the permutation.
  virtual std::pair<double, torch::Tensor>
  mixInputs(State &state, torch::Generator &generator) = 0;

private:
  double lambda_ = 1;
  torch::Tensor permutation_; // set between BEFORE_FORWARD and BEFORE_LOSS
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ALGORITHMS_SAMPLEMIXING_H
