//===- CheckpointTest.cpp - Checkpoints and the training loop -------------===//

#include "composer/Runtime/Checkpoint.h"
#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Trainer.h"

#include "TrainerTestUtils.h"

#include <gtest/gtest.h>
#include <torch/serialize.h>

#include <filesystem>
#include <fstream>

using namespace composer::runtime;
using namespace composer::runtime::testutils;
namespace fs = std::filesystem;

namespace {

/// A linear classifier over flattened [3, 8, 8] images, with a BN-like buffer
/// so buffers are checkpointed too.
torch::jit::Module makeClassifier(int64_t seed) {
  torch::manual_seed(seed);
  torch::jit::Module head("Head");
  head.register_parameter(
      "weight", (torch::randn({10, 192}) * 0.05).requires_grad_(), false);
  head.register_parameter("bias", torch::zeros({10}, torch::requires_grad()),
                          false);
  head.register_buffer("calls", torch::zeros({1}, torch::kLong));
  head.define(R"(
    def forward(self, x):
        self.calls.add_(1)
        return torch.addmm(self.bias, torch.flatten(x, 1), self.weight.t())
  )");
  torch::jit::Module model("Model");
  model.register_module("head", head);
  model.define(R"(
    def forward(self, x):
        return self.head.forward(x)
  )");
  return model;
}

std::shared_ptr<DataLoader> syntheticLoader(int64_t samples, uint64_t seed) {
  SyntheticSpec spec;
  spec.numSamples = samples;
  spec.sampleShape = {3, 8, 8};
  spec.seed = seed;
  auto dataset = makeSynthetic(spec);
  DataLoaderOptions options;
  options.batchSize = 16;
  options.seed = seed;
  options.transforms.horizontalFlip = true;
  return std::make_shared<DataLoader>(dataset, options);
}

TrainerConfig baseConfig(const std::string &folder) {
  TrainerConfig config;
  config.model = makeClassifier(3);
  config.trainLoader = syntheticLoader(128, 5);
  config.optimizer.name = "sgd";
  config.optimizer.lr = 0.5;
  config.optimizer.momentum = 0.9;
  config.scheduler.name = "cosine_with_warmup";
  config.scheduler.warmup = parseTime("3ba");
  config.maxDuration = parseTime("3ep");
  config.seed = 11;
  config.saveFolder = folder;
  config.saveInterval = parseTime("5ba");
  config.algorithms.push_back(createAlgorithm("mixup", {{"alpha", 0.4}}));
  config.algorithms.push_back(
      createAlgorithm("ema", {{"half_life", Time{4, TimeUnit::Batch}}}));
  return config;
}

std::map<std::string, torch::Tensor> weights(const torch::jit::Module &m) {
  std::map<std::string, torch::Tensor> result;
  for (const auto &[name, tensor] : namedParameters(m))
    result[name] = tensor.clone();
  for (const auto &[name, tensor] : namedBuffers(m))
    result[name] = tensor.clone();
  return result;
}

TEST(TrainerTest, LossFallsOnLearnableData) {
  TrainerConfig config;
  config.model = makeClassifier(1);
  // Labels a linear model can learn: the class is set by which pixel is
  // brightest among the first ten.
  torch::manual_seed(2);
  torch::Tensor images = torch::randint(0, 100, {256, 3, 8, 8}, torch::kUInt8);
  auto dataset = std::make_shared<TensorDataset>(
      images, images.flatten(1).narrow(1, 0, 10).argmax(1).to(torch::kLong));
  DataLoaderOptions options;
  options.batchSize = 32;
  config.trainLoader = std::make_shared<DataLoader>(dataset, options);
  config.evalLoader = std::make_shared<DataLoader>(
      dataset, DataLoaderOptions{64, false, false, 0, 0, {}, 0, 1});
  config.optimizer.lr = 0.5;
  config.maxDuration = parseTime("30ep");
  Trainer trainer(std::move(config));
  EvalResult before = trainer.evaluate();
  trainer.fit();
  EvalResult after = trainer.evaluate();
  EXPECT_LT(after.loss, before.loss * 0.7);
  EXPECT_GT(after.accuracy, 0.5);
  EXPECT_EQ(trainer.state().timestamp.epoch, 30);
  EXPECT_EQ(trainer.state().timestamp.batch, 30 * 8);
  EXPECT_EQ(trainer.state().timestamp.sample, 30 * 256);
}

/// Trains baseConfig changed by `adjust` straight through, and again killed
/// after 13 batches and resumed; the two must end bit-identical.
template <typename Adjust> void expectResumeIsBitIdentical(Adjust adjust) {
  std::string straightDir = tempDir("straight");
  std::string resumedDir = tempDir("resumed");
  auto config = [&](const std::string &folder) {
    TrainerConfig result = baseConfig(folder);
    adjust(result);
    return result;
  };
  auto lossOf = [](State &state) { return state.loss.item<double>(); };
  std::map<int64_t, double> straightLosses, resumedLosses;
  TrainerConfig straightConfig = config(straightDir);
  straightConfig.callbacks.push_back(
      recordByBatch(Event::AfterLoss, straightLosses, lossOf));
  Trainer straight(std::move(straightConfig));
  straight.fit();

  // Crash after 13 batches (mid-epoch, between checkpoints), then resume
  // from the newest checkpoint (batch 10) in a fresh trainer.
  crashAfterBatch(config(resumedDir), 13);
  TrainerConfig resumedConfig = config(resumedDir);
  // A different start, which the checkpoint must overwrite.
  resumedConfig.model = makeClassifier(99);
  resumedConfig.autoresume = true;
  resumedConfig.callbacks.push_back(
      recordByBatch(Event::AfterLoss, resumedLosses, lossOf));
  Trainer resumed(std::move(resumedConfig));
  resumed.fit();
  for (const auto &[batch, loss] : resumedLosses)
    EXPECT_EQ(loss, straightLosses.at(batch)) << "batch " << batch;
  ASSERT_TRUE(resumed.resumedFrom());
  EXPECT_EQ(fs::path(*resumed.resumedFrom()).filename(), "ep1-ba10.ckpt");
  EXPECT_EQ(resumedLosses.begin()->first, 10);

  auto expected = weights(straight.state().model);
  auto actual = weights(resumed.state().model);
  ASSERT_EQ(expected.size(), actual.size());
  for (const auto &[name, tensor] : expected)
    EXPECT_TRUE(torch::equal(tensor, actual.at(name))) << name;
  EXPECT_EQ(resumed.state().timestamp.batch, straight.state().timestamp.batch);
}

TEST(TrainerTest, ResumeIsBitIdentical) {
  expectResumeIsBitIdentical([](TrainerConfig &) {});
}

TEST(TrainerTest, ResumeIsBitIdenticalWithAccumulation) {
  // Batches of 16 in microbatches of 5, 5, 5 and 1; checkpoint names and
  // the resume point still count batches.
  expectResumeIsBitIdentical(
      [](TrainerConfig &config) { config.microbatchSize = 5; });
}

TEST(CheckpointTest, RoundTripsEverything) {
  std::string dir = tempDir("roundtrip");
  TrainerConfig config = baseConfig(dir);
  config.maxDuration = parseTime("5ba");
  config.saveFolder.clear();
  Trainer trainer(std::move(config));
  trainer.fit();
  State &state = trainer.state();
  state.parameters.front().second.requires_grad_(false);
  CheckpointExtras extras;
  std::string path = dir + "/manual.ckpt";
  torch::Tensor rngBefore = at::detail::getDefaultCPUGenerator().get_state();
  saveCheckpoint(path, state, extras);
  torch::Tensor expectedDraw = torch::rand({4});

  TrainerConfig fresh = baseConfig(dir);
  fresh.model = makeClassifier(42);
  fresh.saveFolder.clear();
  Trainer other(std::move(fresh));
  loadCheckpoint(path, other.state(), extras);
  EXPECT_TRUE(torch::equal(torch::rand({4}), expectedDraw));
  EXPECT_EQ(other.state().timestamp.batch, 5);
  auto expected = weights(state.model);
  auto actual = weights(other.state().model);
  for (const auto &[name, tensor] : expected)
    EXPECT_TRUE(torch::equal(tensor, actual.at(name))) << name;
  EXPECT_FALSE(other.state().parameters.front().second.requires_grad());
  EXPECT_TRUE(other.state().parameters.back().second.requires_grad());
  (void)rngBefore;

  // Python reads it too: it is a plain pickled dict.
  std::string command = std::string(COMPOSER_PYTHON) +
                        " -c \"import torch,sys; c=torch.load(sys.argv[1]); "
                        "assert c['format']=='composer-train-checkpoint'; "
                        "assert c['timestamp']['batch']==5; "
                        "print(sorted(c['model']))\" " +
                        path + " > " + dir + "/python.txt 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream python(dir + "/python.txt");
  std::string line;
  std::getline(python, line);
  EXPECT_EQ(line, "['head.bias', 'head.calls', 'head.weight']");
}

TEST(CheckpointTest, RejectsBadFilesWithoutChangingTheModel) {
  std::string dir = tempDir("bad");
  TrainerConfig config = baseConfig(dir);
  config.saveFolder.clear();
  Trainer trainer(std::move(config));
  auto before = weights(trainer.state().model);
  CheckpointExtras extras;

  auto expectError = [&](const std::string &path, const std::string &text) {
    try {
      loadCheckpoint(path, trainer.state(), extras);
      ADD_FAILURE() << "loaded " << path;
    } catch (const std::runtime_error &e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
          << e.what();
    }
  };
  expectError(dir + "/missing.ckpt", "cannot open");
  std::ofstream(dir + "/garbage.ckpt") << "not a checkpoint";
  expectError(dir + "/garbage.ckpt", "corrupt or truncated");

  // A checkpoint of a model with a different shape.
  torch::jit::Module other("Other");
  other.register_parameter("head.weight", torch::zeros({1}), false);
  TrainerConfig small = baseConfig(dir);
  small.saveFolder.clear();
  Trainer smallTrainer(std::move(small));
  {
    torch::NoGradGuard noGrad;
    State copy = smallTrainer.state();
    torch::jit::Module wrong("Wrong");
    torch::jit::Module head("Head");
    head.register_parameter("weight", torch::zeros({10, 7}), false);
    head.register_parameter("bias", torch::zeros({10}), false);
    head.register_buffer("calls", torch::zeros({1}, torch::kLong));
    wrong.register_module("head", head);
    copy.model = wrong;
    copy.optimizer = nullptr;
    saveCheckpoint(dir + "/wrong.ckpt", copy, extras);
  }
  expectError(dir + "/wrong.ckpt", "tensor 'head.weight' is [10, 7]");

  // Sharded checkpoints (directories): one without an index, and one whose
  // index has an entry of the wrong type.
  fs::create_directories(dir + "/empty.ckpt");
  expectError(dir + "/empty.ckpt", "the directory has no index.pt");
  fs::create_directories(dir + "/malformed.ckpt");
  {
    auto newDict = [] {
      return c10::impl::GenericDict(c10::StringType::get(),
                                    c10::AnyType::get());
    };
    c10::impl::GenericDict index = newDict(), sharding = newDict();
    sharding.insert("world_size", std::string("two"));
    index.insert("format", std::string("composer-train-checkpoint"));
    index.insert("version", int64_t(1));
    index.insert("sharding", sharding);
    std::vector<char> bytes = torch::pickle_save(index);
    std::ofstream(dir + "/malformed.ckpt/index.pt", std::ios::binary)
        .write(bytes.data(), std::streamsize(bytes.size()));
  }
  expectError(dir + "/malformed.ckpt", "corrupt sharded checkpoint");

  auto after = weights(trainer.state().model);
  for (const auto &[name, tensor] : before)
    EXPECT_TRUE(torch::equal(tensor, after.at(name))) << name;
}

TEST(CheckpointTest, WeightsOnlyCheckpointsStartFreshRuns) {
  std::string dir = tempDir("weights-only");
  TrainerConfig first = baseConfig(dir);
  first.maxDuration = parseTime("5ba");
  first.saveWeightsOnly = true;
  first.algorithms.clear(); // EMA would leave its average in the model
  Trainer trainer(std::move(first));
  trainer.fit();
  ASSERT_TRUE(trainer.lastCheckpoint());
  std::string path = *trainer.lastCheckpoint();
  auto trained = weights(trainer.state().model);

  // Resuming from it is refused before anything changes.
  TrainerConfig resuming = baseConfig(tempDir("weights-only-resume"));
  resuming.loadPath = path;
  Trainer refused(std::move(resuming));
  try {
    refused.fit();
    FAIL() << "expected a std::runtime_error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("holds weights only"),
              std::string::npos)
        << e.what();
  }

