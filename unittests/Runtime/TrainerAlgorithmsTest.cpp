//===- TrainerAlgorithmsTest.cpp - Algorithms inside the training loop ----===//
//
// Composer's ordering rules as the trainer delivers events, the training
// step's stages between them, and SAM, SWA and selective backprop through a
// real trainer, against values computed here.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

using namespace composer::runtime;

namespace {

/// A two-parameter linear model, output x . w, on [B, 1, 1, 2] images.
torch::jit::Module twoParameterModel(double w1, double w2) {
  torch::jit::Module model("Two");
  model.register_parameter(
      "w", torch::tensor({w1, w2}, torch::kFloat).requires_grad_(), false);
  model.define(R"(
    def forward(self, x):
        return torch.sum(torch.flatten(x, 1) * self.w, 1)
  )");
  return model;
}

std::shared_ptr<DataLoader> pairLoader(int64_t samples, int64_t batchSize) {
  torch::manual_seed(9);
  torch::Tensor inputs =
      torch::randint(0, 255, {samples, 1, 1, 2}, torch::kUInt8);
  auto dataset = std::make_shared<TensorDataset>(
      inputs, torch::randint(0, 3, {samples}, torch::kLong));
  DataLoaderOptions options;
  options.batchSize = batchSize;
  options.seed = 2;
  return std::make_shared<DataLoader>(dataset, options);
}

TrainerConfig twoParameterConfig(double w1, double w2) {
  TrainerConfig config;
  config.model = twoParameterModel(w1, w2);
  config.trainLoader = pairLoader(8, 8);
  config.loss = createLoss("mse");
  config.optimizer.lr = 0.1;
  config.maxDuration = parseTime("1ba");
  config.threads = 1;
  return config;
}

/// The first batch the configuration's loader gives.
Batch firstBatch(const TrainerConfig &config) {
  return dynamic_cast<const DataLoader &>(*config.trainLoader).makeBatch(0, 0);
}

/// Gradient of mean((x . w - y)^2) in double.
std::vector<double> mseGradient(const torch::Tensor &x, const torch::Tensor &y,
                                const std::vector<double> &w) {
  torch::Tensor xd = x.flatten(1).to(torch::kDouble);
  torch::Tensor yd = y.to(torch::kDouble);
  torch::Tensor wd = torch::tensor(w, torch::kDouble);
  torch::Tensor r = (xd * wd).sum(1) - yd;
  torch::Tensor g = (2.0 / double(x.size(0))) * (r.unsqueeze(1) * xd).sum(0);
  return {g[0].item<double>(), g[1].item<double>()};
}

TEST(SamTrainerTest, OneStepMatchesTheHandComputation) {
  const double rho = 0.05, lr = 0.1;
  std::vector<double> w = {0.3, -0.2};
  TrainerConfig config = twoParameterConfig(w[0], w[1]);
  Batch batch = firstBatch(config);
  config.algorithms.push_back(createAlgorithm("sam", {{"rho", rho}}));
  Trainer trainer(std::move(config));
  trainer.fit();

  std::vector<double> g = mseGradient(batch.input, batch.target, w);
  double norm = std::hypot(g[0], g[1]);
  std::vector<double> perturbed = {w[0] + rho * g[0] / (norm + 1e-12),
                                   w[1] + rho * g[1] / (norm + 1e-12)};
  std::vector<double> h = mseGradient(batch.input, batch.target, perturbed);
  torch::Tensor trained = namedParameters(trainer.state().model)[0].second;
  EXPECT_NEAR(trained[0].item<double>(), w[0] - lr * h[0], 1e-5);
  EXPECT_NEAR(trained[1].item<double>(), w[1] - lr * h[1], 1e-5);
  // Not the plain step.
  EXPECT_GT(std::abs(trained[0].item<double>() - (w[0] - lr * g[0])), 1e-4);
}

TEST(SamTrainerTest, AnInfiniteGradientSkipsTheWholeStep) {
  // sqrt has an infinite derivative at 0: the first gradient is infinite
  // while the loss is finite (fp32, no loss scaling).
  TrainerConfig config;
  torch::jit::Module model("Root");
  model.register_parameter("w", torch::tensor({0.0f, 1.0f}).requires_grad_(),
                           false);
  model.define(R"(
    def forward(self, x):
        return torch.sum(torch.flatten(x, 1) * torch.sqrt(self.w), 1)
  )");
  config.model = model;
  config.trainLoader = pairLoader(8, 8);
  config.loss = createLoss("mse");
  config.maxDuration = parseTime("1ba");
  config.threads = 1;
  config.algorithms.push_back(createAlgorithm("sam"));
  Trainer trainer(std::move(config));
  trainer.fit();
  torch::Tensor w = namedParameters(trainer.state().model)[0].second;
  EXPECT_TRUE(torch::equal(w, torch::tensor({0.0f, 1.0f}))) << w;
  EXPECT_EQ(trainer.state().timestamp.batch, 1);
}

TEST(SelectiveBackpropTrainerTest, GradientsComeFromTheKeptSamplesOnly) {
  // The probe, listed first, sees the kept samples from AFTER_DATALOADER on:
  // selective backprop chose them before any algorithm saw the batch.
  struct Probe : Algorithm {
    std::string name() const override { return "probe"; }
    bool match(Event event, const State &) const override {
      return event == Event::AfterDataloader || event == Event::AfterBackward;
    }
    void apply(Event event, State &state, Logger &) override {
      if (event == Event::AfterDataloader) {
        kept = state.batch;
        return;
      }
      grad = state.parameters[0].second.grad().clone();
    }
    Batch kept;
    torch::Tensor grad;
  };
  const std::vector<double> w = {0.5, -0.5};
  TrainerConfig config = twoParameterConfig(w[0], w[1]);
  config.trainLoader = pairLoader(16, 16);
  auto probe = std::make_unique<Probe>();
  Probe *seen = probe.get();
  config.algorithms.push_back(std::move(probe));
  config.algorithms.push_back(createAlgorithm(
      "selective_backprop",
      {{"start", 0.0}, {"end", 1.0}, {"keep", 0.25}, {"interrupt", 0}}));
  Batch full = firstBatch(config);
  Trainer trainer(std::move(config));
  trainer.fit();

  ASSERT_EQ(seen->kept.size(), 4);
  // Each kept sample is one of the batch's, with its own target.
  for (int64_t i = 0; i < 4; ++i) {
    bool found = false;
    for (int64_t j = 0; j < 16 && !found; ++j)
      found = torch::equal(seen->kept.input[i], full.input[j]) &&
              seen->kept.target[i].item<int64_t>() ==
                  full.target[j].item<int64_t>();
    EXPECT_TRUE(found) << "kept sample " << i;
  }
  std::vector<double> expected =
      mseGradient(seen->kept.input, seen->kept.target, w);
  EXPECT_NEAR(seen->grad[0].item<double>(), expected[0], 1e-4);
  EXPECT_NEAR(seen->grad[1].item<double>(), expected[1], 1e-4);
  std::vector<double> whole = mseGradient(full.input, full.target, w);
  EXPECT_GT(std::abs(whole[0] - expected[0]) + std::abs(whole[1] - expected[1]),
            1e-3);
  // Time counts the samples the loader gave, as Composer does.
  EXPECT_EQ(trainer.state().timestamp.sample, 16);
}

TEST(SwaTrainerTest, AnnealsTheLearningRateToSwaLr) {
  struct LrRecorder : Callback {
    void runEvent(Event event, State &state, Logger &) override {
      if (event == Event::AfterForward)
        lrs.push_back(state.optimizer->lr());
    }
    std::vector<double> lrs;
  };
  TrainerConfig config = twoParameterConfig(0.1, 0.1);
  config.trainLoader = pairLoader(16, 2);
  config.maxDuration = parseTime("8ba");
  config.optimizer.lr = 0.01;
  config.algorithms.push_back(
      createAlgorithm("swa", {{"swa_start", Time{2, TimeUnit::Batch}},
                              {"swa_end", Time{7, TimeUnit::Batch}},
                              {"update_interval", Time{1, TimeUnit::Batch}},
                              {"swa_lr", 0.001},
                              {"anneal_steps", int64_t(4)}}));
  auto recorder = std::make_unique<LrRecorder>();
  LrRecorder *seen = recorder.get();
  config.callbacks.push_back(std::move(recorder));
  Trainer trainer(std::move(config));
  trainer.fit();
  // Batches 1-2 at the schedule's 0.01; the first update at the end of
  // batch 2, then 1/4 of the way to 0.001 per update; back to the schedule
  // once SWA ended at batch 7.
  std::vector<double> expected = {0.01,    0.01,  0.00775, 0.0055,
                                  0.00325, 0.001, 0.001,   0.01};
  ASSERT_EQ(seen->lrs.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(seen->lrs[i], expected[i], 1e-9) << "batch " << i + 1;
}

//===----------------------------------------------------------------------===//
// Composer's ordering rules
//===----------------------------------------------------------------------===//

using EventLog = std::vector<std::pair<std::string, Event>>;

struct Recorder : Algorithm {
  Recorder(std::string name, EventLog &log, bool interpolates = false)
      : name_(std::move(name)), log_(log), interpolates_(interpolates) {}
  std::string name() const override { return name_; }
  bool interpolatesLoss() const override { return interpolates_; }
  bool match(Event event, const State &) const override {
    return event != Event::Init;
  }
  void apply(Event event, State &, Logger &) override {
    log_.emplace_back(name_, event);
  }
  std::string name_;
  EventLog &log_;
  bool interpolates_;
};

TEST(AlgorithmOrderTest, AfterEventsReversed) {
  EventLog log;
  TrainerConfig config = twoParameterConfig(0.1, 0.1);
  config.algorithms.push_back(std::make_unique<Recorder>("a", log));
  config.algorithms.push_back(std::make_unique<Recorder>("b", log));
  config.algorithms.push_back(std::make_unique<Recorder>("c", log));
  Trainer trainer(std::move(config));
  EXPECT_TRUE(trainer.warnings().empty());
  trainer.fit();
  auto orderAt = [&](Event event) {
    std::vector<std::string> names;
    for (const auto &[name, e] : log)
      if (e == event)
        names.push_back(name);
    return names;
  };
  using Names = std::vector<std::string>;
  for (Event event :
       {Event::BatchStart, Event::BeforeForward, Event::BeforeLoss,
        Event::BeforeBackward, Event::BatchEnd, Event::EpochEnd})
    EXPECT_EQ(orderAt(event), (Names{"a", "b", "c"})) << eventName(event);
  for (Event event :
       {Event::AfterDataloader, Event::AfterForward, Event::AfterLoss,
        Event::AfterBackward, Event::AfterTrainBatch})
    EXPECT_EQ(orderAt(event), (Names{"c", "b", "a"})) << eventName(event);
  // The whole first batch, as delivered.
  std::vector<std::string> sequence;
  for (const auto &[name, e] : log) {
    if (e == Event::BatchEnd)
      break;
    if (e == Event::BeforeLoss || e == Event::AfterLoss)
      sequence.push_back(std::string(eventName(e)) + ":" + name);
  }
  EXPECT_EQ(sequence, (Names{"BEFORE_LOSS:a", "BEFORE_LOSS:b", "BEFORE_LOSS:c",
                             "AFTER_LOSS:c", "AFTER_LOSS:b", "AFTER_LOSS:a"}));
}

//===----------------------------------------------------------------------===//
// The training step's stages
//===----------------------------------------------------------------------===//

/// Logs every stage it passes through and every event, in one sequence.
struct StageTracer : Algorithm, StepStages {
  explicit StageTracer(std::vector<std::string> &log) : log_(log) {}
  std::string name() const override { return "tracer"; }
  StepStages *stepStages() override { return this; }
  bool match(Event event, const State &) const override {
    return event >= Event::AfterDataloader && event <= Event::BatchEnd;
  }
  void apply(Event event, State &, Logger &) override {
    log_.push_back(eventName(event));
  }

  void selectBatch(TrainingStep &, SelectBatchNext next) override {
    log_.push_back("selectBatch");
    next();
  }
  torch::Tensor forward(TrainingStep &, const torch::Tensor &input,
                        ForwardNext next) override {
    log_.push_back("forward");
    return next(input);
  }
  torch::Tensor loss(TrainingStep &, const torch::Tensor &outputs,
                     const torch::Tensor &target, bool perSample,
                     LossNext next) override {
    log_.push_back("loss");
    return next(outputs, target, perSample);
  }
  void backward(TrainingStep &, const torch::Tensor &loss,
                BackwardNext next) override {
    log_.push_back("backward");
    next(loss);
  }
  void reduce(TrainingStep &, ReduceNext next) override {
    log_.push_back("reduce");
    next();
  }
  bool unscale(TrainingStep &, UnscaleNext next) override {
    log_.push_back("unscale");
    return next();
  }
  bool clip(TrainingStep &, bool finite, ClipNext next) override {
    log_.push_back("clip");
    return next(finite);
  }
  void optimizerStep(TrainingStep &, bool finite,
                     OptimizerStepNext next) override {
    log_.push_back("optimizerStep");
    next(finite);
  }
  void postStep(TrainingStep &, PostStepNext next) override {
    log_.push_back("postStep");
    next();
  }

  std::vector<std::string> &log_;
};

TEST(TrainingStepTrainerTest, StagesRunBetweenComposersEvents) {
  std::vector<std::string> log;
  TrainerConfig config = twoParameterConfig(0.1, 0.1);
  config.algorithms.push_back(std::make_unique<StageTracer>(log));
  Trainer trainer(std::move(config));
  trainer.fit();
  EXPECT_EQ(log, (std::vector<std::string>{"selectBatch",
                                           "AFTER_DATALOADER",
                                           "BATCH_START",
                                           "BEFORE_TRAIN_BATCH",
                                           "BEFORE_FORWARD",
                                           "forward",
                                           "AFTER_FORWARD",
                                           "BEFORE_LOSS",
                                           "loss",
                                           "AFTER_LOSS",
                                           "BEFORE_BACKWARD",
                                           "backward",
                                           "reduce",
                                           "unscale",
                                           "clip",
                                           "AFTER_BACKWARD",
                                           "optimizerStep",
                                           "postStep",
                                           "AFTER_TRAIN_BATCH",
                                           "BATCH_END"}));
}

TEST(TrainingStepTrainerTest, AnAlgorithmReplacesTheOptimizerStep) {
  // A step-altering algorithm is one class: the trainer links its stages.
  // This one takes a plain SGD step of its own, at twice the learning rate.
  struct DoubleStep : Algorithm, StepStages {
    std::string name() const override { return "double_step"; }
    StepStages *stepStages() override { return this; }
    void optimizerStep(TrainingStep &step, bool finite,
                       OptimizerStepNext) override {
      torch::NoGradGuard noGrad;
      State &state = step.state();
      if (finite)
        for (auto &[name, p] : state.parameters)
          p.sub_(p.grad() * (2 * state.optimizer->lr()));
    }
  };
  const std::vector<double> w = {0.3, -0.2};
  TrainerConfig config = twoParameterConfig(w[0], w[1]);
  Batch batch = firstBatch(config);
  config.algorithms.push_back(std::make_unique<DoubleStep>());
  Trainer trainer(std::move(config));
  trainer.fit();
  std::vector<double> g = mseGradient(batch.input, batch.target, w);
  torch::Tensor trained = namedParameters(trainer.state().model)[0].second;
  EXPECT_NEAR(trained[0].item<double>(), w[0] - 0.2 * g[0], 1e-5);
  EXPECT_NEAR(trained[1].item<double>(), w[1] - 0.2 * g[1], 1e-5);
}

TEST(AlgorithmOrderTest, WarnsWhenTwoAlgorithmsInterpolateTheLoss) {
  EventLog log;
  TrainerConfig one = twoParameterConfig(0.1, 0.1);
  one.algorithms.push_back(std::make_unique<Recorder>("mix", log, true));
  one.algorithms.push_back(std::make_unique<Recorder>("other", log));
  EXPECT_TRUE(Trainer(std::move(one)).warnings().empty());

  TrainerConfig two = twoParameterConfig(0.1, 0.1);
  two.algorithms.push_back(std::make_unique<Recorder>("mix", log, true));
  two.algorithms.push_back(std::make_unique<Recorder>("other", log));
  two.algorithms.push_back(std::make_unique<Recorder>("cut", log, true));
  Trainer trainer(std::move(two));
  ASSERT_EQ(trainer.warnings().size(), 1u);
  EXPECT_EQ(trainer.warnings()[0],
            "multiple algorithms interpolating the loss can lead to "
            "unexpected behavior: mix, cut");
}

TEST(AlgorithmOrderTest, MixUpAndCutMixBothInterpolatingTheLossWarn) {
  auto configWith = [](bool cutMixInterpolates) {
    TrainerConfig config = twoParameterConfig(0.1, 0.1);
    config.algorithms.push_back(
        createAlgorithm("mixup", {{"interpolate_loss", true}}));
    config.algorithms.push_back(
        createAlgorithm("cutmix", {{"interpolate_loss", cutMixInterpolates}}));
    return config;
  };
  EXPECT_TRUE(Trainer(configWith(false)).warnings().empty());
  Trainer trainer(configWith(true));
  ASSERT_EQ(trainer.warnings().size(), 1u);
  EXPECT_EQ(trainer.warnings()[0],
            "multiple algorithms interpolating the loss can lead to "
            "unexpected behavior: mixup, cutmix");
}

/// Keeps the training losses the trainer logs.
class TrainLossCapture : public LoggerDestination {
public:
  explicit TrainLossCapture(std::vector<double> &out) : out_(out) {}
  void logMetrics(const std::map<std::string, double> &metrics,
                  int64_t) override {
    if (auto it = metrics.find("loss/train/total"); it != metrics.end())
      out_.push_back(it->second);
  }

private:
  std::vector<double> &out_;
};

TEST(SampleMixingTrainerTest, InterpolatedLossTrainsAsMixedTargets) {
  // Cross-entropy is linear in a soft target, so mixing the losses against
  // both targets takes the same steps as mixing the targets: the trainer
  // back-propagates, and logs, the loss the algorithm interpolated.
  // Three classes of 4x4 images, big enough for CutMix's boxes.
  torch::manual_seed(5);
  torch::Tensor images = torch::randint(0, 255, {24, 1, 4, 4}, torch::kUInt8);
  auto dataset = std::make_shared<TensorDataset>(
      images, torch::randint(0, 3, {24}, torch::kLong));
  torch::Tensor weights = torch::randn({3, 16}) * 0.3;
  std::vector<double> losses;
  auto train = [&](const std::string &algorithm,
                   std::optional<bool> interpolate) {
    losses.clear();
    TrainerConfig config;
    config.logger.addDestination(std::make_unique<TrainLossCapture>(losses));
    torch::jit::Module model("Classifier");
    model.register_parameter("w", weights.clone().requires_grad_(), false);
    model.define(R"(
      def forward(self, x):
          return torch.mm(torch.flatten(x, 1), self.w.t())
    )");
    config.model = model;
    DataLoaderOptions options;
    options.batchSize = 8;
    options.seed = 2;
    config.trainLoader = std::make_shared<DataLoader>(dataset, options);
    config.optimizer.lr = 0.1;
    config.maxDuration = parseTime("3ba");
    config.threads = 1;
    if (interpolate)
      config.algorithms.push_back(createAlgorithm(
          algorithm, {{"alpha", 1.0}, {"interpolate_loss", *interpolate}}));
    Trainer trainer(std::move(config));
    trainer.fit();
    return namedParameters(trainer.state().model)[0].second.clone();
  };
  torch::Tensor plain = train("", std::nullopt);
  for (const char *name : {"mixup", "cutmix"}) {
    torch::Tensor interpolated = train(name, true);
    std::vector<double> interpolatedLosses = losses;
    EXPECT_TRUE(torch::allclose(interpolated, train(name, false), 1e-5, 1e-6))
        << name;
    ASSERT_EQ(interpolatedLosses.size(), 3u) << name;
    ASSERT_EQ(losses.size(), 3u) << name;
    for (size_t i = 0; i < losses.size(); ++i)
      EXPECT_NEAR(interpolatedLosses[i], losses[i], 1e-5) << name << i;
    EXPECT_FALSE(torch::allclose(interpolated, plain, 1e-4, 1e-5)) << name;
  }
}

} // namespace
