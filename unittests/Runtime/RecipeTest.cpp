//===- RecipeTest.cpp - composer-train recipes and their errors -----------===//

#include "Recipe.h"

#include "composer/Runtime/Algorithms.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace composer;
namespace fs = std::filesystem;

namespace {

/// "cutmix, cutout, ...": what an unknown algorithm's message lists.
std::string registeredNames() {
  std::string names;
  for (const runtime::AlgorithmInfo *info : runtime::getRegisteredAlgorithms())
    names += (names.empty() ? "" : ", ") + info->name;
  return names;
}

class RecipeTest : public testing::Test {
protected:
  void SetUp() override {
    dir =
        fs::path(testing::TempDir()) / ("recipe-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    torch::jit::Module model("Model");
    model.register_parameter("weight", torch::zeros({10, 784}), false);
    model.define(R"(
      def forward(self, x):
          return torch.mm(torch.flatten(x, 1), self.weight.t())
    )");
    modelPath = (dir / "model.pt").string();
    model.save(modelPath);
  }

  /// Loads `text` as a recipe; returns whether it loaded, errors in `errors`.
  bool load(const std::string &text,
            const std::vector<std::string> &overrides = {}) {
    recipePath = (dir / "recipe.yaml").string();
    std::ofstream(recipePath) << text;
    errors.clear();
    llvm::raw_string_ostream stream(errors);
    config = train::loadRecipe(recipePath, overrides, stream);
    return config.has_value();
  }

  std::string valid() const {
    return "model: " + modelPath + R"(
seed: 3
train_data:
  images: /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz
  labels: /usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz
  limit: 512
  batch_size: 64
  normalize: {mean: [0.286], std: [0.353]}
optimizer:
  name: decoupled_sgdw
  lr: 0.1
  momentum: 0.9
scheduler:
  name: cosine_with_warmup
  t_warmup: 0.1dur
max_duration: 2ep
algorithms:
  label_smoothing: {smoothing: 0.2}
  ema:
    half_life: 10ba
loggers:
  progress_bar: false
)";
  }

  /// valid() with `algorithm`, one entry of `algorithms:`, added at line 21.
  std::string withAlgorithm(const std::string &algorithm) const {
    std::string text = valid();
    text.replace(text.find("half_life: 10ba"), 15,
                 "half_life: 10ba\n  " + algorithm);
    return text;
  }

  /// The names of the algorithms valid() builds with `entries`, the lines of
  /// an `algorithms:` mapping, in its place; none when it fails to load.
  std::vector<std::string> loadAlgorithms(const std::string &entries) {
    std::string text = valid();
    text.replace(text.find("algorithms:"), std::string::npos,
                 "algorithms:\n" + entries +
                     "loggers:\n  progress_bar: false\n");
    std::vector<std::string> names;
    EXPECT_TRUE(load(text)) << errors;
    if (config)
      for (const auto &algorithm : config->algorithms)
        names.push_back(algorithm->name());
    return names;
  }

  /// Expects `text` to fail with an error containing `message`; one that
  /// starts ":line:col:" must be at the recipe file's.
  void expectError(const std::string &text, const std::string &message) {
    EXPECT_FALSE(load(text)) << text;
    std::string expected = message[0] == ':' ? recipePath + message : message;
    EXPECT_NE(errors.find(expected), std::string::npos) << "for:\n"
                                                        << text << "\n"
                                                        << errors;
  }

