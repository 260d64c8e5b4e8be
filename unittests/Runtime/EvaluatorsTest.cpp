//===- EvaluatorsTest.cpp - Named evaluators and the stoppers -------------===//

#include "composer/Runtime/Callbacks.h"
#include "composer/Runtime/Trainer.h"

#include <gtest/gtest.h>

#include <set>

using namespace composer::runtime;

namespace {

/// Records which metric keys were logged at which batch.
struct KeyRecorder : LoggerDestination {
  std::map<std::string, std::set<int64_t>> &steps;
  explicit KeyRecorder(std::map<std::string, std::set<int64_t>> &steps)
      : steps(steps) {}
  void logMetrics(const std::map<std::string, double> &metrics,
                  int64_t step) override {
    for (const auto &[key, value] : metrics)
      steps[key].insert(step);
  }
};

std::shared_ptr<DataLoader> classes(int64_t samples, int64_t batchSize) {
  torch::manual_seed(4);
  torch::Tensor inputs = torch::randn({samples, 6});
  DataLoaderOptions options;
  options.batchSize = batchSize;
  options.shuffle = false;
  return std::make_shared<DataLoader>(
      std::make_shared<TensorDataset>(inputs, inputs.argmax(1),
                                      SampleKind::Tensor),
      options);
}

/// A linear classifier over 6 features; a tiny `lr` keeps its metrics
/// constant within 1e-6.
TrainerConfig linearConfig(double lr) {
  torch::manual_seed(2);
  torch::jit::Module model("Linear");
  model.register_parameter("w", torch::randn({6, 6}).requires_grad_(), false);
  model.define(R"(
    def forward(self, x):
        return torch.matmul(x, self.w)
  )");
  TrainerConfig config;
  config.model = model;
  config.trainLoader = classes(64, 8); // 8 batches an epoch
  config.optimizer.lr = lr;
  config.maxDuration = parseTime("3ep");
  return config;
}

TEST(EvaluatorsTest, EachLogsItsMetricsAtItsInterval) {
  std::map<std::string, std::set<int64_t>> steps;
  TrainerConfig config = linearConfig(0.1);
  config.maxDuration = parseTime("1ep");
  config.evalLoader = classes(32, 8);
  Evaluator often{"often", classes(32, 8)};
  often.metrics = {createMetric("accuracy", {{"k", int64_t(2)}}),
                   createMetric("cross_entropy")};
  often.interval = parseTime("3ba");
  often.subsetNumBatches = 1;
  config.evaluators.push_back(std::move(often));
  config.logger.addDestination(std::make_unique<KeyRecorder>(steps));
  size_t samplesSeen = 0;
  struct CountEvalSamples : Callback {
    size_t &seen;
    explicit CountEvalSamples(size_t &seen) : seen(seen) {}
    void runEvent(Event event, State &state, Logger &) override {
      if (event == Event::EvalBatchStart)
        seen += size_t(state.batch.size());
    }
  };
  config.callbacks.push_back(std::make_unique<CountEvalSamples>(samplesSeen));
  Trainer trainer(std::move(config));
  trainer.fit();
  // `eval`: the defaults at the epoch's end; `often`: every 3 batches and at
  // the end, on one batch of 8 each time.
  EXPECT_EQ(steps["metrics/eval/Accuracy"], (std::set<int64_t>{8}));
  EXPECT_EQ(steps["metrics/eval/CrossEntropy"], (std::set<int64_t>{8}));
  EXPECT_EQ(steps["metrics/often/Top2Accuracy"], (std::set<int64_t>{3, 6, 8}));
  EXPECT_EQ(steps["metrics/often/CrossEntropy"], (std::set<int64_t>{3, 6, 8}));
  EXPECT_EQ(steps.count("metrics/often/Accuracy"), 0u);
  EXPECT_EQ(samplesSeen, 32u + 3 * 8u);
}

TEST(EvaluatorsTest, EarlyStopperStopsPatienceAfterTheBest) {
  TrainerConfig config = linearConfig(1e-12); // the metric never improves
  Evaluator every{"val", classes(16, 8)};
  every.interval = parseTime("1ba");
  config.evaluators.push_back(std::move(every));
  config.callbacks.push_back(
      createEarlyStopper({"CrossEntropy", "val"}, 1e-6, parseTime("2ba")));
  Trainer trainer(std::move(config));
  trainer.fit();
  // Best at batch 1; more than 2 batches later is batch 4.
  EXPECT_EQ(trainer.state().timestamp.batch, 4);
  EXPECT_TRUE(trainer.state().stopRequested);
}

TEST(EvaluatorsTest, EarlyStopperWaitsWhileTheMetricImproves) {
  TrainerConfig config = linearConfig(0.05);
  config.maxDuration = parseTime("2ep");
  Evaluator every{"val", classes(64, 8)};
  every.interval = parseTime("1ba");
  config.evaluators.push_back(std::move(every));
  // Training on the evaluation data lowers its cross entropy (lower is
  // better, inferred from the name) at every batch.
  config.callbacks.push_back(
      createEarlyStopper({"CrossEntropy", "val"}, 0.0, parseTime("1ba")));
  Trainer trainer(std::move(config));
  trainer.fit();
  EXPECT_EQ(trainer.state().timestamp.batch, 16);
  EXPECT_FALSE(trainer.state().stopRequested);
}

TEST(EvaluatorsTest, ThresholdStopperAndMissingMetrics) {
  TrainerConfig config = linearConfig(1e-12);
  Evaluator every{"val", classes(16, 8)};
  every.interval = parseTime("2ba");
  config.evaluators.push_back(std::move(every));
  // Cross entropy is below 100 at the first evaluation.
  config.callbacks.push_back(
      createThresholdStopper({"CrossEntropy", "val"}, 100.0));
  Trainer trainer(std::move(config));
  trainer.fit();
  EXPECT_EQ(trainer.state().timestamp.batch, 2);

  TrainerConfig missing = linearConfig(1e-12);
  missing.evalLoader = classes(16, 8);
  missing.callbacks.push_back(
      createThresholdStopper({"MIoU", "eval", MetricDirection::Higher}, 0.5));
  Trainer failing(std::move(missing));
  try {
    failing.fit();
    FAIL() << "expected a TrainingError";
  } catch (const TrainingError &e) {
    EXPECT_NE(std::string(e.what()).find("evaluator 'eval' has no metric "
                                         "'MIoU'; it logs: Accuracy, "
                                         "CrossEntropy"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
