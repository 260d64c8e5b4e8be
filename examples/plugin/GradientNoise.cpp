//===- GradientNoise.cpp - An algorithm and a callback from a plugin ------===//
//
// A plugin for composer-train: a shared library whose static objects
// register components in the runtime's registries, exactly as the built-in
// ones do. Loaded with `composer-train --plugin libComposerExamplePlugin.so`,
// its names can be used in a recipe:
//
//   algorithms:
//     gradient_noise: {eta: 0.01}
//   callbacks:
//     loss_log: {path: losses.csv}
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Callbacks.h"

#include <cmath>
#include <fstream>
#include <memory>

namespace {

using namespace composer::runtime;

struct GradientNoiseOptions {
  double eta = 0.01;
  double gamma = 0.55;
};

/// Neelakantan et al. (2015), "Adding Gradient Noise Improves Learning for
/// Very Deep Networks": Gaussian noise of variance eta / (1 + t)^gamma is
/// added to every gradient after backward, t the batch count. Drawn from
/// State::generatorFor, so a resumed run adds the same noise.
class GradientNoise final : public Algorithm {
public:
  explicit GradientNoise(const GradientNoiseOptions &options)
      : options_(options) {
    if (!(options.eta >= 0))
      throwInvalidOption("gradient_noise", "eta", "must be >= 0");
  }
  std::string name() const override { return "gradient_noise"; }
  bool match(Event event, const State &) const override {
    return event == Event::AfterBackward;
  }
  void apply(Event, State &state, Logger &) override {
    double variance =
        options_.eta /
        std::pow(1.0 + double(state.timestamp.batch), options_.gamma);
    torch::Generator generator = state.generatorFor(name());
    torch::NoGradGuard noGrad;
    for (auto &[parameterName, parameter] : state.parameters) {
      torch::Tensor grad = parameter.mutable_grad();
      if (!grad.defined())
        continue;
      torch::Tensor noise = torch::randn(grad.sizes(), generator,
                                         grad.options().device(torch::kCPU));
      grad.add_(noise.to(grad.device()), std::sqrt(variance));
    }
  }

private:
  GradientNoiseOptions options_;
};

const AlgorithmRegistration<GradientNoise, GradientNoiseOptions>
    gradientNoiseRegistration(
        "gradient_noise",
        {{"eta", &GradientNoiseOptions::eta, "the noise's variance at t = 0"},
         {"gamma", &GradientNoiseOptions::gamma,
          "how fast the variance decays with the batch count"}});

struct LossLogOptions {
  std::string path;
};

/// Appends "batch,loss" to a CSV file after every batch.
class LossLog final : public Callback {
public:
  explicit LossLog(const LossLogOptions &options)
      : out_(options.path, std::ios::app) {
    if (!out_)
      throwInvalidOption("loss_log", "path",
                         "cannot be opened: '" + options.path + "'");
  }
  void runEvent(Event event, State &state, Logger &) override {
    if (event == Event::BatchEnd && state.loss.defined())
      out_ << state.timestamp.batch << ',' << state.loss.item<double>() << '\n'
           << std::flush;
  }

private:
  std::ofstream out_;
};

const CallbackRegistration<LossLog, LossLogOptions> lossLogRegistration(
    "loss_log", {{"path", &LossLogOptions::path, "the CSV file", true}});

} // namespace
