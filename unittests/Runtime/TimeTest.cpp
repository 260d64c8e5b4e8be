//===- TimeTest.cpp - Time units, timestamps and events -------------------===//

#include "composer/Runtime/Time.h"
#include "composer/Runtime/Event.h"
#include "composer/Runtime/Precision.h"

#include <gtest/gtest.h>

using namespace composer::runtime;

namespace {

TEST(TimeTest, ParsesEveryUnit) {
  EXPECT_EQ(parseTime("1ep"), (Time{1, TimeUnit::Epoch}));
  EXPECT_EQ(parseTime("500ba"), (Time{500, TimeUnit::Batch}));
  EXPECT_EQ(parseTime("2048sp"), (Time{2048, TimeUnit::Sample}));
  EXPECT_EQ(parseTime("1e6tok"), (Time{1e6, TimeUnit::Token}));
  EXPECT_EQ(parseTime("0.5dur"), (Time{0.5, TimeUnit::Duration}));
  EXPECT_EQ(parseTime("0.25ep"), (Time{0.25, TimeUnit::Epoch}));
  EXPECT_EQ(parseTime("0.5dur").str(), "0.5dur");
  EXPECT_EQ(parseTime("12ba").str(), "12ba");
}

TEST(TimeTest, RejectsBadTimes) {
  for (const char *bad : {"", "ep", "1", "1epoch", "x1ep", "-1ep", "1.5ba",
                          "1 ep", "nanba", "2.5sp"}) {
    try {
      parseTime(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument &error) {
      EXPECT_NE(std::string(error.what()).find(std::string("'") + bad + "'"),
                std::string::npos)
          << error.what();
    }
  }
}

TEST(TimeTest, ArithmeticKeepsUnits) {
  Time sum = parseTime("3ep") + parseTime("2ep");
  EXPECT_EQ(sum, (Time{5, TimeUnit::Epoch}));
  EXPECT_EQ(parseTime("10ba") - parseTime("4ba"), (Time{6, TimeUnit::Batch}));
  EXPECT_EQ(parseTime("10ba") * 0.5, (Time{5, TimeUnit::Batch}));
  EXPECT_TRUE(parseTime("1ep") < parseTime("2ep"));
  EXPECT_THROW(parseTime("1ep") + parseTime("1ba"), std::invalid_argument);
  EXPECT_THROW((void)(parseTime("1ep") < parseTime("1ba")),
               std::invalid_argument);
}

TEST(TimeTest, ContextConvertsUnits) {
  TimeContext context;
  context.batchesPerEpoch = 10;
  context.samplesPerEpoch = 640;
  context.tokensPerEpoch = 6400;
  context.maxDuration = parseTime("4ep");
  EXPECT_DOUBLE_EQ(context.toBatches(parseTime("2ep")), 20);
  EXPECT_DOUBLE_EQ(context.toBatches(parseTime("7ba")), 7);
  EXPECT_DOUBLE_EQ(context.toBatches(parseTime("128sp")), 2);
  EXPECT_DOUBLE_EQ(context.toBatches(parseTime("640tok")), 1);
  EXPECT_DOUBLE_EQ(context.toBatches(parseTime("0.25dur")), 10);
  EXPECT_DOUBLE_EQ(context.maxBatches(), 40);

  Timestamp now;
  now.epoch = 1;
  now.batch = 15;
  now.sample = 960;
  EXPECT_DOUBLE_EQ(context.fractionDone(now), 0.375);
  EXPECT_TRUE(context.reached(now, parseTime("1ep")));
  EXPECT_FALSE(context.reached(now, parseTime("2ep")));
  EXPECT_TRUE(context.reached(now, parseTime("15ba")));
  EXPECT_FALSE(context.reached(now, parseTime("16ba")));
  EXPECT_TRUE(context.reached(now, parseTime("0.375dur")));
  EXPECT_FALSE(context.reached(now, parseTime("0.4dur")));
  EXPECT_TRUE(context.reached(now, parseTime("1.5ep")));
  EXPECT_EQ(now.get(TimeUnit::Sample), 960);
  EXPECT_THROW(now.get(TimeUnit::Duration), std::invalid_argument);

  context.tokensPerEpoch = 0;
  EXPECT_THROW(context.toBatches(parseTime("1tok")), std::invalid_argument);
}

TEST(EventTest, NamesAreComposers) {
  EXPECT_STREQ(eventName(Event::Init), "INIT");
  EXPECT_STREQ(eventName(Event::AfterDataloader), "AFTER_DATALOADER");
  EXPECT_STREQ(eventName(Event::EvalEnd), "EVAL_END");
  EXPECT_STREQ(eventName(Event::FitEnd), "FIT_END");
}

TEST(PrecisionTest, ParsesNamesAndAutocasts) {
  EXPECT_EQ(parsePrecision("amp_bf16"), Precision::AmpBF16);
  EXPECT_STREQ(precisionName(parsePrecision("fp32")), "fp32");
  EXPECT_THROW(parsePrecision("bf16"), std::invalid_argument);

  torch::Tensor a = torch::randn({4, 4}), b = torch::randn({4, 4});
  {
    AutocastGuard guard(Precision::AmpBF16, torch::kCPU);
    EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kBFloat16);
  }
  EXPECT_EQ(torch::mm(a, b).scalar_type(), torch::kFloat);
}

TEST(PrecisionTest, GradScalerSkipsOverflowAndBacksOff) {
  GradScaler scaler(true, /*initScale=*/1024, 2.0, 0.5, /*growthInterval=*/2);
  torch::Tensor weight = torch::ones({2}, torch::requires_grad());
  scaler.scale((weight * 3).sum()).backward();
  EXPECT_TRUE(scaler.unscale({weight}));
  EXPECT_TRUE(torch::equal(weight.grad(), torch::full({2}, 3.0)));
  scaler.update(true);
  scaler.update(true);
  EXPECT_EQ(scaler.currentScale(), 2048);

  weight.mutable_grad().fill_(std::numeric_limits<float>::infinity());
  EXPECT_FALSE(scaler.unscale({weight}));
  scaler.update(false);
  EXPECT_EQ(scaler.currentScale(), 1024);
  EXPECT_EQ(scaler.growthTracker(), 0);
}

} // namespace
