//===- Schedulers.cpp - Composer's learning-rate schedules ----------------===//
//
// Each schedule follows composer/optim/scheduler.py. Every time is converted
// to batches the way Composer's `_convert_time` does: `ep`, `ba`, `sp` and
// `tok` are stretched by the scale-schedule ratio and truncated to whole
// units; `dur` is a fraction of the (already stretched) run, truncated to
// whole batches. Warmups are not stretched (Composer's `scale_warmup=False`),
// so a shortened run still warms up over the same number of steps.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Optim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace composer::runtime {

Scheduler::~Scheduler() = default;

namespace {

/// `time` in batches as Composer's `_convert_time(time, state, ssr)` gives it.
double toBatches(const Time &time, const TimeContext &context, double ssr) {
  switch (time.unit) {
  case TimeUnit::Duration: {
    const Time &run = context.maxDuration;
    if (run.unit == TimeUnit::Epoch)
      return std::floor(time.value * context.batchesPerEpoch * run.value);
    return context.toBatches({std::floor(time.value * run.value), run.unit});
  }
  case TimeUnit::Epoch:
    return std::floor(time.value * context.batchesPerEpoch * ssr);
  case TimeUnit::Batch:
    return std::floor(time.value * ssr);
  case TimeUnit::Sample:
  case TimeUnit::Token:
    return context.toBatches({std::floor(time.value * ssr), time.unit});
  }
  return 0;
}

void checkTime(const SchedulerSpec &spec, const char *option, const Time &t,
               bool positive = false) {
  if (!std::isfinite(t.value) || t.value < 0 || (positive && t.value == 0))
    throw std::invalid_argument("scheduler '" + spec.name + "': " + option +
                                " must be " + (positive ? "> 0" : ">= 0") +
                                ", got " + t.str());
}

/// Composer's `_cosine_anneal`.
double cosineAnneal(double x, double minY) {
  return minY + (1 - minY) * (1 + std::cos(x * M_PI)) / 2;
}

class ScheduleBase : public Scheduler {
public:
  explicit ScheduleBase(const SchedulerSpec &spec) : spec_(spec) {}

protected:
  double batches(const Time &time, const TimeContext &context) const {
    return toBatches(time, context, spec_.scaleScheduleRatio);
  }
  /// The warmup in batches, stretched by the scale-schedule ratio only
  /// with scale_warmup.
  double warmupBatches(const TimeContext &context) const {
    return toBatches(spec_.warmup, context,
                     spec_.scaleWarmup ? spec_.scaleScheduleRatio : 1.0);
  }
  /// The fraction of (warmup, t_max] passed at batch `t`, in [0, 1]; 0 when
  /// t_max does not lie past the warmup (as Composer).
  double tau(double t, double warmup, double tMax) const {
    if (tMax <= warmup)
      return 0;
    return std::clamp((t - warmup) / (tMax - warmup), 0.0, 1.0);
  }

  SchedulerSpec spec_;
};

class ConstantScheduler : public ScheduleBase {
public:
  using ScheduleBase::ScheduleBase;
  double multiplier(const Timestamp &now,
                    const TimeContext &context) const override {
    // Composer's ConstantScheduler: alpha until t_max, then 1.
    return now.batch < batches(spec_.tMax, context) ? spec_.alpha : 1.0;
  }
};

/// gamma to the power of the periods passed: Composer's StepScheduler,
/// MultiStepScheduler and ExponentialScheduler.
class GammaScheduler : public ScheduleBase {
public:
  enum class Periods {
    Steps,      ///< step: whole `step_size` periods
    Milestones, ///< multistep: the milestones passed
    Fractional, ///< exponential: `decay_period` periods and their fractions
  };
  GammaScheduler(const SchedulerSpec &spec, Periods periods)
      : ScheduleBase(spec), periods_(periods) {}

