//===- Recipe.cpp - composer-train recipes (YAML) -------------------------===//
//
// The builders: the recipe's tree (RecipeTree.h), read key by key with typed
// getters (RecipeReader.h), becomes a trainer configuration. Everything is
// read and checked before anything slow (data, the model) is loaded, and
// whatever was never read is then reported as an unknown key.
//
//===----------------------------------------------------------------------===//

#include "Recipe.h"
#include "CompilerPlugin.h"
#include "RecipeReader.h"
#include "RecipeStreaming.h"
#include "RecipeTree.h"

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Callbacks.h"
#include "composer/Runtime/ImageFolder.h"
#include "composer/Runtime/Losses.h"
#include "composer/Runtime/Mds.h"
#include "composer/Runtime/Metrics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <torch/script.h>

#include <array>
#include <filesystem>
#include <iostream>
#include <map>
#include <unistd.h>

using namespace composer::runtime;
using llvm::StringRef;
using llvm::Twine;

namespace composer::train {
namespace {

/// Turns the checked tree into runtime objects.
class Builder {
public:
  Builder(RecipeReader &reader, const SuppliedInputs *supplied)
      : reader(reader), supplied(supplied) {}

  /// The top-level keys: seed, run length, loss, precision, device,
  /// checkpoints and data-parallel settings.
  void trainer(const RecipeValue &root, TrainerConfig &config) {
    config.seed = uint64_t(reader.integer(root, "seed", 0));
    config.runName = reader.string(root, "run_name", "");
    config.pipeline = reader.string(root, "pipeline", "");
    config.maxDuration = reader.time(root, "max_duration", config.maxDuration);
    config.evalInterval =
        reader.time(root, "eval_interval", config.evalInterval);
    config.scaleScheduleRatio =
        reader.number(root, "scale_schedule_ratio", 1.0);
    loss(root, config);
    microbatching(root, config);
    modelCall(root, config.modelCall);
    callbacks(root, config);
    config.threads = int(reader.integer(root, "threads", 0));
    config.jitOptimize = reader.boolean(root, "jit_optimize", false);
    if (const RecipeValue *precision = reader.get(root, "precision")) {
      try {
        config.precision = parsePrecision(precision->scalar);
      } catch (const std::invalid_argument &e) {
        reader.error(precision->loc, e.what());
      }
    }
    if (const RecipeValue *device = reader.get(root, "device")) {
      try {
        config.device = torch::Device(device->scalar);
        if (config.device.is_cuda() && !torch::cuda::is_available())
          reader.error(device->loc,
                       "device '" + device->scalar +
                           "' asked for, but this LibTorch sees no CUDA "
                           "device");
      } catch (const c10::Error &) {
        reader.error(device->loc, "unknown device '" + device->scalar +
                                      "'; expected cpu, cuda or cuda:N");
      }
    }
    config.saveFolder = reader.string(root, "save_folder", "");
    config.saveInterval =
        reader.time(root, "save_interval", config.saveInterval);
    config.saveNumCheckpointsToKeep =
        int(reader.integer(root, "save_num_checkpoints_to_keep", -1));
    config.autoresume = reader.boolean(root, "autoresume", false);
    if (config.autoresume && config.saveFolder.empty())
      reader.error(root.loc, "'autoresume' needs a 'save_folder'");
    config.loadPath = reader.string(root, "load_path", "");
    config.saveWeightsOnly = reader.boolean(root, "save_weights_only", false);
    if (config.autoresume && config.saveWeightsOnly)
      reader.error(reader.get(root, "save_weights_only")->loc,
                   "'autoresume' needs whole checkpoints; it cannot resume "
                   "from 'save_weights_only' ones");
    LoadOptions &load = config.loadOptions;
    load.weightsOnly = reader.boolean(root, "load_weights_only", false);
    load.strict = reader.boolean(root, "load_strict_model_weights", true);
    load.ignoreKeys = reader.strings(root, "load_ignore_keys");
    config.findUnusedParameters =
        reader.boolean(root, "find_unused_parameters", false);
    const RecipeValue &parallelism = reader.mapping(root, "parallelism");
    if (const RecipeValue *sharding = reader.get(parallelism, "sharding")) {
      try {
        config.sharding = parseShardingStrategy(sharding->scalar);
      } catch (const std::invalid_argument &e) {
        reader.error(sharding->loc, e.what());
      }
    }
    shardUnits = reader.string(parallelism, "units", "blocks");
    if (const RecipeValue *type = reader.get(parallelism, "state_dict_type")) {
      if (type->scalar != "sharded" && type->scalar != "full")
        reader.error(type->loc, "unknown state_dict_type '" + type->scalar +
                                    "' (expected sharded or full)");
      else if (type->scalar == "sharded" &&
               config.sharding == ShardingStrategy::None)
        reader.error(type->loc, "state_dict_type 'sharded' needs "
                                "parallelism.sharding shard_grad_op or "
                                "full_shard");
      config.shardedCheckpoints = type->scalar == "sharded";
    }
    double timeout = reader.number(root, "dist_timeout", 60);
    if (timeout <= 0)
      reader.error(root.loc, "'dist_timeout' must be positive (seconds)");
    config.distributedTimeout =
        std::chrono::milliseconds(int64_t(timeout * 1000));
  }