  // Loaded weights-only, the run starts at zero from the trained weights.
  TrainerConfig starting = baseConfig(tempDir("weights-only-start"));
  starting.model = makeClassifier(42);
  starting.loadPath = path;
  starting.loadOptions.weightsOnly = true;
  starting.maxDuration = parseTime("1ba");
  std::map<int64_t, std::map<std::string, torch::Tensor>> atStart;
  starting.callbacks.push_back(
      recordByBatch(Event::FitStart, atStart,
                    [](State &state) { return weights(state.model); }));
  Trainer fresh(std::move(starting));
  fresh.fit();
  ASSERT_EQ(atStart.count(0), 1u);
  for (const auto &[name, tensor] : trained)
    EXPECT_TRUE(torch::equal(tensor, atStart[0].at(name))) << name;
  EXPECT_EQ(fresh.state().timestamp.batch, 1);
}

TEST(CheckpointTest, NonStrictLoadsWhatBothHaveAndIgnoresKeys) {
  std::string dir = tempDir("non-strict");
  State saved;
  saved.model = makeClassifier(3);
  saved.parameters = namedParameters(saved.model);
  CheckpointExtras extras;
  std::string path = dir + "/model.ckpt";
  saveCheckpoint(path, saved, extras);

  // A model with one more parameter than the checkpoint.
  auto extended = [] {
    State state;
    state.model = makeClassifier(4);
    state.model.register_parameter("extra", torch::ones({2}), false);
    state.parameters = namedParameters(state.model);
    return state;
  };
  State strict = extended();
  torch::Tensor before =
      strict.model.attr("head").toModule().attr("weight").toTensor().clone();
  try {
    loadCheckpoint(path, strict, extras);
    FAIL() << "expected a std::runtime_error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("has no tensor 'extra'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(torch::equal(
      before, strict.model.attr("head").toModule().attr("weight").toTensor()));

  State lenient = extended();
  torch::Tensor ownBias =
      lenient.model.attr("head").toModule().attr("bias").toTensor().clone();
  LoadOptions options;
  options.strict = false;
  options.ignoreKeys = {"state/model/head.b*"};
  LoadReport report = loadCheckpoint(path, lenient, extras, options);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"extra"}));
  EXPECT_EQ(report.ignored, (std::vector<std::string>{"head.bias"}));
  EXPECT_TRUE(report.unexpected.empty());
  auto head = lenient.model.attr("head").toModule();
  EXPECT_TRUE(torch::equal(
      head.attr("weight").toTensor(),
      saved.model.attr("head").toModule().attr("weight").toTensor()));
  EXPECT_TRUE(torch::equal(head.attr("bias").toTensor(), ownBias));
  EXPECT_TRUE(
      torch::equal(lenient.model.attr("extra").toTensor(), torch::ones({2})));

  // The other way round: a tensor the model lacks is unexpected.
  State smaller;
  smaller.model = makeClassifier(5);
  smaller.parameters = namedParameters(smaller.model);
  State source = extended();
  saveCheckpoint(dir + "/extended.ckpt", source, extras);
  EXPECT_THROW(loadCheckpoint(dir + "/extended.ckpt", smaller, extras),
               std::runtime_error);
  report = loadCheckpoint(dir + "/extended.ckpt", smaller, extras, options);
  EXPECT_EQ(report.unexpected, (std::vector<std::string>{"extra"}));
}

