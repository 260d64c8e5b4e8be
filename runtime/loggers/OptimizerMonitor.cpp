//===- OptimizerMonitor.cpp - Gradient and weight norms -------------------===//
//
// At BATCH_END the parameters hold the gradients the optimizer stepped with
// (reduced, unscaled, clipped); they are dropped only when the next batch
// starts. Under sharded data parallelism they are gathered for it.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Callbacks.h"
#include "composer/Runtime/Gradients.h"

#include <cmath>

namespace composer::runtime {
namespace {

struct OptimizerMonitorOptions {
  bool logPerLayer = true;
};

class OptimizerMonitor final : public Callback {
public:
  explicit OptimizerMonitor(const OptimizerMonitorOptions &options)
      : perLayer_(options.logPerLayer) {}

  void runEvent(Event event, State &state, Logger &logger) override {
    if (event != Event::BatchEnd)
      return;
    torch::NoGradGuard noGrad;
    gatherGradients(state, "optimizer_monitor");
    std::map<std::string, double> metrics;
    double squares = 0;
    bool any = false;
    for (const auto &[name, parameter] : state.parameters) {
      const torch::Tensor &grad = parameter.grad();
      if (perLayer_)
        metrics["l2_norm/param/" + name] =
            parameter.detach().to(torch::kDouble).norm().item<double>();
      if (!grad.defined())
        continue;
      double norm = grad.to(torch::kDouble).norm().item<double>();
      squares += norm * norm;
      any = true;
      if (perLayer_)
        metrics["l2_norm/grad/" + name] = norm;
    }
    if (any)
      metrics["l2_norm/grad/global"] = std::sqrt(squares);
    scatterGradients(state);
    logger.logMetrics(metrics, state.timestamp.batch);
  }

private:
  bool perLayer_;
};

const CallbackRegistration<OptimizerMonitor, OptimizerMonitorOptions>
    optimizerMonitorRegistration(
        "optimizer_monitor",
        {{"log_per_layer", &OptimizerMonitorOptions::logPerLayer,
          "also each parameter's gradient and weight norms"}});

} // namespace

std::unique_ptr<Callback> createOptimizerMonitor(bool perLayer) {
  return std::make_unique<OptimizerMonitor>(OptimizerMonitorOptions{perLayer});
}

} // namespace composer::runtime