  double multiplier(const Timestamp &now,
                    const TimeContext &context) const override {
    return std::pow(spec_.gamma, passed(double(now.batch), context));
  }

private:
  /// The periods passed at batch `t`; none while a period truncates to no
  /// batch.
  double passed(double t, const TimeContext &context) const {
    if (periods_ == Periods::Milestones) {
      int count = 0;
      for (const Time &milestone : spec_.milestones)
        if (t >= batches(milestone, context))
          ++count;
      return count;
    }
    bool steps = periods_ == Periods::Steps;
    double period = batches(steps ? spec_.stepSize : spec_.period, context);
    if (period <= 0)
      return 0;
    return steps ? std::floor(t / period) : t / period;
  }

  Periods periods_;
};

/// Cosine, linear and polynomial decay after an optional linear warmup.
class DecayScheduler : public ScheduleBase {
public:
  enum class Shape { Cosine, Linear, Polynomial };
  DecayScheduler(const SchedulerSpec &spec, Shape shape, bool withWarmup)
      : ScheduleBase(spec), shape_(shape), withWarmup_(withWarmup) {}

  double multiplier(const Timestamp &now,
                    const TimeContext &context) const override {
    double t = static_cast<double>(now.batch);
    double warmup = withWarmup_ ? warmupBatches(context) : 0.0;
    // The linear schedule warms up to alpha_i, the others to 1.
    double peak = shape_ == Shape::Linear ? spec_.alphaI : 1.0;
    if (t < warmup)
      return peak * t / warmup;
    double x = tau(t, warmup, batches(spec_.tMax, context));
    switch (shape_) {
    case Shape::Cosine:
      return cosineAnneal(x, spec_.alphaF);
    case Shape::Linear:
      return spec_.alphaI + x * (spec_.alphaF - spec_.alphaI);
    case Shape::Polynomial:
      return spec_.alphaF + std::pow(1 - x, spec_.power) * (1 - spec_.alphaF);
    }
    return 1.0;
  }

private:
  Shape shape_;
  bool withWarmup_;
};

/// Composer's ConstantWithWarmupScheduler and MultiStepWithWarmupScheduler:
/// linear from 0 to `peak` over t_warmup, then `after` (on the run's own
/// clock, not one restarted after the warmup).
class WarmupScheduler : public ScheduleBase {
public:
  WarmupScheduler(const SchedulerSpec &spec, double peak,
                  std::unique_ptr<Scheduler> after)
      : ScheduleBase(spec), peak_(peak), after_(std::move(after)) {}

  double multiplier(const Timestamp &now,
                    const TimeContext &context) const override {
    double t = static_cast<double>(now.batch);
    double warmup = warmupBatches(context);
    if (t < warmup)
      return peak_ * t / warmup;
    return after_->multiplier(now, context);
  }

private:
  double peak_;
  std::unique_ptr<Scheduler> after_;
};

/// Composer's CosineAnnealingWarmRestartsScheduler: a cosine from 1 to
/// alpha_f over each cycle, the cycles t_0, floor(t_0 * t_mult), ... long.
class WarmRestartsScheduler : public ScheduleBase {
public:
  using ScheduleBase::ScheduleBase;
  double multiplier(const Timestamp &now,
                    const TimeContext &context) const override {
    double length = std::floor(batches(spec_.t0, context));
    if (length < 1)
      throw std::invalid_argument("scheduler '" + spec_.name +
                                  "': t_0 is shorter than one batch");
    double end = length;
    while (end <= double(now.batch)) {
      length = std::floor(length * spec_.tMult);
      if (length < 1)
        throw std::invalid_argument("scheduler '" + spec_.name +
                                    "': t_mult shrank a cycle to nothing");
      end += length;
    }
    double start = end - length;
    return cosineAnneal((double(now.batch) - start) / length, spec_.alphaF);
  }
};

} // namespace

