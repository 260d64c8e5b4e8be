//===- Swa.cpp - Stochastic weight averaging (Izmailov et al. 2018) -------===//
//
// Composer's SWA: on each BATCH_END (update_interval in ba) or EPOCH_END (in
// ep) from `swa_start` on, every `update_interval`-th such event adds the
// weights to an equal-weight running average (torch.optim.swa_utils.
// AveragedModel: parameters only). At the first such event at or past
// `swa_end` the average goes into the model and, as torch.optim.swa_utils.
// update_bn does, BatchNorm statistics are recomputed over one epoch of this
// rank's training data in training mode as a cumulative average (averaged
// across ranks). With `swa_lr` set, the learning rate goes from its value at
// the first update to `swa_lr` over `anneal_steps` updates (SWALR), then
// stays there until SWA ends.
//
// The recomputation needs no knowledge of how the model updates its running
// statistics: with every running buffer set to 0, one forward leaves
// b = m s (m the momentum, s the batch's statistic), with every one set to 1
// it leaves (1 - m) + m s, so s = b / m whatever the model's momentum (a
// ghost BatchNorm's affine update works the same way). num_batches_tracked
// is reset before each forward, so momentum=None layers give s directly.
//
// The average, its count and the progress are checkpointed, so a resumed
// run continues them exactly.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Distributed.h"

#include <cmath>
#include <iostream>
#include <map>
#include <stdexcept>

namespace composer::runtime {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct SwaOptions {
  Time swaStart{0.7, TimeUnit::Duration};
  Time swaEnd{0.97, TimeUnit::Duration};
  Time updateInterval{1, TimeUnit::Epoch};
  double swaLr = -1;
  std::string annealStrategy = "linear";
  int64_t annealSteps = 10;
};

bool hasSuffix(const std::string &name, const std::string &suffix) {
  if (name == suffix)
    return true;
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
             0 &&
         name[name.size() - suffix.size() - 1] == '.';
}

class Swa final : public Algorithm {
public:
  explicit Swa(const SwaOptions &options) : options_(options) {
    const SwaOptions &o = options_;
    auto unitOk = [](TimeUnit unit) {
      return unit == TimeUnit::Duration || unit == TimeUnit::Epoch ||
             unit == TimeUnit::Batch;
    };
    if (!unitOk(o.swaStart.unit))
      throwInvalidOption("swa", "swa_start",
                         "must be in dur, ep or ba, got " + o.swaStart.str());
    if (o.swaEnd.unit != o.swaStart.unit)
      throw InvalidOption(
          {"swa_end", "swa_start"},
          "swa: swa_start and swa_end must have the same unit, got " +
              o.swaStart.str() + " and " + o.swaEnd.str());
    if (!(o.swaStart.value >= 0))
      throwInvalidOption("swa", "swa_start",
                         "must be >= 0, got " + o.swaStart.str());
    if (!(o.swaEnd.value > o.swaStart.value))
      throwInvalidOption("swa", "swa_end",
                         "(" + o.swaEnd.str() +
                             ") must come after swa_start (" +
                             o.swaStart.str() + ")",
                         {"swa_start"});
    if (o.updateInterval.unit != TimeUnit::Epoch &&
        o.updateInterval.unit != TimeUnit::Batch)
      throwInvalidOption("swa", "update_interval",
                         "must be in ep or ba, got " + o.updateInterval.str());
    if (!(o.updateInterval.value >= 1 &&
          o.updateInterval.value == std::floor(o.updateInterval.value)))
      throwInvalidOption("swa", "update_interval",
                         "must be a whole number >= 1, got " +
                             o.updateInterval.str());
    if (!(o.swaLr < 0 || std::isfinite(o.swaLr)))
      throwInvalidOption("swa", "swa_lr", "must be finite");
    if (o.annealStrategy != "linear" && o.annealStrategy != "cos")
      throwInvalidOption("swa", "anneal_strategy",
                         "must be 'linear' or 'cos', got '" + o.annealStrategy +
                             "'");
    if (o.annealSteps < 1)
      throwInvalidOption("swa", "anneal_steps",
                         "must be >= 1, got " + std::to_string(o.annealSteps));
  }