TEST(CheckpointTest, KeepsTheNewestN) {
  std::string dir = tempDir("keep");
  TrainerConfig config = baseConfig(dir);
  config.saveInterval = parseTime("2ba");
  config.saveNumCheckpointsToKeep = 2;
  config.maxDuration = parseTime("9ba");
  Trainer trainer(std::move(config));
  trainer.fit();
  std::vector<std::string> files;
  for (const auto &entry : fs::directory_iterator(dir))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"ep0-ba8.ckpt", "ep1-ba9.ckpt",
                                             "latest"}));
  CheckpointFolder folder(dir, 2);
  EXPECT_EQ(fs::path(*folder.latest()).filename(), "ep1-ba9.ckpt");
}

TEST(TrainerTest, NanLossStopsWithTheLastGoodCheckpoint) {
  std::string dir = tempDir("nan");
  TrainerConfig config = baseConfig(dir);
  config.algorithms.clear();
  config.saveInterval = parseTime("1ba");
  // A run that diverges at its sixth batch.
  struct Diverge : Callback {
    void runEvent(Event event, State &state, Logger &) override {
      if (event == Event::AfterLoss && state.timestamp.batch == 5)
        state.loss = state.loss * std::numeric_limits<double>::quiet_NaN();
    }
  };
  config.callbacks.push_back(std::make_unique<Diverge>());
  Trainer trainer(std::move(config));
  try {
    trainer.fit();
    FAIL() << "a diverging run finished";
  } catch (const TrainingError &e) {
    std::string message = e.what();
    EXPECT_NE(message.find("the training loss is"), std::string::npos)
        << message;
    ASSERT_TRUE(trainer.lastCheckpoint());
    EXPECT_NE(message.find(*trainer.lastCheckpoint()), std::string::npos);
    EXPECT_TRUE(fs::exists(*trainer.lastCheckpoint()));
    EXPECT_EQ(fs::path(*trainer.lastCheckpoint()).filename(), "ep0-ba5.ckpt");
    EXPECT_NE(message.find("batch 5"), std::string::npos) << message;
  }
}