  /// `model_inputs: [column, ...]` (forward's arguments by position) or
  /// `{argument: column}` (by name), and `output: key | index`.
  void modelCall(const RecipeValue &root, ModelCall &call) {
    if (const RecipeValue *inputs = reader.get(root, "model_inputs")) {
      if (inputs->kind == RecipeValue::Kind::Sequence) {
        call.positional = reader.strings(root, "model_inputs");
      } else if (inputs->kind == RecipeValue::Kind::Mapping) {
        for (const RecipeValue::Entry &entry : inputs->entries) {
          entry.used = true;
          if (entry.value.kind != RecipeValue::Kind::Scalar)
            reader.error(entry.value.loc, "a model input is a column's name");
          call.keywords.emplace_back(entry.key, entry.value.scalar);
        }
      } else {
        reader.error(inputs->loc,
                     "'model_inputs' must be a list of columns (forward's "
                     "arguments in order) or a mapping of argument names to "
                     "columns");
      }
    }
    if (const RecipeValue *output = reader.get(root, "output")) {
      long long index = 0;
      if (output->kind != RecipeValue::Kind::Scalar)
        reader.error(output->loc, "'output' must be a dict key or a tuple "
                                  "index");
      else if (!StringRef(output->scalar).getAsInteger(10, index))
        call.outputIndex = index;
      else
        call.outputKey = output->scalar;
    }
  }

  /// `callbacks:` registered callbacks by name (built-in or from a
  /// plugin), with their options. Every rank runs them: the stoppers decide
  /// when the run ends, and only rank 0 has logger destinations.
  void callbacks(const RecipeValue &root, TrainerConfig &config) {
    namedComponents<Callback>(
        reader.mapping(root, "callbacks"), "callback", findCallback,
        getRegisteredCallbacks,
        [&](std::unique_ptr<Callback> callback, llvm::SMLoc) {
          config.callbacks.push_back(std::move(callback));
        });
  }

  /// `device_train_microbatch_size: N | auto` and
  /// `accumulate_train_batch_on_tokens`.
  void microbatching(const RecipeValue &root, TrainerConfig &config) {
    if (const RecipeValue *size =
            reader.get(root, "device_train_microbatch_size")) {
      long long samples = 0;
      if (size->kind == RecipeValue::Kind::Scalar && size->scalar == "auto")
        config.autoMicrobatch = true;
      else if (size->kind != RecipeValue::Kind::Scalar ||
               StringRef(size->scalar).getAsInteger(10, samples) ||
               samples <= 0)
        reader.error(size->loc, "'device_train_microbatch_size' must be a "
                                "positive number of samples, or 'auto'");
      else
        config.microbatchSize = samples;
    }
    config.accumulateOnTokens =
        reader.boolean(root, "accumulate_train_batch_on_tokens", false);
  }

  /// Loads the TorchScript file named at `model`; false after a diagnostic.
  bool loadModel(const RecipeValue &model, TrainerConfig &config) {
    if (!std::filesystem::exists(model.scalar)) {
      reader.error(model.loc, "cannot load TorchScript model '" + model.scalar +
                                  "': no such file");
      return false;
    }
    try {
      config.model = torch::jit::load(model.scalar);
    } catch (const c10::Error &e) {
      std::string message = e.what_without_backtrace();
      reader.error(model.loc,
                   "cannot load TorchScript model '" + model.scalar +
                       "': " + message.substr(0, message.find('\n')));
      return false;
    }
    return true;
  }

  /// full_shard trains a model whose composer::gather_unit calls gather its
  /// units' parameters: one without them is put through
  /// composer-shard-params here, by the compiler loaded on demand. False
  /// after a diagnostic at `model`.
  bool shardParameters(const RecipeValue &model, TrainerConfig &config,
                       bool speaks) {
    try {
      if (!findGatheredUnits(config.model).empty())
        return true;
    } catch (const std::invalid_argument &e) {
      reader.error(model.loc, e.what());
      return false;
    }
    std::string report, error;
    std::string pipeline =
        "builtin.module(composer-shard-params{units=" + shardUnits + "})";
    if (!compileModule(config.model, pipeline, report, error)) {
      reader.error(model.loc,
                   "full_shard needs the model through composer-shard-params, "
                   "and " +
                       error + "; run `composer-opt " +
                       (model.scalar.empty() ? "MODEL.pt" : model.scalar) +
                       " --composer-shard-params --lower-to=runtime -o "
                       "SHARDED.pt` and train SHARDED.pt");
      return false;
    }
    if (speaks)
      std::cerr << "composer-train: full_shard: " << report;
    return true;
  }

  /// What `loggers` asks for, created only on rank 0.
  struct OutputPlan {
    const RecipeValue *loggers = nullptr;
    bool progressBar = true;
    std::string jsonl, tensorboard;
  };

  OutputPlan planOutputs(const RecipeValue &root) {
    OutputPlan plan;
    const RecipeValue &loggers = reader.mapping(root, "loggers");
    plan.loggers = &loggers;
    plan.progressBar = reader.boolean(loggers, "progress_bar", true);
    plan.jsonl = reader.string(loggers, "jsonl", "");
    plan.tensorboard = reader.string(loggers, "tensorboard", "");
    return plan;
  }