std::unique_ptr<Scheduler> createScheduler(const SchedulerSpec &spec) {
  const std::string &name = spec.name;
  auto fail = [&](const std::string &message) {
    throw std::invalid_argument("scheduler '" + name + "': " + message);
  };
  if (!(spec.scaleScheduleRatio > 0) || !std::isfinite(spec.scaleScheduleRatio))
    fail("scale_schedule_ratio must be > 0, got " +
         std::to_string(spec.scaleScheduleRatio));

  auto checkGamma = [&] {
    if (!(spec.gamma > 0) || !std::isfinite(spec.gamma))
      fail("gamma must be > 0, got " + std::to_string(spec.gamma));
  };
  // Shared by the decay schedules; `warmup` only where one is used.
  auto checkDecay = [&](bool withWarmup) {
    checkTime(spec, "t_max", spec.tMax);
    if (!std::isfinite(spec.alphaF))
      fail("alpha_f must be finite");
    if (!withWarmup)
      return;
    checkTime(spec, "t_warmup", spec.warmup);
    if (spec.warmup.value > 0 && spec.warmup.unit == spec.tMax.unit &&
        !(spec.warmup < spec.tMax))
      fail("t_max (" + spec.tMax.str() + ") must be after t_warmup (" +
           spec.warmup.str() + ")");
  };
  using Shape = DecayScheduler::Shape;

  if (name == "constant" || name == "constant_with_warmup") {
    if (!std::isfinite(spec.alpha) || spec.alpha < 0)
      fail("alpha must be >= 0, got " + std::to_string(spec.alpha));
    checkTime(spec, "t_max", spec.tMax);
    auto constant = std::make_unique<ConstantScheduler>(spec);
    if (name == "constant")
      return constant;
    checkTime(spec, "t_warmup", spec.warmup);
    return std::make_unique<WarmupScheduler>(spec, spec.alpha,
                                             std::move(constant));
  }
  if (name == "step") {
    checkGamma();
    checkTime(spec, "step_size", spec.stepSize, /*positive=*/true);
    return std::make_unique<GammaScheduler>(spec,
                                            GammaScheduler::Periods::Steps);
  }
  if (name == "multistep" || name == "multistep_with_warmup") {
    checkGamma();
    for (const Time &milestone : spec.milestones)
      checkTime(spec, "milestones", milestone);
    auto multistep = std::make_unique<GammaScheduler>(
        spec, GammaScheduler::Periods::Milestones);
    if (name == "multistep")
      return multistep;
    checkTime(spec, "t_warmup", spec.warmup);
    return std::make_unique<WarmupScheduler>(spec, 1.0, std::move(multistep));
  }
  if (name == "exponential") {
    checkGamma();
    checkTime(spec, "decay_period", spec.period, /*positive=*/true);
    return std::make_unique<GammaScheduler>(
        spec, GammaScheduler::Periods::Fractional);
  }
  if (name == "cosine_with_warmup" || name == "cosine_decay_with_warmup" ||
      name == "cosine") {
    bool withWarmup = name != "cosine";
    checkDecay(withWarmup);
    return std::make_unique<DecayScheduler>(spec, Shape::Cosine, withWarmup);
  }
  if (name == "linear_with_warmup" || name == "linear_decay_with_warmup" ||
      name == "linear") {
    bool withWarmup = name != "linear";
    checkDecay(withWarmup);
    if (!std::isfinite(spec.alphaI))
      fail("alpha_i must be finite");
    return std::make_unique<DecayScheduler>(spec, Shape::Linear, withWarmup);
  }
  if (name == "polynomial" || name == "polynomial_with_warmup") {
    bool withWarmup = name == "polynomial_with_warmup";
    checkDecay(withWarmup);
    if (!(spec.power >= 0) || !std::isfinite(spec.power))
      fail("power must be >= 0, got " + std::to_string(spec.power));
    return std::make_unique<DecayScheduler>(spec, Shape::Polynomial,
                                            withWarmup);
  }
  if (name == "cosine_warm_restarts") {
    checkTime(spec, "t_0", spec.t0, /*positive=*/true);
    if (!(spec.tMult >= 1) || !std::isfinite(spec.tMult))
      fail("t_mult must be >= 1, got " + std::to_string(spec.tMult));
    if (!std::isfinite(spec.alphaF))
      fail("alpha_f must be finite");
    return std::make_unique<WarmRestartsScheduler>(spec);
  }
  throw std::invalid_argument(
      "unknown scheduler '" + name +
      "' (expected constant, constant_with_warmup, step, multistep, "
      "multistep_with_warmup, exponential, cosine_with_warmup, cosine, "
      "cosine_warm_restarts, linear_with_warmup, linear, polynomial or "
      "polynomial_with_warmup)");
}

} // namespace composer::runtime
