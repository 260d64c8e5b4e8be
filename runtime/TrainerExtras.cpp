//===- TrainerExtras.cpp - Prediction and a run's extension ---------------===//
//
// What a Trainer does besides its loop: predicting on a loader's batches,
// training further than it was asked at first, and recording what it was
// asked to do.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Trainer.h"

#include "CheckpointFiles.h"

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <chrono>
#include <iostream>
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

namespace {
/// `module`'s parameters and buffers (those in `names`, or all when it is
/// empty), contiguous copies, as torch.load reads a state_dict.
std::vector<char> pickledStateDict(const torch::jit::Module &module,
                                   const std::set<std::string> &names) {
  c10::Dict<std::string, torch::Tensor> stateDict;
  auto keep = [&](const std::string &name, const torch::Tensor &tensor) {
    if (names.empty() || names.count(name))
      stateDict.insert(name, tensor.detach().contiguous().clone());
  };
  for (const auto &[name, tensor] : namedParameters(module))
    keep(name, tensor);
  for (const auto &[name, tensor] : namedBuffers(module))
    keep(name, tensor);
  return torch::pickle_save(stateDict);
}

std::string bytesOf(const torch::jit::Module &module) {
  std::ostringstream out;
  module.save(out);
  return out.str();
}

/// `module` (in eval mode) frozen, as TorchScript bytes. Freezing
/// specializes forward for eval mode: what acts only in training
/// (stochastic depth's draws, gyro dropout's masks) folds away with the
/// training flag, and the weights become constants. Where freezing fails,
/// the module as it is, with a warning naming `path`.
std::string frozenBytes(const torch::jit::Module &module,
                        const std::string &path) {
  try {
    // Freezing inlines every call, which LibTorch does fully only while the
    // graph executor optimizes (the trainer turns that off).
    torch::jit::GraphOptimizerEnabledGuard inlinesFully(true);
    return bytesOf(
        torch::jit::freeze(module, c10::nullopt, /*optimize_numerics=*/false));
  } catch (const c10::Error &error) {
    std::string reason = error.what_without_backtrace();
    std::cerr << "composer-train: warning: " << path
              << " is exported unfrozen ("
              << reason.substr(0, reason.find('\n'))
              << "): what acts only in training stays in it, inactive in eval "
                 "mode\n";
    return bytesOf(module);
  }
}
} // namespace

void Trainer::exportForInference(const std::string &modelPath,
                                 const std::string &stateDictPath,
                                 const std::set<std::string> &names) {
  if (sharded_ && sharded_->shardsParameters())
    throw std::invalid_argument(
        "exporting needs whole weights, and full_shard keeps them in shards: "
        "consolidate a checkpoint (composer-train --consolidate) and export "
        "from it");
  start();
  // A copy through bytes: its class types are its own, so freezing (which
  // rewrites them) cannot touch the trained model's.
  std::stringstream serialized;
  state_.model.save(serialized);
  torch::jit::Module copy = torch::jit::load(serialized, torch::kCPU);
  copy.eval();
  std::vector<char> stateDict;
  if (!stateDictPath.empty())
    stateDict = pickledStateDict(copy, names);
  std::string model = frozenBytes(copy, modelPath);
  writeAtomically(modelPath, model.data(), model.size(), "the exported model");
  if (!stateDictPath.empty())
    writeAtomically(stateDictPath, stateDict.data(), stateDict.size(),
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