  /// Adds the planned callbacks and logger destinations; false after a
  /// diagnostic.
  bool addOutputs(const OutputPlan &plan, TrainerConfig &config) {
    try {
      if (plan.progressBar)
        config.callbacks.push_back(
            createProgressBar(std::cerr, isatty(STDERR_FILENO)));
      if (!plan.jsonl.empty())
        config.logger.addDestination(createJsonlLogger(plan.jsonl));
      if (!plan.tensorboard.empty())
        config.logger.addDestination(createTensorBoardLogger(plan.tensorboard));
    } catch (const std::exception &e) {
      reader.error(plan.loggers->loc, e.what());
      return false;
    }
    return true;
  }

  /// What a `*_data` mapping asks for, read (and checked) before anything
  /// is loaded.
  struct DataPlan {
    std::string key, type;
    const RecipeValue *node = nullptr, *images = nullptr, *labels = nullptr,
                      *path = nullptr, *limit = nullptr, *root = nullptr,
                      *index = nullptr;
    std::string inputColumn, targetColumn;
    std::vector<std::string> columns;
    int64_t sequenceLength = 0, limitCount = 0;
    int tokenBytes = 2;
    bool skipBadSamples = false;
    SyntheticSpec synthetic;
    MdsOptions mds;
    std::string remote;
    RemoteOptions remoteOptions;
    std::vector<StreamPlan> streams;
    std::optional<int64_t> epochSize;
    DataLoaderOptions options;
  };

  std::optional<DataPlan> planData(const RecipeValue &map, StringRef key,
                                   bool training) {
    const RecipeValue *node = reader.get(map, key);
    if (!node)
      return std::nullopt;
    if (node->kind != RecipeValue::Kind::Mapping) {
      reader.error(node->loc, "'" + key + "' must be a mapping");
      return std::nullopt;
    }
    const RecipeValue &spec = *node;
    DataPlan plan;
    plan.key = key.str();
    plan.node = node;
    plan.type = reader.string(spec, "type", "idx");
    if (plan.type == "supplied") {
      if (!supplied || !supplied->loaders.count(plan.key))
        reader.error(spec.loc, "'" + key +
                                   "' of type supplied takes the loader its "
                                   "caller brings (composer_opt.Trainer), and "
                                   "none was given for it");
      return plan;
    }
    if (plan.type == "idx") {
      plan.images = reader.require(spec, "images", key);
      plan.labels = reader.require(spec, "labels", key);
    } else if (plan.type == "tokens") {
      plan.path = reader.require(spec, "path", key);
      plan.sequenceLength = reader.integer(spec, "seq_len", 128);
      if (const RecipeValue *dtype = reader.get(spec, "dtype")) {
        if (dtype->scalar == "uint32")
          plan.tokenBytes = 4;
        else if (dtype->scalar != "uint16")
          reader.error(dtype->loc, "unknown token dtype '" + dtype->scalar +
                                       "'; expected uint16 or uint32");
      }
    } else if (plan.type == "image_folder") {
      plan.root = reader.get(spec, "root");
      plan.index = reader.get(spec, "index");
      if (!plan.root && !plan.index)
        reader.error(spec.loc, "'" + key +
                                   "' of type image_folder needs "
                                   "'root' (DIR/<class>/<image>) or 'index' (a "
                                   "file of 'path label' lines)");
    } else if (plan.type == "mds") {
      plan.streams = readStreams(reader, spec, plan.epochSize);
      if (plan.streams.empty())
        plan.path = reader.require(spec, "local", key);
      else if (const RecipeValue *local = reader.get(spec, "local"))
        reader.error(local->loc, "give either 'streams' or 'remote'/'local', "
                                 "not both (as Streaming)");
      plan.inputColumn = reader.string(spec, "input", "image");
      plan.targetColumn = reader.string(spec, "target", "label");
      plan.columns = reader.strings(spec, "columns");
      plan.mds.verifyHashes =
          reader.boolean(spec, "verify_hashes", plan.mds.verifyHashes);
      plan.mds.cachedShards =
          reader.integer(spec, "cached_shards", plan.mds.cachedShards);
      if (plan.mds.cachedShards < 1)
        reader.error(reader.get(spec, "cached_shards")->loc,
                     "'cached_shards' must be at least 1");
      bool streamsHaveRemotes = llvm::any_of(
          plan.streams, [](const StreamPlan &s) { return !s.remote.empty(); });
      plan.remote = readStreamingRemote(reader, spec, plan.remoteOptions,
                                        plan.mds, streamsHaveRemotes);
      if (!plan.streams.empty() && !plan.remote.empty())
        reader.error(reader.get(spec, "remote")->loc,
                     "give either 'streams' or 'remote'/'local', not both "
                     "(as Streaming)");
    } else if (plan.type == "synthetic") {
      SyntheticSpec &synthetic = plan.synthetic;
      synthetic.numSamples =
          reader.integer(spec, "num_samples", synthetic.numSamples);
      std::vector<double> shape = reader.numbers(spec, "shape");
      if (!shape.empty())
        synthetic.sampleShape.assign(shape.begin(), shape.end());
      synthetic.numClasses =
          reader.integer(spec, "num_classes", synthetic.numClasses);
      synthetic.vocabSize = reader.integer(spec, "vocab_size", 0);
      synthetic.seed = uint64_t(reader.integer(spec, "seed", 0));
    } else {
      reader.error(
          spec.loc,
          "unknown data type '" + plan.type + "' in '" + key +
              "'; expected idx, tokens, image_folder, mds, synthetic or "
              "supplied");
    }
    plan.limit = reader.get(spec, "limit");
    plan.limitCount = reader.integer(spec, "limit", 0);

    DataLoaderOptions &options = plan.options;
    options.batchSize = reader.integer(spec, "batch_size", options.batchSize);
    options.shuffle = reader.boolean(spec, "shuffle", training);
    options.dropLast = reader.boolean(spec, "drop_last", training);
    options.numWorkers = int(reader.integer(spec, "num_workers", 0));
    const RecipeValue &normalize = reader.mapping(spec, "normalize");
    options.transforms.mean = reader.numbers(normalize, "mean");
    options.transforms.std = reader.numbers(normalize, "std");
    options.transforms.randomCropPadding =
        reader.integer(spec, "random_crop_padding", 0);
    options.transforms.horizontalFlip =
        reader.boolean(spec, "horizontal_flip", false);
    imageCuts(spec, options.transforms);
    options.transforms.channelsLast =
        reader.boolean(spec, "channels_last", false);
    if (plan.type == "mds") {
      readStreamingOrder(reader, spec, options);
      bool remote = !plan.remote.empty();
      for (const StreamPlan &stream : plan.streams)
        remote |= !stream.remote.empty();
      // Streaming's default: eight batches ahead.
      options.predownload = reader.integer(spec, "predownload",
                                           remote ? 8 * options.batchSize : 0);
      if (options.predownload < 0)
        reader.error(reader.get(spec, "predownload")->loc,
                     "'predownload' must not be negative");
      if ((!plan.streams.empty() || plan.epochSize) && !options.streaming)
        reader.error(spec.loc, "'streams' and 'epoch_size' need Streaming's "
                               "order, not shuffle_algo composer");
      if ((plan.streams.size() > 1 || plan.epochSize) && plan.limit)
        reader.error(plan.limit->loc, "'limit' does not combine with "
                                      "several streams or 'epoch_size'");
    }
    plan.skipBadSamples = reader.boolean(spec, "skip_bad_samples", false);
    if (options.batchSize <= 0)
      reader.error(spec.loc, "'batch_size' must be positive");
    if (options.numWorkers < 0)
      reader.error(spec.loc, "'num_workers' must not be negative");
    if (options.transforms.mean.size() != options.transforms.std.size())
      reader.error(normalize.loc, "'mean' and 'std' must have one value "
                                  "per channel each");
    return plan;
  }

