//===- MetricsTest.cpp - Evaluation metrics against hand-computed cases ---===//

#include "composer/Runtime/Metrics.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace composer::runtime;

namespace {

double valueOf(Metric &metric) { return *metric.compute(metric.totals()); }

TEST(MetricsTest, AccuracyTopOneAndTopK) {
  torch::Tensor logits = torch::tensor(
      {{0.1, 0.7, 0.2}, {0.5, 0.3, 0.2}, {0.2, 0.3, 0.5}, {0.6, 0.3, 0.1}});
  torch::Tensor target = torch::tensor({1, 1, 0, -100});
  auto top1 = createMetric("accuracy");
  auto top2 = createMetric("accuracy", {{"k", int64_t(2)}});
  EXPECT_EQ(top1->name(), "Accuracy");
  EXPECT_EQ(top2->name(), "Top2Accuracy");
  top1->update(logits, target);
  top2->update(logits, target);
  // The last sample is ignored; the second is right only in the top two.
  EXPECT_DOUBLE_EQ(valueOf(*top1), 1.0 / 3);
  EXPECT_DOUBLE_EQ(valueOf(*top2), 2.0 / 3);
  EXPECT_THROW(top1->update(logits, torch::rand({4, 3})),
               std::invalid_argument);
  EXPECT_THROW(createMetric("accuracy", {{"k", int64_t(0)}}),
               std::invalid_argument);
}

TEST(MetricsTest, CrossEntropyAndPerplexityPerToken) {
  // [1, 3, 2] logits: token 0 even odds, token 1 three to one for class 0,
  // token 2 ignored.
  torch::Tensor logits = torch::tensor({0.0, 0.0, std::log(3.0), 0.0, 5.0, 0.0})
                             .reshape({1, 3, 2});
  torch::Tensor target = torch::tensor({{1, 0, -100}});
  auto crossEntropy = createMetric("cross_entropy");
  auto perplexity = createMetric("perplexity");
  crossEntropy->update(logits, target);
  perplexity->update(logits, target);
  double expected = (std::log(2.0) + std::log(4.0 / 3.0)) / 2;
  EXPECT_NEAR(valueOf(*crossEntropy), expected, 1e-6);
  EXPECT_NEAR(valueOf(*perplexity), std::sqrt(8.0 / 3.0), 1e-6);
}

TEST(MetricsTest, BinaryAccuracyAndF1) {
  torch::Tensor logits = torch::tensor({2.0, -1.0, 0.5, -3.0, 3.0});
  torch::Tensor target = torch::tensor({1, 1, 0, 0, 1});
  auto accuracy = createMetric("binary_accuracy");
  auto f1 = createMetric("binary_f1");
  accuracy->update(logits.unsqueeze(1), target); // [B, 1] works too
  f1->update(logits, target);
  // tp 2, fn 1, fp 1, tn 1.
  EXPECT_DOUBLE_EQ(valueOf(*accuracy), 3.0 / 5);
  EXPECT_DOUBLE_EQ(valueOf(*f1), 4.0 / 6);
  // A threshold of 0.9 on sigmoid: only logit 3 is positive.
  auto strict = createMetric("binary_f1", {{"threshold", 0.9}});
  strict->update(logits, target);
  EXPECT_DOUBLE_EQ(valueOf(*strict), 2.0 / 4);
}

TEST(MetricsTest, MultilabelAccuracyAndMacroF1) {
  torch::Tensor logits = torch::tensor({{1.0, -1.0}, {1.0, 1.0}, {-1.0, -1.0}});
  torch::Tensor target = torch::tensor({{1, 0}, {0, 1}, {1, 0}});
  auto accuracy =
      createMetric("multilabel_accuracy", {{"num_labels", int64_t(2)}});
  auto f1 = createMetric("multilabel_f1", {{"num_labels", int64_t(2)}});
  accuracy->update(logits, target);
  f1->update(logits, target);
  EXPECT_DOUBLE_EQ(valueOf(*accuracy), 4.0 / 6);
  // Label 0: tp 1, fp 1, fn 1 (F1 0.5); label 1: tp 1 (F1 1).
  EXPECT_DOUBLE_EQ(valueOf(*f1), 0.75);
  EXPECT_THROW(createMetric("multilabel_f1"), std::invalid_argument);
  EXPECT_THROW(f1->update(logits.narrow(1, 0, 1), target.narrow(1, 0, 1)),
               std::invalid_argument);
}

TEST(MetricsTest, MeanIoUAndDiceOverClassesThatOccur) {
  // Predicted [[0, 1], [1, 1]] against [[0, 0], [1, 1]]; class 2 occurs
  // nowhere and is left out of the mean.
  torch::Tensor predicted = torch::tensor({{0, 1}, {1, 1}});
  torch::Tensor logits = torch::one_hot(predicted, 3)
                             .permute({2, 0, 1})
                             .unsqueeze(0)
                             .to(torch::kFloat);
  torch::Tensor target = torch::tensor({{{0, 0}, {1, 1}}});
  auto miou = createMetric("miou", {{"num_classes", int64_t(3)}});
  auto dice = createMetric("dice", {{"num_classes", int64_t(3)}});
  miou->update(logits, target);
  dice->update(logits, target);
  // Class 0: I 1, P 1, T 2; class 1: I 2, P 3, T 2.
  EXPECT_DOUBLE_EQ(valueOf(*miou), (1.0 / 2 + 2.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(valueOf(*dice), (2.0 / 3 + 4.0 / 5) / 2);
  // Ignoring the pixel predicted wrongly makes class 0 perfect.
  auto ignoring = createMetric(
      "miou", {{"num_classes", int64_t(3)}, {"ignore_index", int64_t(7)}});
  ignoring->update(logits, torch::tensor({{{0, 7}, {1, 1}}}));
  EXPECT_DOUBLE_EQ(valueOf(*ignoring), 1.0);
  EXPECT_THROW(miou->update(logits.narrow(1, 0, 2), target),
               std::invalid_argument);
}

TEST(MetricsTest, MeanSquaredAndAbsoluteError) {
  torch::Tensor outputs = torch::tensor({1.0, 2.0, 3.0});
  torch::Tensor target = torch::tensor({2.0, 2.0, 5.0});
  auto mse = createMetric("mse");
  auto mae = createMetric("mae");
  mse->update(outputs, target);
  mae->update(outputs, target);
  EXPECT_DOUBLE_EQ(valueOf(*mse), 5.0 / 3);
  EXPECT_DOUBLE_EQ(valueOf(*mae), 1.0);
}

TEST(MetricsTest, TotalsOfTwoRanksAddUpToTheWhole) {
  torch::manual_seed(1);
  torch::Tensor logits = torch::randn({40, 5});
  torch::Tensor target = torch::randint(0, 5, {40});
  auto whole = createMetric("multilabel_f1", {{"num_labels", int64_t(5)}});
  auto first = createMetric("multilabel_f1", {{"num_labels", int64_t(5)}});
  auto second = createMetric("multilabel_f1", {{"num_labels", int64_t(5)}});
  torch::Tensor labels = torch::one_hot(target, 5);
  whole->update(logits, labels);
  first->update(logits.narrow(0, 0, 13), labels.narrow(0, 0, 13));
  second->update(logits.narrow(0, 13, 27), labels.narrow(0, 13, 27));
  EXPECT_DOUBLE_EQ(*whole->compute(first->totals() + second->totals()),
                   valueOf(*whole));
}

TEST(MetricsTest, DefaultsAreTodaysEvalMetrics) {
  auto metrics = createDefaultMetrics(createLoss("cross_entropy"));
  std::vector<std::string> names;
  for (const auto &metric : metrics)
    names.push_back(metric->name());
  EXPECT_EQ(names, (std::vector<std::string>{"Accuracy", "CrossEntropy",
                                             "Perplexity"}));
  // Regression targets: no accuracy, the recipe's loss, no perplexity.
  auto regression = createDefaultMetrics(createLoss("mse"));
  ASSERT_EQ(regression.size(), 2u);
  torch::Tensor outputs = torch::tensor({{1.0}, {3.0}});
  torch::Tensor target = torch::tensor({{2.0}, {3.0}});
  for (const auto &metric : regression)
    metric->update(outputs, target);
  EXPECT_FALSE(regression[0]->compute(regression[0]->totals()));
  EXPECT_DOUBLE_EQ(valueOf(*regression[1]), 0.5);
}

} // namespace