  std::string name() const override { return "swa"; }
  bool readsWholeWeights(Event event) const override {
    return event != Event::BeforeForward; // which sets the learning rate
  }

  bool match(Event event, const State &state) const override {
    Event updateEvent = options_.updateInterval.unit == TimeUnit::Batch
                            ? Event::BatchEnd
                            : Event::EpochEnd;
    if (event == updateEvent)
      return !completed_ && now(state) >= options_.swaStart.value;
    // The annealed learning rate replaces the schedule's, set just before.
    return event == Event::BeforeForward && schedulesLr() && updates_ > 0 &&
           !completed_ && state.optimizer;
  }

  void apply(Event event, State &state, Logger &) override {
    if (event == Event::BeforeForward) {
      double t = std::min(1.0, double(updates_) / double(options_.annealSteps));
      double alpha =
          options_.annealStrategy == "cos" ? (1 - std::cos(kPi * t)) / 2 : t;
      double lr = options_.swaLr * alpha + startLr_ * (1 - alpha);
      double initial = state.optimizer->spec().lr;
      if (initial > 0)
        state.optimizer->setLrMultiplier(lr / initial);
      return;
    }
    torch::NoGradGuard noGrad;
    if (events_ % int64_t(options_.updateInterval.value) == 0) {
      if (updates_ == 0 && state.optimizer)
        startLr_ = state.optimizer->lr();
      update(state);
    }
    ++events_;
    if (now(state) >= options_.swaEnd.value) {
      completed_ = true;
      finish(state);
    }
  }

  void saveState(torch::serialize::OutputArchive &archive) const override {
    archive.write("progress",
                  torch::tensor({double(updates_), double(events_),
                                 double(completed_), startLr_},
                                torch::kDouble),
                  /*is_buffer=*/true);
    // Archive keys may contain '.', so state_dict names are used as they are.
    for (const auto &[name, average] : average_)
      archive.write("average/" + name, average, /*is_buffer=*/true);
  }

  void loadState(torch::serialize::InputArchive &archive) override {
    torch::Tensor progress;
    archive.read("progress", progress, /*is_buffer=*/true);
    updates_ = int64_t(progress[0].item<double>());
    events_ = int64_t(progress[1].item<double>());
    completed_ = progress[2].item<double>() != 0;
    startLr_ = progress[3].item<double>();
    average_.clear();
    const std::string prefix = "average/";
    for (const std::string &key : archive.keys()) {
      if (key.compare(0, prefix.size(), prefix) != 0)
        continue;
      torch::Tensor t;
      archive.read(key, t, /*is_buffer=*/true);
      average_[key.substr(prefix.size())] = t;
    }
  }

private:
  bool schedulesLr() const { return options_.swaLr >= 0; }

  /// The run's progress in swa_start's unit.
  double now(const State &state) const {
    switch (options_.swaStart.unit) {
    case TimeUnit::Epoch:
      return double(state.timestamp.epoch);
    case TimeUnit::Batch:
      return double(state.timestamp.batch);
    default:
      return state.fractionDone();
    }
  }

  /// AveragedModel's update: avg += (w - avg) / (n + 1), the first a copy.
  void update(State &state) {
    if (updates_ == 0) {
      average_.clear();
      for (const auto &[name, p] : state.parameters)
        average_[name] = p.detach().clone();
    } else {
      for (const auto &[name, p] : state.parameters) {
        torch::Tensor &average = averageOf(name);
        average.add_((p.detach().to(average.device()) - average) /
                     double(updates_ + 1));
      }
    }
    ++updates_;
  }

  void finish(State &state) {
    if (updates_ > 0)
      for (const auto &[name, p] : state.parameters)
        p.detach().copy_(averageOf(name));
    average_.clear();
    recomputeBatchNorm(state);
  }

  torch::Tensor &averageOf(const std::string &name) {
    auto it = average_.find(name);
    if (it == average_.end())
      throw std::runtime_error("swa: no average for parameter '" + name +
                               "' (the model changed since averaging began)");
    return it->second;
  }

  struct Statistic {
    torch::Tensor buffer, sum, retained;
  };

