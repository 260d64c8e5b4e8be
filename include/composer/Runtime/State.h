//===- State.h - What the training loop shares with algorithms --*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_STATE_H
#define COMPOSER_RUNTIME_STATE_H

#include "composer/Runtime/Data.h"
#include "composer/Runtime/Optim.h"
#include "composer/Runtime/Precision.h"
#include "composer/Runtime/Time.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <functional>
#include <map>
#include <string>

namespace composer::runtime {

class Communicator;

struct State {
  torch::jit::Module model;
  /// The model's parameters by state_dict name, in registration order.
  std::vector<std::pair<std::string, torch::Tensor>> parameters;
  Optimizer *optimizer = nullptr;

  Timestamp timestamp;
  TimeContext time;

  /// The training data's loader (null outside a Trainer): per-sample
  /// augmentations add their transforms to it at FIT_START, so they run in
  /// its workers.
  DataLoader *trainLoader = nullptr;

  /// The batch being trained on, as algorithms leave it.
  Batch batch;
  /// This rank's tokens in the batch (as loaded, then as algorithms leave
  /// them: sequence length warmup's truncation trains on fewer); the token
  /// counters advance by it, whatever algorithms do to the batch's shape.
  int64_t batchTokens = 0;
  torch::Tensor outputs;
  torch::Tensor loss;

  torch::Device device = torch::kCPU;
  Precision precision = Precision::FP32;
  uint64_t seed = 0;
  /// Data-parallel place of this process (0 of 1 alone).
  int rank = 0;
  int worldSize = 1;

  /// The latest evaluation's metrics ("Accuracy", "CrossEntropy"), set
  /// before EVAL_END.
  std::map<std::string, double> evalMetrics;

  /// Hooks the trainer sets for algorithms that run parts of the training
  /// step themselves (SAM, selective backprop, SWA); empty outside a trainer.
  ///
  /// The recipe's loss of `outputs` against `target`: the batch mean, or one
  /// value per sample when `perSample`.
  std::function<torch::Tensor(const torch::Tensor &outputs,
                              const torch::Tensor &target, bool perSample)>
      lossFunction;
  /// After a training batch's backward: forward, loss and backward again, on
  /// the inputs the model saw and the targets the loss saw, at the current
  /// weights and without firing events. The new gradients replace the old
  /// ones (averaged across ranks, unscaled). Returns whether they are finite.
  std::function<bool()> recomputeGradients;
  /// Batch `index` of `epoch` of this rank's training data, as the loader
  /// builds it (no algorithm applied).
  std::function<Batch(int64_t epoch, int64_t index)> trainingBatch;
  /// Whether this batch's gradients are finite (loss scaling found no
  /// overflow); an algorithm may clear it at AFTER_BACKWARD to skip the
  /// optimizer step.
  bool gradientsFinite = true;
  /// The data-parallel group; null in one process.
  Communicator *communicator = nullptr;

  /// Set by an algorithm or callback to end the run after this batch.
  bool stopRequested = false;
  std::string stopReason;

  /// A generator for `purpose` at the current batch, seeded from the run's
  /// seed, the batch count, the rank and `purpose` only: a resumed run draws
  /// the same numbers an uninterrupted one does, without saving generator
  /// state, and each rank draws its own.
  torch::Generator generatorFor(const std::string &purpose) const;

  /// The fraction of the run done.
  double fractionDone() const { return time.fractionDone(timestamp); }
};

/// The model's parameters (each once: a tied weight under its first name)
/// and buffers by state_dict name.
std::vector<std::pair<std::string, torch::Tensor>>
namedParameters(const torch::jit::Module &model);
std::vector<std::pair<std::string, torch::Tensor>>
namedBuffers(const torch::jit::Module &model);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_STATE_H
