//===- InterruptTest.cpp - SIGINT and SIGTERM stop a run after a batch ----===//
//
// The handlers are process-wide and cannot be taken back, so each test runs
// in a child process of its own (a death test).
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Interrupt.h"
#include "composer/Runtime/Trainer.h"

#include "TrainerTestUtils.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <set>
#include <unistd.h>

using namespace composer::runtime;

namespace {

/// Ends a death test's child: status 0 when `failure` is empty, else 1
/// after printing it.
[[noreturn]] void finishChild(const std::string &failure) {
  if (!failure.empty())
    std::fprintf(stderr, "%s\n", failure.c_str());
  std::fflush(stderr);
  _exit(failure.empty() ? 0 : 1);
}

bool hasDefaultDisposition(int signal) {
  struct sigaction current = {};
  sigaction(signal, nullptr, &current);
  return current.sa_handler == SIG_DFL;
}

struct InterruptStepRecorder : LoggerDestination {
  std::set<int64_t> &trained, &evaluated;
  InterruptStepRecorder(std::set<int64_t> &trained,
                        std::set<int64_t> &evaluated)
      : trained(trained), evaluated(evaluated) {}
  void logMetrics(const std::map<std::string, double> &metrics,
                  int64_t step) override {
    (metrics.count("loss/train/total") ? trained : evaluated).insert(step);
  }
};

TEST(InterruptTest, FirstSignalIsRecordedTheNextTerminates) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (interruptSignal() != 0)
          finishChild("a signal before the handlers");
        installInterruptHandlers();
        if (hasDefaultDisposition(SIGINT) || hasDefaultDisposition(SIGTERM))
          finishChild("the handlers are not installed");
        raise(SIGTERM);
        if (interruptSignal() != SIGTERM)
          finishChild("SIGTERM was not recorded");
        if (!hasDefaultDisposition(SIGINT) || !hasDefaultDisposition(SIGTERM))
          finishChild("the default dispositions are not restored");
        raise(SIGINT); // terminates
        finishChild("a second signal did not terminate the process");
      },
      ::testing::KilledBySignal(SIGINT), "");
  EXPECT_EQ(signalName(SIGINT), "SIGINT");
  EXPECT_EQ(signalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(interruptExitStatus(SIGINT), 130);
  EXPECT_EQ(interruptExitStatus(SIGTERM), 143);
}

/// Trains 3 epochs of 8 batches, interrupted by SIGINT in the second
/// batch; ends the process (finishChild).
[[noreturn]] void trainInterrupted(const std::string &folder) {
  installInterruptHandlers();
  torch::manual_seed(2);
  torch::jit::Module model("Linear");
  model.register_parameter("w", torch::randn({6, 3}).requires_grad_(), false);
  model.define(R"(
    def forward(self, x):
        return torch.matmul(x, self.w)
  )");
  auto loader = [](int64_t samples) {
    torch::Tensor inputs = torch::randn({samples, 6});
    DataLoaderOptions options;
    options.batchSize = 4;
    return std::make_shared<DataLoader>(
        std::make_shared<TensorDataset>(inputs, inputs.argmax(1) % 3,
                                        SampleKind::Tensor),
        options);
  };
  TrainerConfig config;
  config.model = model;
  config.trainLoader = loader(32); // 8 batches an epoch
  config.evalLoader = loader(8);
  config.maxDuration = parseTime("3ep");
  config.saveFolder = folder;
  std::set<int64_t> trained, evaluated;
  config.logger.addDestination(
      std::make_unique<InterruptStepRecorder>(trained, evaluated));
  // Ctrl-C while the second batch runs.
  struct Interrupt : Callback {
    void runEvent(Event event, State &state, Logger &) override {
      if (event == Event::AfterForward && state.timestamp.batch == 1)
        raise(SIGINT);
    }
  };
  config.callbacks.push_back(std::make_unique<Interrupt>());
  Trainer trainer(std::move(config));
  trainer.fit();
  const State &state = trainer.state();
  if (trainer.interruptedBy() != SIGINT || !state.stopRequested ||
      state.stopReason != "interrupted by SIGINT")
    finishChild("not stopped by SIGINT: '" + state.stopReason + "'");
  if (state.timestamp.batch != 2 || trained != std::set<int64_t>{1, 2})
    finishChild("did not stop after batch 2 but " +
                std::to_string(state.timestamp.batch));
  if (evaluated != std::set<int64_t>{2})
    finishChild("the run's end was not evaluated");
  if (!trainer.lastCheckpoint() ||
      trainer.lastCheckpoint()->find("ep0-ba2.ckpt") == std::string::npos)
    finishChild("no checkpoint at batch 2");
  finishChild("");
}

TEST(InterruptTest, TrainerStopsAfterTheBatchThenEvaluatesAndSaves) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string folder = testutils::tempDir("interrupt");
  EXPECT_EXIT(trainInterrupted(folder), ::testing::ExitedWithCode(0), "");
}

} // namespace