/// A bigram language model: each token's logits are its row of `table`.
torch::jit::Module makeBigram(const torch::Tensor &table) {
  torch::jit::Module model("Bigram");
  model.register_parameter("table", table.requires_grad_(), false);
  model.define(R"(
    def forward(self, tokens):
        return torch.embedding(self.table, tokens)
  )");
  return model;
}

/// `samples` sequences of `length` tokens from `stream`, each target the
/// next token.
std::shared_ptr<TensorDataset>
nextTokenDataset(const torch::Tensor &stream, int64_t samples, int64_t length) {
  return std::make_shared<TensorDataset>(
      stream.narrow(0, 0, samples * length).view({samples, length}),
      stream.narrow(0, 1, samples * length).view({samples, length}),
      SampleKind::Tokens);
}

TEST(TrainerTest, LanguageModelLearnsATokenStream) {
  // A bigram model over a token stream that always counts up mod 16: [B, T,
  // V] logits against [B, T] next tokens, and time in tokens.
  torch::manual_seed(0);
  torch::jit::Module model = makeBigram(torch::randn({16, 16}) * 0.1);
  auto dataset =
      nextTokenDataset(torch::arange(0, 64 * 9 + 1, torch::kLong) % 16, 64, 8);
  TrainerConfig config;
  config.model = model;
  config.trainLoader = std::make_shared<DataLoader>(
      dataset, DataLoaderOptions{16, true, true, 0, 0, {}, 0, 1});
  config.evalLoader = std::make_shared<DataLoader>(
      dataset, DataLoaderOptions{64, false, false, 0, 0, {}, 0, 1});
  config.optimizer.name = "adamw";
  config.optimizer.lr = 0.1;
  config.maxDuration = parseTime("2048tok");
  Trainer trainer(std::move(config));
  trainer.fit();
  EXPECT_EQ(trainer.state().timestamp.token, 2048);
  EXPECT_EQ(trainer.state().timestamp.batch, 16);
  EvalResult result = trainer.evaluate();
  EXPECT_GT(result.accuracy, 0.99);
  EXPECT_LT(result.loss, 1.0); // from ln 16 = 2.77
}