  /// An evaluator's data section and, beside its data keys, `metrics`,
  /// `interval` and `subset_num_batches`.
  struct EvaluatorPlan {
    std::string label;
    DataPlan data;
    std::vector<std::shared_ptr<Metric>> metrics;
    std::optional<Time> interval;
    int64_t subsetNumBatches = 0;
  };

  std::optional<EvaluatorPlan> planEvaluator(const RecipeValue &map,
                                             StringRef key, StringRef label) {
    std::optional<DataPlan> data = planData(map, key, /*training=*/false);
    if (!data)
      return std::nullopt;
    EvaluatorPlan plan;
    plan.label = label.str();
    const RecipeValue &spec = *data->node;
    plan.data = std::move(*data);
    if (const RecipeValue *metrics = reader.get(spec, "metrics")) {
      if (metrics->kind != RecipeValue::Kind::Sequence) {
        reader.markRead(*metrics);
        reader.error(metrics->loc, "'metrics' must be a list of metric names "
                                   "or {name: ..., options} mappings");
      } else {
        for (const RecipeValue &item : metrics->items)
          if (auto created = component<Metric>(item, "metric", findMetric,
                                               getRegisteredMetrics))
            plan.metrics.push_back(std::move(created));
      }
    }
    if (reader.get(spec, "interval"))
      plan.interval = reader.time(spec, "interval", Time{});
    plan.subsetNumBatches = reader.integer(spec, "subset_num_batches", 0);
    if (plan.subsetNumBatches < 0)
      reader.error(reader.get(spec, "subset_num_batches")->loc,
                   "'subset_num_batches' must not be negative");
    return plan;
  }

  /// `eval_data` (the evaluator `eval`) and the `evaluators` mapping.
  std::vector<EvaluatorPlan> planEvaluators(const RecipeValue &root) {
    std::vector<EvaluatorPlan> plans;
    if (auto eval = planEvaluator(root, "eval_data", "eval"))
      plans.push_back(std::move(*eval));
    const RecipeValue &evaluators = reader.mapping(root, "evaluators");
    for (const RecipeValue::Entry &entry : evaluators.entries) {
      if (llvm::any_of(plans, [&](const EvaluatorPlan &plan) {
            return plan.label == entry.key;
          })) {
        reader.markRead(entry.value);
        entry.used = true;
        reader.error(entry.keyLoc,
                     "evaluator '" + entry.key +
                         "' is defined twice ('eval_data' is the evaluator "
                         "'eval')");
        continue;
      }
      if (auto plan = planEvaluator(evaluators, entry.key, entry.key))
        plans.push_back(std::move(*plan));
    }
    return plans;
  }

