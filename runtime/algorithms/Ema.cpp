//===- Ema.cpp - Exponential moving average of the weights ----------------===//
//
// Keeps an fp32 average of every parameter and floating-point buffer (integer
// buffers such as num_batches_tracked are copied, as averaging them is
// meaningless), from ema_start on: before it, evaluation sees the training
// weights. Evaluation runs with the average swapped into the model; the
// training weights go back at EVAL_END. At FIT_END the average goes into the
// model for good (Composer: the trained model is the EMA model); a later fit
// takes the training weights back first. The average is checkpointed by
// state_dict name, so a resumed run continues it exactly.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <cmath>
#include <map>
#include <stdexcept>

namespace composer::runtime {
namespace {

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

NamedTensors parametersAndBuffers(const torch::jit::Module &model) {
  NamedTensors all = namedParameters(model);
  NamedTensors buffers = namedBuffers(model);
  all.insert(all.end(), buffers.begin(), buffers.end());
  return all;
}

torch::Tensor averageCopy(const torch::Tensor &t) {
  torch::Tensor d = t.detach();
  return d.is_floating_point()
             ? d.to(torch::kFloat, /*non_blocking=*/false, /*copy=*/true)
             : d.clone();
}

struct EmaOptions {
  Time halfLife{1000, TimeUnit::Batch};
  /// Set (in [0, 1)): the average's decay per update, instead of half_life.
  double smoothing = -1;
  /// Averaging starts here, from the weights then.
  Time emaStart{0, TimeUnit::Duration};
  Time updateInterval{1, TimeUnit::Batch};
};

class Ema final : public Algorithm {
public:
  explicit Ema(const EmaOptions &options)
      : halfLife_(options.halfLife), smoothing_(options.smoothing),
        emaStart_(options.emaStart), updateInterval_(options.updateInterval) {
    if (!(halfLife_.value >= 0))
      throwInvalidOption("ema", "half_life",
                         "must be >= 0, got " + halfLife_.str());
    if (smoothing_ != -1 && !(smoothing_ >= 0 && smoothing_ < 1))
      throwInvalidOption("ema", "smoothing",
                         "must be in [0, 1), got " +
                             std::to_string(smoothing_));
    if (!(emaStart_.value >= 0))
      throwInvalidOption("ema", "ema_start",
                         "must be >= 0, got " + emaStart_.str());
    if (!(updateInterval_.value > 0))
      throwInvalidOption("ema", "update_interval",
                         "must be > 0, got " + updateInterval_.str());
  }

  std::string name() const override { return "ema"; }
  bool readsWholeWeights(Event) const override { return true; }

  bool match(Event event, const State &state) const override {
    switch (event) {
    case Event::FitStart:
      return true;
    case Event::BatchEnd:
      if (average_.empty())
        return started(state);
      return state.timestamp.batch % intervalBatches(state) == 0;
    case Event::EvalStart:
    case Event::FitEnd:
      return !average_.empty() && !averageActive_;
    case Event::EvalEnd:
      return swappedForEval_;
    default:
      return false;
    }
  }

  void apply(Event event, State &state, Logger &) override {
    torch::NoGradGuard noGrad;
    NamedTensors current = parametersAndBuffers(state.model);
    switch (event) {
    case Event::FitStart:
      if (averageActive_) // after a previous fit's FIT_END
        restoreTraining(current);
      // A checkpoint's average continues; otherwise averaging begins at
      // ema_start.
      if (!loaded_.empty() || started(state))
        initialize(current);
      break;
    case Event::BatchEnd:
      if (average_.empty())
        initialize(current);
      else
        update(current, state);
      break;
    case Event::EvalStart:
      swapInAverage(current);
      swappedForEval_ = true;
      break;
    case Event::EvalEnd:
      restoreTraining(current);
      swappedForEval_ = false;
      break;
    case Event::FitEnd:
      swapInAverage(current);
      break;
    default:
      break;
    }
  }

  void saveState(torch::serialize::OutputArchive &archive) const override {
    // Archive keys may contain '.', so state_dict names are used as they are.
    for (const auto &[name, average] : average_)
      archive.write(name, average, /*is_buffer=*/true);
  }

