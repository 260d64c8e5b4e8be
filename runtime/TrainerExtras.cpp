//===- TrainerExtras.cpp - Prediction and a run's extension ---------------===//
//
// What a Trainer does besides its loop: predicting on a loader's batches,
// training further than it was asked at first, and recording what it was
// asked to do.
//
//===----------------------------------------------------------------------===//

#include "CheckpointFiles.h"
#include "composer/Runtime/Trainer.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <chrono>
#include <sstream>

namespace composer::runtime {

std::vector<c10::IValue> Trainer::predict(BatchLoader &loader,
                                          int64_t subsetNumBatches) {
  std::vector<c10::IValue> outputs;
  fire(Event::PredictStart);
  bool training = state_.model.is_training();
  state_.model.eval();
  {
    torch::NoGradGuard noGrad;
    AutocastGuard autocast(config_.precision, config_.device);
    loader.startEpoch(0);
    while (subsetNumBatches <= 0 ||
           int64_t(outputs.size()) < subsetNumBatches) {
      std::optional<Batch> batch = loader.next();
      if (!batch)
        break;
      state_.batch = onDevice(std::move(*batch), loader);
      fire(Event::PredictBatchStart);
      fire(Event::PredictBeforeForward);
      state_.outputs = forwardModel(state_, state_.batch.input);
      fire(Event::PredictAfterForward);
      outputs.push_back(state_.modelOutput);
      fire(Event::PredictBatchEnd);
    }
  }
  if (training)
    state_.model.train();
  fire(Event::PredictEnd);
  return outputs;
}

void Trainer::exportForInference(const std::string &modelPath,
                                 const std::string &stateDictPath,
                                 const std::set<std::string> &names) {
  if (sharded_ && sharded_->shardsParameters())
    throw std::invalid_argument(
        "exporting needs whole weights, and full_shard keeps them in shards: "
        "consolidate a checkpoint (composer-train --consolidate) and export "
        "from it");
  start();
  torch::jit::Module copy = state_.model.deepcopy();
  copy.eval();
  copy.to(torch::kCPU);
  std::ostringstream model;
  copy.save(model);
  std::string bytes = model.str();
  writeAtomically(modelPath, bytes.data(), bytes.size(), "the exported model");
  if (stateDictPath.empty())
    return;
  c10::Dict<std::string, torch::Tensor> stateDict;
  auto keep = [&](const std::string &name, const torch::Tensor &tensor) {
    if (names.empty() || names.count(name))
      stateDict.insert(name, tensor.detach().contiguous());
  };
  for (const auto &[name, tensor] : namedParameters(copy))
    keep(name, tensor);
  for (const auto &[name, tensor] : namedBuffers(copy))
    keep(name, tensor);
  std::vector<char> pickled = torch::pickle_save(stateDict);
  writeAtomically(stateDictPath, pickled.data(), pickled.size(),
                  "the exported state_dict");
}

void Trainer::extendDuration(const Time &duration) {
  if (duration.unit == TimeUnit::Duration)
    throw std::invalid_argument("a duration to train further cannot be in "
                                "'dur'; give it in ep, ba, sp or tok");
  if (duration.value <= 0)
    throw std::invalid_argument("a duration to train further must be "
                                "positive, not " +
                                duration.str());
  state_.time.maxDuration = {
      state_.timestamp.get(duration.unit) + duration.value, duration.unit};
  state_.stopRequested = false;
  state_.stopReason.clear();
}

void Trainer::logHyperparameters() {
  std::map<std::string, std::string> logged = config_.hyperparameters;
  std::string name = config_.runName;
  if (name.empty())
    name = "run-" + std::to_string(
                        std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
  logged["run_name"] = name;
  config_.logger.logHyperparameters(logged);
}

} // namespace composer::runtime