  void recomputeBatchNorm(State &state) {
    std::vector<Statistic> statistics;
    std::vector<torch::Tensor> counters;
    for (const auto &[name, buffer] : namedBuffers(state.model)) {
      if (hasSuffix(name, "running_mean") || hasSuffix(name, "running_var"))
        statistics.push_back(
            {buffer, torch::zeros_like(buffer, torch::kDouble), {}});
      else if (hasSuffix(name, "num_batches_tracked"))
        counters.push_back(buffer);
    }
    if (statistics.empty() || !state.trainLoader)
      return;
    BatchLoader &loader = *state.trainLoader;
    if (!loader.readAgain(state.timestamp.epoch)) {
      std::cerr << "composer-train: warning: swa cannot recompute batch-norm "
                   "statistics: the training data's loader cannot read an "
                   "epoch again; the averaged model keeps the statistics "
                   "of the last model it averaged\n";
      return;
    }
    // Each batch reaches forward as training batches do (ModelCall).
    const Batch trainingBatch = state.batch;
    auto forward = [&](const Batch &batch, double fill) {
      for (Statistic &s : statistics)
        s.buffer.fill_(fill);
      for (torch::Tensor &counter : counters)
        counter.zero_();
      state.batch = batch;
      forwardModel(state, batch.input);
      for (Statistic &s : statistics)
        s.retained = s.buffer.to(torch::kDouble);
    };
    // The share 1 - m of the old statistic each forward keeps, probed on the
    // first batch twice, with the same random numbers both times.
    std::vector<torch::Tensor> kept;
    int64_t batches = 0;
    while (std::optional<Batch> read = loader.readAgainNext()) {
      Batch batch = loader.toDevice(std::move(*read), state.device);
      bool first = batches++ == 0;
      if (first) {
        at::Generator generator =
            at::globalContext().defaultGenerator(state.device);
        torch::Tensor rngState = generator.get_state();
        forward(batch, 1);
        for (Statistic &s : statistics)
          kept.push_back(s.retained);
        generator.set_state(rngState);
      }
      forward(batch, 0);
      for (size_t i = 0; i < statistics.size(); ++i) {
        Statistic &s = statistics[i];
        kept[i] = first ? kept[i] - s.retained : kept[i];
        s.sum.add_(s.retained);
      }
    }
    state.batch = trainingBatch;
    if (batches == 0)
      return;
    for (size_t i = 0; i < statistics.size(); ++i) {
      Statistic &s = statistics[i];
      torch::Tensor momentum = 1 - kept[i];
      // A layer whose statistics never move (momentum 0) keeps zeros: there
      // is nothing to recover, as with update_bn on such a layer.
      torch::Tensor mean = torch::where(momentum.abs() > 1e-12,
                                        s.sum / (momentum * double(batches)),
                                        torch::zeros_like(s.sum));
      s.sum = mean;
    }
    if (state.communicator && state.worldSize > 1) {
      for (Statistic &s : statistics) {
        state.communicator->allReduceSum(s.sum);
        s.sum /= double(state.worldSize);
      }
    }
    for (Statistic &s : statistics)
      s.buffer.copy_(s.sum);
    for (torch::Tensor &counter : counters)
      counter.fill_(batches);
  }

  SwaOptions options_;
  std::map<std::string, torch::Tensor> average_; // by state_dict name
  int64_t updates_ = 0;                          // weights averaged so far
  int64_t events_ = 0; // update events since swa_start
  bool completed_ = false;
  double startLr_ = 0;
};

const AlgorithmRegistration<Swa, SwaOptions> swaRegistration(
    "swa", {{"swa_start", &SwaOptions::swaStart,
             "when averaging starts (dur, ep or ba)"},
            {"swa_end", &SwaOptions::swaEnd,
             "when the average replaces the weights (swa_start's unit)"},
            {"update_interval", &SwaOptions::updateInterval,
             "how often the average takes the weights (ep or ba)"},
            {"swa_lr", &SwaOptions::swaLr,
             "learning rate annealed to while averaging; negative: none, the "
             "schedule goes on"},
            {"anneal_strategy", &SwaOptions::annealStrategy,
             "how the learning rate goes to swa_lr: 'linear' or 'cos'"},
            {"anneal_steps", &SwaOptions::annealSteps,
             "updates over which the learning rate reaches swa_lr"}});

} // namespace
} // namespace composer::runtime