  void loadState(torch::serialize::InputArchive &archive) override {
    // The checkpoint's model weights are the training weights now.
    training_.clear();
    averageActive_ = swappedForEval_ = false;
    loaded_.clear();
    for (const std::string &key : archive.keys()) {
      torch::Tensor t;
      archive.read(key, t, /*is_buffer=*/true);
      loaded_[key] = t;
    }
    // Loaded after FIT_START (a second fit): replace the running average now.
    if (!average_.empty() && !loaded_.empty())
      for (auto &[name, average] : average_)
        average.copy_(loadedFor(name));
  }

private:
  /// Whether ema_start has come (Composer compares the timestamp with it).
  bool started(const State &state) const {
    return state.time.reached(state.timestamp, emaStart_);
  }

  int64_t intervalBatches(const State &state) const {
    return std::max<int64_t>(
        1, std::llround(state.time.toBatches(updateInterval_)));
  }

  void initialize(const NamedTensors &current) {
    if (!average_.empty())
      return; // a later fit continues the average
    for (const auto &[name, tensor] : current) {
      torch::Tensor average = averageCopy(tensor);
      if (!loaded_.empty())
        average.copy_(loadedFor(name));
      average_.emplace_back(name, average);
    }
    loaded_.clear();
  }

  const torch::Tensor &loadedFor(const std::string &name) const {
    auto it = loaded_.find(name);
    if (it == loaded_.end())
      throw std::runtime_error("ema: checkpoint has no average for '" + name +
                               "'");
    return it->second;
  }

  void swapInAverage(const NamedTensors &current) {
    checkLayout(current);
    training_.clear();
    for (size_t i = 0; i < current.size(); ++i) {
      training_.push_back(current[i].second.detach().clone());
      current[i].second.copy_(average_[i].second);
    }
    averageActive_ = true;
  }

  void restoreTraining(const NamedTensors &current) {
    checkLayout(current);
    for (size_t i = 0; i < current.size(); ++i)
      current[i].second.copy_(training_[i]);
    training_.clear();
    averageActive_ = false;
  }

  void checkLayout(const NamedTensors &current) const {
    if (current.size() != average_.size())
      throw std::runtime_error("ema: the model's parameters changed since "
                               "FIT_START");
  }

  void update(const NamedTensors &current, const State &state) {
    checkLayout(current);
    // Composer: smoothing = 2^(-update_interval / half_life), both in
    // batches, unless smoothing is given.
    double halfLife = state.time.toBatches(halfLife_);
    double interval = double(intervalBatches(state));
    double smoothing = smoothing_ >= 0 ? smoothing_
                       : halfLife > 0  ? std::exp2(-interval / halfLife)
                                       : 0.0;
    std::vector<torch::Tensor> averages, weights;
    for (size_t i = 0; i < current.size(); ++i) {
      const torch::Tensor &w = current[i].second;
      torch::Tensor &average = average_[i].second;
      if (!average.is_floating_point()) {
        average.copy_(w);
        continue;
      }
      averages.push_back(average);
      weights.push_back(w.detach().to(torch::kFloat));
    }
    if (averages.empty())
      return;
    at::_foreach_mul_(averages, smoothing);
    at::_foreach_add_(averages, weights, 1 - smoothing);
  }

  Time halfLife_;
  double smoothing_;
  Time emaStart_, updateInterval_;
  NamedTensors average_;                // fp32, model order
  std::vector<torch::Tensor> training_; // held aside while the average is in
  std::map<std::string, torch::Tensor> loaded_; // from a checkpoint
  bool averageActive_ = false;                  // the model holds the average
  bool swappedForEval_ = false;                 // EVAL_START put it there
};

const AlgorithmRegistration<Ema, EmaOptions>
    emaRegistration("ema",
                    {{"half_life", &EmaOptions::halfLife,
                      "smoothing is 2^(-update_interval / half_life)"},
                     {"smoothing", &EmaOptions::smoothing,
                      "the decay per update, in [0, 1); replaces half_life "
                      "(-1: unset)"},
                     {"ema_start", &EmaOptions::emaStart,
                      "averaging starts here, from the weights then"},
                     {"update_interval", &EmaOptions::updateInterval,
                      "how often the average is updated"}});

} // namespace
} // namespace composer::runtime
