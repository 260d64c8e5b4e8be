//===- Regression.cpp - mse and mae ---------------------------------------===//
//
// The mean over every element of the squared or absolute difference of the
// outputs and targets of one shape.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Metrics.h"

#include <stdexcept>

namespace composer::runtime {
namespace {

struct MeanErrorOptions {};

/// Totals: summed error, elements.
template <bool Squared> class MeanError final : public Metric {
public:
  explicit MeanError(const MeanErrorOptions &) : Metric(2) {}
  std::string name() const override {
    return Squared ? "MeanSquaredError" : "MeanAbsoluteError";
  }
  void update(const torch::Tensor &outputs,
              const torch::Tensor &target) override {
    if (outputs.sizes() != target.sizes())
      throw std::invalid_argument(std::string(Squared ? "mse" : "mae") +
                                  ": outputs " + describeShape(outputs) +
                                  " and targets " + describeShape(target) +
                                  " must have one shape");
    torch::Tensor error =
        outputs.to(torch::kDouble) - target.to(torch::kDouble);
    torch::Tensor summed = Squared ? error.square().sum() : error.abs().sum();
    add(torch::stack(
        {summed, torch::tensor(double(error.numel()), torch::kDouble)}));
  }
  std::optional<double> compute(const torch::Tensor &totals) const override {
    return ratio(totals);
  }
};

const MetricRegistration<MeanError<true>, MeanErrorOptions>
    mseRegistration("mse", {});
const MetricRegistration<MeanError<false>, MeanErrorOptions>
    maeRegistration("mae", {});

} // namespace
} // namespace composer::runtime