  fs::path dir;
  std::string modelPath, recipePath, errors;
  std::optional<runtime::TrainerConfig> config;
};

TEST_F(RecipeTest, LoadsAValidRecipe) {
  ASSERT_TRUE(load(valid())) << errors;
  EXPECT_EQ(config->seed, 3u);
  EXPECT_EQ(config->optimizer.name, "decoupled_sgdw");
  EXPECT_DOUBLE_EQ(config->optimizer.momentum, 0.9);
  EXPECT_EQ(config->scheduler.warmup, runtime::parseTime("0.1dur"));
  EXPECT_EQ(config->maxDuration, runtime::parseTime("2ep"));
  ASSERT_EQ(config->algorithms.size(), 2u);
  EXPECT_EQ(config->algorithms[0]->name(), "label_smoothing");
  EXPECT_EQ(config->algorithms[1]->name(), "ema");
  EXPECT_EQ(config->trainLoader->datasetSize(), 512);
  EXPECT_EQ(config->trainLoader->batchesPerEpoch(), 8);
  EXPECT_FALSE(config->evalLoader);
}

// The recipe's seed draws the data's order and augmentations: runs with
// different seeds see different batches, runs with the same seed the same.
TEST_F(RecipeTest, TheSeedOrdersTheData) {
  auto firstTargets = [&](const std::vector<std::string> &overrides) {
    EXPECT_TRUE(load(valid(), overrides)) << errors;
    auto &loader = dynamic_cast<runtime::DataLoader &>(*config->trainLoader);
    return loader.makeBatch(/*epoch=*/0, /*index=*/0).target;
  };
  torch::Tensor seed3 = firstTargets({});
  EXPECT_EQ(
      dynamic_cast<runtime::DataLoader &>(*config->trainLoader).options().seed,
      3u);
  EXPECT_TRUE(torch::equal(seed3, firstTargets({"seed=3"})));
  EXPECT_FALSE(torch::equal(seed3, firstTargets({"seed=4"})));
}

TEST_F(RecipeTest, CommandLineOverridesWin) {
  ASSERT_TRUE(load(valid(),
                   {"optimizer.lr=0.05", "max_duration=3ba",
                    "train_data.batch_size=128", "algorithms.mixup.alpha=0.3"}))
      << errors;
  EXPECT_DOUBLE_EQ(config->optimizer.lr, 0.05);
  EXPECT_EQ(config->maxDuration, runtime::parseTime("3ba"));
  EXPECT_EQ(config->trainLoader->batchesPerEpoch(), 4);
  ASSERT_EQ(config->algorithms.size(), 3u);
  EXPECT_EQ(config->algorithms[2]->name(), "mixup");
}

TEST_F(RecipeTest, UnknownKeyIsReportedAtItsLine) {
  std::string text = valid();
  text.replace(text.find("  momentum: 0.9"), 14, "  momentun: 0.9");
  EXPECT_FALSE(load(text));
  EXPECT_NE(errors.find(recipePath + ":12:3: error: unknown key 'momentun' "
                                     "in 'optimizer'; expected one of:"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("momentum"), std::string::npos) << errors;
}

TEST_F(RecipeTest, BadValuesNameTheKeyAndLine) {
  struct Case {
    std::string from, to, message;
  };
  std::vector<Case> cases = {
      {"max_duration: 2ep", "max_duration: 2 epochs",
       ":16:15: error: 'max_duration': invalid time '2 epochs'"},
      {"lr: 0.1", "lr: fast",
       ":11:7: error: 'lr' must be a number, got 'fast'"},
      {"batch_size: 64", "batch_size: -4", "'batch_size' must be positive"},
      {"name: cosine_with_warmup", "name: cosine_forever", "unknown scheduler"},
      {"limit: 512", "limit: 20000",
       ":6:10: error: 'limit' must be in [1, 10000]"},
      {"t10k-labels", "t10k-nolabels", "t10k-nolabels-idx1-ubyte.gz"},
      // Algorithms: options read through each one's registration.
      {"{smoothing: 0.2}", "{smoothin: 0.2}",
       ":18:21: error: unknown key 'smoothin' in "
       "'algorithms.label_smoothing'; expected one of: smoothing\n"},
      {"{smoothing: 0.2}", "{smoothing: high}",
       ":18:32: error: 'smoothing' must be a number, got 'high'"},
      {"{smoothing: 0.2}", "[0.2]",
       ":18:21: error: options of 'label_smoothing' must be a mapping"},
      {"half_life: 10ba", "half_life: 10 batches",
       ":20:16: error: 'half_life': invalid time '10 batches'"},
      {"label_smoothing:", "label_smoothin:",
       ":18:3: error: unknown algorithm 'label_smoothin'; expected one of: " +
           registeredNames() + "\n"},
      // An option its algorithm rejects, at the option's value.
      {"{smoothing: 0.2}", "{smoothing: 2}",
       ":18:32: error: bad 'label_smoothing': label_smoothing: smoothing must "
       "be in [0, 1]"},
  };
  for (const Case &c : cases) {
    std::string text = valid();
    ASSERT_NE(text.find(c.from), std::string::npos) << c.from;
    text.replace(text.find(c.from), c.from.size(), c.to);
    expectError(text, c.message);
  }

  // Algorithm entries added at line 21, and the error they make.
  std::vector<std::pair<std::string, std::string>> algorithmCases = {
      {"gradient_clipping: {clipping_type: norm}",
       ":21:23: error: missing required key 'clipping_threshold' in "
       "'gradient_clipping'"},
      {"sam: {rho: much}", ":21:14: error: 'rho' must be a number, got 'much'"},
      // Options each algorithm rejects, at the option's value.
      {"sam: {rho: -0.1}",
       ":21:14: error: bad 'sam': sam: rho must be >= 0, got -0.100000"},
      {"selective_backprop: {keep: 0}",
       ":21:30: error: bad 'selective_backprop': selective_backprop: keep must "
       "be in (0, 1], got 0.000000"},
      {"selective_backprop:\n    keep: 1.5",
       ":22:11: error: bad 'selective_backprop': selective_backprop: keep must "
       "be in (0, 1], got 1.500000"},
      {"cutout: {num_holes: 0}",
       ":21:23: error: bad 'cutout': cutout: num_holes must be >= 1, got 0"},
      {"gradient_clipping: {clipping_type: norm, clipping_threshold: 0}",
       ":21:64: error: bad 'gradient_clipping': gradient_clipping: "
       "clipping_threshold must be > 0, got 0.000000"},
      // A rule between two options: at the one the message is about, or at
      // the other when only that one is set (a default is at fault).
      {"swa: {swa_start: 0.8dur, swa_end: 0.5dur}",
       ":21:37: error: bad 'swa': swa: swa_end (0.5dur) must come after "
       "swa_start (0.8dur)"},
      {"swa: {swa_start: 0.98dur}",
       ":21:20: error: bad 'swa': swa: swa_end (0.97dur) must come after "
       "swa_start (0.98dur)"},
      {"swa: {swa_end: 0.5ep}",
       ":21:18: error: bad 'swa': swa: swa_start and swa_end must have the "
       "same unit, got 0.7dur and 0.5ep"},
      {"selective_backprop: {start: 0.95}",
       ":21:31: error: bad 'selective_backprop': selective_backprop: end must "
       "be in [start, 1], got 0.900000"},
  };
  for (const auto &[algorithm, message] : algorithmCases)
    expectError(withAlgorithm(algorithm), message);
}

TEST_F(RecipeTest, ReadsTheLossByNameOrWithOptions) {
  // valid() with `loss` on line 17.
  auto withLoss = [&](const std::string &loss) {
    std::string text = valid();
    text.replace(text.find("max_duration: 2ep"), 17,
                 "max_duration: 2ep\nloss: " + loss);
    return text;
  };
  ASSERT_TRUE(load(valid())) << errors;
  EXPECT_EQ(config->loss->name(), "cross_entropy");
  ASSERT_TRUE(load(withLoss("smooth_l1"))) << errors;
  EXPECT_EQ(config->loss->name(), "smooth_l1");
  ASSERT_TRUE(load(withLoss("{name: cross_entropy, ignore_index: 0}")))
      << errors;
  // Class 0 counts nowhere: the loss is the second sample's alone.
  torch::Tensor logits =
      torch::tensor({{1.0f, 2.0f, 3.0f}, {0.5f, 0.0f, 1.0f}});
  torch::Tensor classes = torch::tensor({0, 1});
  EXPECT_NEAR(config->loss->compute(logits, classes).item<double>(),
              -logits.log_softmax(1)[1][1].item<double>(), 1e-6);
  ASSERT_TRUE(load(valid(), {"loss={name: smooth_l1, beta: 0.5}"})) << errors;
  EXPECT_EQ(config->loss->name(), "smooth_l1");

  expectError(withLoss("hinge"),
              ":17:7: error: unknown loss 'hinge'; expected one of: "
              "binary_cross_entropy_with_logits, cross_entropy, l1, mse, "
              "smooth_l1");
  expectError(withLoss("{name: cross_entropy, label_smoothing: 2}"),
              ":17:46: error: bad 'cross_entropy': cross_entropy: "
              "label_smoothing must be in [0, 1]");
  expectError(withLoss("{name: mse, beta: 1}"),
              ":17:19: error: unknown key 'beta' in 'loss'");
  expectError(withLoss("{ignore_index: 1}"),
              ":17:8: error: missing required key 'name' in 'loss'");
  expectError(withLoss("[mse]"), ":17:8: error: loss must be a loss's name");
}

TEST_F(RecipeTest, ReadsTheMicrobatchSize) {
  ASSERT_TRUE(load(valid())) << errors;
  EXPECT_EQ(config->microbatchSize, 0);
  EXPECT_FALSE(config->autoMicrobatch);
  ASSERT_TRUE(load(valid(), {"device_train_microbatch_size=8",
                             "accumulate_train_batch_on_tokens=true"}))
      << errors;
  EXPECT_EQ(config->microbatchSize, 8);
  EXPECT_TRUE(config->accumulateOnTokens);
  ASSERT_TRUE(load(valid(), {"device_train_microbatch_size=auto"})) << errors;
  EXPECT_TRUE(config->autoMicrobatch);
  for (const char *bad : {"0", "-4", "half"}) {
    std::string text = valid();
    text.replace(text.find("max_duration: 2ep"), 17,
                 std::string("max_duration: 2ep\n"
                             "device_train_microbatch_size: ") +
                     bad);
    expectError(text, ":17:31: error: 'device_train_microbatch_size' must be "
                      "a positive number of samples, or 'auto'");
  }
}

TEST_F(RecipeTest, ReadsEvaluatorsAndTheirMetrics) {
  const std::string data =
      "{type: synthetic, num_samples: 64, shape: [1, 28, 28], batch_size: 16";
  std::string text = valid() + "eval_data: " + data + "}\n" +
                     "evaluators:\n  two: " + data +
                     ", metrics: [accuracy, {name: accuracy, k: 2}, "
                     "cross_entropy], interval: 5ba, subset_num_batches: 2}\n";
  ASSERT_TRUE(load(text)) << errors;
  ASSERT_EQ(config->evaluators.size(), 2u);
  const runtime::Evaluator &eval = config->evaluators[0];
  const runtime::Evaluator &two = config->evaluators[1];
  EXPECT_EQ(eval.label, "eval");
  EXPECT_TRUE(eval.metrics.empty()); // the defaults, chosen by the trainer
  EXPECT_FALSE(eval.interval);
  EXPECT_EQ(two.label, "two");
  std::vector<std::string> names;
  for (const auto &metric : two.metrics)
    names.push_back(metric->name());
  EXPECT_EQ(names, (std::vector<std::string>{"Accuracy", "Top2Accuracy",
                                             "CrossEntropy"}));
  ASSERT_TRUE(two.interval);
  EXPECT_EQ(two.interval->value, 5);
  EXPECT_EQ(two.subsetNumBatches, 2);

  // Errors name the line (eval_data is line 23).
  expectError(valid() + "eval_data: " + data + ", metrics: [hamming]}\n",
              ":23:93: error: unknown metric 'hamming'; expected one of: "
              "accuracy, binary_accuracy, binary_f1, cross_entropy, dice, "
              "mae, miou, mse, multilabel_accuracy, multilabel_f1, "
              "perplexity");
  expectError(valid() + "eval_data: " + data + ", metrics: [miou]}\n",
              ":23:93: error: missing required key 'num_classes' in 'miou'");
  expectError(valid() + "eval_data: " + data +
                  "}\nevaluators:\n  eval: " + data + "}\n",
              ":25:3: error: evaluator 'eval' is defined twice");
}

TEST_F(RecipeTest, ReadsModelInputsOutputAndTheModelsLoss) {
  ASSERT_TRUE(load(
      valid(), {"model_inputs=[input, target]", "output=logits", "loss=model"}))
      << errors;
  EXPECT_EQ(config->modelCall.positional,
            (std::vector<std::string>{"input", "target"}));
  EXPECT_EQ(config->modelCall.outputKey, "logits");
  EXPECT_TRUE(config->modelCall.lossFromModel);
  ASSERT_TRUE(load(valid(), {"model_inputs={x: input}", "output=1"})) << errors;
  ASSERT_EQ(config->modelCall.keywords.size(), 1u);
  EXPECT_EQ(config->modelCall.keywords[0].first, "x");
  EXPECT_EQ(config->modelCall.outputIndex, 1);
  EXPECT_FALSE(config->modelCall.lossFromModel);
  expectError(valid() + "load_ignore_keys: head.bias\n",
              ":23:19: error: 'load_ignore_keys' must be a list of strings");
  expectError(valid() + "model_inputs: [input, attention_mask]\n",
              ":23:16: error: model_inputs: the training data has no column "
              "'attention_mask'; its columns: input, target");
}

TEST_F(RecipeTest, ReadsCallbacksByName) {
  ASSERT_TRUE(load(valid() + "callbacks:\n"
                             "  early_stopper: {monitor: Accuracy, patience: "
                             "2ep, comp: higher}\n"
                             "  memory_monitor:\n"
                             "  speed_monitor: {window_size: 5, "
                             "flops_per_sample: 1.5e9}\n"))
      << errors;
  EXPECT_EQ(config->callbacks.size(), 3u);
  expectError(valid() + "callbacks:\n  lr_monitor: {}\n",
              ":24:3: error: unknown callback 'lr_monitor'; expected one of: "
              "early_stopper, memory_monitor, optimizer_monitor, profiler, "
              "speed_monitor, threshold_stopper");
  expectError(valid() + "callbacks:\n  threshold_stopper: {monitor: MIoU}\n",
              ":24:23: error: missing required key 'threshold' in "
              "'threshold_stopper'");
  expectError(valid() + "callbacks:\n  early_stopper: {monitor: Accuracy, "
                        "comp: up}\n",
              ":24:44: error: bad 'early_stopper': early_stopper: comp must "
              "be 'higher' or 'lower'");
}

TEST_F(RecipeTest, ReadsEveryAlgorithmsOptions) {
  std::vector<std::string> names =
      loadAlgorithms(R"(  label_smoothing: {smoothing: 0.2}
  mixup: {alpha: 0.3}
  cutmix: {alpha: 1}
  cutout: {num_holes: 2, length: 4}
  progressive_resizing:
    initial_scale: 0.6
    delay_fraction: 0.4
    finetune_fraction: 0.1
    size_increment: 8
    mode: crop
  ema: {half_life: 5ba, update_interval: 1ba}
  gradient_clipping: {clipping_type: adaptive, clipping_threshold: 0.05}
  layer_freezing:
  sam: {rho: 0.1, epsilon: 1e-10, interval: 2}
  swa: {swa_start: 0.5dur, swa_end: 0.9dur, update_interval: 2ba, swa_lr: 0.01}
  selective_backprop: {start: 0.2, end: 0.8, keep: 0.3, interrupt: 3}
)");
  EXPECT_EQ(names, (std::vector<std::string>{
                       "label_smoothing", "mixup", "cutmix", "cutout",
                       "progressive_resizing", "ema", "gradient_clipping",
                       "layer_freezing", "sam", "swa", "selective_backprop"}));
}

TEST_F(RecipeTest, ReadsTheAugmentationAndSequenceAlgorithms) {
  std::vector<std::string> names =
      loadAlgorithms(R"(  colout: {p_row: 0.1, p_col: 0.2, batch: false}
  randaugment: {severity: 5, depth: 1, augmentation_set: safe}
  augmix:
    severity: 2
    depth: 2
    width: 4
    alpha: 0.5
    augmentation_set: original
  seq_length_warmup:
    duration: 0.5
    min_seq_length: 16
    max_seq_length: 512
    step_size: 16
    truncate: false
)");
  EXPECT_EQ(names, (std::vector<std::string>{"colout", "randaugment", "augmix",
                                             "seq_length_warmup"}));
  // Options each algorithm rejects, and values of the wrong type, at the
  // option's value.
  std::vector<std::pair<std::string, std::string>> cases = {
      {"colout: {p_row: 1.5}",
       ":21:19: error: bad 'colout': colout: p_row must be in [0, 1), got "
       "1.500000"},
      {"colout: {batch: sometimes}",
       ":21:19: error: 'batch' must be true or false, got 'sometimes'"},
      {"randaugment: {severity: 12}",
       ":21:27: error: bad 'randaugment': randaugment: severity must be in "
       "[0, 10], got 12.000000"},
      {"randaugment: {depth: 1.5}",
       ":21:24: error: 'depth' must be an integer, got '1.5'"},
      {"augmix: {augmentation_set: most}",
       ":21:30: error: bad 'augmix': augmix: augmentation_set must be 'all', "
       "'safe' or 'original', got 'most'"},
      {"augmix: {width: 0}",
       ":21:19: error: bad 'augmix': augmix: width must be >= 1, got 0"},
      {"seq_length_warmup: {min_seq_length: 64, max_seq_length: 32}",
       ":21:59: error: bad 'seq_length_warmup': seq_length_warmup: "
       "max_seq_length (32) must be >= min_seq_length (64)"},
      {"seq_length_warmup: {duration: 2}",
       ":21:33: error: bad 'seq_length_warmup': seq_length_warmup: duration "
       "must be in [0, 1], got 2.000000"},
  };
  for (const auto &[algorithm, message] : cases)
    expectError(withAlgorithm(algorithm), message);
}

TEST_F(RecipeTest, PrintsTheRecipeWithOverrides) {
  recipePath = (dir / "recipe.yaml").string();
  std::ofstream(recipePath) << valid();
  llvm::raw_string_ostream stream(errors);
  std::optional<std::string> text = train::resolveRecipe(
      recipePath, {"optimizer.lr=0.05", "algorithms.mixup.alpha=0.3"}, stream);
  ASSERT_TRUE(text) << errors;
  EXPECT_NE(text->find("optimizer:\n  name: decoupled_sgdw\n  lr: 0.05\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("  ema:\n    half_life: 10ba\n  mixup:\n    alpha: "
                       "0.3\n"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("  normalize:\n    mean: [0.286]\n"), std::string::npos)
      << *text;
}

TEST_F(RecipeTest, BrokenYamlAndMissingPieces) {
  EXPECT_FALSE(load("model: [unclosed\n"));
  EXPECT_NE(errors.find(recipePath + ":"), std::string::npos) << errors;

  EXPECT_FALSE(load("seed: 1\n"));
  EXPECT_NE(errors.find("missing required key 'model'"), std::string::npos)
      << errors;

  std::string text = valid();
  text.replace(text.find(modelPath), modelPath.size(), "/nonexistent.pt");
  EXPECT_FALSE(load(text));
  EXPECT_NE(errors.find(":1:8: error: cannot load TorchScript model "
                        "'/nonexistent.pt'"),
            std::string::npos)
      << errors;

  EXPECT_FALSE(load(valid(), {"optimizer.lr"}));
  EXPECT_NE(errors.find("must be key=value"), std::string::npos) << errors;
  EXPECT_FALSE(load(valid(), {"seed.x=1"}));
  EXPECT_NE(errors.find("'seed' is not a mapping"), std::string::npos)
      << errors;

  errors.clear();
  llvm::raw_string_ostream stream(errors);
  EXPECT_FALSE(train::loadRecipe((dir / "absent.yaml").string(), {}, stream));
  EXPECT_NE(errors.find("cannot read recipe"), std::string::npos) << errors;
}

} // namespace
