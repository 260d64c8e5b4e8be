//===- LayerFreezing.cpp - Progressive layer freezing ---------------------===//
//
// Composer's schedule (METHODS.md): at every epoch end the first
// int(pct * (n - 1)) layers are frozen, pct rising linearly from 0 at
// `freezeStart` to `freezeLevel` at the end of the run; the last layer never
// is. Frozen parameters lose requires_grad and their gradient, so autograd
// stops at the frontier and the optimizer, which only steps parameters with a
// gradient, leaves them alone. Freezing never reverses, and the depth is
// checkpointed and reapplied at FIT_START.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"
#include "composer/Support/StatePaths.h"

#include <algorithm>
#include <stdexcept>

namespace composer::runtime {
namespace {

const std::string kLayersAttr(kLayersAttrName);
const std::string kFrozenLayersAttr(kFrozenLayersAttrName);

/// Layers in forward order: the freezing pass's record when the model has
/// one, else parameter-owning modules in registration order.
std::vector<std::string> layersOf(const State &state) {
  std::vector<std::string> layers;
  if (state.model.hasattr(kLayersAttr)) {
    c10::IValue recorded = state.model.attr(kLayersAttr);
    if (recorded.isList()) {
      for (const c10::IValue &layer : recorded.toListRef())
        layers.push_back(layer.toStringRef());
    } else if (recorded.isTuple()) {
      for (const c10::IValue &layer : recorded.toTupleRef().elements())
        layers.push_back(layer.toStringRef());
    } else {
      throw std::runtime_error("layer_freezing: " + kLayersAttr +
                               " is not a list of module paths");
    }
    return layers;
  }
  for (const auto &entry : state.parameters) {
    std::string_view owner = getStateOwner(entry.first);
    if (std::find(layers.begin(), layers.end(), owner) == layers.end())
      layers.emplace_back(owner);
  }
  return layers;
}

/// Index of the layer holding parameter `name`: the deepest layer whose path
/// owns it or encloses it; -1 if none does.
int64_t layerIndexOf(const std::string &name,
                     const std::vector<std::string> &layers) {
  std::string_view owner = getStateOwner(name);
  int64_t best = -1;
  size_t bestLength = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string &layer = layers[i];
    bool holds =
        owner == layer ||
        (!layer.empty() && name.compare(0, layer.size() + 1, layer + ".") == 0);
    if (holds && (best < 0 || layer.size() > bestLength)) {
      best = int64_t(i);
      bestLength = layer.size();
    }
  }
  return best;
}

struct LayerFreezingOptions {
  double freezeStart = 0.5;
  double freezeLevel = 1.0;
};

class LayerFreezing final : public Algorithm {
public:
  explicit LayerFreezing(const LayerFreezingOptions &options)
      : freezeStart_(options.freezeStart), freezeLevel_(options.freezeLevel) {
    checkOptionInterval("layer_freezing", "freeze_start", freezeStart_, 0, 1,
                        IntervalEnds::OpenHigh);
    checkOptionInterval("layer_freezing", "freeze_level", freezeLevel_, 0, 1);
  }

  std::string name() const override { return "layer_freezing"; }

  bool match(Event event, const State &) const override {
    return event == Event::EpochEnd ||
           (event == Event::FitStart && frozenLayers_ > 0);
  }

  void apply(Event event, State &state, Logger &logger) override {
    std::vector<std::string> layers = layersOf(state);
    if (event == Event::EpochEnd) {
      double t = state.fractionDone();
      double pct = t <= freezeStart_
                       ? 0.0
                       : freezeLevel_ * (t - freezeStart_) / (1 - freezeStart_);
      int64_t n = int64_t(layers.size());
      int64_t depth = std::clamp<int64_t>(int64_t(pct * double(n - 1)), 0,
                                          std::max<int64_t>(n - 1, 0));
      frozenLayers_ = std::max(frozenLayers_, depth);
      logger.logMetrics(
          {{"layer_freezing/layers_frozen", double(frozenLayers_)},
           {"layer_freezing/percentage_frozen", pct}},
          state.timestamp.batch);
    }
    freeze(state, layers);
  }

  void saveState(torch::serialize::OutputArchive &archive) const override {
    archive.write("frozen_layers", c10::IValue(frozenLayers_));
  }

  void loadState(torch::serialize::InputArchive &archive) override {
    c10::IValue value;
    if (archive.try_read("frozen_layers", value))
      frozenLayers_ = value.toInt();
  }

private:
  void freeze(State &state, const std::vector<std::string> &layers) {
    if (frozenLayers_ == 0)
      return;
    for (auto &[name, param] : state.parameters) {
      int64_t index = layerIndexOf(name, layers);
      if (index < 0 || index >= frozenLayers_)
        continue;
      param.requires_grad_(false);
      param.mutable_grad() = torch::Tensor();
    }
    if (state.model.hasattr(kFrozenLayersAttr)) {
      int64_t old = state.model.attr(kFrozenLayersAttr).toInt();
      state.model.setattr(kFrozenLayersAttr, std::max(old, frozenLayers_));
    }
  }

  double freezeStart_, freezeLevel_;
  int64_t frozenLayers_ = 0;
};

const AlgorithmRegistration<LayerFreezing, LayerFreezingOptions>
    layerFreezingRegistration(
        "layer_freezing",
        {{"freeze_start", &LayerFreezingOptions::freezeStart,
          "fraction of the run before the first layer is frozen"},
         {"freeze_level", &LayerFreezingOptions::freezeLevel,
          "fraction of the layers frozen at the end of the run"}});

} // namespace
} // namespace composer::runtime
