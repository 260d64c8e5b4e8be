//===- GyroDropoutTest.cpp - GyroDropout's period and resumed runs --------===//
//
// The gyro_dropout algorithm against a model with the buffers composer-opt's
// --composer-gyro-dropout gives it, its forward written in TorchScript as
// the pass lowers it: the period it sets at fit start, and a run killed and
// resumed from a checkpoint that continues the step counters, the active
// indices and the masks exactly.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Trainer.h"

#include "TrainerTestUtils.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace composer::runtime;
using namespace composer::runtime::testutils;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kSigma = 32, kTau = 4;

/// A linear classifier over flattened [3, 8, 8] images behind one gyro
/// dropout (p 0.5) with composer-gyro-dropout's buffers and the aten
/// composition its lowering writes; `period` as the pass exports it.
torch::jit::Module makeGyroModel(int64_t period) {
  // With the flag torch.jit.script gives every module, which the dropout
  // reads; before any method is defined.
  auto newModule = [](const char *name) {
    torch::jit::Module module(name);
    module.register_attribute("training", c10::BoolType::get(), true);
    return module;
  };
  torch::manual_seed(3);
  torch::jit::Module holder = newModule("PeriodHolder");
  holder.register_buffer("period", torch::full({}, period, torch::kLong));
  torch::jit::Module drop = newModule("GyroDropout");
  drop.register_buffer("preselect_masks",
                       (torch::rand({kSigma, 192}) > 0.5).to(torch::kFloat));
  drop.register_buffer("selected_indices", torch::zeros({kTau}, torch::kLong));
  drop.register_buffer("training_step", torch::zeros({}, torch::kLong));
  drop.define(R"(
    def forward(self, x, period):
        if self.training:
            if bool(torch.eq(torch.remainder(self.training_step,
                                             torch.clamp_min(period, 1)), 0)):
                self.selected_indices.copy_(
                    torch.randint(32, [4], dtype=4))  # torch.long
            self.training_step.add_(1)
            b = x.size(0)
            rows = torch.floor_divide(torch.arange(b) * min(4, b), b)
            mask = self.preselect_masks.index_select(
                0, self.selected_indices.index_select(0, rows))
            return x * mask * 2.0
        return x
  )");
  torch::jit::Module head = newModule("Head");
  head.register_parameter(
      "weight", (torch::randn({10, 192}) * 0.05).requires_grad_(), false);
  head.register_parameter("bias", torch::zeros({10}, torch::requires_grad()),
                          false);
  head.define(R"(
    def forward(self, x):
        return torch.addmm(self.bias, x, self.weight.t())
  )");
  torch::jit::Module model = newModule("Model");
  model.register_module("_composer_gyro_dropout", holder);
  model.register_module("drop", drop);
  model.register_module("head", head);
  model.define(R"(
    def forward(self, x):
        period = self._composer_gyro_dropout.period
        return self.head.forward(
            self.drop.forward(torch.flatten(x, 1), period))
  )");
  return model;
}

torch::Tensor bufferOf(const torch::jit::Module &model,
                       const std::string &key) {
  for (const auto &[name, tensor] : namedBuffers(model))
    if (name == key)
      return tensor;
  return {};
}

/// Fires FitStart through a gyro_dropout with `options` on a model whose
/// period buffer holds `exported`; returns the period it set. Epochs of 8
/// batches.
int64_t periodAfterFitStart(const AlgorithmOptions &options, int64_t exported) {
  auto algorithm = createAlgorithm("gyro_dropout", options);
  State state;
  state.time.batchesPerEpoch = 8;
  state.time.samplesPerEpoch = 128;
  state.time.maxDuration = {3, TimeUnit::Epoch};
  state.model = makeGyroModel(exported);
  Logger logger;
  EXPECT_TRUE(algorithm->match(Event::FitStart, state));
  EXPECT_FALSE(algorithm->match(Event::BatchStart, state));
  algorithm->apply(Event::FitStart, state, logger);
  return bufferOf(state.model, "_composer_gyro_dropout.period").item<int64_t>();
}

TEST(GyroDropoutTest, SetsThePeriodAtFitStart) {
  // composer-opt's default (0): one epoch.
  EXPECT_EQ(periodAfterFitStart({}, 0), 8);
  // A period composer-opt was given (or a resumed run's) stays.
  EXPECT_EQ(periodAfterFitStart({}, 3), 3);
  // The recipe's wins, in any unit.
  EXPECT_EQ(periodAfterFitStart({{"period", Time{5, TimeUnit::Batch}}}, 3), 5);
  EXPECT_EQ(periodAfterFitStart({{"period", Time{0.5, TimeUnit::Epoch}}}, 0),
            4);
  EXPECT_EQ(periodAfterFitStart({{"period", Time{0.5, TimeUnit::Duration}}}, 0),
            12);
}

