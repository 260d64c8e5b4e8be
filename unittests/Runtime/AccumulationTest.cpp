//===- AccumulationTest.cpp - Gradient accumulation over microbatches -----===//

#include "composer/Runtime/MemoryLimit.h"
#include "composer/Runtime/Trainer.h"

#include <gtest/gtest.h>

#include <future>
#include <map>

#include <unistd.h>

using namespace composer::runtime;

namespace {

/// Two layers without batch norm: a microbatch's gradient is its samples'.
torch::jit::Module makeMlp(int64_t features, int64_t hidden, int64_t outputs) {
  torch::manual_seed(7);
  torch::jit::Module model("Mlp");
  model.register_parameter(
      "w1", (torch::randn({hidden, features}) * 0.1).requires_grad_(), false);
  model.register_parameter("b1", torch::zeros({hidden}, torch::requires_grad()),
                           false);
  model.register_parameter(
      "w2", (torch::randn({outputs, hidden}) * 0.1).requires_grad_(), false);
  model.register_parameter(
      "b2", torch::zeros({outputs}, torch::requires_grad()), false);
  model.define(R"(
    def forward(self, x):
        h = torch.relu(torch.matmul(x, self.w1.t()) + self.b1)
        return torch.matmul(h, self.w2.t()) + self.b2
  )");
  return model;
}

std::shared_ptr<DataLoader> loader(torch::Tensor inputs, torch::Tensor targets,
                                   int64_t batchSize, int rank = 0,
                                   int worldSize = 1) {
  DataLoaderOptions options;
  options.batchSize = batchSize;
  options.seed = 3;
  options.rank = rank;
  options.worldSize = worldSize;
  return std::make_shared<DataLoader>(
      std::make_shared<TensorDataset>(inputs, targets, SampleKind::Tensor),
      options);
}

/// 512 samples of 32 features in 10 classes.
TrainerConfig classifierConfig(int64_t batchSize, int rank = 0,
                               int worldSize = 1) {
  torch::manual_seed(5);
  torch::Tensor inputs = torch::randn({512, 32});
  torch::Tensor targets = inputs.narrow(1, 0, 10).argmax(1);
  TrainerConfig config;
  config.model = makeMlp(32, 2048, 10);
  config.trainLoader = loader(inputs, targets, batchSize, rank, worldSize);
  config.optimizer.name = "sgd";
  config.optimizer.lr = 0.1;
  config.optimizer.momentum = 0.9;
  config.maxDuration = parseTime("2ba");
  return config;
}

std::map<std::string, torch::Tensor> trainedWeights(TrainerConfig config) {
  Trainer trainer(std::move(config));
  trainer.fit();
  std::map<std::string, torch::Tensor> result;
  for (const auto &[name, tensor] : trainer.state().parameters)
    result[name] = tensor.detach().clone();
  return result;
}

double maxDifference(const std::map<std::string, torch::Tensor> &a,
                     const std::map<std::string, torch::Tensor> &b) {
  double most = 0;
  for (const auto &[name, tensor] : a)
    most = std::max(most, (tensor - b.at(name)).abs().max().item<double>());
  return most;
}

TEST(AccumulationTest, FourMicrobatchesEqualTheWholeBatch) {
  TrainerConfig whole = classifierConfig(64);
  TrainerConfig split = classifierConfig(64);
  split.microbatchSize = 16;
  std::map<int64_t, int64_t> microbatchesSeen;
  struct CountForwards : Callback {
    std::map<int64_t, int64_t> &seen;
    explicit CountForwards(std::map<int64_t, int64_t> &seen) : seen(seen) {}
    void runEvent(Event event, State &state, Logger &) override {
      if (event == Event::BeforeForward)
        seen[state.timestamp.batch] += state.batch.size();
    }
  };
  split.callbacks.push_back(std::make_unique<CountForwards>(microbatchesSeen));
  double difference = maxDifference(trainedWeights(std::move(whole)),
                                    trainedWeights(std::move(split)));
  EXPECT_LT(difference, 1e-6);
  // Two batches, each seen as four microbatches of 16; time counts batches.
  EXPECT_EQ(microbatchesSeen, (std::map<int64_t, int64_t>{{0, 64}, {1, 64}}));
}

TEST(AccumulationTest, AnUnevenLastMicrobatchWeighsItsShare) {
  TrainerConfig whole = classifierConfig(60);
  TrainerConfig split = classifierConfig(60);
  split.microbatchSize = 16; // 16, 16, 16 and 12
  EXPECT_LT(maxDifference(trainedWeights(std::move(whole)),
                          trainedWeights(std::move(split))),
            1e-6);
}

/// A per-token model, [B, T, 8] -> [B, T, 5] logits, on targets with very
/// different numbers of ignored tokens per sample.
TrainerConfig languageConfig() {
  torch::manual_seed(9);
  torch::Tensor inputs = torch::randn({64, 12, 8});
  torch::Tensor targets = torch::randint(0, 5, {64, 12});
  // Sample i keeps its first 1 + (i * 7) % 12 tokens.
  for (int64_t i = 0; i < 64; ++i)
    targets[i].narrow(0, 1 + (i * 7) % 12, 11 - (i * 7) % 12).fill_(-100);
  TrainerConfig config;
  config.model = makeMlp(8, 32, 5);
  config.trainLoader = loader(inputs, targets, 32);
  config.optimizer.name = "adamw";
  config.optimizer.lr = 0.01;
  config.maxDuration = parseTime("2ba");
  return config;
}

TEST(AccumulationTest, TokenWeightingMatchesUnevenLanguageBatches) {
  auto whole = trainedWeights(languageConfig());
  TrainerConfig onTokens = languageConfig();
  onTokens.microbatchSize = 8;
  onTokens.accumulateOnTokens = true;
  EXPECT_LT(maxDifference(whole, trainedWeights(std::move(onTokens))), 1e-6);
  // Weighed by samples instead, microbatches holding few tokens count too
  // much: the mean differs.
  TrainerConfig onSamples = languageConfig();
  onSamples.microbatchSize = 8;
  EXPECT_GT(maxDifference(whole, trainedWeights(std::move(onSamples))), 1e-4);
}

/// The most bytes one batch of `microbatchSize` holds at once, measured
/// from outside the trainer (an upper bound of what its step holds).
int64_t peakBytes(int64_t microbatchSize) {
  TrainerConfig config = classifierConfig(256);
  config.microbatchSize = microbatchSize;
  config.maxDuration = parseTime("1ba");
  Trainer trainer(std::move(config));
  ScopedCpuMemoryLimit measure(int64_t(1) << 40);
  trainer.fit();
  return measure.peakBytes();
}

TEST(AccumulationTest, AutoHalvesUntilTheStepFits) {
  // Between what microbatches of 64 and of 128 need.
  int64_t peak64 = peakBytes(64), peak128 = peakBytes(128);
  ASSERT_LT(peak64, peak128);
  TrainerConfig automatic = classifierConfig(256);
  automatic.autoMicrobatch = true;
  automatic.cpuMemoryLimit = (peak64 + peak128) / 2;
  Trainer trainer(std::move(automatic));
  trainer.fit();
  EXPECT_EQ(trainer.microbatchSize(), 64);

  TrainerConfig fixed = classifierConfig(256);
  fixed.microbatchSize = 64;
  auto expected = trainedWeights(std::move(fixed));
  for (const auto &[name, tensor] : trainer.state().parameters)
    EXPECT_TRUE(torch::equal(tensor, expected.at(name))) << name;
}

TEST(AccumulationTest, AutoStopsWhenOneSampleDoesNotFit) {
  TrainerConfig config = classifierConfig(256);
  config.autoMicrobatch = true;
  config.cpuMemoryLimit = 4096;
  Trainer trainer(std::move(config));
  try {
    trainer.fit();
    FAIL() << "expected a TrainingError";
  } catch (const TrainingError &e) {
    EXPECT_NE(std::string(e.what()).find("microbatch of one sample"),
              std::string::npos)
        << e.what();
  }
}

/// Runs `configure(rank)` as two data-parallel ranks on threads of this
/// process; returns each rank's microbatch size and trained weights.
template <typename Configure>
std::vector<std::pair<int64_t, std::map<std::string, torch::Tensor>>>
trainTwoRanks(int port, Configure configure) {
  // Built here, not on the ranks' threads: they draw from the global
  // generator.
  std::vector<std::unique_ptr<TrainerConfig>> configs;
  for (int rank = 0; rank < 2; ++rank)
    configs.push_back(std::make_unique<TrainerConfig>(configure(rank)));
  auto rankMain = [&](int rank) {
    DistributedEnv env;
    env.rank = rank;
    env.worldSize = 2;
    env.masterPort = port;
    TrainerConfig config = std::move(*configs[rank]);
    config.communicator =
        createCommunicator(env, torch::kCPU, std::chrono::seconds(60));
    Trainer trainer(std::move(config));
    trainer.fit();
    std::map<std::string, torch::Tensor> weights;
    for (const auto &[name, tensor] : trainer.state().parameters)
      weights[name] = tensor.detach().clone();
    return std::make_pair(trainer.microbatchSize(), weights);
  };
  auto first = std::async(std::launch::async, rankMain, 0);
  auto second = std::async(std::launch::async, rankMain, 1);
  return {first.get(), second.get()};
}

TEST(AccumulationTest, DataParallelAccumulationEqualsWholeBatches) {
  int port = 31000 + int(::getpid() % 1000);
  auto whole = trainTwoRanks(
      port, [](int rank) { return classifierConfig(64, rank, 2); });
  auto split = trainTwoRanks(port + 1, [](int rank) {
    TrainerConfig config = classifierConfig(64, rank, 2);
    config.microbatchSize = 16;
    return config;
  });
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_LT(maxDifference(whole[rank].second, split[rank].second), 1e-6);
}

TEST(AccumulationTest, RanksAgreeOnTheMicrobatchOneRankNeeds) {
  int64_t peak64 = peakBytes(64), peak128 = peakBytes(128);
  int port = 32000 + int(::getpid() % 1000);
  // Only rank 0 runs out of memory; rank 1 halves with it.
  auto ranks = trainTwoRanks(port, [&](int rank) {
    TrainerConfig config = classifierConfig(256, rank, 2);
    config.autoMicrobatch = true;
    if (rank == 0)
      config.cpuMemoryLimit = (peak64 + peak128) / 2;
    return config;
  });
  EXPECT_EQ(ranks[0].first, 64);
  EXPECT_EQ(ranks[1].first, 64);
  EXPECT_EQ(maxDifference(ranks[0].second, ranks[1].second), 0.0);
}

} // namespace