TEST(TrainerTest, EventsFireInComposersOrder) {
  struct Recorder : Callback {
    std::vector<std::string> *events;
    void runEvent(Event event, State &, Logger &) override {
      events->push_back(eventName(event));
    }
  };
  std::vector<std::string> events;
  TrainerConfig config;
  config.model = makeClassifier(1);
  config.trainLoader = syntheticLoader(16, 1);
  config.evalLoader = syntheticLoader(16, 2);
  config.maxDuration = parseTime("1ep");
  auto recorder = std::make_unique<Recorder>();
  recorder->events = &events;
  config.callbacks.push_back(std::move(recorder));
  Trainer trainer(std::move(config));
  trainer.fit();
  // Composer's order (composer/core/event.py): the load and checkpoint
  // events fire whether or not anything is loaded or saved.
  std::vector<std::string> expected = {"INIT",
                                       "BEFORE_LOAD",
                                       "AFTER_LOAD",
                                       "FIT_START",
                                       "EPOCH_START",
                                       "BEFORE_DATALOADER",
                                       "AFTER_DATALOADER",
                                       "BATCH_START",
                                       "BEFORE_TRAIN_BATCH",
                                       "BEFORE_FORWARD",
                                       "AFTER_FORWARD",
                                       "BEFORE_LOSS",
                                       "AFTER_LOSS",
                                       "BEFORE_BACKWARD",
                                       "AFTER_BACKWARD",
                                       "AFTER_TRAIN_BATCH",
                                       "BATCH_END",
                                       "BATCH_CHECKPOINT",
                                       "EPOCH_END",
                                       "EVAL_BEFORE_ALL",
                                       "EVAL_START",
                                       "EVAL_BATCH_START",
                                       "EVAL_BEFORE_FORWARD",
                                       "EVAL_AFTER_FORWARD",
                                       "EVAL_BATCH_END",
                                       "EVAL_END",
                                       "EVAL_AFTER_ALL",
                                       "EPOCH_CHECKPOINT",
                                       "FIT_END"};
  EXPECT_EQ(events, expected);
}

