//===- Optim.h - Optimizers and learning-rate schedules ---------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_OPTIM_H
#define COMPOSER_RUNTIME_OPTIM_H

#include "composer/Runtime/Time.h"

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace composer::runtime {

/// Composer's optimizer names: "sgd", "adamw", "decoupled_sgdw",
/// "decoupled_adamw". The decoupled variants scale weight decay by
/// lr / initial lr and apply it to the weights directly.
struct OptimizerSpec {
  std::string name = "sgd";
  double lr = 0.1;
  double momentum = 0;
  double dampening = 0;
  bool nesterov = false;
  double weightDecay = 0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// Parameters whose state_dict name contains one of these (or matches it
  /// as a glob pattern, with * ? [) form a second group without weight
  /// decay: `[bias, norm]` is the common use.
  std::vector<std::string> weightDecayExclude;
};

/// LibTorch's optimizer plus what Composer adds: a learning rate that a
/// schedule sets as a multiple of the initial one, and decoupled decay.
class Optimizer {
public:
  /// Throws std::invalid_argument for an unknown name or bad value.
  Optimizer(const OptimizerSpec &spec, std::vector<torch::Tensor> parameters);
  /// Parameters by state_dict name, so that weightDecayExclude can pick
  /// them out; throws std::invalid_argument when a pattern matches none.
  Optimizer(const OptimizerSpec &spec,
            const std::vector<std::pair<std::string, torch::Tensor>>
                &namedParameters);
  /// Groups already split by weightDecayExclude (as splitByDecay does):
  /// `undecayed` trains without weight decay.
  Optimizer(const OptimizerSpec &spec, std::vector<torch::Tensor> decayed,
            std::vector<torch::Tensor> undecayed);

  /// Splits `namedParameters` into those that decay and those that
  /// weightDecayExclude picks out. Throws std::invalid_argument for an
  /// invalid spec or a pattern that matches none.
  using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;
  static std::pair<NamedTensors, NamedTensors>
  splitByDecay(const OptimizerSpec &spec, const NamedTensors &namedParameters);

  const OptimizerSpec &spec() const { return spec_; }
  /// Sets lr = initial lr * multiplier for every group.
  void setLrMultiplier(double multiplier);
  double lr() const;
  double lrMultiplier() const { return multiplier_; }
  void zeroGrad();
  /// One update of every parameter that has a gradient.
  void step();

  torch::optim::Optimizer &impl() { return *impl_; }
  void save(torch::serialize::OutputArchive &archive) const;
  void load(torch::serialize::InputArchive &archive);

  /// How many parameters train without weight decay (weightDecayExclude).
  size_t excludedFromDecay() const { return excluded_; }

  /// The bytes of the per-parameter state (momentum, Adam's moments).
  int64_t stateBytes();

private:
  /// Builds LibTorch's optimizer over `decayed` and, when any, `undecayed`
  /// (a second group with weight decay 0).
  void build(std::vector<torch::Tensor> decayed,
             std::vector<torch::Tensor> undecayed);

  OptimizerSpec spec_;
  std::vector<torch::Tensor> parameters_;
  size_t excluded_ = 0;
  /// Groups whose weights decoupled decay shrinks: the first, unless every
  /// parameter is excluded.
  size_t decayedGroups_ = 0;
  std::unique_ptr<torch::optim::Optimizer> impl_;
  double multiplier_ = 1;
};

/// The tensors of LibTorch's per-parameter state of SGD (momentum_buffer)
/// or AdamW (exp_avg, exp_avg_sq, max_exp_avg_sq), in that order, undefined
/// ones included.
std::vector<torch::Tensor>
optimizerStateTensors(torch::optim::OptimizerParamState &state);
/// LibTorch's key for `parameter`'s state in torch::optim::Optimizer::state.
std::string optimizerStateKey(const torch::Tensor &parameter);
/// A state like `like` (same kind and step count) holding `tensors`, in
/// optimizerStateTensors' order.
std::unique_ptr<torch::optim::OptimizerParamState>
makeOptimizerState(torch::optim::OptimizerParamState &like,
                   const std::vector<torch::Tensor> &tensors);

/// Composer's schedules, as a multiplier of the initial learning rate:
///   constant            alpha (1.0)
///   step                gamma^floor(t / step_size)
///   multistep           gamma^(milestones passed)
///   exponential         gamma^(t / period), period 1ep
///   cosine_with_warmup  linear 0->1 over t_warmup, then
///                       alpha_f + (1-alpha_f)(1+cos(pi*tau))/2 up to t_max
///   linear_with_warmup  linear 0->alpha_i over t_warmup, then
///                       alpha_i -> alpha_f linearly up to t_max
///   polynomial          alpha_f + (1-alpha_f)(1-tau)^power
///   cosine_warm_restarts  alpha_f + (1-alpha_f)(1+cos(pi*c))/2, c the
///                       fraction of the current cycle passed; cycles of
///                       t_0, t_0*t_mult, ...
/// where tau is the fraction of (t_warmup, t_max] passed. Times may use any
/// unit; `ep` and `ba` milestones are stretched by the scale-schedule ratio
/// (the run length is stretched by the trainer, so `dur` follows it).
struct SchedulerSpec {
  std::string name = "constant";
  double alpha = 1.0;
  double gamma = 0.1;
  Time stepSize{1, TimeUnit::Epoch};
  std::vector<Time> milestones;
  Time period{1, TimeUnit::Epoch};
  Time warmup{0, TimeUnit::Batch};
  Time tMax{1, TimeUnit::Duration};
  double alphaI = 1.0;
  double alphaF = 0.0;
  double power = 2.0;
  double scaleScheduleRatio = 1.0;
  /// Whether the scale-schedule ratio stretches t_warmup too (Composer's
  /// scale_warmup; off by default, as there).
  bool scaleWarmup = false;
  /// cosine_warm_restarts: the first cycle's length, and the factor each
  /// next cycle's is multiplied by (rounded down, in batches).
  Time t0{1, TimeUnit::Epoch};
  double tMult = 1.0;
};

class Scheduler {
public:
  virtual ~Scheduler();
  /// The lr multiplier at `now`.
  virtual double multiplier(const Timestamp &now,
                            const TimeContext &context) const = 0;
};

/// Throws std::invalid_argument for an unknown name or bad value.
std::unique_ptr<Scheduler> createScheduler(const SchedulerSpec &spec);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_OPTIM_H
