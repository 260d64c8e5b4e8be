//===- TrainingLoopAlgorithmsTest.cpp - SAM, SWA, selective backprop ------===//
//
// Each algorithm against values computed here by hand: SAM and selective
// backprop on a training step whose trainer stages are stood in for by small
// functions (StepTestUtils.h), SWA on a loader of known batches; and the
// step's chains themselves.
//
//===----------------------------------------------------------------------===//

#include "StepTestUtils.h"
#include "composer/Runtime/Algorithms.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

using namespace composer::runtime;
using composer::runtime::testutils::fire;
using composer::runtime::testutils::StepRig;

namespace {

//===----------------------------------------------------------------------===//
// SAM
//===----------------------------------------------------------------------===//

/// L(w) = w1^2 + w1 w2 + 2 w2^2, so g = (2 w1 + w2, w1 + 4 w2).
std::pair<double, double> gradientAt(double w1, double w2) {
  return {2 * w1 + w2, w1 + 4 * w2};
}

/// A step whose forward is L(w) whatever the input: SAM's second half is
/// the stand-in forward, loss and backward run again.
struct TwoParameters {
  State state;
  torch::Tensor w1, w2;
  std::unique_ptr<Optimizer> optimizer;
  std::vector<std::pair<double, double>> seenBySecondHalf;
  /// What the second backward leaves in w2's gradient (none: the true one).
  std::optional<double> injected;

  TwoParameters(double a, double b) {
    w1 = torch::tensor({a}, torch::kFloat).requires_grad_();
    w2 = torch::tensor({b}, torch::kFloat).requires_grad_();
    state.parameters = {{"w1", w1}, {"w2", w2}};
    optimizer = std::make_unique<Optimizer>(OptimizerSpec{},
                                            std::vector<torch::Tensor>{w1, w2});
    state.optimizer = optimizer.get();
    lossOf(w1, w2).backward();
  }

  static torch::Tensor lossOf(const torch::Tensor &w1,
                              const torch::Tensor &w2) {
    return (w1 * w1 + w1 * w2 + 2 * w2 * w2).sum();
  }