TEST(TrainerTest, FractionalEpochIntervalsCountInBatches) {
  // 0.5ep of 8 batches is every 4 batches: 4 evaluations in 2 epochs (a
  // fractional interval was once truncated to whole epochs).
  struct Recorder : Callback {
    std::vector<int64_t> *evaluatedAt;
    void runEvent(Event event, State &state, Logger &) override {
      if (event == Event::EvalStart)
        evaluatedAt->push_back(state.timestamp.batch);
    }
  };
  std::vector<int64_t> evaluatedAt;
  TrainerConfig config;
  config.model = makeClassifier(1);
  config.trainLoader = syntheticLoader(128, 1);
  config.evalLoader = syntheticLoader(16, 2);
  config.maxDuration = parseTime("2ep");
  config.evalInterval = parseTime("0.5ep");
  auto recorder = std::make_unique<Recorder>();
  recorder->evaluatedAt = &evaluatedAt;
  config.callbacks.push_back(std::move(recorder));
  Trainer trainer(std::move(config));
  trainer.fit();
  EXPECT_EQ(evaluatedAt, (std::vector<int64_t>{4, 8, 12, 16}));
}

TEST(TrainerTest, EvaluatesWithEmaAndEndsWithTheAverage) {
  // The average, computed here from the training weights each BATCH_END
  // leaves: smoothing 2^(-1/4) per batch from the weights at FIT_START.
  struct EmaWatch : Callback {
    double smoothing = std::exp2(-1.0 / 4);
    std::map<std::string, torch::Tensor> average, training;
    int evaluations = 0;
    void runEvent(Event event, State &state, Logger &) override {
      torch::NoGradGuard noGrad;
      switch (event) {
      case Event::FitStart:
        for (const auto &[name, w] : namedParameters(state.model))
          average[name] = w.detach().to(torch::kDouble);
        break;
      case Event::BatchStart:
        // Evaluation handed the training weights back.
        for (const auto &[name, w] : namedParameters(state.model))
          if (training.count(name))
            EXPECT_TRUE(torch::equal(w, training.at(name))) << name;
        break;
      case Event::BatchEnd:
        for (const auto &[name, w] : namedParameters(state.model)) {
          training[name] = w.detach().clone();
          average[name] = smoothing * average[name] +
                          (1 - smoothing) * w.detach().to(torch::kDouble);
        }
        break;
      case Event::EvalBatchStart:
        ++evaluations;
        for (const auto &[name, w] : namedParameters(state.model))
          EXPECT_TRUE(torch::allclose(w.to(torch::kDouble), average.at(name),
                                      1e-5, 1e-6))
              << name;
        break;
      default:
        break;
      }
    }
  };
  std::string dir = tempDir("ema-end");
  TrainerConfig config;
  config.model = makeClassifier(4);
  config.trainLoader = syntheticLoader(64, 5);
  config.evalLoader = syntheticLoader(32, 6);
  config.optimizer.lr = 0.5;
  config.maxDuration = parseTime("2ep");
  config.saveFolder = dir;
  config.algorithms.push_back(
      createAlgorithm("ema", {{"half_life", Time{4, TimeUnit::Batch}}}));
  auto watch = std::make_unique<EmaWatch>();
  EmaWatch *seen = watch.get();
  config.callbacks.push_back(std::move(watch));
  Trainer trainer(std::move(config));
  trainer.fit();
  EXPECT_EQ(seen->evaluations, 4); // two evaluations of two batches
  // FIT_END left the average in the model; the checkpoint holds the
  // training weights (and the average beside them).
  auto final = weights(trainer.state().model);
  for (const auto &[name, average] : seen->average) {
    EXPECT_TRUE(
        torch::allclose(final.at(name).to(torch::kDouble), average, 1e-5, 1e-6))
        << name;
    EXPECT_FALSE(torch::equal(final.at(name), seen->training.at(name))) << name;
  }
  ASSERT_TRUE(trainer.lastCheckpoint());
  TrainerConfig reload;
  reload.model = makeClassifier(9);
  reload.trainLoader = syntheticLoader(64, 5);
  reload.loadPath = *trainer.lastCheckpoint();
  reload.maxDuration = parseTime("2ep");
  Trainer resumed(std::move(reload));
  resumed.fit(); // already at its end: loads, then FIT_END
  auto saved = weights(resumed.state().model);
  for (const auto &[name, training] : seen->training)
    EXPECT_TRUE(torch::equal(saved.at(name), training)) << name;
  // Evaluating after the run keeps the average in.
  trainer.evaluate();
  auto after = weights(trainer.state().model);
  for (const auto &[name, average] : seen->average)
    EXPECT_TRUE(torch::equal(after.at(name), final.at(name))) << name;
}

