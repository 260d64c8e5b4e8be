//===- OptimTest.cpp - Optimizers and learning-rate schedules -------------===//

#include "composer/Runtime/Optim.h"

#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <sstream>
#include <utility>

using namespace composer::runtime;

namespace {

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

Time ba(double v) { return {v, TimeUnit::Batch}; }
Time ep(double v) { return {v, TimeUnit::Epoch}; }
Time sp(double v) { return {v, TimeUnit::Sample}; }
Time dur(double v) { return {v, TimeUnit::Duration}; }

/// 10 batches of 10 samples per epoch, 10 epochs: a run of 100 batches.
TimeContext context() {
  TimeContext c;
  c.batchesPerEpoch = 10;
  c.samplesPerEpoch = 100;
  c.maxDuration = ep(10);
  return c;
}

double at(const Scheduler &s, int64_t batch, const TimeContext &c = context()) {
  Timestamp now;
  now.batch = batch;
  now.epoch = batch / c.batchesPerEpoch;
  now.batchInEpoch = batch % c.batchesPerEpoch;
  return s.multiplier(now, c);
}

/// Expects the multiplier of `s` at each (batch, multiplier) of `points`, in
/// context `c` (EXPECT_DOUBLE_EQ).
void expectAt(const Scheduler &s,
              std::initializer_list<std::pair<int64_t, double>> points,
              const TimeContext &c = context()) {
  for (auto [batch, multiplier] : points)
    EXPECT_DOUBLE_EQ(at(s, batch, c), multiplier) << "batch " << batch;
}

SchedulerSpec spec(const std::string &name) {
  SchedulerSpec s;
  s.name = name;
  return s;
}

/// cosine_with_warmup: up over `warmup`, then down to `alphaF` at `tMax`.
SchedulerSpec cosineWithWarmup(Time warmup, Time tMax, double alphaF) {
  SchedulerSpec s = spec("cosine_with_warmup");
  s.warmup = warmup;
  s.tMax = tMax;
  s.alphaF = alphaF;
  return s;
}

/// step: times `gamma` every `stepSize`.
SchedulerSpec stepEvery(Time stepSize, double gamma) {
  SchedulerSpec s = spec("step");
  s.stepSize = stepSize;
  s.gamma = gamma;
  return s;
}

TEST(SchedulerTest, CosineWithWarmup) {
  SchedulerSpec s = cosineWithWarmup(ba(10), ba(100), 0.1);
  auto sched = createScheduler(s);
  expectAt(*sched, {{0, 0.0}, {5, 0.5}, {10, 1.0}, {55, 0.1 + 0.9 * 0.5}});
  EXPECT_NEAR(at(*sched, 100), 0.1, 1e-15);
  EXPECT_NEAR(at(*sched, 150), 0.1, 1e-15);
  // Composer's formula at an arbitrary point.
  double tau = (30.0 - 10) / 90;
  EXPECT_DOUBLE_EQ(at(*sched, 30), 0.1 + 0.9 * (1 + std::cos(M_PI * tau)) / 2);

  s.name = "cosine_decay_with_warmup";
  EXPECT_DOUBLE_EQ(at(*createScheduler(s), 5), 0.5);
  // Plain cosine ignores the warmup.
  s.name = "cosine";
  expectAt(*createScheduler(s), {{0, 1.0}, {50, 0.1 + 0.9 * 0.5}});
}

TEST(SchedulerTest, DurationUnits) {
  // 1dur = 100 batches; 0.1dur warmup = 10 batches.
  SchedulerSpec s = cosineWithWarmup(dur(0.1), dur(1), 0);
  auto sched = createScheduler(s);
  expectAt(*sched, {{5, 0.5}, {55, 0.5}});
  EXPECT_NEAR(at(*sched, 100), 0.0, 1e-15);
  // The run is already stretched; `dur` is not stretched again.
  s.scaleScheduleRatio = 0.5;
  auto scaled = createScheduler(s);
  EXPECT_DOUBLE_EQ(at(*scaled, 55), 0.5);
  // A run given in batches.
  TimeContext c = context();
  c.maxDuration = ba(200);
  expectAt(*sched, {{20, 1.0}, {110, 0.5}}, c);
}

TEST(SchedulerTest, StepInEpochs) {
  auto sched = createScheduler(stepEvery(ep(2), 0.5));
  expectAt(*sched, {{0, 1.0}, {19, 1.0}, {20, 0.5}, {45, 0.25}});
}

TEST(SchedulerTest, MultiStepInEpochsAndSamples) {
  SchedulerSpec s = spec("multistep");
  s.milestones = {ep(3), ep(6)};
  s.gamma = 0.1;
  auto sched = createScheduler(s);
  expectAt(*sched, {{29, 1.0}, {30, 0.1}});
  EXPECT_NEAR(at(*sched, 59), 0.1, 1e-15);
  EXPECT_NEAR(at(*sched, 60), 0.01, 1e-15);
  // 500 samples = 50 batches of 10.
  s.milestones = {sp(500)};
  auto samples = createScheduler(s);
  expectAt(*samples, {{49, 1.0}, {50, 0.1}});
}

TEST(SchedulerTest, ExponentialPerBatch) {
  SchedulerSpec s = spec("exponential");
  s.gamma = 0.5;
  s.period = ep(1);
  auto sched = createScheduler(s);
  expectAt(*sched, {{0, 1.0}, {5, std::pow(0.5, 0.5)}, {20, 0.25}});
}

TEST(SchedulerTest, ScaleScheduleRatioHalvesMilestones) {
  SchedulerSpec s = stepEvery(ep(2), 0.5);
  s.scaleScheduleRatio = 0.5;
  auto step = createScheduler(s);
  expectAt(*step, {{9, 1.0}, {10, 0.5}});

  s = spec("multistep");
  s.milestones = {ep(3), ba(60)};
  s.scaleScheduleRatio = 0.5;
  auto multi = createScheduler(s);
  expectAt(*multi, {{14, 1.0}, {15, 0.1}});
  EXPECT_NEAR(at(*multi, 30), 0.01, 1e-15);

  // t_max is stretched, the warmup is not (Composer's scale_warmup=False).
  s = cosineWithWarmup(ba(10), ba(100), 0);
  s.scaleScheduleRatio = 0.5;
  auto cosine = createScheduler(s);
  expectAt(*cosine, {{5, 0.5}, {10, 1.0}});
  EXPECT_DOUBLE_EQ(at(*cosine, 30), 0.5); // tau = (30 - 10) / (50 - 10)
  EXPECT_NEAR(at(*cosine, 50), 0.0, 1e-15);
}

TEST(SchedulerTest, LinearWithWarmup) {
  SchedulerSpec s = spec("linear_with_warmup");
  s.warmup = ba(10);
  s.tMax = ba(110);
  s.alphaI = 0.8;
  s.alphaF = 0.2;
  auto sched = createScheduler(s);
  EXPECT_DOUBLE_EQ(at(*sched, 5), 0.4); // warms up to alpha_i
  expectAt(*sched, {{10, 0.8}, {60, 0.5}, {110, 0.2}, {200, 0.2}});
  s.name = "linear_decay_with_warmup";
  EXPECT_DOUBLE_EQ(at(*createScheduler(s), 60), 0.5);

  s = spec("linear");
  s.tMax = ba(100);
  s.alphaI = 1;
  s.alphaF = 0;
  expectAt(*createScheduler(s), {{0, 1.0}, {25, 0.75}});
}

TEST(SchedulerTest, Polynomial) {
  SchedulerSpec s = spec("polynomial");
  s.tMax = ba(100);
  s.power = 2;
  s.alphaF = 0.1;
  auto sched = createScheduler(s);
  expectAt(*sched, {{0, 1.0}, {50, 0.1 + 0.25 * 0.9}});
  EXPECT_NEAR(at(*sched, 100), 0.1, 1e-15);
  EXPECT_NEAR(at(*sched, 120), 0.1, 1e-15);

  s.name = "polynomial_with_warmup";
  s.warmup = ba(20);
  s.tMax = ba(120);
  auto warm = createScheduler(s);
  expectAt(*warm, {{10, 0.5}, {70, 0.1 + 0.25 * 0.9}});
}

TEST(SchedulerTest, Constant) {
  SchedulerSpec s = spec("constant");
  EXPECT_DOUBLE_EQ(at(*createScheduler(s), 37), 1.0);
  s.alpha = 0.5;
  s.tMax = ep(5);
  auto sched = createScheduler(s);
  EXPECT_DOUBLE_EQ(at(*sched, 49), 0.5);
  EXPECT_DOUBLE_EQ(at(*sched, 50), 1.0); // Composer: alpha until t_max
}

/// Expects `build(s)` to throw std::invalid_argument mentioning `needle`.
template <typename Spec, typename BuildFn>
void expectInvalid(const Spec &s, const std::string &needle, BuildFn build) {
  try {
    build(s);
    ADD_FAILURE() << "no exception for " << s.name << ", expected '" << needle
                  << "'";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << e.what();
  }
}

void expectInvalid(const SchedulerSpec &s, const std::string &needle) {
  expectInvalid(s, needle, createScheduler);
}

/// With the optimizers' tests.
void expectInvalid(const OptimizerSpec &s, const std::string &needle);

/// Expects `s` to be rejected for `needle` once `change` is made to it.
template <typename Spec, typename ChangeFn>
void expectRejects(Spec s, const std::string &needle, ChangeFn change) {
  change(s);
  expectInvalid(s, needle);
}

TEST(SchedulerTest, ConstantAndMultiStepWithWarmup) {
  // Composer: linear from 0 to alpha over t_warmup, then ConstantScheduler
  // (alpha until t_max, then 1).
  SchedulerSpec s = spec("constant_with_warmup");
  s.warmup = ba(10);
  s.alpha = 0.5;
  s.tMax = ba(40);
  expectAt(*createScheduler(s),
           {{0, 0.0}, {4, 0.2}, {10, 0.5}, {39, 0.5}, {40, 1.0}});
  // Linear from 0 to 1, then the milestones on the run's own clock.
  s = spec("multistep_with_warmup");
  s.warmup = ba(10);
  s.milestones = {ba(20), ba(30)};
  s.gamma = 0.5;
  expectAt(*createScheduler(s),
           {{0, 0.0}, {5, 0.5}, {10, 1.0}, {19, 1.0}, {20, 0.5}, {30, 0.25}});
  // scale_warmup stretches the warmup with the milestones.
  s.scaleScheduleRatio = 2;
  expectAt(*createScheduler(s), {{10, 1.0}, {39, 1.0}, {40, 0.5}});
  s.scaleWarmup = true;
  expectAt(*createScheduler(s), {{10, 0.5}, {20, 1.0}, {40, 0.5}});
  s.warmup = ba(-1);
  expectInvalid(s, "t_warmup");
}

TEST(SchedulerTest, CosineWarmRestarts) {
  SchedulerSpec s = spec("cosine_warm_restarts");
  s.t0 = ba(4);
  s.tMult = 2;
  s.alphaF = 0.2;
  auto restarts = createScheduler(s);
  // Cycles [0, 4), [4, 12), [12, 28): down from 1 to alpha_f, then restart.
  expectAt(*restarts, {{0, 1.0},
                       {2, 0.2 + 0.8 * 0.5},
                       {4, 1.0},
                       {8, 0.2 + 0.8 * 0.5},
                       {10, 0.2 + 0.8 * (1 + std::cos(0.75 * M_PI)) / 2},
                       {12, 1.0},
                       {20, 0.6}});
  SchedulerSpec epochs = spec("cosine_warm_restarts");
  epochs.t0 = ep(1); // 10 batches, then 10 again
  expectAt(*createScheduler(epochs), {{5, 0.5}, {10, 1.0}, {15, 0.5}});
  SchedulerSpec shrinking = s;
  shrinking.tMult = 0.5;
  expectInvalid(shrinking, "t_mult must be >= 1");
}

TEST(SchedulerTest, Validation) {
  expectInvalid(spec("cosine_annealing_typo"), "unknown scheduler");
  expectRejects(spec("step"), "gamma", [](auto &s) { s.gamma = 0; });
  expectRejects(spec("exponential"), "gamma", [](auto &s) { s.gamma = -1; });
  expectInvalid(stepEvery(ep(0), 0.1), "step_size");
  expectRejects(spec("multistep"), "milestones", [](auto &s) {
    s.milestones = {ep(1), ba(-5)};
  });
  expectInvalid(cosineWithWarmup(ba(-1), dur(1), 0), "t_warmup");
  expectInvalid(cosineWithWarmup(ba(100), ba(100), 0), "t_max");
  expectRejects(spec("polynomial"), "power", [](auto &s) { s.power = -1; });
  expectRejects(spec("linear"), "t_max", [](auto &s) { s.tMax = dur(-0.5); });
  expectRejects(spec("constant"), "scale_schedule_ratio",
                [](auto &s) { s.scaleScheduleRatio = 0; });
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

torch::Tensor param(std::vector<double> values) {
  return torch::tensor(values, torch::kFloat64).requires_grad_(true);
}

/// Gradient of sum(w^2) (= 2w) through autograd.
void quadraticBackward(Optimizer &opt, const torch::Tensor &w) {
  opt.zeroGrad();
  (w * w).sum().backward();
}

std::vector<double> values(const torch::Tensor &t) {
  auto c = t.detach().contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

OptimizerSpec optimizer(const std::string &name, double lr) {
  OptimizerSpec s;
  s.name = name;
  s.lr = lr;
  return s;
}

/// Takes `steps` steps of `s` on sum(w^2) from `start` and expects w after
/// step k (from 1) to be what `reference(k, i, p)` makes of element i of the
/// parameters p, which it updates in place, to 1e-14.
template <typename ReferenceFn>
void expectSteps(const OptimizerSpec &s, std::vector<double> start, int steps,
                 ReferenceFn reference) {
  auto w = param(start);
  Optimizer opt(s, {w});
  std::vector<double> p = std::move(start);
  for (int step = 1; step <= steps; ++step) {
    quadraticBackward(opt, w);
    opt.step();
    for (size_t i = 0; i < p.size(); ++i)
      reference(step, i, p);
    auto got = values(w);
    for (size_t i = 0; i < p.size(); ++i)
      EXPECT_NEAR(got[i], p[i], 1e-14) << "step " << step;
  }
}

TEST(OptimizerTest, SgdMomentumAndCoupledDecay) {
  for (bool nesterov : {false, true}) {
    OptimizerSpec s = optimizer("sgd", 0.1);
    s.momentum = 0.9;
    s.nesterov = nesterov;
    s.weightDecay = 0.01;
    std::vector<double> buf(2);
    expectSteps(s, {1.0, -2.0}, 3, [&](int step, size_t i, auto &p) {
      double d = 2 * p[i] + 0.01 * p[i]; // grad + coupled decay
      buf[i] = step == 1 ? d : 0.9 * buf[i] + d;
      p[i] -= 0.1 * (nesterov ? d + 0.9 * buf[i] : buf[i]);
    });
  }
}

TEST(OptimizerTest, AdamWFirstSteps) {
  OptimizerSpec s = optimizer("adamw", 0.01);
  s.weightDecay = 0.1;
  s.beta1 = 0.9;
  s.beta2 = 0.99;
  s.eps = 1e-8;
  std::vector<double> m(2), v(2);
  expectSteps(s, {0.5, -3.0}, 2, [&](int step, size_t i, auto &p) {
    double g = 2 * p[i];
    p[i] *= 1 - 0.01 * 0.1;
    m[i] = 0.9 * m[i] + 0.1 * g;
    v[i] = 0.99 * v[i] + 0.01 * g * g;
    double bc1 = 1 - std::pow(0.9, step), bc2 = 1 - std::pow(0.99, step);
    p[i] -= 0.01 / bc1 * m[i] / (std::sqrt(v[i]) / std::sqrt(bc2) + 1e-8);
  });
}

TEST(OptimizerTest, DecoupledSgdwScalesDecayByLrRatio) {
  OptimizerSpec s = optimizer("decoupled_sgdw", 0.1);
  s.weightDecay = 0.01;
  auto w = param({1.0, -2.0});
  auto frozen = param({4.0}); // no gradient: neither decayed nor updated
  Optimizer opt(s, {w, frozen});
  opt.setLrMultiplier(0.5);
  EXPECT_DOUBLE_EQ(opt.lr(), 0.05);
  quadraticBackward(opt, w);
  opt.step();
  auto got = values(w);
  // Decay wd * lr / initial_lr = 0.01 * 0.5, then the plain SGD step.
  EXPECT_NEAR(got[0], 1.0 * (1 - 0.005) - 0.05 * 2.0, 1e-15);
  EXPECT_NEAR(got[1], -2.0 * (1 - 0.005) - 0.05 * -4.0, 1e-15);
  EXPECT_EQ(values(frozen)[0], 4.0);
}

TEST(OptimizerTest, WeightDecayExcludeFormsAnUndecayedGroup) {
  for (const char *name : {"sgd", "decoupled_sgdw", "adamw"}) {
    OptimizerSpec s = optimizer(name, 0.1);
    s.weightDecay = 0.5;
    s.weightDecayExclude = {"bias", "*.norm.*"};
    auto weight = param({1.0}), bias = param({1.0}), scale = param({1.0});
    Optimizer opt(s, {{"fc.weight", weight},
                      {"fc.bias", bias},
                      {"block.norm.weight", scale}});
    EXPECT_EQ(opt.excludedFromDecay(), 2u);
    // A zero gradient: only weight decay moves a weight.
    for (const auto &w : {weight, bias, scale})
      w.mutable_grad() = torch::zeros_like(w);
    opt.step();
    EXPECT_LT(values(weight)[0], 1.0) << name;
    EXPECT_EQ(values(bias)[0], 1.0) << name;
    EXPECT_EQ(values(scale)[0], 1.0) << name;
  }
  OptimizerSpec unmatched = optimizer("adamw", 0.1);
  unmatched.weightDecayExclude = {"norm"};
  try {
    Optimizer opt(unmatched, {{"fc.weight", param({1.0})}});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("'norm' matches no trainable"),
              std::string::npos);
  }
}

TEST(OptimizerTest, DecoupledAdamW) {
  OptimizerSpec s = optimizer("decoupled_adamw", 1e-3);
  s.weightDecay = 1e-2;
  auto w = param({2.0});
  Optimizer opt(s, {w});
  opt.setLrMultiplier(0.25);
  quadraticBackward(opt, w);
  opt.step();
  // Decay 1e-2 * 0.25 (not lr * wd = 2.5e-6), then Adam's step of about lr.
  double expected = 2.0 * (1 - 1e-2 * 0.25);
  double g = 4.0, m = 0.1 * g, v = 0.001 * g * g;
  expected -= 0.25e-3 / 0.1 * m / (std::sqrt(v) / std::sqrt(0.001) + 1e-8);
  EXPECT_NEAR(values(w)[0], expected, 1e-15);
}

TEST(OptimizerTest, ZeroGradDropsGradients) {
  auto w = param({1.0});
  Optimizer opt(optimizer("sgd", 0.1), {w});
  quadraticBackward(opt, w);
  EXPECT_TRUE(w.grad().defined());
  opt.zeroGrad();
  EXPECT_FALSE(w.grad().defined());
  opt.step(); // nothing to update
  EXPECT_EQ(values(w)[0], 1.0);
}

/// Loads into `to` what `from` saves, through the bytes of an archive.
void loadSaved(const Optimizer &from, Optimizer &to) {
  torch::serialize::OutputArchive out;
  from.save(out);
  std::stringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  in.load_from(bytes);
  to.load(in);
}

void roundTrip(const OptimizerSpec &s) {
  SCOPED_TRACE(s.name);
  auto w1 = torch::randn({3, 4}, torch::kFloat32).requires_grad_(true);
  auto b1 = torch::randn({4}, torch::kFloat32).requires_grad_(true);
  Optimizer first(s, {w1, b1});
  auto train = [](Optimizer &opt, torch::Tensor w, torch::Tensor b, int step) {
    opt.setLrMultiplier(1.0 / (1 + step));
    opt.zeroGrad();
    auto x = torch::linspace(-1, 1, 12).reshape({3, 4}) * (step + 1);
    ((x * w).sum(0) + b).pow(2).sum().backward();
    opt.step();
  };
  for (int step = 0; step < 3; ++step)
    train(first, w1, b1, step);

  auto w2 = w1.detach().clone().requires_grad_(true);
  auto b2 = b1.detach().clone().requires_grad_(true);
  Optimizer second(s, {w2, b2});
  loadSaved(first, second);
  EXPECT_DOUBLE_EQ(second.lr(), first.lr());

  for (int step = 3; step < 6; ++step) {
    train(first, w1, b1, step);
    train(second, w2, b2, step);
    EXPECT_TRUE(torch::equal(w1, w2)) << "step " << step;
    EXPECT_TRUE(torch::equal(b1, b2)) << "step " << step;
  }
}

TEST(OptimizerTest, SaveLoadContinuesBitIdentically) {
  OptimizerSpec sgd = optimizer("sgd", 0.1);
  sgd.momentum = 0.9;
  sgd.nesterov = true;
  sgd.weightDecay = 5e-4;
  roundTrip(sgd);
  sgd.name = "decoupled_sgdw";
  roundTrip(sgd);
  OptimizerSpec adam = optimizer("adamw", 1e-2);
  adam.weightDecay = 1e-2;
  roundTrip(adam);
  adam.name = "decoupled_adamw";
  roundTrip(adam);
}

TEST(OptimizerTest, LoadRejectsAnotherOptimizer) {
  auto w = param({1.0});
  Optimizer sgd(optimizer("sgd", 0.1), {w});
  Optimizer adam(optimizer("adamw", 0.1), {w});
  EXPECT_THROW(loadSaved(sgd, adam), std::runtime_error);
}

void expectInvalid(const OptimizerSpec &s, const std::string &needle) {
  expectInvalid(s, needle,
                [](const OptimizerSpec &o) { Optimizer(o, {param({1.0})}); });
}

TEST(OptimizerTest, Validation) {
  expectInvalid(optimizer("adam", 0.1), "unknown optimizer");
  expectInvalid(optimizer("sgd", 0), "lr");
  expectInvalid(optimizer("adamw", -1e-3), "lr");
  OptimizerSpec sgd = optimizer("sgd", 0.1);
  expectRejects(sgd, "momentum", [](auto &s) { s.momentum = -0.9; });
  sgd.nesterov = true;
  expectInvalid(sgd, "nesterov");
  expectRejects(sgd, "nesterov", [](auto &s) {
    s.momentum = 0.9;
    s.dampening = 0.1;
  });
  expectRejects(optimizer("decoupled_sgdw", 0.1), "weight_decay",
                [](auto &s) { s.weightDecay = -1; });
  expectRejects(optimizer("adamw", 0.1), "betas",
                [](auto &s) { s.beta2 = 1.0; });
  expectRejects(optimizer("decoupled_adamw", 0.1), "betas",
                [](auto &s) { s.beta1 = -0.1; });
  expectRejects(optimizer("adamw", 0.1), "eps", [](auto &s) { s.eps = -1; });
}

} // namespace
