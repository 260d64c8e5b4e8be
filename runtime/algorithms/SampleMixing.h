//===- SampleMixing.h - What MixUp and CutMix share -------------*- C++ -*-===//
//
// Both mix each sample with another one of the batch (a permutation drawn at
// BEFORE_FORWARD) and mix the targets the same way at BEFORE_LOSS, once the
// number of classes is known from the outputs; or, with Composer's
// `interpolate_loss`, keep the targets and mix the loss at BEFORE_BACKWARD:
// lambda L(y) + (1 - lambda) L(y permuted), lambda the weight of the
// original samples.
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
  explicit SampleMixing(bool interpolateLoss)
      : interpolateLoss_(interpolateLoss) {}

  bool match(Event event, const State &state) const final;
  void apply(Event event, State &state, Logger &logger) final;
  bool interpolatesLoss() const final { return interpolateLoss_; }

protected:
  /// Whether this batch's inputs can be mixed.
  virtual bool canMix(const Batch &batch) const = 0;
  /// Mixes `state.batch.input` with a permutation of its rows drawn from
  /// `generator`; returns the weight of the original samples in the targets
  /// and the permutation.
  virtual std::pair<double, torch::Tensor>
  mixInputs(State &state, torch::Generator &generator) = 0;

private:
  bool interpolateLoss_;
  double lambda_ = 1;
  /// Set from BEFORE_FORWARD until the targets or the loss are mixed.
  torch::Tensor permutation_;
  /// The targets permuted at BEFORE_FORWARD, for `interpolate_loss`
  /// (Composer's permuted_target: before any algorithm changes them).
  torch::Tensor permutedTarget_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ALGORITHMS_SAMPLEMIXING_H