/// A bigram language model over tokens below 16.
torch::jit::Module makeBigram() {
  torch::manual_seed(0);
  torch::jit::Module model("Bigram");
  model.register_parameter(
      "table", (torch::randn({16, 16}) * 0.1).requires_grad_(), false);
  model.define(R"(
    def forward(self, tokens):
        return torch.embedding(self.table, tokens)
  )");
  return model;
}

TEST(TrainerTest, SequenceLengthWarmupCountsTheTokensTrained) {
  // 64 samples of 16 tokens in batches of 16: 4 batches an epoch.
  auto dataset = nextTokenDataset(
      torch::arange(0, 64 * 16 + 1, torch::kLong) % 16, 64, 16);
  struct TokenLog : Callback {
    int64_t tokens = 0;
    std::vector<int64_t> shapes;
    void runEvent(Event event, State &state, Logger &) override {
      if (event == Event::AfterTrainBatch) {
        tokens += state.batch.input.numel();
        shapes.push_back(state.batch.input.size(0) * 100 +
                         state.batch.input.size(1));
      }
    }
  };
  auto run = [&](const std::string &duration, bool truncate) {
    TrainerConfig config;
    config.model = makeBigram();
    config.trainLoader = std::make_shared<DataLoader>(
        dataset, DataLoaderOptions{16, true, true, 0, 0, {}, 0, 1});
    config.optimizer.lr = 0.1;
    config.maxDuration = parseTime(duration);
    config.algorithms.push_back(
        createAlgorithm("seq_length_warmup", {{"duration", 0.5},
                                              {"min_seq_length", int64_t(4)},
                                              {"max_seq_length", int64_t(16)},
                                              {"step_size", int64_t(4)},
                                              {"truncate", truncate}}));
    auto log = std::make_unique<TokenLog>();
    TokenLog *seen = log.get();
    config.callbacks.push_back(std::move(log));
    auto trainer = std::make_unique<Trainer>(std::move(config));
    trainer->fit();
    return std::pair(std::move(trainer), *seen);
  };
  // 8 batches, warmup 4: lengths 4, 8, 12, then 16.
  auto [truncated, truncatedLog] = run("2ep", true);
  const Timestamp &t = truncated->state().timestamp;
  EXPECT_EQ(
      truncatedLog.shapes,
      (std::vector<int64_t>{1604, 1608, 1612, 1616, 1616, 1616, 1616, 1616}));
  EXPECT_EQ(t.token, 16 * (4 + 8 + 12 + 5 * 16));
  EXPECT_EQ(t.token, truncatedLog.tokens);
  EXPECT_EQ(t.sample, 128);
  // Reshaped: more, shorter sequences, all tokens but the remainder of 256
  // at length 12 (4) trained and counted; samples count those loaded.
  auto [reshaped, reshapedLog] = run("2ep", false);
  EXPECT_EQ(reshapedLog.shapes[0], 6404);
  EXPECT_EQ(reshapedLog.shapes[2], 2112);
  EXPECT_EQ(reshaped->state().timestamp.token, 8 * 256 - 4);
  EXPECT_EQ(reshaped->state().timestamp.token, reshapedLog.tokens);
  EXPECT_EQ(reshaped->state().timestamp.sample, 128);
  // A run measured in tokens lasts until that many were trained: 1024
  // tokens are 4 full batches, warmup int(4 * 0.5) = 2 batches of 3 steps
  // (lengths 4, 8, then 16), so 64 + 128 + 3 * 256 = 960 after 5 batches.
  auto [byTokens, byTokensLog] = run("1024tok", true);
  EXPECT_EQ(byTokens->state().timestamp.batch, 6);
  EXPECT_EQ(byTokens->state().timestamp.token, 960 + 256);
  EXPECT_EQ(byTokensLog.tokens, 960 + 256);
}

