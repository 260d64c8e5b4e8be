//===- Sam.cpp - Sharpness-aware minimization (Foret et al. 2021) ---------===//
//
// Wraps the training step's clip stage. On every `interval`-th step, once the
// gradients are reduced and unscaled: e = rho g / (|g| + epsilon) with |g|
// the global L2 norm, the gradient is recomputed at w + e on the same
// microbatches (TrainingStep::recomputeGradients: reduced and unscaled too),
// and the weights go back to w, saved exactly rather than by subtracting e,
// so the optimizer steps from w with the gradient taken at w + e.
//
// A skipped step skips both halves: with an overflow in the first gradient
// (found by loss scaling, or a non-finite norm, even in fp32) the weights are
// never perturbed; with one in the second, w is restored and the step is
// skipped.
//
// Unlike Composer, whose closure re-runs the whole microbatch loop (and its
// events), the second half replays the inputs and targets the first loss
// saw: the gradient at w + e is that of the same loss. Composer also takes
// the ascent direction from each rank's own gradient (no all-reduce); here
// it is the group's, so data-parallel runs match one process. Under sharded
// data parallelism each rank perturbs and restores its shard of the fp32
// master weights, with the norm all-reduced: nothing whole is gathered. As in
// Composer, the second forward runs in training mode (BatchNorm statistics
// see it too). SAM does its work after the links inside it, so gradient
// clipping listed before `sam` (outside it) clips the descent gradient, and
// listed after it (inside) the one SAM ascends along.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Gradients.h"

#include <cmath>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct SamOptions {
  double rho = 0.05;
  double epsilon = 1e-12;
  int64_t interval = 1;
};

class Sam final : public Algorithm, public StepStages {
public:
  explicit Sam(const SamOptions &options)
      : rho_(options.rho), epsilon_(options.epsilon),
        interval_(options.interval) {
    if (!(rho_ >= 0 && std::isfinite(rho_)))
      throwInvalidOption("sam", "rho",
                         "must be >= 0, got " + std::to_string(rho_));
    if (!(epsilon_ >= 0 && std::isfinite(epsilon_)))
      throwInvalidOption("sam", "epsilon",
                         "must be >= 0, got " + std::to_string(epsilon_));
    if (interval_ < 1)
      throwInvalidOption("sam", "interval",
                         "must be >= 1, got " + std::to_string(interval_));
  }

  std::string name() const override { return "sam"; }
  StepStages *stepStages() override { return this; }

  bool clip(TrainingStep &step, bool finite, ClipNext next) override {
    finite = next(finite);
    // Composer's SAMOptimizer: a SAM step when (global_step + 1) % interval
    // is 0, global_step counting the steps before this one.
    State &state = step.state();
    if ((state.timestamp.batch + 1) % interval_ != 0)
      return finite;
    if (!finite)
      return false; // loss scaling skips this step: both halves
    // The ascent step is elementwise: under sharding each rank moves its
    // shard of the weights (masters) along its shard of the gradients.
    GradientShards *shards = state.gradientShards;
    std::vector<torch::Tensor> params, grads;
    if (shards) {
      grads = shards->localGradients();
      params = shards->localWeights();
    } else {
      for (const auto &[name, p] : state.parameters)
        if (p.requires_grad() && p.grad().defined()) {
          params.push_back(p);
          grads.push_back(p.grad());
        }
    }
    if (params.empty())
      return true;
    torch::NoGradGuard noGrad;
    std::optional<double> norm =
        shards ? finiteOrNone(gradientNorm(state)) : globalNorm(grads);
    if (!norm)
      return false;
    double scale = rho_ / (*norm + epsilon_);
    std::vector<torch::Tensor> saved;
    saved.reserve(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      saved.push_back(params[i].detach().clone());
      params[i].add_(grads[i].to(params[i].scalar_type()), scale);
    }
    grads.clear();
    if (shards)
      shards->publishWeights();
    {
      torch::AutoGradMode enableGrad(true);
      finite = step.recomputeGradients();
    }
    for (size_t i = 0; i < params.size(); ++i)
      params[i].copy_(saved[i]);
    if (shards)
      shards->publishWeights();
    if (!finite)
      return false;
    return std::isfinite(gradientNorm(state));
  }

private:
  static std::optional<double> finiteOrNone(double value) {
    if (!std::isfinite(value))
      return std::nullopt;
    return value;
  }

  /// The L2 norm of all of `grads` together; none if it is not finite.
  static std::optional<double>
  globalNorm(const std::vector<torch::Tensor> &grads) {
    if (grads.empty())
      return 0.0;
    std::vector<torch::Tensor> norms;
    norms.reserve(grads.size());
    for (const torch::Tensor &g : grads)
      norms.push_back(g.detach().to(torch::kFloat).norm());
    double norm = torch::stack(norms).norm().item<double>();
    if (!std::isfinite(norm))
      return std::nullopt;
    return norm;
  }

  double rho_, epsilon_;
  int64_t interval_;
};

const AlgorithmRegistration<Sam, SamOptions> samRegistration(
    "sam",
    {{"rho", &SamOptions::rho, "radius of the ascent step e = rho g / |g|"},
     {"epsilon", &SamOptions::epsilon, "added to |g| in the ascent step"},
     {"interval", &SamOptions::interval,
      "a SAM step every this many steps, plain steps between"}});

} // namespace
} // namespace composer::runtime
