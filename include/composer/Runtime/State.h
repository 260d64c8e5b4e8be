//===- State.h - What the training loop shares with algorithms --*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_STATE_H
#define COMPOSER_RUNTIME_STATE_H

#include "composer/Runtime/Data.h"
#include "composer/Runtime/Optim.h"
#include "composer/Runtime/Precision.h"
#include "composer/Runtime/Time.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <map>
#include <string>

namespace composer::runtime {

struct State {
  torch::jit::Module model;
  /// The model's parameters by state_dict name, in registration order.
  std::vector<std::pair<std::string, torch::Tensor>> parameters;
  Optimizer *optimizer = nullptr;

  Timestamp timestamp;
  TimeContext time;

  /// The batch being trained on, as algorithms leave it.
  Batch batch;
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

/// The model's parameters and buffers by state_dict name.
std::vector<std::pair<std::string, torch::Tensor>>
namedParameters(const torch::jit::Module &model);
std::vector<std::pair<std::string, torch::Tensor>>
namedBuffers(const torch::jit::Module &model);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_STATE_H