TEST(TrainerTest, LanguageModelPerplexityIsExpOfThePerTokenLoss) {
  // Bigram logits over a random stream, evaluated in batches of 2 over 5
  // samples (the last batch is short); perplexity checked against the mean
  // per-token cross entropy computed here from log-softmax. A classifier
  // gets no perplexity.
  torch::manual_seed(4);
  torch::jit::Module model = makeBigram(torch::randn({16, 16}));
  auto dataset =
      nextTokenDataset(torch::randint(0, 16, {5 * 7 + 1}, torch::kLong), 5, 7);
  TrainerConfig config;
  config.model = model;
  config.trainLoader = std::make_shared<DataLoader>(
      dataset, DataLoaderOptions{5, false, false, 0, 0, {}, 0, 1});
  config.evalLoader = std::make_shared<DataLoader>(
      dataset, DataLoaderOptions{2, false, false, 0, 0, {}, 0, 1});
  config.maxDuration = parseTime("1ba");
  Trainer trainer(std::move(config));
  EvalResult result = trainer.evaluate();

  torch::Tensor logProbs =
      torch::log_softmax(model.attr("table").toTensor().detach(), 1)
          .index({dataset->inputs()});
  double tokenLoss = -logProbs.gather(2, dataset->targets().unsqueeze(2))
                          .mean()
                          .item<double>();
  const std::map<std::string, double> &metrics = trainer.state().evalMetrics;
  ASSERT_EQ(metrics.count("Perplexity"), 1u);
  EXPECT_NEAR(result.loss, tokenLoss, 1e-5);
  EXPECT_NEAR(metrics.at("CrossEntropy"), tokenLoss, 1e-5);
  EXPECT_NEAR(metrics.at("Perplexity"), std::exp(tokenLoss),
              1e-5 * std::exp(tokenLoss));

  TrainerConfig classifier = baseConfig("");
  classifier.evalLoader = syntheticLoader(16, 2);
  classifier.algorithms.clear();
  Trainer imageTrainer(std::move(classifier));
  imageTrainer.evaluate();
  EXPECT_EQ(imageTrainer.state().evalMetrics.count("Perplexity"), 0u);
  EXPECT_EQ(imageTrainer.state().evalMetrics.count("CrossEntropy"), 1u);
}

} // namespace