  /// `key: N` or `key: [H, W]` as (H, W); (0, 0) when absent.
  std::array<int64_t, 2> imageSize(const RecipeValue &map, StringRef key) {
    const RecipeValue *value = reader.get(map, key);
    if (!value)
      return {0, 0};
    std::array<int64_t, 2> size{0, 0};
    if (value->kind == RecipeValue::Kind::Sequence) {
      std::vector<double> hw = reader.numbers(map, key);
      if (hw.size() == 2)
        size = {int64_t(hw[0]), int64_t(hw[1])};
    } else {
      int64_t n = reader.integer(map, key, 0);
      size = {n, n};
    }
    if (size[0] <= 0 || size[1] <= 0 || size[0] > (1 << 16) ||
        size[1] > (1 << 16))
      reader.error(value->loc,
                   "'" + key + "' must be a positive size N or [H, W]");
    return size;
  }

  /// torchvision's RandomResizedCrop, Resize and CenterCrop.
  void imageCuts(const RecipeValue &spec, ImageTransforms &transforms) {
    if (const RecipeValue *node = reader.get(spec, "random_resized_crop")) {
      RandomResizedCrop crop;
      if (node->kind != RecipeValue::Kind::Mapping) {
        reader.error(node->loc, "'random_resized_crop' must be a mapping "
                                "with 'size' (and 'scale', 'ratio')");
        return;
      }
      auto [h, w] = imageSize(*node, "size");
      if (!h)
        reader.error(node->loc, "'random_resized_crop' needs 'size'");
      crop.height = h;
      crop.width = w;
      std::vector<double> scale = reader.numbers(*node, "scale");
      std::vector<double> ratio = reader.numbers(*node, "ratio");
      if (!scale.empty()) {
        if (scale.size() != 2 ||
            !(scale[0] > 0 && scale[0] <= scale[1] && scale[1] <= 1))
          reader.error(reader.get(*node, "scale")->loc,
                       "'scale' must be [low, high] with 0 < low <= high "
                       "<= 1");
        else
          std::tie(crop.scaleLow, crop.scaleHigh) =
              std::make_pair(scale[0], scale[1]);
      }
      if (!ratio.empty()) {
        if (ratio.size() != 2 || !(ratio[0] > 0 && ratio[0] <= ratio[1]))
          reader.error(reader.get(*node, "ratio")->loc,
                       "'ratio' must be [low, high] with 0 < low <= high");
        else
          std::tie(crop.ratioLow, crop.ratioHigh) =
              std::make_pair(ratio[0], ratio[1]);
      }
      transforms.randomResizedCrop = crop;
    }
    const RecipeValue *resize = reader.get(spec, "resize");
    transforms.resizeShorter = reader.integer(spec, "resize", 0);
    if (resize &&
        (resize->kind != RecipeValue::Kind::Scalar ||
         transforms.resizeShorter <= 0 || transforms.resizeShorter > (1 << 16)))
      reader.error(resize->loc, "'resize' takes one positive number, the "
                                "shorter side; use center_crop for [H, W]");
    auto [ch, cw] = imageSize(spec, "center_crop");
    transforms.centerCropHeight = ch;
    transforms.centerCropWidth = cw;
    if (transforms.randomResizedCrop && (resize || ch))
      reader.error(spec.loc, "'random_resized_crop' does not combine with "
                             "'resize' or 'center_crop'");
  }

  std::shared_ptr<const Dataset> openDataset(const DataPlan &plan) {
    if (plan.type == "idx")
      return loadIdx(plan.images->scalar, plan.labels->scalar);
    if (plan.type == "tokens")
      return openTokenFile(plan.path->scalar, plan.sequenceLength,
                           plan.tokenBytes);
    if (plan.type == "image_folder") {
      std::string root = plan.root ? plan.root->scalar : "";
      if (plan.index)
        return openImageList(plan.index->scalar, root);
      return openImageFolder(root);
    }
    if (plan.type == "mds")
      return openStreams(plan, nullptr);
    return makeSynthetic(plan.synthetic);
  }

  /// An mds section's streams (one without `streams`), one after another;
  /// with `order`, their shards and weights go into it.
  std::shared_ptr<const Dataset> openStreams(const DataPlan &plan,
                                             StreamingOrderSpec *order) {
    std::vector<StreamPlan> streams = plan.streams;
    if (streams.empty())
      streams.push_back({plan.remote, plan.path->scalar, {}, {}});
    std::vector<std::shared_ptr<const Dataset>> parts;
    std::vector<StreamWeight> weights;
    std::vector<int64_t> samplesPerStream;
    for (const StreamPlan &stream : streams) {
      MdsOptions mds = plan.mds;
      if (!stream.remote.empty())
        mds.remote = std::make_shared<ShardCache>(stream.remote, stream.local,
                                                  plan.remoteOptions);
      auto reader = std::make_shared<const MdsReader>(stream.local, mds);
      if (order) {
        for (const MdsShard &shard : reader->shards())
          order->samplesPerShard.push_back(shard.samples);
        order->shardsPerStream.push_back(int64_t(reader->shards().size()));
      }
      samplesPerStream.push_back(reader->size());
      weights.push_back(stream.weight);
      parts.push_back(
          std::make_shared<MdsDataset>(std::move(reader), plan.inputColumn,
                                       plan.targetColumn, plan.columns));
    }
    if (order)
      order->choosePerStream = streamChoices(
          weights, samplesPerStream, plan.epochSize, order->shuffleSeed);
    return concatenateDatasets(std::move(parts));
  }

