//===- LossesTest.cpp - The registered losses against LibTorch's ----------===//

#include "composer/Runtime/Losses.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace composer::runtime;
namespace F = torch::nn::functional;

namespace {

void expectClose(const torch::Tensor &actual, const torch::Tensor &expected) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  EXPECT_TRUE(torch::allclose(actual, expected, 1e-5, 1e-6))
      << actual << "\nexpected\n"
      << expected;
}

std::string errorOf(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

TEST(LossesTest, EveryBuiltInLossIsRegistered) {
  std::vector<std::string> names;
  for (const LossInfo *info : getRegisteredLosses())
    names.push_back(info->name);
  std::vector<std::string> expected = {"binary_cross_entropy_with_logits",
                                       "cross_entropy", "l1", "mse",
                                       "smooth_l1"};
  EXPECT_EQ(names, expected);
  for (const std::string &name : names)
    EXPECT_EQ(createLoss(name)->name(), name);
}

TEST(LossesTest, CrossEntropyOfClassesMatchesLibTorch) {
  torch::manual_seed(1);
  torch::Tensor logits = torch::randn({6, 5});
  torch::Tensor classes = torch::tensor({0, 4, -100, 2, 2, -100});
  auto loss = createLoss("cross_entropy");
  expectClose(loss->compute(logits, classes),
              F::cross_entropy(logits, classes));
  // Per sample: each sample's own loss; ignored samples score 0.
  torch::Tensor each = loss->compute(logits, classes, true);
  torch::Tensor logp = logits.log_softmax(1);
  for (int64_t b = 0; b < 6; ++b) {
    int64_t c = classes[b].item<int64_t>();
    double want = c < 0 ? 0.0 : -logp[b][c].item<double>();
    EXPECT_NEAR(each[b].item<double>(), want, 1e-5) << b;
  }
  auto smoothed = createLoss("cross_entropy", {{"label_smoothing", 0.1},
                                               {"ignore_index", int64_t(2)}});
  torch::Tensor targets = torch::tensor({0, 4, 1, 2, 2, 3});
  expectClose(
      smoothed->compute(logits, targets),
      F::cross_entropy(
          logits, targets,
          F::CrossEntropyFuncOptions().label_smoothing(0.1).ignore_index(2)));
}

TEST(LossesTest, CrossEntropyOfProbabilities) {
  torch::manual_seed(2);
  torch::Tensor logits = torch::randn({4, 3});
  torch::Tensor probabilities = torch::rand({4, 3}).softmax(1);
  torch::Tensor each = -(probabilities * logits.log_softmax(1)).sum(1);
  auto loss = createLoss("cross_entropy");
  expectClose(loss->compute(logits, probabilities), each.mean());
  expectClose(loss->compute(logits, probabilities, true), each);
}

TEST(LossesTest, CrossEntropyPerTokenOfALanguageModel) {
  torch::manual_seed(3);
  torch::Tensor logits = torch::randn({3, 4, 7});
  // Token 0 is padding; the last sequence is all padding.
  torch::Tensor tokens =
      torch::tensor({{5, 1, 0, 0}, {2, 3, 4, 6}, {0, 0, 0, 0}});
  auto loss = createLoss("cross_entropy", {{"ignore_index", int64_t(0)}});
  torch::Tensor flatLogits = logits.reshape({-1, 7});
  torch::Tensor flatTokens = tokens.reshape({-1});
  expectClose(loss->compute(logits, tokens),
              F::cross_entropy(flatLogits, flatTokens,
                               F::CrossEntropyFuncOptions().ignore_index(0)));
  // Per sample: the mean over the sample's counted tokens.
  torch::Tensor logp = logits.log_softmax(2);
  double first =
      -(logp[0][0][5].item<double>() + logp[0][1][1].item<double>()) / 2;
  double second = 0;
  for (int64_t t = 0; t < 4; ++t)
    second -= logp[1][t][tokens[1][t].item<int64_t>()].item<double>() / 4;
  expectClose(loss->compute(logits, tokens, true),
              torch::tensor({first, second, 0.0}, torch::kFloat));
}

TEST(LossesTest, CrossEntropyOfPixels) {
  torch::manual_seed(4);
  torch::Tensor logits = torch::randn({2, 3, 4, 5});
  torch::Tensor classes = torch::randint(0, 3, {2, 4, 5});
  auto loss = createLoss("cross_entropy");
  expectClose(loss->compute(logits, classes),
              F::cross_entropy(logits, classes));
  torch::Tensor each = F::cross_entropy(
      logits, classes, F::CrossEntropyFuncOptions().reduction(torch::kNone));
  expectClose(loss->compute(logits, classes, true),
              each.reshape({2, -1}).mean(1));
}

TEST(LossesTest, BinaryCrossEntropyOfMultiHotLabels) {
  torch::manual_seed(5);
  torch::Tensor logits = torch::randn({4, 6});
  torch::Tensor labels = torch::randint(0, 2, {4, 6}); // integer multi-hot
  torch::Tensor y = labels.to(torch::kFloat);
  torch::Tensor p = logits.sigmoid();
  torch::Tensor each = -(y * p.log() + (1 - y) * (1 - p).log());
  auto loss = createLoss("binary_cross_entropy_with_logits");
  expectClose(loss->compute(logits, labels), each.mean());
  expectClose(loss->compute(logits, labels, true), each.mean(1));
  auto weighted =
      createLoss("binary_cross_entropy_with_logits", {{"pos_weight", 3.0}});
  torch::Tensor weightedEach = -(3 * y * p.log() + (1 - y) * (1 - p).log());
  expectClose(weighted->compute(logits, labels), weightedEach.mean());
}

TEST(LossesTest, RegressionLossesMatchLibTorch) {
  torch::manual_seed(6);
  torch::Tensor outputs = torch::randn({3, 2, 4});
  torch::Tensor target = torch::randn({3, 2, 4});
  expectClose(createLoss("mse")->compute(outputs, target),
              torch::mse_loss(outputs, target));
  expectClose(createLoss("l1")->compute(outputs, target),
              torch::l1_loss(outputs, target));
  expectClose(createLoss("l1")->compute(outputs, target, true),
              (outputs - target).abs().reshape({3, -1}).mean(1));
  auto smooth = createLoss("smooth_l1", {{"beta", 0.5}});
  expectClose(smooth->compute(outputs, target),
              torch::smooth_l1_loss(outputs, target, at::Reduction::Mean, 0.5));
  torch::Tensor d = (outputs - target).abs();
  torch::Tensor huber = torch::where(d < 0.5, 0.5 * d * d / 0.5, d - 0.25);
  expectClose(smooth->compute(outputs, target, true),
              huber.reshape({3, -1}).mean(1));
}

TEST(LossesTest, BadShapesAndOptionsAreClearErrors) {
  auto crossEntropy = createLoss("cross_entropy");
  std::string shapes = errorOf([&] {
    crossEntropy->compute(torch::zeros({4, 3}),
                          torch::zeros({5}, torch::kLong));
  });
  EXPECT_NE(shapes.find("cross_entropy: outputs [4, 3] do not fit targets "
                        "[5]"),
            std::string::npos)
      << shapes;
  std::string mse = errorOf([] {
    createLoss("mse")->compute(torch::zeros({4, 3}), torch::zeros({4}));
  });
  EXPECT_NE(mse.find("mse: outputs [4, 3] and targets [4] must have one "
                     "shape"),
            std::string::npos)
      << mse;
  EXPECT_NE(errorOf([] { createLoss("hinge"); })
                .find("unknown loss 'hinge'; expected one of: "
                      "binary_cross_entropy_with_logits, cross_entropy"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              createLoss("mse", {{"beta", 1.0}});
            }).find("mse: unknown option 'beta'"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              createLoss("cross_entropy", {{"label_smoothing", 1.5}});
            }).find("label_smoothing must be in [0, 1]"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              createLoss("smooth_l1", {{"beta", -1.0}});
            }).find("smooth_l1: beta must be >= 0"),
            std::string::npos);
  EXPECT_NE(
      errorOf([] {
        createLoss("binary_cross_entropy_with_logits", {{"pos_weight", 0.0}});
      }).find("pos_weight must be > 0"),
      std::string::npos);
}

} // namespace
