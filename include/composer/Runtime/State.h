//===- State.h - What the training loop shares with algorithms --*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_STATE_H
#define COMPOSER_RUNTIME_STATE_H

#include "composer/Runtime/Data.h"
#include "composer/Runtime/Losses.h"
#include "composer/Runtime/ModelCall.h"
#include "composer/Runtime/Optim.h"
#include "composer/Runtime/Precision.h"
#include "composer/Runtime/Time.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <map>
#include <string>

namespace composer::runtime {

class Communicator;
class GradientShards;

struct State {
  torch::jit::Module model;
  /// The model's parameters by state_dict name, in registration order.
  std::vector<std::pair<std::string, torch::Tensor>> parameters;
  Optimizer *optimizer = nullptr;

  Timestamp timestamp;
  TimeContext time;

  /// The training data's loader (null outside a Trainer): per-sample
  /// augmentations add their transforms to it at FIT_START, so they run in
  /// its workers; SWA reads an epoch again through it (readAgain).
  BatchLoader *trainLoader = nullptr;

  /// The batch being trained on, as algorithms leave it.
  Batch batch;
  /// This rank's tokens in the batch (as loaded, then as algorithms leave
  /// them: sequence length warmup's truncation trains on fewer); the token
  /// counters advance by it, whatever algorithms do to the batch's shape.
  int64_t batchTokens = 0;
  /// The microbatch being trained on (0 outside accumulation): while its
  /// events run, `batch` is that microbatch, `outputs` and `loss` its own.
  /// After the last one, `loss` is the whole batch's.
  int64_t microbatch = 0;
  /// The predictions (ModelCall::predictions) and loss of the latest forward.
  torch::Tensor outputs;
  torch::Tensor loss;
  /// How batches reach the model's forward and what is taken from its
  /// output, and that forward's whole output (a dict, a tuple).
  ModelCall modelCall;
  c10::IValue modelOutput;

  torch::Device device = torch::kCPU;
  Precision precision = Precision::FP32;
  uint64_t seed = 0;
  /// Data-parallel place of this process (0 of 1 alone).
  int rank = 0;
  int worldSize = 1;

  /// The latest evaluation's metrics ("Accuracy", "CrossEntropy") and its
  /// evaluator's label, set before EVAL_END.
  std::map<std::string, double> evalMetrics;
  std::string evalLabel;

  /// The recipe's loss (Losses.h): what the training step's loss stage and
  /// evaluation compute, and what an algorithm that needs the loss of other
  /// targets uses.
  std::shared_ptr<const Loss> lossFunction = createLoss("cross_entropy");
  /// Whether this step's gradients are finite as the training step's clip
  /// stage leaves them (loss scaling found no overflow, SAM's second
  /// gradient neither); an algorithm may clear it at AFTER_BACKWARD to skip
  /// the optimizer step.
  bool gradientsFinite = true;
  /// The data-parallel group; null in one process.
  Communicator *communicator = nullptr;
  /// Under sharded data parallelism, where this rank's gradients live after
  /// the reduce stage (Gradients.h); null otherwise.
  GradientShards *gradientShards = nullptr;

  /// Set by an algorithm or callback to end the run after this batch.
  bool stopRequested = false;
  std::string stopReason;

  /// A generator for `purpose` at the current batch, seeded from the run's
  /// seed, the batch count, the microbatch, the rank and `purpose` only: a
  /// resumed run draws the same numbers an uninterrupted one does, without
  /// saving generator state, and each rank and microbatch draws its own.
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