  std::shared_ptr<BatchLoader> loadData(const DataPlan &plan) {
    if (plan.type == "supplied")
      return supplied->loaders.at(plan.key);
    std::shared_ptr<const Dataset> dataset;
    const RecipeValue *blame = plan.node;
    if (plan.type == "idx")
      blame = plan.images;
    else if (plan.type == "tokens" || (plan.type == "mds" && plan.path))
      blame = plan.path;
    else if (plan.type == "image_folder")
      blame = plan.index ? plan.index : plan.root;
    DataLoaderOptions options = plan.options;
    try {
      if (plan.type == "mds" && options.streaming)
        dataset = openStreams(plan, &*options.streaming);
      else
        dataset = openDataset(plan);
    } catch (const std::exception &e) {
      reader.error(blame->loc, e.what());
      return nullptr;
    }
    if (plan.limit && options.streaming) {
      // Streaming shuffles by shard: a limit keeps the first shards' samples.
      int64_t left = plan.limitCount;
      for (int64_t &samples : options.streaming->samplesPerShard) {
        samples = std::min(samples, std::max<int64_t>(left, 0));
        left -= samples;
      }
      options.streaming->choosePerStream.clear();
    }
    if (plan.limit) {
      if (plan.limitCount <= 0 || plan.limitCount > dataset->size()) {
        reader.error(plan.limit->loc,
                     "'limit' must be in [1, " + Twine(dataset->size()) + "]");
        return nullptr;
      }
      dataset = firstSamples(std::move(dataset), plan.limitCount);
    }
    if (plan.skipBadSamples)
      dataset = std::make_shared<SkipBadSamples>(std::move(dataset));
    try {
      return std::make_shared<DataLoader>(dataset, options);
    } catch (const std::exception &e) {
      reader.error(plan.node->loc,
                   Twine("bad '") + plan.key + "': " + e.what());
      return nullptr;
    }
  }

  void optimizer(const RecipeValue &root, OptimizerSpec &spec) {
    const RecipeValue &map = reader.mapping(root, "optimizer");
    spec.name = reader.string(map, "name", spec.name);
    spec.lr = reader.number(map, "lr", spec.lr);
    spec.momentum = reader.number(map, "momentum", spec.momentum);
    spec.dampening = reader.number(map, "dampening", spec.dampening);
    spec.nesterov = reader.boolean(map, "nesterov", spec.nesterov);
    spec.weightDecay = reader.number(map, "weight_decay", spec.weightDecay);
    spec.eps = reader.number(map, "eps", spec.eps);
    if (const RecipeValue *betas = reader.get(map, "betas")) {
      std::vector<double> values = reader.numbers(map, "betas");
      if (values.size() != 2)
        reader.error(betas->loc, "'betas' must be two numbers");
      else
        std::tie(spec.beta1, spec.beta2) = std::pair(values[0], values[1]);
    }
    spec.weightDecayExclude = reader.strings(map, "weight_decay_exclude");
    // The patterns are checked against the model's names when it trains.
    check(map, [&] {
      OptimizerSpec values = spec;
      values.weightDecayExclude.clear();
      Optimizer(values, {torch::zeros({1}, torch::requires_grad())});
    });
  }

  void scheduler(const RecipeValue &root, SchedulerSpec &spec) {
    const RecipeValue &map = reader.mapping(root, "scheduler");
    spec.name = reader.string(map, "name", spec.name);
    spec.alpha = reader.number(map, "alpha", spec.alpha);
    spec.gamma = reader.number(map, "gamma", spec.gamma);
    spec.stepSize = reader.time(map, "step_size", spec.stepSize);
    spec.milestones = reader.times(map, "milestones");
    spec.period = reader.time(map, "period", spec.period);
    spec.warmup = reader.time(map, "t_warmup", spec.warmup);
    spec.tMax = reader.time(map, "t_max", spec.tMax);
    spec.alphaI = reader.number(map, "alpha_i", spec.alphaI);
    spec.alphaF = reader.number(map, "alpha_f", spec.alphaF);
    spec.power = reader.number(map, "power", spec.power);
    spec.scaleWarmup = reader.boolean(map, "scale_warmup", spec.scaleWarmup);
    spec.t0 = reader.time(map, "t_0", spec.t0);
    spec.tMult = reader.number(map, "t_mult", spec.tMult);
    check(map, [&] { createScheduler(spec); });
  }

  /// `algorithms:` maps registered names to their options, in run order.
  void algorithms(const RecipeValue &root,
                  std::vector<std::unique_ptr<Algorithm>> &out) {
    namedComponents<Algorithm>(
        reader.mapping(root, "algorithms"), "algorithm", findAlgorithm,
        getRegisteredAlgorithms,
        [&](std::unique_ptr<Algorithm> algorithm, llvm::SMLoc at) {
          out.push_back(std::move(algorithm));
          algorithmLocs.push_back(at);
        });
  }