TEST(GyroDropoutTest, ValidatesOptionsAndNeedsTheBuffer) {
  EXPECT_THROW(
      createAlgorithm("gyro_dropout", {{"period", Time{-1, TimeUnit::Batch}}}),
      std::invalid_argument);
  auto algorithm = createAlgorithm("gyro_dropout");
  State state;
  state.model = torch::jit::Module("Plain");
  Logger logger;
  EXPECT_THROW(algorithm->apply(Event::FitStart, state, logger),
               std::runtime_error);
}

/// 3 epochs of 8 batches of 16, checkpoints every 5 batches.
TrainerConfig gyroConfig(const std::string &folder) {
  TrainerConfig config;
  config.model = makeGyroModel(0);
  SyntheticSpec spec;
  spec.numSamples = 128;
  spec.sampleShape = {3, 8, 8};
  spec.seed = 5;
  DataLoaderOptions options;
  options.batchSize = 16;
  options.seed = 5;
  config.trainLoader =
      std::make_shared<DataLoader>(makeSynthetic(spec), options);
  config.optimizer.name = "sgd";
  config.optimizer.lr = 0.1;
  config.maxDuration = parseTime("3ep");
  config.seed = 11;
  config.saveFolder = folder;
  config.saveInterval = parseTime("5ba");
  config.algorithms.push_back(createAlgorithm("gyro_dropout"));
  return config;
}

/// Records the active indices after each batch, by batch count.
std::unique_ptr<Callback>
recordSelection(std::map<int64_t, torch::Tensor> &selected) {
  return recordByBatch(Event::BatchEnd, selected, [](State &state) {
    return bufferOf(state.model, "drop.selected_indices").clone();
  });
}

TEST(GyroDropoutTest, ResumedRunContinuesCountersIndicesAndMasks) {
  std::string straightDir = tempDir("gyro-straight");
  std::string resumedDir = tempDir("gyro-resumed");
  std::map<int64_t, torch::Tensor> straightSelected, resumedSelected;
  TrainerConfig straightConfig = gyroConfig(straightDir);
  straightConfig.callbacks.push_back(recordSelection(straightSelected));
  Trainer straight(std::move(straightConfig));
  straight.fit();
  const torch::jit::Module &model = straight.state().model;
  EXPECT_EQ(bufferOf(model, "_composer_gyro_dropout.period").item<int64_t>(),
            8);
  EXPECT_EQ(bufferOf(model, "drop.training_step").item<int64_t>(), 24);
  // Re-drawn at the first batch of each epoch (steps 0, 8, 16) only.
  for (int64_t batch = 2; batch <= 24; ++batch)
    EXPECT_EQ(!torch::equal(straightSelected.at(batch),
                            straightSelected.at(batch - 1)),
              (batch - 1) % 8 == 0)
        << "batch " << batch;

  // Crash after 13 batches (mid-epoch, between checkpoints), then resume
  // from the newest checkpoint (batch 10) in a fresh trainer whose model
  // has other masks.
  crashAfterBatch(gyroConfig(resumedDir), 13);
  TrainerConfig config = gyroConfig(resumedDir);
  torch::manual_seed(99);
  bufferOf(config.model, "drop.preselect_masks").bernoulli_(0.5);
  config.autoresume = true;
  config.callbacks.push_back(recordSelection(resumedSelected));
  Trainer resumed(std::move(config));
  resumed.fit();
  ASSERT_TRUE(resumed.resumedFrom());
  EXPECT_EQ(resumedSelected.begin()->first, 11);
  for (const auto &[batch, selected] : resumedSelected)
    EXPECT_TRUE(torch::equal(selected, straightSelected.at(batch)))
        << "batch " << batch;
  for (const auto &[name, tensor] : namedBuffers(model))
    EXPECT_TRUE(torch::equal(tensor, bufferOf(resumed.state().model, name)))
        << name;
  for (const auto &[name, tensor] : namedParameters(model))
    for (const auto &[other, resumedTensor] :
         namedParameters(resumed.state().model))
      if (other == name)
        EXPECT_TRUE(torch::equal(tensor, resumedTensor)) << name;
}

} // namespace
