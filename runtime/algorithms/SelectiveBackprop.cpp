//===- SelectiveBackprop.cpp - Backprop on the hard samples (Jiang 2019) --===//
//
// Wraps the training step's selectBatch stage, which runs on the batch as
// loaded, before AFTER_DATALOADER and so before every augmentation. While the
// run is between `start` and `end` (fractions of it) and the batch is not
// every `interrupt`-th of its epoch: the step's forward without gradients (on
// inputs downscaled by `scale_factor` when below 1) and its loss per sample
// give each sample's loss; with q = (rank + 0.5) / B the percentile of a
// sample's loss in the batch, keep*B samples (at least one) are drawn without
// replacement with probability proportional to q^(1/keep - 1), and the batch
// becomes them, so forward and backward run on those only.
//
// As in Composer the scoring forward runs in the model's training mode
// (BatchNorm statistics see the whole batch), and augmentations see the kept
// samples only. The draw comes from the batch's own generator: a resumed run
// keeps the same samples.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Precision.h"

#include <cmath>
#include <stdexcept>

namespace composer::runtime {
namespace {

struct SelectiveBackpropOptions {
  double start = 0.5;
  double end = 0.9;
  double keep = 0.5;
  double scaleFactor = 1;
  int64_t interrupt = 2;
};

class SelectiveBackprop final : public Algorithm, public StepStages {
public:
  void checkData(const SampleSpec &spec) const override {
    if (options_.scaleFactor < 1)
      requireImages(name() + " with scale_factor < 1", spec);
  }

  explicit SelectiveBackprop(const SelectiveBackpropOptions &options)
      : options_(options) {
    const SelectiveBackpropOptions &o = options_;
    checkOptionInterval("selective_backprop", "start", o.start, 0, 1);
    if (!(o.end >= o.start && o.end <= 1))
      throwInvalidOption("selective_backprop", "end",
                         "must be in [start, 1], got " + std::to_string(o.end),
                         {"start"});
    checkOptionInterval("selective_backprop", "keep", o.keep, 0, 1,
                        IntervalEnds::OpenLow);
    checkOptionInterval("selective_backprop", "scale_factor", o.scaleFactor, 0,
                        1, IntervalEnds::OpenLow);
    if (o.interrupt < 0)
      throwInvalidOption("selective_backprop", "interrupt",
                         "must be >= 0, got " + std::to_string(o.interrupt));
  }

  std::string name() const override { return "selective_backprop"; }
  StepStages *stepStages() override { return this; }

  void selectBatch(TrainingStep &step, SelectBatchNext next) override {
    next();
    State &state = step.state();
    if (active(state))
      keepHardSamples(step, state);
  }

private:
  bool active(const State &state) const {
    if (state.batch.size() < 2)
      return false;
    // Composer's should_selective_backprop.
    double done = state.fractionDone();
    bool inWindow = done >= options_.start && done < options_.end;
    bool interrupted =
        options_.interrupt > 0 &&
        (state.timestamp.batchInEpoch + 1) % options_.interrupt == 0;
    return inWindow && !interrupted;
  }

  void keepHardSamples(TrainingStep &step, State &state) const {
    torch::Tensor input = state.batch.input, target = state.batch.target;
    int64_t size = input.size(0);
    torch::Tensor losses;
    {
      torch::NoGradGuard noGrad;
      AutocastGuard autocast(state.precision, state.device);
      torch::Tensor scored = input;
      if (options_.scaleFactor < 1)
        scored = downscale(input);
      torch::Tensor outputs = step.forward(scored);
      losses = step.loss(outputs.to(torch::kFloat), target, /*perSample=*/true)
                   .to(torch::kCPU, torch::kDouble);
    }
    int64_t kept =
        std::max<int64_t>(1, int64_t(std::floor(options_.keep * double(size))));
    // Ascending losses: the i-th has percentile (i + 0.5) / B.
    torch::Tensor byLoss = std::get<1>(losses.sort(
        c10::optional<bool>(true), /*dim=*/0, /*descending=*/false));
    torch::Tensor percentiles =
        (torch::arange(size, torch::kDouble) + 0.5) / double(size);
    torch::Tensor weights = percentiles.pow(1.0 / options_.keep - 1.0);
    torch::Generator generator = state.generatorFor(name());
    torch::Tensor drawn =
        torch::multinomial(weights, kept, /*replacement=*/false, generator);
    state.batch = state.batch.select(byLoss.index_select(0, drawn));
  }

  torch::Tensor downscale(const torch::Tensor &input) const {
    namespace F = torch::nn::functional;
    if (input.dim() < 3 || input.dim() > 5)
      throw std::runtime_error("selective_backprop: scale_factor < 1 needs "
                               "3-D to 5-D inputs, got " +
                               std::to_string(input.dim()) + "-D");
    std::vector<double> factors(input.dim() - 2, options_.scaleFactor);
    auto options = F::InterpolateFuncOptions()
                       .scale_factor(factors)
                       .align_corners(false)
                       .recompute_scale_factor(false);
    int64_t spatial = input.dim() - 3;
    if (spatial == 0)
      options.mode(torch::kLinear);
    else if (spatial == 1)
      options.mode(torch::kBilinear);
    else
      options.mode(torch::kTrilinear);
    torch::Tensor x =
        input.is_floating_point() ? input : input.to(torch::kFloat);
    return F::interpolate(x, options);
  }

  SelectiveBackpropOptions options_;
};

const AlgorithmRegistration<SelectiveBackprop, SelectiveBackpropOptions>
    selectiveBackpropRegistration(
        "selective_backprop",
        {{"start", &SelectiveBackpropOptions::start,
          "fraction of the run where it starts"},
         {"end", &SelectiveBackpropOptions::end,
          "fraction of the run where it stops"},
         {"keep", &SelectiveBackpropOptions::keep,
          "fraction of each batch kept for backprop"},
         {"scale_factor", &SelectiveBackpropOptions::scaleFactor,
          "inputs are downscaled by this for the scoring forward"},
         {"interrupt", &SelectiveBackpropOptions::interrupt,
          "every this many batches one trains on the whole batch (0: none)"}});

} // namespace
} // namespace composer::runtime