  /// Every entry of `map` as the registered `kind` its key names, created
  /// from its value's options and given to `add` with the key's location.
  template <typename Product, typename Find, typename All, typename Add>
  void namedComponents(const RecipeValue &map, StringRef kind, Find find,
                       All all, Add add) {
    for (const RecipeValue::Entry &entry : map.entries) {
      entry.used = true;
      const ComponentInfo<Product> *info = find(entry.key);
      if (!info) {
        // One error for the name, none for its options.
        reader.markRead(entry.value);
        reader.error(entry.keyLoc, "unknown " + kind + " '" + entry.key +
                                       "'; expected one of: " + namesOf(all()));
        continue;
      }
      if (auto component = createWithOptions(*info, entry))
        add(std::move(component), entry.keyLoc);
    }
  }

  /// `loss:` a registered loss by name, or a mapping of its `name` and its
  /// options.
  void loss(const RecipeValue &root, TrainerConfig &config) {
    const RecipeValue *value = reader.get(root, "loss");
    if (value && value->kind == RecipeValue::Kind::Scalar &&
        value->scalar == "model") {
      config.modelCall.lossFromModel = true;
      return;
    }
    if (value)
      if (auto created =
              component<Loss>(*value, "loss", findLoss, getRegisteredLosses))
        config.loss = std::move(created);
  }

  /// A registered `kind` (loss, metric) given by name, or as a mapping of
  /// its `name` and its options; null after an error.
  template <typename Product, typename Find, typename All>
  std::unique_ptr<Product> component(const RecipeValue &value, StringRef kind,
                                     Find find, All all) {
    RecipeValue noOptions;
    noOptions.kind = RecipeValue::Kind::Mapping;
    noOptions.loc = value.loc;
    const RecipeValue *options = &noOptions;
    const RecipeValue *name = &value;
    if (value.kind == RecipeValue::Kind::Mapping) {
      name = reader.require(value, "name", kind);
      if (!name) {
        reader.markRead(value); // one error, not one per option
        return nullptr;
      }
      options = &value;
    }
    if (name->kind != RecipeValue::Kind::Scalar) {
      reader.markRead(value);
      reader.error(name->loc, kind + " must be a " + kind +
                                  "'s name, or a mapping of its 'name' and "
                                  "options");
      return nullptr;
    }
    const ComponentInfo<Product> *info = find(name->scalar);
    if (!info) {
      reader.markRead(value);
      reader.error(name->loc, "unknown " + kind + " '" + name->scalar +
                                  "'; expected one of: " + namesOf(all()));
      return nullptr;
    }
    return create(*info, *options, name->loc);
  }

  /// Where each created algorithm is named, in order.
  std::vector<llvm::SMLoc> algorithmLocs;

private:
  /// The component `info` names at `entry`, whose value is its options'
  /// mapping or empty (`memory_monitor:`); null after an error.
  template <typename Product>
  std::unique_ptr<Product> createWithOptions(const ComponentInfo<Product> &info,
                                             const RecipeValue::Entry &entry) {
    RecipeValue noOptions;
    noOptions.kind = RecipeValue::Kind::Mapping;
    noOptions.loc = entry.keyLoc;
    const RecipeValue &options = entry.value.isNull() ? noOptions : entry.value;
    if (options.kind != RecipeValue::Kind::Mapping) {
      reader.markRead(entry.value);
      reader.error(entry.value.loc,
                   "options of '" + entry.key + "' must be a mapping");
      return nullptr;
    }
    return create(info, options, entry.keyLoc);
  }

  /// "a, b, c": the names of registered components, for messages.
  template <typename Info>
  static std::string namesOf(const std::vector<const Info *> &infos) {
    std::vector<std::string> names;
    for (const Info *info : infos)
      names.push_back(info->name);
    return llvm::join(names, ", ");
  }

  /// Creates the component `info` describes from the recipe mapping
  /// `options`. A bad option is an error at the first option at fault the
  /// recipe sets, or at `at` (the component's name) when a default is at
  /// fault; returns null after an error.
  template <typename Product>
  std::unique_ptr<Product> create(const ComponentInfo<Product> &info,
                                  const RecipeValue &options, llvm::SMLoc at) {
    OptionValues given;
    std::map<std::string, llvm::SMLoc> givenAt;
    bool complete = true;
    for (const OptionInfo &option : info.options) {
      const RecipeValue *value =
          option.required ? reader.require(options, option.key, info.name)
                          : reader.get(options, option.key);
      if (!value) {
        complete &= !option.required;
        continue;
      }
      givenAt[option.key] = value->loc;
      if (auto typed = reader.option(*value, option.key, option.type()))
        given.emplace(option.key, std::move(*typed));
    }
    if (!complete)
      return nullptr;
    try {
      return info.create(given);
    } catch (const InvalidOption &e) {
      auto key = llvm::find_if(e.options(), [&](const std::string &option) {
        return givenAt.count(option);
      });
      reader.error(key == e.options().end() ? at : givenAt[*key],
                   "bad '" + info.name + "': " + e.what());
    } catch (const std::exception &e) {
      reader.error(at, "bad '" + info.name + "': " + e.what());
    }
    return nullptr;
  }

  /// Builds the runtime object once to report its own validation errors at
  /// the recipe's mapping.
  template <typename Fn> void check(const RecipeValue &map, Fn build) {
    if (reader.failed())
      return;
    try {
      build();
    } catch (const std::invalid_argument &e) {
      reader.error(map.loc, e.what());
    }
  }

