//===- AlgorithmsTest.cpp - The runtime algorithms on real tensors --------===//

#include "composer/Runtime/Algorithms.h"
#include "StepTestUtils.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

using namespace composer::runtime;
using composer::runtime::testutils::fire;
using composer::runtime::testutils::StepRig;

namespace {

/// A run of `epochs` epochs of `batchesPerEpoch` batches, at `batch`.
State makeState(int64_t batchesPerEpoch = 10, double epochs = 10,
                int64_t batch = 0) {
  State state;
  state.time.batchesPerEpoch = batchesPerEpoch;
  state.time.samplesPerEpoch = batchesPerEpoch * 8;
  state.time.maxDuration = {epochs, TimeUnit::Epoch};
  state.timestamp.batch = batch;
  state.timestamp.epoch = batch / batchesPerEpoch;
  state.seed = 17;
  return state;
}

/// Image i of the batch is the constant i + 1; its label is i, so mixing is
/// readable from both the pixels and the targets.
void setIndexBatch(State &state, int64_t batch, int64_t size = 8) {
  state.batch.input = (torch::arange(batch, torch::kFloat) + 1)
                          .view({batch, 1, 1, 1})
                          .expand({batch, 3, size, size})
                          .contiguous();
  state.batch.target = torch::arange(batch, torch::kLong);
  state.outputs = torch::zeros({batch, batch});
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

/// What a recipe may set, and Composer's defaults (METHODS.md).
struct ExpectedOption {
  std::string key;
  std::optional<OptionValue> defaultValue; // none: required
};

const std::map<std::string, std::vector<ExpectedOption>> &expectedAlgorithms() {
  static const std::map<std::string, std::vector<ExpectedOption>> expected = {
      {"alibi", {{"train_sequence_length_scaling", 0.25}}},
      {"augmix",
       {{"severity", int64_t(3)},
        {"depth", int64_t(-1)},
        {"width", int64_t(3)},
        {"alpha", 1.0},
        {"augmentation_set", std::string("all")}}},
      {"colout", {{"p_row", 0.15}, {"p_col", 0.15}, {"batch", true}}},
      {"cutmix", {{"alpha", 1.0}, {"interpolate_loss", false}}},
      {"cutout", {{"num_holes", int64_t(1)}, {"length", 0.5}}},
      {"ema",
       {{"half_life", Time{1000, TimeUnit::Batch}},
        {"smoothing", -1.0},
        {"ema_start", Time{0, TimeUnit::Duration}},
        {"update_interval", Time{1, TimeUnit::Batch}}}},
      {"gradient_clipping",
       {{"clipping_type", std::nullopt}, {"clipping_threshold", std::nullopt}}},
      {"gyro_dropout", {{"period", Time{0, TimeUnit::Batch}}}},
      {"label_smoothing", {{"smoothing", 0.1}}},
      {"layer_freezing", {{"freeze_start", 0.5}, {"freeze_level", 1.0}}},
      {"mixup", {{"alpha", 0.2}, {"interpolate_loss", false}}},
      {"progressive_resizing",
       {{"initial_scale", 0.5},
        {"delay_fraction", 0.5},
        {"finetune_fraction", 0.2},
        {"size_increment", int64_t(4)},
        {"mode", std::string("resize")}}},
      {"randaugment",
       {{"severity", int64_t(9)},
        {"depth", int64_t(2)},
        {"augmentation_set", std::string("all")}}},
      {"sam", {{"rho", 0.05}, {"epsilon", 1e-12}, {"interval", int64_t(1)}}},
      {"selective_backprop",
       {{"start", 0.5},
        {"end", 0.9},
        {"keep", 0.5},
        {"scale_factor", 1.0},
        {"interrupt", int64_t(2)}}},
      {"seq_length_warmup",
       {{"duration", 0.3},
        {"min_seq_length", int64_t(8)},
        {"max_seq_length", int64_t(1024)},
        {"step_size", int64_t(8)},
        {"truncate", true},
        {"preserve_end_of_sequence", false}}},
      {"stochastic_depth", {{"drop_warmup", Time{0, TimeUnit::Duration}}}},
      {"swa",
       {{"swa_start", Time{0.7, TimeUnit::Duration}},
        {"swa_end", Time{0.97, TimeUnit::Duration}},
        {"update_interval", Time{1, TimeUnit::Epoch}},
        {"swa_lr", -1.0},
        {"anneal_strategy", std::string("linear")},
        {"anneal_steps", int64_t(10)}}},
  };
  return expected;
}

TEST(AlgorithmRegistryTest, EveryAlgorithmRegistersItself) {
  std::vector<std::string> names;
  for (const AlgorithmInfo *info : getRegisteredAlgorithms())
    names.push_back(info->name);
  std::vector<std::string> expected;
  for (const auto &entry : expectedAlgorithms())
    expected.push_back(entry.first);
  EXPECT_EQ(names, expected);
}

TEST(AlgorithmRegistryTest, OptionsAndDefaultsAreComposers) {
  for (const auto &[name, options] : expectedAlgorithms()) {
    const AlgorithmInfo *info = findAlgorithm(name);
    ASSERT_TRUE(info) << name;
    ASSERT_EQ(info->options.size(), options.size()) << name;
    for (size_t i = 0; i < options.size(); ++i) {
      const OptionInfo &option = info->options[i];
      EXPECT_EQ(option.key, options[i].key) << name;
      EXPECT_FALSE(option.doc.empty()) << name << "." << option.key;
      EXPECT_EQ(option.required, !options[i].defaultValue)
          << name << "." << option.key;
      if (options[i].defaultValue) {
        EXPECT_TRUE(option.defaultValue == *options[i].defaultValue)
            << name << "." << option.key;
      }
    }
  }
}

TEST(AlgorithmRegistryTest, CreatesEachByItsName) {
  for (const AlgorithmInfo *info : getRegisteredAlgorithms()) {
    AlgorithmOptions required;
    if (info->name == "gradient_clipping")
      required = {{"clipping_type", "norm"}, {"clipping_threshold", 1.0}};
    std::unique_ptr<Algorithm> algorithm =
        createAlgorithm(info->name, required);
    ASSERT_TRUE(algorithm);
    EXPECT_EQ(algorithm->name(), info->name);
  }
}

TEST(AlgorithmRegistryTest, ChecksNamesKeysAndTypes) {
  auto errorOf = [](std::string_view name,
                    const AlgorithmOptions &options) -> std::string {
    try {
      createAlgorithm(name, options);
    } catch (const std::invalid_argument &error) {
      return error.what();
    }
    return "no error";
  };
  std::string names;
  for (const auto &entry : expectedAlgorithms())
    names += (names.empty() ? "" : ", ") + entry.first;
  EXPECT_EQ(errorOf("mixupp", {}),
            "unknown algorithm 'mixupp'; expected one of: " + names);
  EXPECT_EQ(errorOf("cutout", {{"holes", 2}}),
            "cutout: unknown option 'holes'; expected one of: num_holes, "
            "length");
  EXPECT_EQ(errorOf("cutout", {{"num_holes", 2.5}}),
            "cutout: option 'num_holes' must be an integer");
  EXPECT_EQ(errorOf("ema", {{"half_life", "10ba"}}),
            "ema: option 'half_life' must be a time");
  EXPECT_EQ(errorOf("gradient_clipping", {{"clipping_type", "norm"}}),
            "gradient_clipping: missing required option 'clipping_threshold'");
  // An integer is a number; the algorithm's own checks still run.
  EXPECT_EQ(errorOf("mixup", {{"alpha", 1}}), "no error");
  EXPECT_EQ(errorOf("mixup", {{"alpha", -1}}),
            "mixup: alpha must be >= 0, got -1.000000");
  EXPECT_EQ(errorOf("randaugment", {{"augmentation_set", "most"}}),
            "randaugment: augmentation_set must be 'all', 'safe' or "
            "'original', got 'most'");
}

TEST(AlgorithmRegistryTest, OptionErrorsNameTheOptionsAtFault) {
  using Keys = std::vector<std::string>;
  auto keysOf = [](std::string_view name, const AlgorithmOptions &options) {
    try {
      createAlgorithm(name, options);
    } catch (const InvalidOption &error) {
      return error.options();
    }
    return Keys{"no error"};
  };
  EXPECT_EQ(keysOf("cutout", {{"holes", 2}}), Keys{"holes"});
  EXPECT_EQ(keysOf("cutout", {{"num_holes", 2.5}}), Keys{"num_holes"});
  EXPECT_EQ(keysOf("gradient_clipping", {{"clipping_type", "norm"}}),
            Keys{"clipping_threshold"});
  EXPECT_EQ(keysOf("sam", {{"rho", -0.1}}), Keys{"rho"});
  EXPECT_EQ(keysOf("mixup", {{"alpha", -1}}), Keys{"alpha"});
  // A rule between options: the one the message is about first.
  EXPECT_EQ(keysOf("swa", {{"swa_start", parseTime("0.8dur")},
                           {"swa_end", parseTime("0.5dur")}}),
            (Keys{"swa_end", "swa_start"}));
  EXPECT_EQ(keysOf("selective_backprop", {{"start", 0.95}}),
            (Keys{"end", "start"}));
  // Through the augmentations' shared checks.
  EXPECT_EQ(keysOf("randaugment", {{"augmentation_set", "most"}}),
            Keys{"augmentation_set"});
  EXPECT_EQ(keysOf("augmix", {{"severity", 11}}), Keys{"severity"});
}

//===----------------------------------------------------------------------===//
// Label smoothing
//===----------------------------------------------------------------------===//

TEST(LabelSmoothingTest, SmoothsIndexTargetsAndRestoresThem) {
  auto algorithm = createAlgorithm("label_smoothing", {{"smoothing", 0.1}});
  State state = makeState();
  Logger logger;
  state.batch.input = torch::zeros({2, 3});
  state.batch.target = torch::tensor({0, 2}, torch::kLong);
  state.outputs = torch::zeros({2, 4});
  ASSERT_TRUE(fire(*algorithm, Event::BeforeLoss, state, logger));
  torch::Tensor expected = torch::tensor(
      {{0.925f, 0.025f, 0.025f, 0.025f}, {0.025f, 0.025f, 0.925f, 0.025f}});
  EXPECT_TRUE(torch::allclose(state.batch.target, expected));
  ASSERT_TRUE(fire(*algorithm, Event::AfterLoss, state, logger));
  EXPECT_EQ(state.batch.target.scalar_type(), torch::kLong);
  EXPECT_TRUE(torch::equal(state.batch.target, torch::tensor({0, 2})));
  EXPECT_FALSE(algorithm->match(Event::AfterLoss, state));
}

TEST(LabelSmoothingTest, SmoothsProbabilityTargets) {
  auto algorithm = createAlgorithm("label_smoothing", {{"smoothing", 0.2}});
  State state = makeState();
  Logger logger;
  state.batch.target = torch::tensor({{0.5f, 0.5f}});
  state.outputs = torch::zeros({1, 2});
  ASSERT_TRUE(fire(*algorithm, Event::BeforeLoss, state, logger));
  EXPECT_TRUE(
      torch::allclose(state.batch.target, torch::tensor({{0.5f, 0.5f}})));
  EXPECT_THROW(createAlgorithm("label_smoothing", {{"smoothing", 1.5}}),
               std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// MixUp
//===----------------------------------------------------------------------===//

struct Mixed {
  torch::Tensor input, target;
};

Mixed runMixing(Algorithm &algorithm, int64_t batchIndex, int64_t batch = 8,
                int64_t size = 8) {
  State state = makeState(10, 10, batchIndex);
  Logger logger;
  setIndexBatch(state, batch, size);
  EXPECT_TRUE(fire(algorithm, Event::BeforeForward, state, logger));
  EXPECT_TRUE(fire(algorithm, Event::BeforeLoss, state, logger));
  EXPECT_FALSE(algorithm.match(Event::BeforeLoss, state));
  return {state.batch.input, state.batch.target};
}

/// The coefficient on each sample's own label, and its partner.
std::pair<double, int64_t> ownAndPartner(const torch::Tensor &row, int64_t i) {
  double own = row[i].item<double>();
  torch::Tensor others = row.clone();
  others[i] = 0;
  int64_t partner = others.argmax().item<int64_t>();
  if (others[partner].item<double>() == 0)
    partner = i; // paired with itself
  return {own, partner};
}

TEST(MixUpTest, MixesInputsAndTargetsWithOneLambda) {
  auto algorithm = createAlgorithm("mixup", {{"alpha", 1.0}});
  const int64_t batch = 8;
  Mixed mixed = runMixing(*algorithm, 3, batch);
  ASSERT_EQ(mixed.target.sizes(), (std::vector<int64_t>{batch, batch}));
  EXPECT_TRUE(torch::allclose(mixed.target.sum(1), torch::ones({batch})));
  double lambda = -1;
  for (int64_t i = 0; i < batch; ++i) {
    auto [own, partner] = ownAndPartner(mixed.target[i], i);
    if (partner == i) {
      EXPECT_NEAR(own, 1.0, 1e-6);
      continue;
    }
    if (lambda < 0)
      lambda = own;
    EXPECT_NEAR(own, lambda, 1e-6) << "one lambda per batch";
    double expected =
        lambda * double(i + 1) + (1 - lambda) * double(partner + 1);
    EXPECT_TRUE(torch::allclose(mixed.input[i],
                                torch::full({3, 8, 8}, expected), 1e-5, 1e-5))
        << "row " << i;
  }
  ASSERT_GE(lambda, 0.5);
  EXPECT_LE(lambda, 1.0);
}

TEST(MixUpTest, DrawsAreReproducibleAndPerBatch) {
  auto first = createAlgorithm("mixup", {{"alpha", 0.2}});
  auto second = createAlgorithm("mixup", {{"alpha", 0.2}});
  Mixed a = runMixing(*first, 5);
  Mixed b = runMixing(*second, 5);
  EXPECT_TRUE(torch::equal(a.input, b.input));
  EXPECT_TRUE(torch::equal(a.target, b.target));
  Mixed c = runMixing(*first, 6);
  EXPECT_FALSE(torch::equal(a.target, c.target));
}

TEST(MixUpTest, LambdaFollowsBetaDistribution) {
  // max(z, 1-z) for z ~ Beta(1, 1) is uniform on [0.5, 1] (mean 0.75); for
  // Beta(2, 2) its mean is 0.6875. Two samples: lambda is readable from the
  // targets whenever the permutation swaps them.
  for (auto [alpha, mean] : {std::pair{1.0, 0.75}, std::pair{2.0, 0.6875}}) {
    auto algorithm = createAlgorithm("mixup", {{"alpha", alpha}});
    double sum = 0;
    int swapped = 0;
    for (int64_t k = 0; k < 800; ++k) {
      State state = makeState(10, 100, k);
      Logger logger;
      setIndexBatch(state, 2, 1);
      fire(*algorithm, Event::BeforeForward, state, logger);
      fire(*algorithm, Event::BeforeLoss, state, logger);
      double own = state.batch.target[0][0].item<double>();
      if (own == 1.0)
        continue;
      sum += own;
      ++swapped;
    }
    ASSERT_GT(swapped, 200);
    EXPECT_NEAR(sum / swapped, mean, 0.02) << "alpha " << alpha;
  }
}

TEST(MixUpTest, RejectsNegativeAlpha) {
  EXPECT_THROW(createAlgorithm("mixup", {{"alpha", -1}}),
               std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// CutMix
//===----------------------------------------------------------------------===//

TEST(CutMixTest, TargetsMixedByTheBoxArea) {
  auto algorithm = createAlgorithm("cutmix", {{"alpha", 1.0}});
  const int64_t batch = 6, size = 16;
  int boxesSeen = 0;
  for (int64_t k = 0; k < 20; ++k) {
    Mixed mixed = runMixing(*algorithm, k, batch, size);
    EXPECT_EQ(mixed.input.sizes(),
              (std::vector<int64_t>{batch, 3, size, size}));
    EXPECT_TRUE(torch::allclose(mixed.target.sum(1), torch::ones({batch})));
    int64_t area = -1;
    for (int64_t i = 0; i < batch; ++i) {
      auto [own, partner] = ownAndPartner(mixed.target[i], i);
      torch::Tensor image = mixed.input[i];
      int64_t pasted = (image != float(i + 1)).sum().item<int64_t>() / 3;
      if (partner == i) {
        EXPECT_EQ(pasted, 0);
        continue;
      }
      // Everything not original comes from the partner.
      EXPECT_EQ((image == float(partner + 1)).sum().item<int64_t>() / 3,
                pasted);
      if (area < 0)
        area = pasted;
      EXPECT_EQ(pasted, area) << "one box per batch";
      EXPECT_NEAR(own, 1.0 - double(pasted) / double(size * size), 1e-6);
    }
    boxesSeen += area > 0;
  }
  EXPECT_GT(boxesSeen, 5);
}

/// Composer's interpolate_loss: with `interpolating` the targets stay and the
/// loss becomes lambda CE(y) + (1 - lambda) CE(y permuted) at
/// BEFORE_BACKWARD, lambda and the pairs read from the targets `mixing` (the
/// same algorithm without the option) gives the same batch.
void expectInterpolatedLoss(Algorithm &interpolating, Algorithm &mixing) {
  const int64_t batch = 6, size = 8;
  int interpolated = 0;
  for (int64_t k = 0; k < 10; ++k) {
    Mixed twin = runMixing(mixing, k, batch, size);
    State state = makeState(10, 10, k);
    Logger logger;
    setIndexBatch(state, batch, size);
    torch::Tensor target = state.batch.target;
    state.outputs = torch::arange(batch * batch, torch::kFloat)
                        .view({batch, batch})
                        .remainder(7)
                        .div(3);
    ASSERT_EQ(state.lossFunction->name(), "cross_entropy");
    ASSERT_TRUE(fire(interpolating, Event::BeforeForward, state, logger));
    EXPECT_TRUE(torch::equal(state.batch.input, twin.input));
    EXPECT_FALSE(fire(interpolating, Event::BeforeLoss, state, logger));
    EXPECT_TRUE(torch::equal(state.batch.target, target));
    state.loss = torch::cross_entropy_loss(state.outputs, target);

    torch::Tensor logProbabilities = state.outputs.log_softmax(1);
    double lambda = 1, own = 0, partners = 0;
    for (int64_t i = 0; i < batch; ++i) {
      auto [ownWeight, partner] = ownAndPartner(twin.target[i], i);
      if (partner != i)
        lambda = ownWeight;
      own -= logProbabilities[i][i].item<double>() / batch;
      partners -= logProbabilities[i][partner].item<double>() / batch;
    }
    interpolated += lambda < 1;
    ASSERT_TRUE(fire(interpolating, Event::BeforeBackward, state, logger));
    EXPECT_NEAR(state.loss.item<double>(),
                lambda * own + (1 - lambda) * partners, 1e-5)
        << "batch " << k;
    EXPECT_FALSE(interpolating.match(Event::BeforeBackward, state));
  }
  EXPECT_GT(interpolated, 5);
}

TEST(SampleMixingTest, InterpolateLossMixesTheLossesNotTheTargets) {
  for (const char *name : {"mixup", "cutmix"}) {
    SCOPED_TRACE(name);
    auto interpolating =
        createAlgorithm(name, {{"alpha", 1.0}, {"interpolate_loss", true}});
    auto mixing = createAlgorithm(name, {{"alpha", 1.0}});
    EXPECT_TRUE(interpolating->interpolatesLoss());
    EXPECT_FALSE(mixing->interpolatesLoss());
    expectInterpolatedLoss(*interpolating, *mixing);
  }
}

//===----------------------------------------------------------------------===//
// CutOut
//===----------------------------------------------------------------------===//

TEST(CutOutTest, ZeroesClippedSquares) {
  auto algorithm =
      createAlgorithm("cutout", {{"num_holes", 1}, {"length", 0.25}});
  Logger logger;
  for (int64_t k = 0; k < 10; ++k) {
    State state = makeState(10, 10, k);
    state.batch.input = torch::ones({4, 3, 32, 32});
    ASSERT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
    ASSERT_EQ(state.batch.input.sizes(), (std::vector<int64_t>{4, 3, 32, 32}));
    for (int64_t i = 0; i < 4; ++i) {
      torch::Tensor zero = state.batch.input[i] == 0;
      // The same hole in every channel.
      EXPECT_TRUE(torch::equal(zero[0], zero[1]));
      EXPECT_TRUE(torch::equal(zero[0], zero[2]));
      torch::Tensor rows = zero[0].any(1).nonzero(),
                    cols = zero[0].any(0).nonzero();
      int64_t count = zero[0].sum().item<int64_t>();
      ASSERT_GT(count, 0);
      EXPECT_LE(count, 8 * 8);
      // A single hole is a rectangle (a square clipped at the borders).
      EXPECT_EQ(count, rows.size(0) * cols.size(0));
      EXPECT_LE(rows.size(0), 8);
      EXPECT_LE(cols.size(0), 8);
    }
  }
}

TEST(CutOutTest, HolesPerImageInPixels) {
  auto algorithm = createAlgorithm("cutout", {{"num_holes", 3}, {"length", 6}});
  Logger logger;
  State state = makeState(10, 10, 1);
  state.batch.input = torch::ones({8, 1, 20, 24});
  ASSERT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
  torch::Tensor counts = (state.batch.input == 0).flatten(1).sum(1);
  EXPECT_TRUE((counts > 0).all().item<bool>());
  EXPECT_TRUE((counts <= 3 * 36).all().item<bool>());
  // Holes are drawn per image, not once per batch.
  EXPECT_FALSE(torch::equal(state.batch.input[0], state.batch.input[1]));
  EXPECT_THROW(createAlgorithm("cutout", {{"num_holes", 0}, {"length", 0.5}}),
               std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// Progressive resizing
//===----------------------------------------------------------------------===//

std::vector<int64_t> resizedShape(Algorithm &algorithm, int64_t batch,
                                  int64_t side = 32) {
  // 100 batches in all: batch b is fraction b / 100.
  State state = makeState(10, 10, batch);
  Logger logger;
  state.batch.input = torch::rand({2, 3, side, side});
  state.batch.target = torch::tensor({0, 1});
  fire(algorithm, Event::AfterDataloader, state, logger);
  EXPECT_TRUE(torch::equal(state.batch.target, torch::tensor({0, 1})));
  return state.batch.input.sizes().vec();
}

TEST(ProgressiveResizingTest, SizesFollowTheSchedule) {
  auto algorithm = createAlgorithm("progressive_resizing");
  EXPECT_EQ(resizedShape(*algorithm, 0), (std::vector<int64_t>{2, 3, 16, 16}));
  EXPECT_EQ(resizedShape(*algorithm, 40), (std::vector<int64_t>{2, 3, 16, 16}));
  // Scale 0.5 + 0.5 * (0.1 / 0.3) = 2/3: 21.3 rounds down to 20.
  EXPECT_EQ(resizedShape(*algorithm, 60), (std::vector<int64_t>{2, 3, 20, 20}));
  EXPECT_EQ(resizedShape(*algorithm, 80), (std::vector<int64_t>{2, 3, 32, 32}));
  EXPECT_EQ(resizedShape(*algorithm, 100),
            (std::vector<int64_t>{2, 3, 32, 32}));
  // A side that is no multiple of the increment is left alone at scale 1.
  EXPECT_EQ(resizedShape(*algorithm, 100, 30),
            (std::vector<int64_t>{2, 3, 30, 30}));
}

TEST(ProgressiveResizingTest, CropPositionsVaryAndComeFromTheSeed) {
  auto algorithm = createAlgorithm("progressive_resizing", {{"mode", "crop"}});
  Logger logger;
  // Pixel (y, x) holds 100 y + x, so a window shows where it was cut.
  torch::Tensor x =
      (torch::arange(32).view({32, 1}) * 100 + torch::arange(32).view({1, 32}))
          .to(torch::kFloat)
          .expand({2, 3, 32, 32})
          .contiguous();
  auto cropAt = [&](int64_t batch, uint64_t seed) {
    State state = makeState(10, 10, batch);
    state.seed = seed;
    state.batch.input = x;
    EXPECT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
    const torch::Tensor &out = state.batch.input;
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 3, 16, 16}));
    auto corner = int64_t(out[0][0][0][0].item<float>());
    int64_t top = corner / 100, left = corner % 100;
    // One window for the whole batch, anywhere in the image.
    EXPECT_TRUE(
        torch::equal(out, x.slice(2, top, top + 16).slice(3, left, left + 16)));
    EXPECT_LE(top, 16);
    EXPECT_LE(left, 16);
    return std::pair(top, left);
  };
  std::set<std::pair<int64_t, int64_t>> positions;
  bool otherSeedDiffers = false;
  for (int64_t batch = 0; batch < 8; ++batch) {
    positions.insert(cropAt(batch, 17));
    EXPECT_EQ(cropAt(batch, 17), cropAt(batch, 17)) << batch;
    otherSeedDiffers |= cropAt(batch, 18) != cropAt(batch, 17);
  }
  EXPECT_GE(positions.size(), 5u);
  EXPECT_TRUE(otherSeedDiffers);
}

TEST(ProgressiveResizingTest, ResizeIsBilinear) {
  auto algorithm =
      createAlgorithm("progressive_resizing", {{"mode", "resize"}});
  State state = makeState();
  Logger logger;
  // Bilinear halving without corner alignment averages 2x2 blocks.
  torch::Tensor x = torch::rand({1, 1, 8, 8});
  state.batch.input = x;
  ASSERT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
  EXPECT_TRUE(
      torch::allclose(state.batch.input, torch::avg_pool2d(x, 2), 1e-5, 1e-6));
}

TEST(ProgressiveResizingTest, ValidatesOptions) {
  auto create = [](const AlgorithmOptions &options) {
    return createAlgorithm("progressive_resizing", options);
  };
  EXPECT_THROW(create({{"initial_scale", 0.0}}), std::invalid_argument);
  EXPECT_THROW(create({{"delay_fraction", 1.5}}), std::invalid_argument);
  EXPECT_THROW(create({{"delay_fraction", 0.6}, {"finetune_fraction", 0.5}}),
               std::invalid_argument);
  EXPECT_THROW(create({{"size_increment", 0}}), std::invalid_argument);
  try {
    create({{"mode", "stretch"}});
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument &error) {
    EXPECT_NE(std::string(error.what()).find("mode"), std::string::npos);
  }
}

//===----------------------------------------------------------------------===//
// EMA
//===----------------------------------------------------------------------===//

torch::jit::Module makeEmaModel() {
  torch::jit::Module model("EmaModel");
  model.register_parameter("w", torch::zeros({2}), /*is_buffer=*/false);
  torch::jit::Module child("Child");
  child.register_parameter("weight", torch::zeros({2, 2}), false);
  child.register_buffer("running_mean", torch::zeros({2}));
  child.register_buffer("num_batches_tracked", torch::zeros({}, torch::kLong));
  model.register_module("bn", child);
  return model;
}

/// Sets every tensor of the model to `value` (integer ones to the step).
void setWeights(torch::jit::Module &model, double value, int64_t step) {
  torch::NoGradGuard noGrad;
  for (auto &entry : namedParameters(model))
    entry.second.fill_(value);
  for (auto &entry : namedBuffers(model))
    entry.second.fill_(entry.second.is_floating_point() ? value : double(step));
}

double valueOf(torch::jit::Module &model, const std::string &name) {
  for (auto &entry : namedParameters(model))
    if (entry.first == name)
      return entry.second.flatten()[0].item<double>();
  for (auto &entry : namedBuffers(model))
    if (entry.first == name)
      return entry.second.flatten()[0].item<double>();
  ADD_FAILURE() << "no tensor " << name;
  return 0;
}

TEST(EmaTest, AveragesMatchTheClosedForm) {
  for (int64_t interval : {1, 2}) {
    auto algorithm = createAlgorithm(
        "ema", {{"half_life", Time{4, TimeUnit::Batch}},
                {"update_interval", Time{double(interval), TimeUnit::Batch}}});
    State state = makeState(10, 10, 0);
    Logger logger;
    state.model = makeEmaModel();
    state.parameters = namedParameters(state.model);
    setWeights(state.model, 3.0, 0);
    ASSERT_TRUE(fire(*algorithm, Event::FitStart, state, logger));

    double s = std::exp2(-double(interval) / 4.0);
    double expected = 3.0;
    for (int64_t batch = 1; batch <= 7; ++batch) {
      double w = double(batch * batch);
      setWeights(state.model, w, batch);
      state.timestamp.batch = batch;
      bool updated = fire(*algorithm, Event::BatchEnd, state, logger);
      EXPECT_EQ(updated, batch % interval == 0) << "batch " << batch;
      if (updated)
        expected = s * expected + (1 - s) * w;
    }
    ASSERT_TRUE(fire(*algorithm, Event::EvalStart, state, logger));
    for (const char *name : {"w", "bn.weight", "bn.running_mean"})
      EXPECT_NEAR(valueOf(state.model, name), expected, 1e-4 * expected)
          << name << " interval " << interval;
    // Integer buffers are copied at the last update, not averaged.
    EXPECT_EQ(valueOf(state.model, "bn.num_batches_tracked"),
              double(interval == 1 ? 7 : 6));
    EXPECT_FALSE(algorithm->match(Event::EvalStart, state));
    ASSERT_TRUE(fire(*algorithm, Event::EvalEnd, state, logger));
    EXPECT_EQ(valueOf(state.model, "w"), 49.0);
    EXPECT_EQ(valueOf(state.model, "bn.running_mean"), 49.0);
    EXPECT_EQ(valueOf(state.model, "bn.num_batches_tracked"), 7.0);
  }
}

TEST(EmaTest, SmoothingAndEmaStart) {
  // smoothing 0.5 from batch 3 on: the average starts from batch 3's
  // weights, and evaluation before it sees the training weights.
  auto algorithm = createAlgorithm(
      "ema", {{"smoothing", 0.5}, {"ema_start", Time{3, TimeUnit::Batch}}});
  State state = makeState(10, 10, 0);
  Logger logger;
  state.model = makeEmaModel();
  state.parameters = namedParameters(state.model);
  setWeights(state.model, 1.0, 0);
  fire(*algorithm, Event::FitStart, state, logger);
  double expected = 0;
  for (int64_t batch = 1; batch <= 5; ++batch) {
    double w = double(10 * batch);
    setWeights(state.model, w, batch);
    state.timestamp.batch = batch;
    EXPECT_FALSE(algorithm->match(Event::EvalStart, state) && batch < 3)
        << "batch " << batch;
    fire(*algorithm, Event::BatchEnd, state, logger);
    if (batch == 3)
      expected = w;
    else if (batch > 3)
      expected = 0.5 * expected + 0.5 * w;
  }
  ASSERT_TRUE(fire(*algorithm, Event::EvalStart, state, logger));
  EXPECT_NEAR(valueOf(state.model, "w"), expected, 1e-4); // 10 * 4.25
  EXPECT_THROW(createAlgorithm("ema", {{"smoothing", 1.0}}),
               std::invalid_argument);
}

TEST(EmaTest, CheckpointRoundTrip) {
  const AlgorithmOptions options = {
      {"half_life", Time{2, TimeUnit::Batch}},
      {"update_interval", Time{1, TimeUnit::Batch}}};
  auto algorithm = createAlgorithm("ema", options);
  State state = makeState();
  Logger logger;
  state.model = makeEmaModel();
  state.parameters = namedParameters(state.model);
  ASSERT_TRUE(fire(*algorithm, Event::FitStart, state, logger));
  for (int64_t batch = 1; batch <= 3; ++batch) {
    setWeights(state.model, double(batch), batch);
    state.timestamp.batch = batch;
    fire(*algorithm, Event::BatchEnd, state, logger);
  }
  std::stringstream stream;
  {
    torch::serialize::OutputArchive archive;
    algorithm->saveState(archive);
    archive.save_to(stream);
  }

  // A fresh model with the training weights, as a resumed run loads it.
  auto resumed = createAlgorithm("ema", options);
  State other = makeState(10, 10, 3);
  other.model = makeEmaModel();
  other.parameters = namedParameters(other.model);
  setWeights(other.model, 3.0, 3);
  {
    torch::serialize::InputArchive archive;
    archive.load_from(stream);
    resumed->loadState(archive);
  }
  ASSERT_TRUE(fire(*resumed, Event::FitStart, other, logger));
  // One more update on both sides must agree.
  for (State *s : {&state, &other}) {
    setWeights(s->model, 10.0, 4);
    s->timestamp.batch = 4;
  }
  fire(*algorithm, Event::BatchEnd, state, logger);
  fire(*resumed, Event::BatchEnd, other, logger);
  fire(*algorithm, Event::EvalStart, state, logger);
  fire(*resumed, Event::EvalStart, other, logger);
  for (const char *name : {"w", "bn.weight", "bn.running_mean"}) {
    EXPECT_DOUBLE_EQ(valueOf(state.model, name), valueOf(other.model, name))
        << name;
    EXPECT_LT(valueOf(other.model, name), 10.0);
    EXPECT_GT(valueOf(other.model, name), 3.0);
  }
}

//===----------------------------------------------------------------------===//
// Gradient clipping
//===----------------------------------------------------------------------===//

torch::Tensor withGrad(torch::Tensor value, torch::Tensor grad) {
  value.requires_grad_(true);
  value.mutable_grad() = grad;
  return value;
}

TEST(GradientClippingTest, ClipsTheTotalNorm) {
  auto algorithm =
      createAlgorithm("gradient_clipping",
                      {{"clipping_type", "norm"}, {"clipping_threshold", 1.0}});
  State state = makeState();
  state.parameters = {
      {"a", withGrad(torch::zeros({2}), torch::tensor({3.0f, 0.0f}))},
      {"b", withGrad(torch::zeros({1}), torch::tensor({4.0f}))},
      {"c", torch::zeros({3}, torch::requires_grad())}}; // no gradient
  EXPECT_TRUE(StepRig(state, {algorithm.get()}).step.clip(true));
  EXPECT_TRUE(torch::allclose(state.parameters[0].second.grad(),
                              torch::tensor({0.6f, 0.0f}), 1e-5));
  EXPECT_TRUE(torch::allclose(state.parameters[1].second.grad(),
                              torch::tensor({0.8f}), 1e-5));
  EXPECT_FALSE(state.parameters[2].second.grad().defined());
}

TEST(GradientClippingTest, ClampsEachValue) {
  auto algorithm =
      createAlgorithm("gradient_clipping", {{"clipping_type", "value"},
                                            {"clipping_threshold", 0.5}});
  State state = makeState();
  state.parameters = {
      {"a", withGrad(torch::zeros({3}), torch::tensor({-2.0f, 0.1f, 3.0f}))}};
  EXPECT_TRUE(StepRig(state, {algorithm.get()}).step.clip(true));
  EXPECT_TRUE(torch::equal(state.parameters[0].second.grad(),
                           torch::tensor({-0.5f, 0.1f, 0.5f})));
}

TEST(GradientClippingTest, AdaptiveBoundsEachRow) {
  auto algorithm =
      createAlgorithm("gradient_clipping", {{"clipping_type", "adaptive"},
                                            {"clipping_threshold", 0.1}});
  State state = makeState();
  torch::Tensor weight =
      torch::tensor({{3.0f, 4.0f}, {0.0f, 0.0f}, {1.0f, 0.0f}});
  torch::Tensor grad =
      torch::tensor({{30.0f, 40.0f}, {1.0f, 0.0f}, {0.01f, 0.0f}});
  torch::Tensor bias = torch::tensor({0.0f, 2.0f});
  state.parameters = {{"weight", withGrad(weight, grad.clone())},
                      {"bias", withGrad(bias, torch::tensor({3.0f, 4.0f}))}};
  EXPECT_TRUE(StepRig(state, {algorithm.get()}).step.clip(true));
  torch::Tensor clipped = state.parameters[0].second.grad();
  // Row 0: |w| = 5, bound 0.5 on a gradient of norm 50.
  EXPECT_TRUE(torch::allclose(clipped[0], torch::tensor({0.3f, 0.4f}), 1e-5));
  // Row 1: |w| = 0 counts as 1e-3, bound 1e-4.
  EXPECT_NEAR(clipped[1].norm().item<double>(), 1e-4, 1e-8);
  // Row 2: within its bound (0.1), untouched.
  EXPECT_TRUE(torch::equal(clipped[2], grad[2]));
  // A vector is one unit: |w| = 2, bound 0.2 on a gradient of norm 5.
  EXPECT_TRUE(torch::allclose(state.parameters[1].second.grad(),
                              torch::tensor({0.12f, 0.16f}), 1e-5));
}

TEST(GradientClippingTest, ClipsWhatTheLinksInsideLeaveAndKeepsFiniteness) {
  // A link inside clipping's (an algorithm after it in the recipe) that
  // scales the gradients and finds them not finite: clipping sees its
  // gradients and passes the verdict on.
  struct Inner : Algorithm, StepStages {
    std::string name() const override { return "inner"; }
    StepStages *stepStages() override { return this; }
    bool clip(TrainingStep &step, bool finite, ClipNext next) override {
      finite = next(finite);
      torch::NoGradGuard noGrad;
      step.state().parameters[0].second.mutable_grad().mul_(10);
      return false;
    }
  } inner;
  auto clipping =
      createAlgorithm("gradient_clipping", {{"clipping_type", "value"},
                                            {"clipping_threshold", 5.0}});
  State state = makeState();
  state.parameters = {
      {"a", withGrad(torch::zeros({2}), torch::tensor({0.2f, -1.0f}))}};
  EXPECT_FALSE(StepRig(state, {clipping.get(), &inner}).step.clip(true));
  EXPECT_TRUE(torch::equal(state.parameters[0].second.grad(),
                           torch::tensor({2.0f, -5.0f})));
  EXPECT_FALSE(clipping->match(Event::AfterBackward, state))
      << "a stage, not an event";
}

TEST(GradientClippingTest, ValidatesOptions) {
  auto create = [](const AlgorithmOptions &options) {
    return createAlgorithm("gradient_clipping", options);
  };
  EXPECT_THROW(create({{"clipping_type", "l1"}, {"clipping_threshold", 1.0}}),
               std::invalid_argument);
  EXPECT_THROW(create({{"clipping_type", "norm"}, {"clipping_threshold", 0.0}}),
               std::invalid_argument);
  // Composer has no defaults for either.
  EXPECT_THROW(create({{"clipping_type", "norm"}}), std::invalid_argument);
  EXPECT_THROW(create({{"clipping_threshold", 1.0}}), std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// Layer freezing
//===----------------------------------------------------------------------===//

/// Four layers l0..l3, each with a weight and a bias.
torch::jit::Module makeLayeredModel() {
  torch::jit::Module model("Layered");
  for (int i = 0; i < 4; ++i) {
    torch::jit::Module layer("Layer" + std::to_string(i));
    layer.register_parameter("weight", torch::ones({2, 2}), false);
    layer.register_parameter("bias", torch::ones({2}), false);
    model.register_module("l" + std::to_string(i), layer);
  }
  return model;
}

State makeFreezingState() {
  // Four epochs of one batch: the end of epoch e is fraction e / 4.
  State state = makeState(1, 4, 0);
  state.model = makeLayeredModel();
  state.parameters = namedParameters(state.model);
  for (auto &entry : state.parameters) {
    entry.second.requires_grad_(true);
    entry.second.mutable_grad() = torch::ones_like(entry.second);
  }
  return state;
}

std::vector<std::string> frozenNames(const State &state) {
  std::vector<std::string> names;
  for (const auto &entry : state.parameters)
    if (!entry.second.requires_grad()) {
      EXPECT_FALSE(entry.second.grad().defined()) << entry.first;
      names.push_back(entry.first);
    }
  return names;
}

void endEpoch(Algorithm &algorithm, State &state, int64_t batch) {
  Logger logger;
  state.timestamp.batch = batch;
  state.timestamp.epoch = batch;
  ASSERT_TRUE(fire(algorithm, Event::EpochEnd, state, logger));
}

TEST(LayerFreezingTest, FreezesFollowingTheSchedule) {
  auto algorithm = createAlgorithm(
      "layer_freezing", {{"freeze_start", 0.5}, {"freeze_level", 1.0}});
  State state = makeFreezingState();
  endEpoch(*algorithm, state, 1);
  endEpoch(*algorithm, state, 2); // t = 0.5: nothing yet
  EXPECT_TRUE(frozenNames(state).empty());
  endEpoch(*algorithm, state, 3); // t = 0.75: int(0.5 * 3) = 1 layer
  EXPECT_EQ(frozenNames(state),
            (std::vector<std::string>{"l0.weight", "l0.bias"}));
  endEpoch(*algorithm, state, 4); // t = 1: all but the last
  EXPECT_EQ(frozenNames(state),
            (std::vector<std::string>{"l0.weight", "l0.bias", "l1.weight",
                                      "l1.bias", "l2.weight", "l2.bias"}));
  // Never unfreezes, even if time appears to go back.
  endEpoch(*algorithm, state, 1);
  EXPECT_EQ(frozenNames(state).size(), 6u);
}

TEST(LayerFreezingTest, FollowsTheRecordedLayerOrder) {
  auto algorithm = createAlgorithm(
      "layer_freezing", {{"freeze_start", 0.0}, {"freeze_level", 1.0}});
  State state = makeFreezingState();
  c10::List<std::string> layers({"l3", "l2", "l1", "l0"});
  state.model.register_attribute("_composer_layers", c10::ListType::ofStrings(),
                                 layers);
  state.model.register_attribute("_composer_frozen_layers", c10::IntType::get(),
                                 int64_t(0));
  endEpoch(*algorithm, state, 2); // t = 0.5: int(0.5 * 3) = 1
  EXPECT_EQ(frozenNames(state),
            (std::vector<std::string>{"l3.weight", "l3.bias"}));
  EXPECT_EQ(state.model.attr("_composer_frozen_layers").toInt(), 1);
}

TEST(LayerFreezingTest, CheckpointRestoresTheFrozenSet) {
  auto algorithm = createAlgorithm(
      "layer_freezing", {{"freeze_start", 0.5}, {"freeze_level", 1.0}});
  State state = makeFreezingState();
  endEpoch(*algorithm, state, 3);
  std::stringstream stream;
  {
    torch::serialize::OutputArchive archive;
    algorithm->saveState(archive);
    archive.save_to(stream);
  }
  auto resumed = createAlgorithm(
      "layer_freezing", {{"freeze_start", 0.5}, {"freeze_level", 1.0}});
  State other = makeFreezingState();
  {
    torch::serialize::InputArchive archive;
    archive.load_from(stream);
    resumed->loadState(archive);
  }
  Logger logger;
  ASSERT_TRUE(fire(*resumed, Event::FitStart, other, logger));
  EXPECT_EQ(frozenNames(other),
            (std::vector<std::string>{"l0.weight", "l0.bias"}));
  // A run that froze nothing has nothing to reapply.
  EXPECT_FALSE(
      createAlgorithm("layer_freezing")->match(Event::FitStart, other));
}

//===----------------------------------------------------------------------===//
// ALiBi (shorter training sequences)
//===----------------------------------------------------------------------===//

/// A batch of `rows` token sequences of `length`: input t, target t + 1.
void setTokenBatch(State &state, int64_t rows, int64_t length) {
  state.batch.input =
      torch::arange(rows * length, torch::kLong).view({rows, length});
  state.batch.target = state.batch.input + 1;
  state.batchTokens = rows * length;
}

TEST(AlibiTest, TrimsTrainingTokensAndTargets) {
  auto algorithm = createAlgorithm("alibi");
  State state = makeState();
  Logger logger;
  setTokenBatch(state, 2, 16);
  ASSERT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
  // The default keeps a quarter: each sequence's first 4 tokens.
  torch::Tensor expected = torch::tensor({{0, 1, 2, 3}, {16, 17, 18, 19}});
  EXPECT_TRUE(torch::equal(state.batch.input, expected));
  EXPECT_TRUE(torch::equal(state.batch.target, expected + 1));
  EXPECT_EQ(state.batchTokens, 8);
}

TEST(AlibiTest, KeepsTheFloorAndAtLeastOneToken) {
  Logger logger;
  for (auto [scaling, length, kept] :
       {std::tuple(0.5, 7, 3), std::tuple(0.25, 3, 1), std::tuple(1.0, 5, 5)}) {
    auto algorithm =
        createAlgorithm("alibi", {{"train_sequence_length_scaling", scaling}});
    State state = makeState();
    setTokenBatch(state, 3, length);
    ASSERT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
    EXPECT_EQ(state.batch.input.sizes(), (std::vector<int64_t>{3, kept}))
        << scaling << " of " << length;
    EXPECT_EQ(state.batch.target.sizes(), (std::vector<int64_t>{3, kept}));
  }
}

TEST(AlibiTest, LeavesEvaluationAndImagesAlone) {
  auto algorithm = createAlgorithm("alibi");
  State state = makeState();
  setTokenBatch(state, 2, 16);
  // Evaluation batches come with these events, never AFTER_DATALOADER.
  for (Event event : {Event::EvalStart, Event::EvalBatchStart,
                      Event::EvalBeforeForward, Event::BeforeForward})
    EXPECT_FALSE(algorithm->match(event, state));
  setIndexBatch(state, 4);
  EXPECT_FALSE(algorithm->match(Event::AfterDataloader, state));
}

TEST(AlibiTest, ValidatesOptions) {
  for (double scaling : {0.0, -0.5, 1.5})
    EXPECT_THROW(
        createAlgorithm("alibi", {{"train_sequence_length_scaling", scaling}}),
        std::invalid_argument)
        << scaling;
}

//===----------------------------------------------------------------------===//
// Stochastic depth (the drop-rate warm-up)
//===----------------------------------------------------------------------===//

/// A state on a model with the `_composer_stochastic_depth` holder of
/// composer-opt's stochastic depth and its `scale` buffer.
class StochasticDepthTest : public testing::Test {
protected:
  void SetUp() override {
    torch::jit::Module holder("Holder");
    holder.register_buffer("scale", torch::ones({}));
    state.model = torch::jit::Module("StochasticDepthModel");
    state.model.register_module("_composer_stochastic_depth", holder);
  }

  double scale() {
    return valueOf(state.model, "_composer_stochastic_depth.scale");
  }

  State state = makeState();
  Logger logger;
};

TEST_F(StochasticDepthTest, ScaleRampsOverTheWarmup) {
  // 10 epochs of 10 batches, warm-up over the first quarter: 25 batches.
  auto algorithm = createAlgorithm(
      "stochastic_depth", {{"drop_warmup", Time{0.25, TimeUnit::Duration}}});
  EXPECT_FALSE(algorithm->match(Event::BatchEnd, state));
  for (int64_t batch : {0, 5, 24, 25, 60}) {
    state.timestamp.batch = batch;
    ASSERT_TRUE(fire(*algorithm, Event::BatchStart, state, logger));
    // The buffer is float32.
    EXPECT_FLOAT_EQ(scale(), std::min(1.0, double(batch) / 25.0))
        << "batch " << batch;
  }
}

TEST_F(StochasticDepthTest, NoWarmupKeepsTheFullRate) {
  auto algorithm = createAlgorithm("stochastic_depth");
  ASSERT_TRUE(fire(*algorithm, Event::BatchStart, state, logger));
  EXPECT_EQ(scale(), 1.0);
}

TEST_F(StochasticDepthTest, RampsOverTheRecordedWarmupByDefault) {
  // composer-opt's drop-warmup=0.25 recorded in the model: 25 batches.
  auto algorithm = createAlgorithm("stochastic_depth");
  state.model.attr("_composer_stochastic_depth")
      .toModule()
      .register_buffer("warmup", torch::full({}, 0.25));
  state.timestamp.batch = 5;
  ASSERT_TRUE(fire(*algorithm, Event::BatchStart, state, logger));
  EXPECT_FLOAT_EQ(scale(), 0.2f);
}

TEST_F(StochasticDepthTest, WithoutWarmupNeedsNoBuffer) {
  auto algorithm = createAlgorithm("stochastic_depth");
  state.model = makeEmaModel();
  EXPECT_NO_THROW(fire(*algorithm, Event::BatchStart, state, logger));
}

TEST_F(StochasticDepthTest, NeedsTheScaleBuffer) {
  auto algorithm = createAlgorithm(
      "stochastic_depth", {{"drop_warmup", Time{0.5, TimeUnit::Duration}}});
  state.model = makeEmaModel();
  EXPECT_THROW(fire(*algorithm, Event::BatchStart, state, logger),
               std::runtime_error);
}

//===----------------------------------------------------------------------===//
// ColOut
//===----------------------------------------------------------------------===//

/// Images [n, c, h, w] whose pixel (y, x) holds 100 y + x.
torch::Tensor positionImages(int64_t n, int64_t c, int64_t h, int64_t w) {
  return (torch::arange(h).view({h, 1}) * 100 + torch::arange(w).view({1, w}))
      .to(torch::kFloat)
      .expand({n, c, h, w})
      .contiguous();
}

/// The rows and columns an image [c, h, w] of positionImages kept, checking
/// that it is exactly those rows and columns of the original.
std::pair<std::vector<int64_t>, std::vector<int64_t>>
keptRowsAndColumns(const torch::Tensor &image) {
  torch::Tensor plane = image[0].to(torch::kLong);
  std::vector<int64_t> rows, cols;
  for (int64_t i = 0; i < plane.size(0); ++i)
    rows.push_back(plane[i][0].item<int64_t>() / 100);
  for (int64_t j = 0; j < plane.size(1); ++j)
    cols.push_back(plane[0][j].item<int64_t>() % 100);
  torch::Tensor r = torch::tensor(rows), k = torch::tensor(cols);
  EXPECT_TRUE(torch::equal(plane, r.view({-1, 1}) * 100 + k.view({1, -1})));
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_TRUE(std::is_sorted(cols.begin(), cols.end()));
  EXPECT_EQ(std::set<int64_t>(rows.begin(), rows.end()).size(), rows.size());
  EXPECT_EQ(std::set<int64_t>(cols.begin(), cols.end()).size(), cols.size());
  return {rows, cols};
}

TEST(ColOutTest, BatchModeDropsTheSameRowsAndColumnsFromEveryImage) {
  auto algorithm = createAlgorithm("colout", {{"p_row", 0.15}, {"p_col", 0.5}});
  State state = makeState();
  Logger logger;
  state.batch.input = positionImages(4, 3, 28, 20);
  state.batch.target = torch::arange(4, torch::kLong);
  ASSERT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
  // int(0.85 * 28) = 23 rows, int(0.5 * 20) = 10 columns.
  EXPECT_EQ(state.batch.input.sizes(), (std::vector<int64_t>{4, 3, 23, 10}));
  auto kept = keptRowsAndColumns(state.batch.input[0]);
  for (int64_t i = 1; i < 4; ++i)
    EXPECT_EQ(keptRowsAndColumns(state.batch.input[i]), kept);
  EXPECT_TRUE(torch::equal(state.batch.target, torch::arange(4)));
  // The batch's generator: the same batch drops the same lines again.
  State again = makeState();
  again.batch.input = positionImages(4, 3, 28, 20);
  fire(*algorithm, Event::AfterDataloader, again, logger);
  EXPECT_TRUE(torch::equal(again.batch.input, state.batch.input));
}

/// A loader over `n` uint8 images [c, h, w] whose pixel (y, x) is y * w + x
/// (below 256), in order.
std::shared_ptr<DataLoader> imageLoader(int64_t n, int64_t c, int64_t h,
                                        int64_t w, int workers = 0,
                                        int64_t batchSize = 4) {
  auto dataset =
      std::make_shared<TensorDataset>((torch::arange(h * w) % 256)
                                          .to(torch::kUInt8)
                                          .view({1, 1, h, w})
                                          .expand({n, c, h, w})
                                          .contiguous(),
                                      torch::arange(n, torch::kLong));
  DataLoaderOptions options;
  options.batchSize = batchSize;
  options.shuffle = false;
  options.numWorkers = workers;
  options.seed = 3;
  return std::make_shared<DataLoader>(dataset, options);
}

TEST(ColOutTest, PerSampleModeShrinksEachImageInTheLoader) {
  auto algorithm = createAlgorithm(
      "colout", {{"p_row", 0.25}, {"p_col", 0.25}, {"batch", false}});
  auto loader = imageLoader(8, 2, 12, 8, /*workers=*/2);
  State state = makeState();
  Logger logger;
  // Nothing to do on the training thread: the loader does it.
  state.batch.input = torch::zeros({2, 1, 12, 8});
  EXPECT_FALSE(algorithm->match(Event::AfterDataloader, state));
  state.trainLoader = loader.get();
  ASSERT_TRUE(fire(*algorithm, Event::FitStart, state, logger));
  ASSERT_EQ(loader->options().sampleTransforms.size(), 1u);
  EXPECT_EQ(loader->options().sampleTransforms[0]->stage(),
            SampleStage::Normalized);
  loader->startEpoch(0);
  std::set<std::vector<int64_t>> rowChoices;
  while (std::optional<Batch> batch = loader->next()) {
    // int(0.75 * 12) = 9 rows, int(0.75 * 8) = 6 columns.
    ASSERT_EQ(batch->input.sizes(), (std::vector<int64_t>{4, 2, 9, 6}));
    for (int64_t i = 0; i < 4; ++i) {
      // Pixel (y, x) was (y * 8 + x) / 255: recover the kept lines.
      torch::Tensor image = (batch->input[i] * 255).round().to(torch::kLong);
      torch::Tensor rows = image[0].select(1, 0).div(8, "floor");
      torch::Tensor cols = image[0][0] % 8;
      EXPECT_TRUE(
          torch::equal(image[0], rows.view({-1, 1}) * 8 + cols.view({1, -1})));
      EXPECT_TRUE(torch::equal(image[1], image[0]));
      rowChoices.insert(
          {rows.data_ptr<int64_t>(), rows.data_ptr<int64_t>() + 9});
    }
  }
  // Each sample draws its own lines.
  EXPECT_GE(rowChoices.size(), 4u);
}

TEST(ColOutTest, ValidatesOptions) {
  EXPECT_THROW(createAlgorithm("colout", {{"p_row", 1.0}}),
               std::invalid_argument);
  EXPECT_THROW(createAlgorithm("colout", {{"p_col", -0.1}}),
               std::invalid_argument);
}

//===----------------------------------------------------------------------===//
// RandAugment and AugMix
//===----------------------------------------------------------------------===//

/// Installs `algorithm`'s transform in `loader` as a trainer does at
/// FIT_START.
void installIn(Algorithm &algorithm, DataLoader &loader) {
  State state = makeState();
  state.trainLoader = &loader;
  Logger logger;
  ASSERT_TRUE(fire(algorithm, Event::FitStart, state, logger));
}

class ImageAugmentationTest : public testing::TestWithParam<std::string> {};

TEST_P(ImageAugmentationTest, DrawsComeFromSeedEpochAndSample) {
  auto algorithm = createAlgorithm(GetParam());
  auto loader = imageLoader(8, 3, 12, 12);
  auto plain = imageLoader(8, 3, 12, 12);
  installIn(*algorithm, *loader);
  ASSERT_EQ(loader->options().sampleTransforms.size(), 1u);
  EXPECT_EQ(loader->options().sampleTransforms[0]->name(), GetParam());
  EXPECT_EQ(loader->options().sampleTransforms[0]->stage(), SampleStage::Image);
  Batch first = loader->makeBatch(0, 0);
  EXPECT_EQ(first.input.sizes(), (std::vector<int64_t>{4, 3, 12, 12}));
  EXPECT_TRUE(torch::equal(first.input, loader->makeBatch(0, 0).input));
  EXPECT_FALSE(torch::equal(first.input, plain->makeBatch(0, 0).input));
  // The same samples in another epoch are augmented anew, and equal images
  // (all samples are alike) differently by their index.
  EXPECT_FALSE(torch::equal(first.input, loader->makeBatch(1, 0).input));
  EXPECT_FALSE(torch::equal(first.input[0], first.input[1]));
  // Uint8 ops: every value is still a uint8 value, scaled.
  torch::Tensor levels = first.input * 255;
  EXPECT_TRUE(torch::allclose(levels, levels.round(), 0, 1e-3));
  // Another seed, other draws.
  auto reseeded = imageLoader(8, 3, 12, 12);
  DataLoaderOptions options = reseeded->options();
  options.seed = 4;
  DataLoader other(
      std::shared_ptr<const Dataset>(reseeded, &reseeded->dataset()), options);
  installIn(*createAlgorithm(GetParam()), other);
  EXPECT_FALSE(torch::equal(first.input, other.makeBatch(0, 0).input));
}

TEST_P(ImageAugmentationTest, RunsInTheWorkersBitIdentically) {
  auto algorithm = createAlgorithm(GetParam());
  auto inline_ = imageLoader(16, 3, 12, 12);
  auto workers = imageLoader(16, 3, 12, 12, /*workers=*/2);
  installIn(*algorithm, *inline_);
  installIn(*algorithm, *workers);
  workers->startEpoch(1);
  int64_t index = 0;
  while (std::optional<Batch> batch = workers->next())
    EXPECT_TRUE(
        torch::equal(batch->input, inline_->makeBatch(1, index++).input));
  EXPECT_EQ(index, 4);
  // Installed twice, it still runs once.
  installIn(*algorithm, *workers);
  EXPECT_EQ(workers->options().sampleTransforms.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(RandAugmentAndAugMix, ImageAugmentationTest,
                         testing::Values("randaugment", "augmix"));

TEST(ImageAugmentationTest, NeedImages) {
  auto dataset = std::make_shared<TensorDataset>(
      torch::zeros({4, 8}, torch::kLong), torch::zeros({4, 8}, torch::kLong));
  DataLoader tokens(dataset, DataLoaderOptions{});
  for (const char *name : {"randaugment", "augmix"}) {
    auto algorithm = createAlgorithm(name);
    State state = makeState();
    state.trainLoader = &tokens;
    Logger logger;
    EXPECT_THROW(fire(*algorithm, Event::FitStart, state, logger),
                 std::invalid_argument)
        << name;
  }
}

TEST(ImageAugmentationTest, ValidatesOptions) {
  EXPECT_THROW(createAlgorithm("randaugment", {{"severity", int64_t(11)}}),
               std::invalid_argument);
  EXPECT_THROW(createAlgorithm("randaugment", {{"depth", int64_t(-1)}}),
               std::invalid_argument);
  EXPECT_THROW(createAlgorithm("randaugment", {{"augmentation_set", "most"}}),
               std::invalid_argument);
  EXPECT_THROW(createAlgorithm("augmix", {{"width", int64_t(0)}}),
               std::invalid_argument);
  EXPECT_THROW(createAlgorithm("augmix", {{"alpha", 0.0}}),
               std::invalid_argument);
  EXPECT_NO_THROW(createAlgorithm("augmix", {{"augmentation_set", "safe"}}));
}

//===----------------------------------------------------------------------===//
// Sequence length warmup
//===----------------------------------------------------------------------===//

/// The length seq_length_warmup trains batch `batch` of a 100-batch run at.
int64_t warmupLength(Algorithm &algorithm, int64_t batch) {
  State state = makeState(10, 10, batch);
  setTokenBatch(state, 2, 64);
  Logger logger;
  EXPECT_TRUE(fire(algorithm, Event::AfterDataloader, state, logger));
  return state.batch.input.size(1);
}

TEST(SeqLengthWarmupTest, LengthFollowsComposersSchedule) {
  // Warmup int(100 * 0.3) = 30 batches, (64 - 8) / 8 = 7 steps: + 8 every
  // 30 / 7 = 4 batches.
  auto algorithm =
      createAlgorithm("seq_length_warmup", {{"max_seq_length", int64_t(64)}});
  EXPECT_EQ(warmupLength(*algorithm, 0), 8);
  EXPECT_EQ(warmupLength(*algorithm, 3), 8);
  EXPECT_EQ(warmupLength(*algorithm, 4), 16);
  EXPECT_EQ(warmupLength(*algorithm, 27), 56);
  EXPECT_EQ(warmupLength(*algorithm, 28), 64);
  EXPECT_EQ(warmupLength(*algorithm, 99), 64);
  // Composer's default max (1024) beyond the data's 64: full length after
  // (64 - 8) / 8 = 7 steps of int(30 / 127) = 0 batches, i.e. growing by
  // 127 / 30 steps per batch.
  auto defaults = createAlgorithm("seq_length_warmup");
  EXPECT_EQ(warmupLength(*defaults, 0), 8);
  EXPECT_EQ(warmupLength(*defaults, 1), 40); // 8 + 8 * int(127 / 30)
  EXPECT_EQ(warmupLength(*defaults, 2), 64);
}

TEST(SeqLengthWarmupTest, TruncatesInputsTargetsAndTokenCount) {
  auto algorithm =
      createAlgorithm("seq_length_warmup", {{"max_seq_length", int64_t(64)},
                                            {"min_seq_length", int64_t(16)}});
  State state = makeState();
  setTokenBatch(state, 4, 64);
  torch::Tensor input = state.batch.input, target = state.batch.target;
  Logger logger;
  ASSERT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
  EXPECT_TRUE(torch::equal(state.batch.input, input.narrow(1, 0, 16)));
  EXPECT_TRUE(torch::equal(state.batch.target, target.narrow(1, 0, 16)));
  EXPECT_EQ(state.batchTokens, 4 * 16);
  // Images are left alone.
  State images = makeState();
  setIndexBatch(images, 2);
  EXPECT_FALSE(algorithm->match(Event::AfterDataloader, images));
}

TEST(SeqLengthWarmupTest, PreservesTheEndOfEachTruncatedSequence) {
  auto create = [](bool truncate) {
    return createAlgorithm("seq_length_warmup",
                           {{"max_seq_length", int64_t(64)},
                            {"min_seq_length", int64_t(3)},
                            {"truncate", truncate},
                            {"preserve_end_of_sequence", true}});
  };
  State state = makeState();
  setTokenBatch(state, 2, 6);
  Logger logger;
  ASSERT_TRUE(fire(*create(true), Event::AfterDataloader, state, logger));
  // Composer's example: [10 .. 15] at length 3 is [10, 11, 15].
  EXPECT_TRUE(
      torch::equal(state.batch.input, torch::tensor({{0, 1, 5}, {6, 7, 11}})));
  EXPECT_TRUE(
      torch::equal(state.batch.target, torch::tensor({{1, 2, 6}, {7, 8, 12}})));
  EXPECT_EQ(state.batchTokens, 2 * 3);
  // One sequence: its first tokens are a view of the loader's batch, which
  // must stay as it was.
  setTokenBatch(state, 1, 6);
  torch::Tensor loaded = state.batch.input;
  ASSERT_TRUE(fire(*create(true), Event::AfterDataloader, state, logger));
  EXPECT_TRUE(torch::equal(state.batch.input, torch::tensor({{0, 1, 5}})));
  EXPECT_TRUE(
      torch::equal(loaded, torch::arange(6, torch::kLong).view({1, 6})));

  // Ignored when reshaping: 12 tokens make 4 sequences of 3.
  setTokenBatch(state, 2, 6);
  ASSERT_TRUE(fire(*create(false), Event::AfterDataloader, state, logger));
  EXPECT_TRUE(torch::equal(state.batch.input,
                           torch::arange(12, torch::kLong).view({4, 3})));
}

TEST(SeqLengthWarmupTest, ReshapesIntoMoreSequences) {
  auto algorithm =
      createAlgorithm("seq_length_warmup", {{"max_seq_length", int64_t(60)},
                                            {"min_seq_length", int64_t(56)},
                                            {"step_size", int64_t(4)},
                                            {"truncate", false}});
  State state = makeState();
  setTokenBatch(state, 4, 60);
  torch::Tensor input = state.batch.input, target = state.batch.target;
  Logger logger;
  ASSERT_TRUE(fire(*algorithm, Event::AfterDataloader, state, logger));
  // 240 tokens make 4 sequences of 56; the last 16 are dropped.
  EXPECT_TRUE(torch::equal(state.batch.input,
                           input.flatten().narrow(0, 0, 224).view({4, 56})));
  EXPECT_TRUE(torch::equal(state.batch.target,
                           target.flatten().narrow(0, 0, 224).view({4, 56})));
  EXPECT_EQ(state.batchTokens, 224);
  setTokenBatch(state, 4, 64);
  state.timestamp.batch = 0;
  auto shorter =
      createAlgorithm("seq_length_warmup",
                      {{"max_seq_length", int64_t(64)}, {"truncate", false}});
  ASSERT_TRUE(fire(*shorter, Event::AfterDataloader, state, logger));
  EXPECT_EQ(state.batch.input.sizes(), (std::vector<int64_t>{32, 8}));
  EXPECT_EQ(state.batchTokens, 256);
}

TEST(SeqLengthWarmupTest, ValidatesOptions) {
  auto create = [](const AlgorithmOptions &options) {
    return createAlgorithm("seq_length_warmup", options);
  };
  EXPECT_THROW(create({{"duration", 1.5}}), std::invalid_argument);
  EXPECT_THROW(create({{"max_seq_length", int64_t(4)}}), std::invalid_argument);
  EXPECT_THROW(create({{"step_size", int64_t(0)}}), std::invalid_argument);
  EXPECT_THROW(create({{"min_seq_length", int64_t(0)}}), std::invalid_argument);
}

} // namespace