  /// Runs the clip stage of batch `batch`'s step with `algorithm` around
  /// the stand-ins; returns whether the step is to be taken.
  bool clip(Algorithm &algorithm, bool finite = true) {
    StepRig rig(state, {&algorithm});
    rig.base.forwardWith = [this](State &, const torch::Tensor &) {
      seenBySecondHalf.emplace_back(w1.item<double>(), w2.item<double>());
      return lossOf(w1, w2);
    };
    rig.base.lossWith = [](const torch::Tensor &outputs, const torch::Tensor &,
                           bool) { return outputs; };
    rig.base.backwardWith = [this](const torch::Tensor &loss) {
      loss.backward();
      if (injected) {
        torch::NoGradGuard noGrad;
        w2.grad().fill_(*injected);
      }
    };
    rig.step.microbatches().push_back({torch::zeros({1}), torch::zeros({1})});
    return rig.step.clip(finite);
  }
};

TEST(SamTest, AscendsThenTakesTheGradientThereAndComesBack) {
  const double rho = 0.05, w1 = 1.0, w2 = -0.5;
  auto sam = createAlgorithm("sam", {{"rho", rho}});
  TwoParameters problem(w1, w2);
  EXPECT_TRUE(problem.clip(*sam));

  auto [g1, g2] = gradientAt(w1, w2); // (1.5, -1)
  double norm = std::sqrt(g1 * g1 + g2 * g2);
  double e1 = rho * g1 / (norm + 1e-12), e2 = rho * g2 / (norm + 1e-12);
  ASSERT_EQ(problem.seenBySecondHalf.size(), 1u);
  EXPECT_NEAR(problem.seenBySecondHalf[0].first, w1 + e1, 1e-6);
  EXPECT_NEAR(problem.seenBySecondHalf[0].second, w2 + e2, 1e-6);
  // Back at w exactly, holding the gradient taken at w + e.
  EXPECT_EQ(problem.w1.item<float>(), float(w1));
  EXPECT_EQ(problem.w2.item<float>(), float(w2));
  auto [h1, h2] = gradientAt(w1 + e1, w2 + e2);
  EXPECT_NEAR(problem.w1.grad().item<double>(), h1, 1e-5);
  EXPECT_NEAR(problem.w2.grad().item<double>(), h2, 1e-5);

  // The descent step SGD then takes from w (lr 0.1).
  problem.optimizer->step();
  EXPECT_NEAR(problem.w1.item<double>(), w1 - 0.1 * h1, 1e-6);
  EXPECT_NEAR(problem.w2.item<double>(), w2 - 0.1 * h2, 1e-6);
}

TEST(SamTest, EveryIntervalStepsOnly) {
  auto sam = createAlgorithm("sam", {{"interval", int64_t(3)}});
  EXPECT_EQ(sam->stepStages(), dynamic_cast<StepStages *>(sam.get()));
  for (int64_t batch : {0, 1, 2, 3, 4, 5, 6}) {
    TwoParameters problem(1.0, 2.0);
    problem.state.timestamp.batch = batch;
    EXPECT_TRUE(problem.clip(*sam));
    EXPECT_EQ(problem.seenBySecondHalf.size(), (batch + 1) % 3 == 0 ? 1u : 0u)
        << batch;
    EXPECT_FALSE(sam->match(Event::AfterBackward, problem.state));
  }
}

TEST(SamTest, AnInfiniteFirstGradientSkipsBothHalves) {
  auto sam = createAlgorithm("sam");
  TwoParameters problem(1.0, 2.0);
  {
    torch::NoGradGuard noGrad;
    problem.w1.grad().fill_(std::numeric_limits<float>::infinity());
  }
  EXPECT_FALSE(problem.clip(*sam)) << "the step is skipped";
  EXPECT_TRUE(problem.seenBySecondHalf.empty()) << "no second half";
  EXPECT_EQ(problem.w1.item<float>(), 1.0f);
  EXPECT_EQ(problem.w2.item<float>(), 2.0f);

  // Loss scaling already found an overflow: nothing runs either.
  TwoParameters scaled(1.0, 2.0);
  EXPECT_FALSE(scaled.clip(*sam, /*finite=*/false));
  EXPECT_TRUE(scaled.seenBySecondHalf.empty());
  EXPECT_EQ(scaled.w1.item<float>(), 1.0f);
}

TEST(SamTest, AnInfiniteSecondGradientRestoresTheWeightsAndSkips) {
  auto sam = createAlgorithm("sam", {{"rho", 0.5}});
  TwoParameters problem(1.0, 2.0);
  problem.injected = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(problem.clip(*sam));
  ASSERT_EQ(problem.seenBySecondHalf.size(), 1u);
  EXPECT_NE(problem.seenBySecondHalf[0].first, 1.0) << "it did ascend";
  EXPECT_EQ(problem.w1.item<float>(), 1.0f);
  EXPECT_EQ(problem.w2.item<float>(), 2.0f);
  EXPECT_TRUE(std::isfinite(problem.w1.item<float>()));
}

TEST(SamTest, RejectsBadOptions) {
  EXPECT_THROW(createAlgorithm("sam", {{"rho", -0.1}}), std::invalid_argument);
  EXPECT_THROW(createAlgorithm("sam", {{"epsilon", -1.0}}),
               std::invalid_argument);
  EXPECT_THROW(createAlgorithm("sam", {{"interval", int64_t(0)}}),
               std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// Selective backprop
//===----------------------------------------------------------------------===//

/// Output i is input i's mean: with MSE against zeros, sample i's loss is
/// (its value)^2, so the losses are known and distinct.
torch::jit::Module meanModel() {
  torch::jit::Module model("Mean");
  model.define(R"(
    def forward(self, x):
        return torch.mean(torch.flatten(x, 1), 1, True)
  )");
  return model;
}

State selectiveState(int64_t batchInEpoch, double fraction, int64_t size) {
  State state;
  state.model = meanModel();
  state.time.batchesPerEpoch = 100;
  state.time.maxDuration = {1, TimeUnit::Epoch};
  state.timestamp.batch = std::llround(fraction * 100);
  state.timestamp.batchInEpoch = batchInEpoch;
  state.seed = 3;
  state.batch.input = (torch::arange(size, torch::kFloat) + 1)
                          .view({size, 1, 1, 1})
                          .expand({size, 1, 4, 4})
                          .contiguous();
  state.batch.target = torch::arange(size, torch::kLong) * 10;
  return state;
}

/// Runs the selectBatch stage with `algorithm` around stand-ins whose loss
/// ignores the targets: sample i's loss is its output squared. Returns
/// whether it changed the batch's size.
bool select(Algorithm &algorithm, State &state) {
  int64_t before = state.batch.size();
  StepRig rig(state, {&algorithm});
  rig.base.lossWith = [](const torch::Tensor &outputs, const torch::Tensor &,
                         bool perSample) {
    torch::Tensor loss = outputs.flatten(1).pow(2).mean(1);
    return perSample ? loss : loss.mean();
  };
  rig.step.selectBatch();
  return state.batch.size() != before;
}

TEST(SelectiveBackpropTest, KeepsKeepTimesTheBatchAsWholeSamples) {
  for (auto [keep, size, expected] :
       {std::tuple{0.5, 8, 4}, {0.3, 8, 2}, {0.25, 3, 1}, {1.0, 5, 5}}) {
    auto algorithm = createAlgorithm(
        "selective_backprop",
        {{"start", 0.0}, {"end", 1.0}, {"keep", keep}, {"interrupt", 0}});
    State state = selectiveState(0, 0.5, size);
    select(*algorithm, state);
    ASSERT_EQ(state.batch.size(), expected) << keep << " of " << size;
    ASSERT_EQ(state.batch.target.size(0), expected);
    std::set<int64_t> seen;
    for (int64_t i = 0; i < expected; ++i) {
      // Sample v (value v + 1 everywhere) still carries its own target.
      double value = state.batch.input[i][0][0][0].item<double>();
      EXPECT_TRUE(torch::equal(state.batch.input[i],
                               torch::full({1, 4, 4}, float(value))));
      EXPECT_EQ(state.batch.target[i].item<int64_t>(), int64_t(value - 1) * 10);
      EXPECT_TRUE(seen.insert(int64_t(value)).second) << "no repeats";
    }
  }
}

TEST(SelectiveBackpropTest, FavoursHighLossSamplesAsQToTheOneOverKeepMinusOne) {
  // keep 0.5: probability proportional to the percentile q. Over many
  // batches the highest-loss of 4 samples (q = 7/8) is drawn first 7 times
  // as often as the lowest (q = 1/8); with 2 kept of 4, the inclusion
  // frequencies follow from the successive draws.
  auto algorithm = createAlgorithm(
      "selective_backprop",
      {{"start", 0.0}, {"end", 1.0}, {"keep", 0.5}, {"interrupt", 0}});
  std::vector<int> kept(4, 0);
  const int trials = 4000;
  for (int t = 0; t < trials; ++t) {
    State state = selectiveState(0, 0.5, 4);
    state.time.maxDuration = {100, TimeUnit::Epoch};
    state.timestamp.batch = t;
    ASSERT_TRUE(select(*algorithm, state));
    for (int64_t i = 0; i < 2; ++i)
      ++kept[int(state.batch.input[i][0][0][0].item<double>()) - 1];
  }
  // Inclusion probabilities of drawing 2 of 4 without replacement with
  // weights 1, 3, 5, 7 (sum 16).
  std::vector<double> w = {1, 3, 5, 7};
  for (int i = 0; i < 4; ++i) {
    double p = w[i] / 16;
    for (int j = 0; j < 4; ++j)
      if (j != i)
        p += w[j] / 16 * w[i] / (16 - w[j]);
    EXPECT_NEAR(double(kept[i]) / trials, p, 0.03) << "sample " << i;
  }
}

TEST(SelectiveBackpropTest, ActiveBetweenStartAndEndExceptEveryInterrupt) {
  auto algorithm = createAlgorithm("selective_backprop");
  for (auto [batchInEpoch, fraction, active] : {std::tuple{0, 0.49, false},
                                                {0, 0.5, true},
                                                {1, 0.6, false},
                                                {2, 0.6, true},
                                                {4, 0.89, true},
                                                {4, 0.9, false}}) {
    State state = selectiveState(batchInEpoch, fraction, 4);
    EXPECT_EQ(select(*algorithm, state), active)
        << batchInEpoch << " at " << fraction;
    EXPECT_FALSE(algorithm->match(Event::AfterDataloader, state))
        << "a stage, not an event";
  }
  // A batch of one has nothing to choose from.
  auto always = createAlgorithm(
      "selective_backprop", {{"start", 0.0}, {"end", 1.0}, {"interrupt", 0}});
  State single = selectiveState(0, 0.5, 1);
  torch::Tensor input = single.batch.input;
  select(*always, single);
  EXPECT_TRUE(single.batch.input.is_same(input));
}

TEST(SelectiveBackpropTest, ScoresDownscaledInputs) {
  auto algorithm = createAlgorithm(
      "selective_backprop",
      {{"start", 0.0}, {"end", 1.0}, {"scale_factor", 0.5}, {"interrupt", 0}});
  State state = selectiveState(0, 0.5, 6);
  torch::jit::Module model("Sizes");
  // Fails unless the scoring forward sees 2x2 images.
  model.define(R"(
    def forward(self, x):
        assert x.size(2) == 2 and x.size(3) == 2
        return torch.mean(torch.flatten(x, 1), 1, True)
  )");
  state.model = model;
  ASSERT_TRUE(select(*algorithm, state));
  EXPECT_EQ(state.batch.input.sizes(), (std::vector<int64_t>{3, 1, 4, 4}));
}

TEST(SelectiveBackpropTest, RejectsBadOptions) {
  for (double keep : {0.0, -0.5, 1.5})
    EXPECT_THROW(createAlgorithm("selective_backprop", {{"keep", keep}}),
                 std::invalid_argument)
        << keep;
  EXPECT_THROW(
      createAlgorithm("selective_backprop", {{"start", 0.8}, {"end", 0.5}}),
      std::invalid_argument);
  EXPECT_THROW(createAlgorithm("selective_backprop", {{"scale_factor", 2.0}}),
               std::invalid_argument);
  EXPECT_THROW(
      createAlgorithm("selective_backprop", {{"interrupt", int64_t(-1)}}),
      std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// SWA
//===----------------------------------------------------------------------===//

/// Two parameters and a BatchNorm over 2 features, momentum 0.1, updating
/// num_batches_tracked as nn.BatchNorm1d does.
torch::jit::Module batchNormModel() {
  torch::jit::Module model("Bn");
  model.register_parameter("weight", torch::ones({2}), false);
  model.register_parameter("bias", torch::zeros({2}), false);
  model.register_buffer("running_mean", torch::zeros({2}));
  model.register_buffer("running_var", torch::ones({2}));
  model.register_buffer("num_batches_tracked", torch::zeros({}, torch::kLong));
  model.define(R"(
    def forward(self, x):
        self.num_batches_tracked.add_(1)
        return torch.batch_norm(x, self.weight, self.bias, self.running_mean,
                                self.running_var, True, 0.1, 1e-5, False)
  )");
  return model;
}

/// SWA recomputes BatchNorm statistics over the batches of the training
/// loader: here 3 of 5 known samples, in order.
struct SwaRun {
  State state;
  std::vector<torch::Tensor> batches;
  std::unique_ptr<DataLoader> loader;

  SwaRun() {
    state.model = batchNormModel();
    state.parameters = namedParameters(state.model);
    state.time.batchesPerEpoch = 3;
    state.time.maxDuration = {10, TimeUnit::Epoch};
    torch::manual_seed(4);
    for (int i = 0; i < 3; ++i)
      batches.push_back(torch::randn({5, 2}) * (i + 1) + i);
    auto dataset = std::make_shared<TensorDataset>(
        torch::cat(batches), torch::zeros({15}, torch::kLong));
    DataLoaderOptions options;
    options.batchSize = 5;
    options.shuffle = false;
    loader = std::make_unique<DataLoader>(dataset, options);
    state.trainLoader = loader.get();
  }

  /// The weights at batch b: b and -2b.
  void trainTo(int64_t b) {
    torch::NoGradGuard noGrad;
    state.timestamp.batch = b;
    state.parameters[0].second.fill_(double(b));
    state.parameters[1].second.fill_(-2.0 * double(b));
  }
};

TEST(SwaTest, AveragesFromStartToEndThenRecomputesBatchNorm) {
  auto swa =
      createAlgorithm("swa", {{"swa_start", Time{4, TimeUnit::Batch}},
                              {"swa_end", Time{7, TimeUnit::Batch}},
                              {"update_interval", Time{1, TimeUnit::Batch}}});
  SwaRun run;
  Logger logger;
  for (int64_t b = 1; b <= 9; ++b) {
    run.trainTo(b);
    bool fired = fire(*swa, Event::BatchEnd, run.state, logger);
    EXPECT_EQ(fired, b >= 4 && b <= 7) << b;
  }
  // Batches 4..7 averaged: weight 5.5, bias -11; the model holds them from
  // batch 7 on (trainTo overwrote them after, so check at batch 7).
  SwaRun check;
  auto again =
      createAlgorithm("swa", {{"swa_start", Time{4, TimeUnit::Batch}},
                              {"swa_end", Time{7, TimeUnit::Batch}},
                              {"update_interval", Time{1, TimeUnit::Batch}}});
  for (int64_t b = 1; b <= 7; ++b) {
    check.trainTo(b);
    fire(*again, Event::BatchEnd, check.state, logger);
  }
  EXPECT_TRUE(
      torch::allclose(check.state.parameters[0].second, torch::full({2}, 5.5)));
  EXPECT_TRUE(torch::allclose(check.state.parameters[1].second,
                              torch::full({2}, -11.0)));

  // update_bn: the mean over batches of each batch's mean and unbiased
  // variance.
  torch::Tensor mean = torch::zeros({2}), var = torch::zeros({2});
  for (const torch::Tensor &x : check.batches) {
    mean += x.mean(0) / 3;
    var += x.var(0, /*unbiased=*/true) / 3;
  }
  std::map<std::string, torch::Tensor> buffers;
  for (const auto &[name, t] : namedBuffers(check.state.model))
    buffers[name] = t;
  EXPECT_TRUE(torch::allclose(buffers["running_mean"], mean, 1e-5, 1e-5))
      << buffers["running_mean"] << mean;
  EXPECT_TRUE(torch::allclose(buffers["running_var"], var, 1e-5, 1e-5))
      << buffers["running_var"] << var;
  EXPECT_EQ(buffers["num_batches_tracked"].item<int64_t>(), 3);
}

TEST(SwaTest, EveryUpdateIntervalEventsAndFromACheckpoint) {
  AlgorithmOptions options = {{"swa_start", Time{2, TimeUnit::Batch}},
                              {"swa_end", Time{8, TimeUnit::Batch}},
                              {"update_interval", Time{2, TimeUnit::Batch}}};
  Logger logger;
  // Straight: updates at batches 2, 4, 6, 8 (every other event from 2).
  SwaRun straight;
  auto swa = createAlgorithm("swa", options);
  for (int64_t b = 1; b <= 8; ++b) {
    straight.trainTo(b);
    fire(*swa, Event::BatchEnd, straight.state, logger);
  }
  EXPECT_TRUE(torch::allclose(straight.state.parameters[0].second,
                              torch::full({2}, 5.0)));

  // Interrupted after batch 5: the checkpoint carries the average.
  SwaRun first;
  auto before = createAlgorithm("swa", options);
  for (int64_t b = 1; b <= 5; ++b) {
    first.trainTo(b);
    fire(*before, Event::BatchEnd, first.state, logger);
  }
  std::stringstream stream;
  {
    torch::serialize::OutputArchive archive;
    before->saveState(archive);
    archive.save_to(stream);
  }
  SwaRun resumed;
  auto after = createAlgorithm("swa", options);
  {
    torch::serialize::InputArchive archive;
    archive.load_from(stream);
    after->loadState(archive);
  }
  for (int64_t b = 6; b <= 8; ++b) {
    resumed.trainTo(b);
    fire(*after, Event::BatchEnd, resumed.state, logger);
  }
  EXPECT_TRUE(torch::equal(resumed.state.parameters[0].second,
                           straight.state.parameters[0].second));
  EXPECT_TRUE(torch::equal(resumed.state.parameters[1].second,
                           straight.state.parameters[1].second));
}

TEST(SwaTest, RejectsBadOptions) {
  auto bad = [](const AlgorithmOptions &options) {
    EXPECT_THROW(createAlgorithm("swa", options), std::invalid_argument);
  };
  bad({{"swa_start", Time{0.8, TimeUnit::Duration}},
       {"swa_end", Time{0.5, TimeUnit::Duration}}});
  bad({{"swa_start", Time{0.5, TimeUnit::Duration}},
       {"swa_end", Time{0.5, TimeUnit::Duration}}});
  bad({{"swa_start", Time{2, TimeUnit::Epoch}},
       {"swa_end", Time{0.9, TimeUnit::Duration}}});
  bad({{"update_interval", Time{0.1, TimeUnit::Duration}}});
  bad({{"anneal_strategy", std::string("step")}});
  bad({{"anneal_steps", int64_t(0)}});
}

//===----------------------------------------------------------------------===//
// The training step's chains
//===----------------------------------------------------------------------===//

/// Logs entering and leaving the stages it wraps; passes the others through.
struct Tracer : Algorithm, StepStages {
  Tracer(std::string name, std::vector<std::string> &log)
      : name_(std::move(name)), log_(log) {}
  std::string name() const override { return name_; }
  StepStages *stepStages() override { return this; }

  torch::Tensor forward(TrainingStep &, const torch::Tensor &input,
                        ForwardNext next) override {
    log_.push_back(name_ + ":forward");
    torch::Tensor outputs = next(input);
    log_.push_back(name_ + ":/forward");
    return outputs;
  }
  bool clip(TrainingStep &, bool finite, ClipNext next) override {
    log_.push_back(name_ + ":clip");
    finite = next(finite);
    log_.push_back(name_ + ":/clip");
    return finite;
  }

  std::string name_;
  std::vector<std::string> &log_;
};

TEST(TrainingStepTest, LinksNestInTheOrderAddedTheFirstOutermost) {
  std::vector<std::string> log;
  Tracer a("a", log), b("b", log);
  State state;
  StepRig rig(state, {&a, &b});
  rig.base.forwardWith = [&](State &, const torch::Tensor &input) {
    log.push_back("base:forward");
    return input * 2;
  };
  EXPECT_TRUE(
      torch::equal(rig.step.forward(torch::ones({2})), torch::full({2}, 2.0f)));
  EXPECT_EQ(log,
            (std::vector<std::string>{"a:forward", "b:forward", "base:forward",
                                      "b:/forward", "a:/forward"}));
  // Stages a link leaves alone pass through to the base.
  log.clear();
  rig.base.unscaleWith = [] { return false; };
  EXPECT_FALSE(rig.step.unscale());
  EXPECT_TRUE(log.empty());
  // Work after `next` runs innermost first: in reverse recipe order, as on
  // AFTER_* events.
  EXPECT_TRUE(rig.step.clip(true));
  EXPECT_EQ(log, (std::vector<std::string>{"a:clip", "b:clip", "b:/clip",
                                           "a:/clip"}));
}

TEST(TrainingStepTest, ALinkReplacesItsStageOrRunsTheRestAgain) {
  struct Skip : Algorithm, StepStages {
    std::string name() const override { return "skip"; }
    StepStages *stepStages() override { return this; }
    void optimizerStep(TrainingStep &, bool, OptimizerStepNext) override {
      ++skipped;
    }
    int skipped = 0;
  } skip;
  struct Twice : Algorithm, StepStages {
    std::string name() const override { return "twice"; }
    StepStages *stepStages() override { return this; }
    torch::Tensor loss(TrainingStep &, const torch::Tensor &outputs,
                       const torch::Tensor &target, bool perSample,
                       LossNext next) override {
      return next(outputs, target, perSample) +
             next(outputs, target, perSample);
    }
  } twice;
  State state;
  torch::Tensor w = torch::ones({1}, torch::requires_grad());
  w.mutable_grad() = torch::ones({1});
  Optimizer optimizer(OptimizerSpec{}, {w});
  state.optimizer = &optimizer;
  StepRig rig(state, {&skip, &twice});
  int losses = 0;
  rig.base.lossWith = [&](const torch::Tensor &outputs, const torch::Tensor &,
                          bool) {
    ++losses;
    return outputs.sum();
  };
  rig.step.optimizerStep(true);
  EXPECT_EQ(skip.skipped, 1);
  EXPECT_EQ(w.item<float>(), 1.0f) << "the optimizer never stepped";
  EXPECT_EQ(
      rig.step.loss(torch::full({2}, 3.0f), torch::Tensor()).item<float>(),
      12.0f);
  EXPECT_EQ(losses, 2);
}

TEST(TrainingStepTest,
     RecomputedGradientsReplayTheMicrobatchesThroughEveryLink) {
  // L = sum(w * x) over two microbatches: the recomputed gradient is the
  // sum of their inputs, not added to the stale one, and the forward links
  // see every replayed microbatch.
  std::vector<std::string> log;
  Tracer tracer("t", log);
  State state;
  torch::Tensor w = torch::zeros({2}, torch::requires_grad());
  w.mutable_grad() = torch::full({2}, 100.0f);
  state.parameters = {{"w", w}};
  Optimizer optimizer(OptimizerSpec{}, {w});
  state.optimizer = &optimizer;
  StepRig rig(state, {&tracer});
  rig.base.forwardWith = [&](State &, const torch::Tensor &input) {
    return (w * input).sum();
  };
  rig.base.lossWith = [](const torch::Tensor &outputs, const torch::Tensor &,
                         bool) { return outputs; };
  rig.step.microbatches() = {{torch::tensor({1.0f, 2.0f}), {}},
                             {torch::tensor({3.0f, -1.0f}), {}}};
  EXPECT_TRUE(rig.step.recomputeGradients());
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({4.0f, 1.0f})));
  EXPECT_EQ(log, (std::vector<std::string>{"t:forward", "t:/forward",
                                           "t:forward", "t:/forward"}))
      << "no clip: recomputing is not a second step";
  rig.base.unscaleWith = [] { return false; };
  EXPECT_FALSE(rig.step.recomputeGradients());
}

TEST(TrainingStepTest, TheTrainersStagesComputeTheRecipesLoss) {
  torch::Tensor outputs = torch::tensor({{2.0f, 0.0f}, {0.0f, 1.0f}});
  torch::Tensor classes = torch::tensor({0, 0}, torch::kLong);
  auto crossEntropy = createLoss("cross_entropy");
  torch::Tensor perSample =
      crossEntropy->compute(outputs, classes, /*perSample=*/true);
  EXPECT_TRUE(torch::allclose(perSample, -outputs.log_softmax(1).select(1, 0),
                              1e-6, 1e-6));
  EXPECT_NEAR(crossEntropy->compute(outputs, classes).item<double>(),
              perSample.mean().item<double>(), 1e-6);
  torch::Tensor target = torch::tensor({{1.0f, 0.0f}, {0.0f, 0.0f}});
  EXPECT_TRUE(torch::allclose(createLoss("mse")->compute(outputs, target, true),
                              torch::tensor({0.5f, 0.5f})));
  GradScaler scaler(false);
  StandardStages standard(scaler);
  State state;
  state.lossFunction = createLoss("mse");
  TrainingStep step(state, standard);
  EXPECT_NEAR(step.loss(outputs, target).item<double>(), 0.5, 1e-6);
  EXPECT_TRUE(step.unscale()) << "no loss scaling: always finite";
  EXPECT_TRUE(step.clip(true));
  EXPECT_FALSE(step.clip(false));
}

TEST(TrainingStepTest, TheTrainersStagesScaleTheLossAndSkipAnOverflow) {
  // fp16's loss scaling, which needs a GPU end to end, stage by stage.
  GradScaler scaler(/*enabled=*/true, /*initScale=*/1024);
  StandardStages standard(scaler);
  State state;
  torch::Tensor w = torch::tensor({1.0f, -2.0f}, torch::requires_grad());
  state.parameters = {{"w", w}};
  Optimizer optimizer(OptimizerSpec{}, std::vector<torch::Tensor>{w});
  state.optimizer = &optimizer;
  TrainingStep step(state, standard);
  step.backward((w * w).sum());
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({2048.0f, -4096.0f})));
  step.reduce(); // one process: nothing to average
  EXPECT_TRUE(step.unscale());
  EXPECT_TRUE(torch::equal(w.grad(), torch::tensor({2.0f, -4.0f})));
  step.optimizerStep(true);
  EXPECT_TRUE(torch::allclose(w, torch::tensor({0.8f, -1.6f})));
  EXPECT_EQ(scaler.currentScale(), 1024.0);

  // An overflow: no update, and the scale backs off.
  optimizer.zeroGrad();
  step.backward((w * std::numeric_limits<float>::infinity()).sum());
  EXPECT_FALSE(step.unscale());
  torch::Tensor before = w.detach().clone();
  step.optimizerStep(false);
  EXPECT_TRUE(torch::equal(w.detach(), before));
  EXPECT_EQ(scaler.currentScale(), 512.0);
}

} // namespace
