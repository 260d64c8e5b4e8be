//===- Optimizer.cpp - Composer's optimizers over LibTorch's --------------===//
//
// "sgd" and "adamw" are LibTorch's SGD and AdamW as they are. The decoupled
// variants (Composer's DecoupledSGDW and DecoupledAdamW) run the same update
// with LibTorch's decay off and instead shrink every weight that has a
// gradient by `1 - wd * lr / initial_lr` before it, so the decay follows the
// schedule but not the size of the initial learning rate.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Optim.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <fnmatch.h>

namespace composer::runtime {

namespace {

bool isSgd(const std::string &name) {
  return name == "sgd" || name == "decoupled_sgdw";
}
bool isAdam(const std::string &name) {
  return name == "adamw" || name == "decoupled_adamw";
}
bool isDecoupled(const std::string &name) {
  return name == "decoupled_sgdw" || name == "decoupled_adamw";
}

void fail(const std::string &name, const std::string &message) {
  throw std::invalid_argument("optimizer '" + name + "': " + message);
}

void validate(const OptimizerSpec &spec) {
  const std::string &name = spec.name;
  if (!isSgd(name) && !isAdam(name))
    throw std::invalid_argument(
        "unknown optimizer '" + name +
        "' (expected sgd, adamw, decoupled_sgdw or decoupled_adamw)");
  if (!(spec.lr > 0) || !std::isfinite(spec.lr))
    fail(name, "lr must be positive, got " + std::to_string(spec.lr));
  if (!(spec.weightDecay >= 0) || !std::isfinite(spec.weightDecay))
    fail(name,
         "weight_decay must be >= 0, got " + std::to_string(spec.weightDecay));
  if (isSgd(name)) {
    if (!(spec.momentum >= 0) || !std::isfinite(spec.momentum))
      fail(name, "momentum must be >= 0, got " + std::to_string(spec.momentum));
    if (!(spec.dampening >= 0 && spec.dampening <= 1))
      fail(name, "dampening must be in [0, 1], got " +
                     std::to_string(spec.dampening));
    if (spec.nesterov && (spec.momentum <= 0 || spec.dampening != 0))
      fail(name, "nesterov requires momentum > 0 and dampening = 0");
  }
  if (isAdam(name)) {
    for (double beta : {spec.beta1, spec.beta2})
      if (!(beta >= 0 && beta < 1))
        fail(name, "betas must be in [0, 1), got (" +
                       std::to_string(spec.beta1) + ", " +
                       std::to_string(spec.beta2) + ")");
    if (!(spec.eps >= 0) || !std::isfinite(spec.eps))
      fail(name, "eps must be >= 0, got " + std::to_string(spec.eps));
  }
}

/// LibTorch loads optimizer state onto the CPU; the update needs it where the
/// parameter lives.
void moveStateToParameters(torch::optim::Optimizer &optimizer) {
  auto &state = optimizer.state();
  for (auto &group : optimizer.param_groups()) {
    for (auto &p : group.params()) {
      auto it = state.find(c10::guts::to_string(p.unsafeGetTensorImpl()));
      if (it == state.end())
        continue;
      auto move = [&](const torch::Tensor &t) {
        return t.defined() ? t.to(p.device()) : t;
      };
      if (auto *sgd =
              dynamic_cast<torch::optim::SGDParamState *>(it->second.get())) {
        sgd->momentum_buffer(move(sgd->momentum_buffer()));
      } else if (auto *adam = dynamic_cast<torch::optim::AdamWParamState *>(
                     it->second.get())) {
        adam->exp_avg(move(adam->exp_avg()));
        adam->exp_avg_sq(move(adam->exp_avg_sq()));
        adam->max_exp_avg_sq(move(adam->max_exp_avg_sq()));
      }
    }
  }
}

} // namespace

Optimizer::Optimizer(const OptimizerSpec &spec,
                     std::vector<torch::Tensor> parameters)
    : spec_(spec) {
  validate(spec_);
  if (!spec_.weightDecayExclude.empty())
    fail(spec_.name, "weight_decay_exclude needs the parameters' names");
  build(std::move(parameters), {});
}

std::pair<Optimizer::NamedTensors, Optimizer::NamedTensors>
Optimizer::splitByDecay(const OptimizerSpec &spec,
                        const NamedTensors &namedParameters) {
  validate(spec);
  auto matches = [](const std::string &pattern, const std::string &name) {
    if (pattern.find_first_of("*?[") != std::string::npos)
      return fnmatch(pattern.c_str(), name.c_str(), 0) == 0;
    return name.find(pattern) != std::string::npos;
  };
  NamedTensors decayed, undecayed;
  std::vector<bool> used(spec.weightDecayExclude.size());
  for (const auto &entry : namedParameters) {
    bool excluded = false;
    for (size_t i = 0; i < used.size(); ++i)
      if (matches(spec.weightDecayExclude[i], entry.first))
        excluded = used[i] = true;
    (excluded ? undecayed : decayed).push_back(entry);
  }
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      fail(spec.name, "weight_decay_exclude pattern '" +
                          spec.weightDecayExclude[i] +
                          "' matches no trainable parameter");
  return {std::move(decayed), std::move(undecayed)};
}

Optimizer::Optimizer(const OptimizerSpec &spec,
                     const NamedTensors &namedParameters)
    : spec_(spec) {
  auto [decayed, undecayed] = splitByDecay(spec_, namedParameters);
  auto tensors = [](const NamedTensors &named) {
    std::vector<torch::Tensor> result;
    for (const auto &entry : named)
      result.push_back(entry.second);
    return result;
  };
  build(tensors(decayed), tensors(undecayed));
}

Optimizer::Optimizer(const OptimizerSpec &spec,
                     std::vector<torch::Tensor> decayed,
                     std::vector<torch::Tensor> undecayed)
    : spec_(spec) {
  validate(spec_);
  build(std::move(decayed), std::move(undecayed));
}

void Optimizer::build(std::vector<torch::Tensor> decayed,
                      std::vector<torch::Tensor> undecayed) {
  excluded_ = undecayed.size();
  parameters_ = decayed;
  parameters_.insert(parameters_.end(), undecayed.begin(), undecayed.end());
  // Decoupled variants do their own decay in step().
  double torchDecay = isDecoupled(spec_.name) ? 0.0 : spec_.weightDecay;
  auto groups = [&](auto options) {
    std::vector<torch::optim::OptimizerParamGroup> result;
    if (!decayed.empty())
      result.emplace_back(
          decayed, std::make_unique<decltype(options)>(
                       decltype(options)(options).weight_decay(torchDecay)));
    if (!undecayed.empty())
      result.emplace_back(undecayed,
                          std::make_unique<decltype(options)>(
                              decltype(options)(options).weight_decay(0)));
    return result;
  };
  if (isSgd(spec_.name)) {
    torch::optim::SGDOptions options = torch::optim::SGDOptions(spec_.lr)
                                           .momentum(spec_.momentum)
                                           .dampening(spec_.dampening)
                                           .nesterov(spec_.nesterov);
    impl_ = std::make_unique<torch::optim::SGD>(groups(options), options);
  } else {
    torch::optim::AdamWOptions options =
        torch::optim::AdamWOptions(spec_.lr)
            .betas(std::make_tuple(spec_.beta1, spec_.beta2))
            .eps(spec_.eps);
    impl_ = std::make_unique<torch::optim::AdamW>(groups(options), options);
  }
  if (!decayed.empty())
    decayedGroups_ = 1;
}

void Optimizer::setLrMultiplier(double multiplier) {
  multiplier_ = multiplier;
  for (auto &group : impl_->param_groups())
    group.options().set_lr(spec_.lr * multiplier);
}

double Optimizer::lr() const {
  return impl_->param_groups().front().options().get_lr();
}

void Optimizer::zeroGrad() {
  // LibTorch 1.13's zero_grad() zeroes in place; Composer (and PyTorch 2)
  // drop the gradients instead, which saves the memset and the memory.
  for (auto &group : impl_->param_groups())
    for (auto &p : group.params())
      p.mutable_grad().reset();
}

void Optimizer::step() {
  if (isDecoupled(spec_.name) && spec_.weightDecay != 0) {
    torch::NoGradGuard noGrad;
    // Only the first group decays; a second one is weightDecayExclude's.
    for (size_t g = 0; g < decayedGroups_; ++g) {
      auto &group = impl_->param_groups()[g];
      double decay = spec_.weightDecay * group.options().get_lr() / spec_.lr;
      for (auto &p : group.params())
        if (p.grad().defined())
          p.mul_(1 - decay);
    }
  }
  impl_->step();
}

std::vector<torch::Tensor>
optimizerStateTensors(torch::optim::OptimizerParamState &state) {
  if (auto *adam = dynamic_cast<torch::optim::AdamWParamState *>(&state))
    return {adam->exp_avg(), adam->exp_avg_sq(), adam->max_exp_avg_sq()};
  if (auto *sgd = dynamic_cast<torch::optim::SGDParamState *>(&state))
    return {sgd->momentum_buffer()};
  return {};
}

std::string optimizerStateKey(const torch::Tensor &parameter) {
  return c10::guts::to_string(parameter.unsafeGetTensorImpl());
}

std::unique_ptr<torch::optim::OptimizerParamState>
makeOptimizerState(torch::optim::OptimizerParamState &like,
                   const std::vector<torch::Tensor> &tensors) {
  if (auto *adam = dynamic_cast<torch::optim::AdamWParamState *>(&like)) {
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(adam->step());
    state->exp_avg(tensors[0]);
    state->exp_avg_sq(tensors[1]);
    state->max_exp_avg_sq(tensors[2]);
    return state;
  }
  auto state = std::make_unique<torch::optim::SGDParamState>();
  state->momentum_buffer(tensors[0]);
  return state;
}

int64_t Optimizer::stateBytes() {
  int64_t bytes = 0;
  for (auto &[key, state] : impl_->state())
    for (const torch::Tensor &tensor : optimizerStateTensors(*state))
      if (tensor.defined())
        bytes += int64_t(tensor.numel() * tensor.element_size());
  return bytes;
}

void Optimizer::save(torch::serialize::OutputArchive &archive) const {
  torch::serialize::OutputArchive torchState(archive.compilation_unit());
  impl_->save(torchState);
  archive.write("torch", torchState);
  archive.write("name", c10::IValue(spec_.name));
  archive.write("lr_multiplier", torch::tensor(multiplier_, torch::kFloat64));
}

void Optimizer::load(torch::serialize::InputArchive &archive) {
  c10::IValue name;
  archive.read("name", name);
  if (!name.isString() || name.toStringRef() != spec_.name)
    throw std::runtime_error(
        "optimizer state is for '" +
        (name.isString() ? name.toStringRef() : std::string("?")) + "', not '" +
        spec_.name + "'");
  torch::serialize::InputArchive torchState;
  archive.read("torch", torchState);
  impl_->load(torchState);
  moveStateToParameters(*impl_);
  torch::Tensor multiplier;
  archive.read("lr_multiplier", multiplier);
  // LibTorch restores the per-parameter state but not the group options.
  setLrMultiplier(multiplier.item<double>());
}

} // namespace composer::runtime