  RecipeReader &reader;
  /// What the caller brings in place of the recipe's model and data.
  const SuppliedInputs *supplied;
  /// parallelism.units: the units composer-shard-params makes.
  std::string shardUnits = "blocks";
};
} // namespace

std::optional<std::string>
resolveRecipe(const std::string &recipePath,
              const std::vector<std::string> &overrides,
              llvm::raw_ostream &errors) {
  llvm::SourceMgr sourceMgr;
  RecipeValue root;
  if (!readRecipeTree(sourceMgr, recipePath, overrides, errors, root))
    return std::nullopt;
  std::string text;
  llvm::raw_string_ostream out(text);
  printRecipeTree(root, out);
  return text;
}

/// Builds the configuration from the tree at `root`; see loadRecipe.
static std::optional<TrainerConfig>
buildConfig(llvm::SourceMgr &sourceMgr, const RecipeValue &root,
            const DistributedEnv &env, const SuppliedInputs *supplied) {
  RecipeReader reader(sourceMgr);
  Builder builder(reader, supplied);
  TrainerConfig config;
  const RecipeValue *model =
      supplied ? reader.get(root, "model") : reader.require(root, "model", "");
  if (supplied && model)
    reader.error(model->loc, "'model' is the module given to the trainer");
  builder.trainer(root, config);
  builder.optimizer(root, config.optimizer);
  builder.scheduler(root, config.scheduler);
  builder.algorithms(root, config.algorithms);
  Builder::OutputPlan outputs = builder.planOutputs(root);
  auto trainPlan = builder.planData(root, "train_data", /*training=*/true);
  std::vector<Builder::EvaluatorPlan> evaluatorPlans =
      builder.planEvaluators(root);
  std::vector<Builder::DataPlan *> dataPlans;
  if (trainPlan)
    dataPlans.push_back(&*trainPlan);
  for (Builder::EvaluatorPlan &plan : evaluatorPlans)
    dataPlans.push_back(&plan.data);
  for (Builder::DataPlan *plan : dataPlans) {
    plan->options.seed = config.seed;
    plan->options.rank = env.rank;
    plan->options.worldSize = env.worldSize;
    plan->options.ranksPerNode = env.localWorldSize;
    // uint8 images cross to an accelerator and are normalized there.
    plan->options.transforms.normalizeOnDevice = !config.device.is_cpu();
  }
  if (!trainPlan && !reader.failed())
    reader.error(root.loc, "missing required key 'train_data'");
  // Unknown keys are reported before anything slow is loaded.
  reader.reportUnknown(root);
  if (reader.failed())
    return std::nullopt;

  config.trainLoader = builder.loadData(*trainPlan);
  for (Builder::EvaluatorPlan &plan : evaluatorPlans)
    config.evaluators.push_back({plan.label, builder.loadData(plan.data),
                                 std::move(plan.metrics), plan.interval,
                                 plan.subsetNumBatches});
  // Algorithms check the samples they work on, at their names.
  if (config.trainLoader)
    for (size_t i = 0; i < config.algorithms.size(); ++i) {
      try {
        config.algorithms[i]->checkData(config.trainLoader->spec());
      } catch (const std::invalid_argument &e) {
        reader.error(builder.algorithmLocs[i], e.what());
      }
    }
  // The columns model_inputs names must be the training data's.
  if (config.trainLoader)
    if (const RecipeValue *inputs = reader.get(root, "model_inputs")) {
      try {
        ModelCall(config.modelCall).bind(config.trainLoader->spec());
      } catch (const std::invalid_argument &e) {
        reader.error(inputs->loc, e.what());
      }
    }
  if (reader.failed())
    return std::nullopt;
  if (supplied)
    config.model = supplied->model;
  else if (!builder.loadModel(*model, config))
    return std::nullopt;
  if (config.sharding == ShardingStrategy::FullShard &&
      !builder.shardParameters(model ? *model : root, config, env.rank == 0))
    return std::nullopt;
  // One process speaks for the group.
  if (env.rank == 0 && !builder.addOutputs(outputs, config))
    return std::nullopt;
  config.hyperparameters = flattenRecipeTree(root);
  return config;
}

std::optional<TrainerConfig>
loadRecipe(const std::string &recipePath,
           const std::vector<std::string> &overrides, llvm::raw_ostream &errors,
           const DistributedEnv &env) {
  llvm::SourceMgr sourceMgr;
  RecipeValue root;
  if (!readRecipeTree(sourceMgr, recipePath, overrides, errors, root))
    return std::nullopt;
  return buildConfig(sourceMgr, root, env, /*supplied=*/nullptr);
}

std::optional<TrainerConfig> loadRecipeText(const std::string &text,
                                            const std::string &name,
                                            const SuppliedInputs &supplied,
                                            llvm::raw_ostream &errors,
                                            const DistributedEnv &env) {
  llvm::SourceMgr sourceMgr;
  RecipeValue root;
  if (!readRecipeTree(sourceMgr,
                      llvm::MemoryBuffer::getMemBufferCopy(text, name), {},
                      errors, root))
    return std::nullopt;
  return buildConfig(sourceMgr, root, env, &supplied);
}

} // namespace composer::train
