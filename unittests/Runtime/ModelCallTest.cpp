//===- ModelCallTest.cpp - Named batches, several inputs, the model's loss
//--===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Trainer.h"

#include <gtest/gtest.h>

#include <map>

using namespace composer::runtime;

namespace {

/// 64 samples of 6 features, a 0/1 mask per feature, 3 classes.
std::shared_ptr<DataLoader> maskedLoader() {
  torch::manual_seed(8);
  torch::Tensor inputs = torch::randn({64, 6});
  torch::Tensor mask = torch::randint(0, 2, {64, 6}).to(torch::kFloat);
  torch::Tensor targets = (inputs * mask).narrow(1, 0, 3).argmax(1);
  DataLoaderOptions options;
  options.batchSize = 16;
  return std::make_shared<DataLoader>(
      std::make_shared<TensorDataset>(
          inputs, targets, SampleKind::Tensor,
          std::vector<std::pair<std::string, torch::Tensor>>{{"mask", mask}}),
      options);
}

torch::jit::Module moduleWith(const std::string &forward) {
  torch::manual_seed(3);
  torch::jit::Module model("Masked");
  model.register_parameter("w", (torch::randn({6, 3}) * 0.1).requires_grad_(),
                           false);
  model.define(forward);
  return model;
}

TrainerConfig maskedConfig(const std::string &forward) {
  TrainerConfig config;
  config.model = moduleWith(forward);
  config.trainLoader = maskedLoader();
  config.optimizer.lr = 0.1;
  config.maxDuration = parseTime("2ep");
  return config;
}

std::map<std::string, torch::Tensor> trained(TrainerConfig config) {
  Trainer trainer(std::move(config));
  trainer.fit();
  std::map<std::string, torch::Tensor> weights;
  for (const auto &[name, tensor] : trainer.state().parameters)
    weights[name] = tensor.detach().clone();
  return weights;
}

const char *const kTwoInputs = R"(
    def forward(self, x, mask):
        return torch.matmul(x * mask, self.w)
  )";

/// Checks, after every forward, that the predictions are the masked inputs'.
struct ExpectMasked : Callback {
  int64_t &checked;
  explicit ExpectMasked(int64_t &checked) : checked(checked) {}
  void runEvent(Event event, State &state, Logger &) override {
    if (event != Event::AfterForward)
      return;
    torch::Tensor w = state.parameters.front().second;
    torch::Tensor expected =
        torch::matmul(state.batch.input * state.batch.columns.at("mask"), w);
    EXPECT_TRUE(torch::allclose(state.outputs, expected));
    ++checked;
  }
};

TEST(ModelCallTest, NamedColumnsReachATwoInputModel) {
  int64_t checked = 0;
  TrainerConfig config = maskedConfig(kTwoInputs);
  config.modelCall.positional = {"input", "mask"};
  config.microbatchSize = 4; // columns split with the batch
  config.callbacks.push_back(std::make_unique<ExpectMasked>(checked));
  auto positional = trained(std::move(config));
  EXPECT_EQ(checked, 2 * 4 * 4);

  // By argument name, in another order: the same run.
  TrainerConfig byName = maskedConfig(kTwoInputs);
  byName.modelCall.keywords = {{"mask", "mask"}, {"x", "input"}};
  byName.microbatchSize = 4;
  auto keywords = trained(std::move(byName));
  for (const auto &[name, tensor] : positional)
    EXPECT_TRUE(torch::equal(tensor, keywords.at(name))) << name;
}

TEST(ModelCallTest, TheModelsOwnLossTrainsAsTheRecipesWould) {
  TrainerConfig recipeLoss = maskedConfig(kTwoInputs);
  recipeLoss.modelCall.positional = {"input", "mask"};
  // A dict with the loss it computes from the target, and its logits.
  TrainerConfig modelLoss = maskedConfig(R"(
    def forward(self, x, mask, y):
        logits = torch.matmul(x * mask, self.w)
        return {"loss": torch.nll_loss(torch.log_softmax(logits, 1), y),
                "logits": logits}
  )");
  modelLoss.modelCall.positional = {"input", "mask", "target"};
  modelLoss.modelCall.lossFromModel = true;
  modelLoss.evalLoader = maskedLoader();
  auto expected = trained(std::move(recipeLoss));
  Trainer trainer(std::move(modelLoss));
  trainer.fit();
  for (const auto &[name, tensor] : trainer.state().parameters)
    EXPECT_LT((tensor - expected.at(name)).abs().max().item<double>(), 1e-6)
        << name;
  // Evaluation takes the dict's logits as the predictions.
  EXPECT_GT(trainer.state().evalMetrics.at("Accuracy"), 0.0);
}

TEST(ModelCallTest, OutputPicksThePredictionsOfATuple) {
  TrainerConfig config = maskedConfig(R"(
    def forward(self, x, mask):
        logits = torch.matmul(x * mask, self.w)
        return (logits.sum(), logits)
  )");
  config.modelCall.positional = {"input", "mask"};
  config.modelCall.outputIndex = 1;
  int64_t checked = 0;
  config.callbacks.push_back(std::make_unique<ExpectMasked>(checked));
  trained(std::move(config));
  EXPECT_EQ(checked, 2 * 4);

  // A dict without 'logits' needs `output`; the error lists its keys.
  TrainerConfig unpicked = maskedConfig(R"(
    def forward(self, x, mask):
        logits = torch.matmul(x * mask, self.w)
        return {"aux": logits.sum(), "scores": logits}
  )");
  unpicked.modelCall.positional = {"input", "mask"};
  Trainer trainer(std::move(unpicked));
  try {
    trainer.fit();
    FAIL() << "expected a TrainingError";
  } catch (const TrainingError &e) {
    EXPECT_NE(std::string(e.what()).find("a dict with keys aux, scores; set "
                                         "'output'"),
              std::string::npos)
        << e.what();
  }
}

TEST(ModelCallTest, AnUnknownColumnIsAnErrorListingTheColumns) {
  TrainerConfig config = maskedConfig(kTwoInputs);
  config.modelCall.positional = {"input", "attention_mask"};
  try {
    Trainer trainer(std::move(config));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "model_inputs: the training data has no column "
                           "'attention_mask'; its columns: input, target, "
                           "mask");
  }
}

TEST(ModelCallTest, AlgorithmsNameTheColumnTheyCannotUse) {
  auto expectRejected = [](const std::string &algorithm,
                           const std::string &message) {
    TrainerConfig config = maskedConfig(kTwoInputs);
    config.modelCall.positional = {"input", "mask"};
    config.algorithms.push_back(createAlgorithm(algorithm));
    try {
      Trainer trainer(std::move(config));
      FAIL() << algorithm << ": expected std::invalid_argument";
    } catch (const std::invalid_argument &e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  expectRejected("cutmix", "cutmix needs image inputs ([C, H, W]); the "
                           "training data's column 'input' holds Float [6] "
                           "values");
  expectRejected("colout", "colout needs image inputs ([C, H, W]); the "
                           "training data's column 'input' holds Float [6] "
                           "values");
  expectRejected("randaugment",
                 "randaugment needs image samples (uint8 [C, H, W], "
                 "transformed in the loader); the training data's column "
                 "'input' holds Float tensors");
  // Class targets are enough for MixUp and label smoothing.
  TrainerConfig mixing = maskedConfig(kTwoInputs);
  mixing.modelCall.positional = {"input", "mask"};
  mixing.algorithms.push_back(createAlgorithm("mixup"));
  EXPECT_NO_THROW(Trainer(std::move(mixing)));
}

} // namespace
