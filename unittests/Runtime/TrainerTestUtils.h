//===- TrainerTestUtils.h - Shared scaffolding of trainer tests -*- C++ -*-===//
//
// Resume tests train straight through, then crash a second run mid-way and
// resume it, recording what each saw; these are the parts they share.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_UNITTESTS_RUNTIME_TRAINERTESTUTILS_H
#define COMPOSER_UNITTESTS_RUNTIME_TRAINERTESTUTILS_H

#include "composer/Runtime/Trainer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <unistd.h>

namespace composer::runtime::testutils {

/// A fresh, empty folder for this test process.
inline std::string tempDir(const std::string &name) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// Trains with `config` and throws at the end of batch `batch`, as a killed
/// run would stop: whatever checkpoints it wrote by then stay behind.
inline void crashAfterBatch(TrainerConfig config, int64_t batch) {
  struct Crash : Callback {
    int64_t batch = 0;
    void runEvent(Event event, State &state, Logger &) override {
      if (event == Event::BatchEnd && state.timestamp.batch == batch)
        throw std::runtime_error("crash");
    }
  };
  auto crash = std::make_unique<Crash>();
  crash->batch = batch;
  config.callbacks.push_back(std::move(crash));
  Trainer first(std::move(config));
  EXPECT_THROW(first.fit(), std::runtime_error);
}

/// A callback that records `value(state)` in `log`, by batch count, at each
/// `event`: what a straight and a resumed run saw, to compare.
template <typename T, typename ValueFn>
std::unique_ptr<Callback> recordByBatch(Event event, std::map<int64_t, T> &log,
                                        ValueFn value) {
  struct Recorder : Callback {
    Recorder(Event event, std::map<int64_t, T> &log, ValueFn value)
        : event(event), log(log), value(std::move(value)) {}
    void runEvent(Event at, State &state, Logger &) override {
      if (at == event)
        log[state.timestamp.batch] = value(state);
    }
    Event event;
    std::map<int64_t, T> &log;
    ValueFn value;
  };
  return std::make_unique<Recorder>(event, log, std::move(value));
}

/// A bias-free linear model from `inputs` features to `outputs` logits,
/// initialized from `seed`.
inline torch::jit::Module linearModel(int64_t inputs, int64_t outputs,
                                      int64_t seed) {
  torch::manual_seed(seed);
  torch::jit::Module model("Linear");
  model.register_parameter(
      "weight", (torch::randn({outputs, inputs}) * 0.1).requires_grad_(),
      false);
  model.define(R"(
    def forward(self, x):
        return torch.matmul(x, self.weight.t())
  )");
  return model;
}

} // namespace composer::runtime::testutils

#endif // COMPOSER_UNITTESTS_RUNTIME_TRAINERTESTUTILS_H
