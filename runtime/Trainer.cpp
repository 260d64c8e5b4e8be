//===- Trainer.cpp - The training loop ------------------------------------===//
//
// Fires Composer's events in Composer's order, and between them runs the
// training step's stages (TrainingStep.h), which the algorithms that change
// the step wrap. Time advances after AFTER_TRAIN_BATCH, so BATCH_END and
// checkpoints see the finished batch, and algorithms draw their randomness
// from the batch being trained (State::generatorFor), which is what makes a
// resumed run exact.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Trainer.h"
#include "composer/Runtime/Gradients.h"
#include "composer/Runtime/Interrupt.h"
#include "composer/Runtime/MemoryLimit.h"

#include <torch/csrc/jit/runtime/graph_executor.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <iostream>
#include <sstream>

namespace composer::runtime {

namespace {
/// Whether a run at `now` has just crossed a multiple of `interval`; whole
/// epoch intervals are checked at epoch ends only, fractional ones (0.5ep)
/// in batches like the other units.
bool crossedInterval(const TimeContext &time, const Timestamp &now,
                     const Time &interval, bool epochBoundary) {
  if (interval.value <= 0)
    return false;
  if (interval.unit == TimeUnit::Epoch &&
      interval.value == std::floor(interval.value))
    return epochBoundary && now.epoch % int64_t(interval.value) == 0;
  if (epochBoundary)
    return false;
  double every = time.toBatches(interval);
  if (every <= 0)
    return false;
  return std::floor(double(now.batch) / every) >
         std::floor(double(now.batch - 1) / every);
}

/// While it lives, checkpoints save and load `standIn` (when given) as the
/// state's optimizer: a sharded run's whole optimizer.
class OptimizerStandIn {
public:
  OptimizerStandIn(State &state, Optimizer *standIn)
      : state_(state), own_(state.optimizer) {
    if (standIn)
      state_.optimizer = standIn;
  }
  ~OptimizerStandIn() { state_.optimizer = own_; }

private:
  State &state_;
  Optimizer *own_;
};
} // namespace

Trainer::Trainer(TrainerConfig config) : config_(std::move(config)) {
  if (!config_.trainLoader)
    throw std::invalid_argument("no training data");
  if (config_.trainLoader->batchesPerEpoch() <= 0)
    throw std::invalid_argument(
        "the training data gives no batch (" +
        std::to_string(config_.trainLoader->datasetSize()) + " samples)");
  if (config_.maxDuration.unit == TimeUnit::Duration)
    throw std::invalid_argument("max_duration cannot be in 'dur'");
  if (config_.scaleScheduleRatio <= 0)
    throw std::invalid_argument("scale_schedule_ratio must be positive");
  if (config_.microbatchSize < 0)
    throw std::invalid_argument(
        "device_train_microbatch_size must be positive");
  if (config_.cpuMemoryLimit < 0)
    throw std::invalid_argument("the CPU memory limit must not be negative");
  microbatchSize_ = config_.microbatchSize;
  if (config_.threads > 0)
    at::set_num_threads(config_.threads);
  torch::jit::setGraphExecutorOptimize(config_.jitOptimize);
  torch::manual_seed(config_.seed);

  state_.model = config_.model;
  state_.model.to(config_.device);
  state_.model.train();
  state_.parameters = namedParameters(state_.model);
  state_.device = config_.device;
  state_.precision = config_.precision;
  state_.seed = config_.seed;
  Communicator *communicator = config_.communicator.get();
  if (communicator) {
    state_.rank = communicator->rank();
    state_.worldSize = communicator->worldSize();
    auto shard = config_.trainLoader->shardedFor();
    if (shard &&
        (shard->first != state_.rank || shard->second != state_.worldSize))
      throw std::invalid_argument("the training data is sharded for rank " +
                                  std::to_string(shard->first) + " of " +
                                  std::to_string(shard->second) +
                                  ", this process is rank " +
                                  std::to_string(state_.rank) + " of " +
                                  std::to_string(state_.worldSize));
  }

  const BatchLoader &loader = *config_.trainLoader;
  state_.time.batchesPerEpoch = loader.batchesPerEpoch();
  // Samples and tokens count the whole group's.
  state_.time.samplesPerEpoch = loader.samplesPerEpoch() * state_.worldSize;
  state_.time.tokensPerEpoch =
      state_.time.samplesPerEpoch * loader.spec().tokensPerSample();
  state_.time.maxDuration = config_.maxDuration * config_.scaleScheduleRatio;

  std::vector<torch::Tensor> trainable;
  std::vector<std::pair<std::string, torch::Tensor>> namedTrainable;
  for (const auto &[name, parameter] : state_.parameters)
    if (parameter.requires_grad()) {
      trainable.push_back(parameter);
      namedTrainable.emplace_back(name, parameter);
    }
  if (trainable.empty())
    throw std::invalid_argument("the model has no trainable parameter");
  gradScaler_ =
      std::make_unique<GradScaler>(config_.precision == Precision::AmpFP16);
  bool sharded = communicator && config_.sharding != ShardingStrategy::None;
  if (!communicator && config_.sharding != ShardingStrategy::None)
    warnings_.push_back(std::string("sharding ") +
                        getShardingStrategyName(config_.sharding) +
                        " in one process has nothing to divide; training as "
                        "usual");
  if (communicator) {
    // Every rank starts from rank 0's weights.
    std::vector<torch::Tensor> tensors;
    for (const auto &[name, tensor] : state_.parameters)
      tensors.push_back(tensor);
    for (const auto &[name, tensor] : namedBuffers(state_.model))
      tensors.push_back(tensor);
    communicator->broadcast(tensors);
    if (!sharded)
      communicator->averageGradients(trainable, config_.findUnusedParameters);
  }
  std::vector<GatheredUnit> units;
  if (config_.sharding == ShardingStrategy::FullShard) {
    units = findGatheredUnits(state_.model);
    if (units.empty())
      throw std::invalid_argument(
          "full_shard (ZeRO-3) needs a model through composer-shard-params, "
          "which gathers each unit's parameters where it runs; run "
          "`composer-opt MODEL.pt --composer-shard-params --lower-to=runtime "
          "-o SHARDED.pt` and train SHARDED.pt");
  }
  if (sharded) {
    sharded_ = std::make_unique<ShardedDataParallel>(
        *communicator, config_.optimizer, namedTrainable, *gradScaler_, units);
    if (sharded_->shardsParameters())
      setUnitGatherer(sharded_.get());
    optimizer_ = sharded_->createOptimizer();
    state_.gradientShards = sharded_.get();
  } else {
    optimizer_ = std::make_unique<Optimizer>(config_.optimizer, namedTrainable);
  }
  state_.optimizer = optimizer_.get();
  SchedulerSpec schedule = config_.scheduler;
  schedule.scaleScheduleRatio = config_.scaleScheduleRatio;
  scheduler_ = createScheduler(schedule);
  // Fail now, not at the first batch, if autocast cannot run here.
  { AutocastGuard probe(config_.precision, config_.device); }

  state_.communicator = communicator;
  state_.trainLoader = config_.trainLoader.get();
  state_.lossFunction = config_.loss;
  const SampleSpec &spec = config_.trainLoader->spec();
  state_.modelCall = config_.modelCall;
  state_.modelCall.bind(spec);
  for (const auto &algorithm : config_.algorithms)
    algorithm->checkData(spec);
  standardStages_ = std::make_unique<StandardStages>(*gradScaler_);
  step_ = std::make_unique<TrainingStep>(state_, *standardStages_);
  for (const auto &algorithm : config_.algorithms)
    if (StepStages *stages = algorithm->stepStages())
      step_->addStages(*stages);
  // Innermost, so that algorithms wrap the sharded reduce and step.
  if (sharded_)
    step_->addStages(*sharded_);
  // Composer warns when more than one algorithm interpolates the loss.
  std::vector<std::string> interpolating;
  for (const auto &algorithm : config_.algorithms)
    if (algorithm->interpolatesLoss())
      interpolating.push_back(algorithm->name());
  if (interpolating.size() > 1)
    warnings_.push_back("multiple algorithms interpolating the loss can lead "
                        "to unexpected behavior: " +
                        joinNames(interpolating));
  for (const std::string &warning : warnings_)
    std::cerr << "composer-train: warning: " << warning << "\n";

  if (config_.evalLoader)
    config_.evaluators.insert(config_.evaluators.begin(),
                              Evaluator{"eval", config_.evalLoader});
  for (size_t i = 0; i < config_.evaluators.size(); ++i) {
    Evaluator &evaluator = config_.evaluators[i];
    if (!evaluator.loader)
      throw std::invalid_argument("evaluator '" + evaluator.label +
                                  "' has no data");
    for (size_t j = 0; j < i; ++j)
      if (config_.evaluators[j].label == evaluator.label)
        throw std::invalid_argument("two evaluators are labelled '" +
                                    evaluator.label + "'");
    if (evaluator.subsetNumBatches < 0)
      throw std::invalid_argument("subset_num_batches must not be negative");
    if (evaluator.metrics.empty())
      evaluator.metrics = createDefaultMetrics(config_.loss);
  }
  lastEvalBatch_.assign(config_.evaluators.size(), -1);

  extras_.algorithms = &config_.algorithms;
  extras_.gradScaler = gradScaler_.get();
  extras_.pipeline = config_.pipeline;
  if (config_.autoresume && config_.saveWeightsOnly)
    throw std::invalid_argument("autoresume needs whole checkpoints; it "
                                "cannot resume from save_weights_only ones");
  if (!config_.saveFolder.empty())
    checkpoints_ = std::make_unique<CheckpointFolder>(
        config_.saveFolder, config_.saveNumCheckpointsToKeep,
        config_.saveWeightsOnly);
  fire(Event::Init);
}

Trainer::~Trainer() {
  if (sharded_ && sharded_->shardsParameters())
    setUnitGatherer(nullptr);
}

Batch Trainer::onDevice(Batch batch, const BatchLoader &loader) const {
  return loader.toDevice(std::move(batch), config_.device);
}

/// Composer's AFTER_* events (EVAL_AFTER_FORWARD is not one of them).
static bool isAfterEvent(Event event) {
  switch (event) {
  case Event::AfterLoad:
  case Event::AfterDataloader:
  case Event::AfterForward:
  case Event::AfterLoss:
  case Event::AfterBackward:
  case Event::AfterTrainBatch:
    return true;
  default:
    return false;
  }
}

/// Composer's engine: the algorithms that match, in recipe order, reversed
/// on AFTER_* events.
void Trainer::fire(Event event) {
  std::vector<Algorithm *> matched;
  for (auto &algorithm : config_.algorithms)
    if (algorithm->match(event, state_))
      matched.push_back(algorithm.get());
  if (isAfterEvent(event))
    std::reverse(matched.begin(), matched.end());
  for (Algorithm *algorithm : matched)
    applyAlgorithm(*algorithm, event);
  for (auto &callback : config_.callbacks)
    callback->runEvent(event, state_, config_.logger);
}

void Trainer::applyAlgorithm(Algorithm &algorithm, Event event) {
  if (!sharded_ || !sharded_->shardsParameters() ||
      !algorithm.readsWholeWeights(event)) {
    algorithm.apply(event, state_, config_.logger);
    return;
  }
  auto versions = [&] {
    std::vector<int64_t> all;
    for (const auto &[name, parameter] : state_.parameters)
      all.push_back(parameter._version());
    return all;
  };
  if (wholeWeightReaders_.insert(algorithm.name()).second && state_.rank == 0)
    std::cerr << "composer-train: " << algorithm.name()
              << " reads the whole weights: under full_shard they are "
                 "gathered for it at each event it runs (an all-gather of "
                 "the parameters)\n";
  sharded_->materializeParameters();
  std::vector<int64_t> before = versions();
  algorithm.apply(event, state_, config_.logger);
  sharded_->releaseParameters(/*takeWeights=*/versions() != before);
}

std::optional<std::string>
Trainer::newestVerified(const CheckpointFolder &folder) {
  std::vector<std::string> candidates = folder.candidates();
  std::string reasons;
  for (const std::string &candidate : candidates) {
    try {
      verifyCheckpoint(candidate);
      return candidate;
    } catch (const std::runtime_error &error) {
      // Kept on disk: someone may want to look at it.
      warnings_.push_back(std::string("skipping a checkpoint that does not "
                                      "verify: ") +
                          error.what());
      std::cerr << "composer-train: warning: " << warnings_.back() << "\n";
      reasons += std::string("\n  ") + error.what();
    }
  }
  if (!candidates.empty())
    throw std::runtime_error("autoresume: no checkpoint in " + folder.folder() +
                             " verifies:" + reasons);
  return std::nullopt;
}

void Trainer::restore() {
  // Composer fires both whether or not anything is loaded.
  fire(Event::BeforeLoad);
  std::optional<std::string> path;
  if (config_.autoresume && checkpoints_)
    path = newestVerified(*checkpoints_);
  // A run that resumes its own checkpoint takes all of it.
  LoadOptions options;
  if (!path && !config_.loadPath.empty()) {
    path = config_.loadPath;
    options = config_.loadOptions;
  }
  if (!path) {
    fire(Event::AfterLoad);
    return;
  }
  // A sharded run loads the whole optimizer state and keeps its shard.
  // Under full_shard the parameters are whole while it loads, then each
  // rank takes its chunks.
  std::unique_ptr<Optimizer> whole;
  if (sharded_)
    whole = sharded_->createWholeOptimizer();
  if (sharded_ && sharded_->shardsParameters())
    sharded_->materializeParameters();
  LoadReport report;
  {
    OptimizerStandIn standIn(state_, whole.get());
    report = loadCheckpoint(*path, state_, extras_, options);
  }
  if (sharded_ && sharded_->shardsParameters())
    sharded_->releaseParameters(/*takeWeights=*/true);
  if (sharded_)
    sharded_->scatterOptimizer(*whole, *optimizer_);
  auto warn = [&](const std::vector<std::string> &names, const char *what) {
    if (names.empty())
      return;
    warnings_.push_back(*path + ": " + what + ": " + joinNames(names));
    std::cerr << "composer-train: warning: " << warnings_.back() << "\n";
  };
  warn(report.missing, "model tensors not in the checkpoint (kept as they "
                       "were)");
  warn(report.unexpected, "checkpoint tensors not in the model (not loaded)");
  warn(report.ignored, "checkpoint tensors left out by load_ignore_keys");
  fire(Event::AfterLoad);
  resumed_ = path;
  lastCheckpointBatch_ = state_.timestamp.batch;
}

double Trainer::groupLoss() {
  // What is logged, and what decides a NaN stop on every rank alike.
  torch::Tensor mean = state_.loss.detach().to(torch::kDouble).reshape({1});
  int interrupt = interruptSignal();
  if (Communicator *communicator = config_.communicator.get()) {
    // Ranks stop at the same batch, or their next collective would hang:
    // which signals any rank received rides on the loss's all-reduce.
    torch::Tensor all =
        torch::cat({mean, torch::tensor({double(interrupt == SIGINT),
                                         double(interrupt == SIGTERM)},
                                        mean.options())});
    communicator->allReduceSum(all);
    all = all.cpu();
    mean = all.narrow(0, 0, 1) / state_.worldSize;
    interrupt = all[2].item<double>() > 0   ? SIGTERM
                : all[1].item<double>() > 0 ? SIGINT
                                            : 0;
  }
  if (interrupt && !interruptedBy_)
    interruptedBy_ = interrupt;
  double loss = mean.item<double>();
  if (std::isfinite(loss))
    return loss;
  const Timestamp &now = state_.timestamp;
  std::ostringstream message;
  message << "the training loss is " << loss << " at epoch " << now.epoch
          << ", batch " << now.batch << "; stopping.";
  if (lastCheckpoint_)
    message << " The last good checkpoint is " << *lastCheckpoint_ << ".";
  else if (resumed_)
    message << " The run resumed from " << *resumed_ << ".";
  else
    message << " No checkpoint was written.";
  throw TrainingError(message.str());
}

void Trainer::trainBatch(Batch batch) {
  Timestamp &now = state_.timestamp;
  state_.batch = std::move(batch);
  fire(Event::BatchStart);
  fire(Event::BeforeTrainBatch);
  optimizer_->setLrMultiplier(scheduler_->multiplier(now, state_.time));
  const Batch whole = state_.batch;
  {
    std::optional<ScopedCpuMemoryLimit> limit;
    if (config_.cpuMemoryLimit > 0 && config_.device.is_cpu())
      limit.emplace(config_.cpuMemoryLimit);
    if (config_.autoMicrobatch)
      accumulateGradientsAdapting(whole);
    else
      accumulateGradients(whole);
  }
  double loss = groupLoss();
  step_->reduce();
  state_.gradientsFinite = step_->clip(step_->unscale());
  fire(Event::AfterBackward);
  step_->optimizerStep(state_.gradientsFinite);
  step_->postStep();
  step_->microbatches().clear();
  fire(Event::AfterTrainBatch);

  // Composer counts the samples the loader gave, before any algorithm
  // dropped some (selective backprop).
  int64_t samples = loadedSamples_ * state_.worldSize;
  int64_t tokens = state_.batchTokens * state_.worldSize;
  ++now.batch;
  ++now.batchInEpoch;
  now.sample += samples;
  now.sampleInEpoch += samples;
  now.token += tokens;
  now.tokenInEpoch += tokens;
  std::map<std::string, double> metrics = {
      {"loss/train/total", loss},
      {"lr-" + config_.optimizer.name + "/group0", optimizer_->lr()}};
  if (config_.autoMicrobatch)
    metrics["trainer/device_train_microbatch_size"] = double(microbatchSize_);
  TrainingStateBytes held = heldState();
  metrics["memory/parameters_bytes"] = double(held.parameters);
  metrics["memory/gradients_bytes"] = double(held.gradients);
  metrics["memory/optimizer_state_bytes"] = double(held.optimizerState);
  if (Communicator *communicator = config_.communicator.get()) {
    // Since the last batch's metrics: this batch's collectives and any
    // evaluation's in between.
    CommunicationVolume sent = communicator->bytesSent();
    CommunicationVolume step = sent - loggedVolume_;
    loggedVolume_ = sent;
    metrics["communication/bytes/all_reduce"] = double(step.allReduce);
    metrics["communication/bytes/reduce_scatter"] = double(step.reduceScatter);
    metrics["communication/bytes/all_gather"] = double(step.allGather);
    metrics["communication/bytes/broadcast"] = double(step.broadcast);
    if (sharded_ && sharded_->shardsParameters()) {
      UnitGatherCounts gathers = sharded_->takeUnitGatherCounts();
      metrics["communication/unit_gathers"] = double(gathers.gathers);
      metrics["communication/unit_gathers_prefetched"] =
          double(gathers.prefetched);
    }
  }
  config_.logger.logMetrics(metrics, now.batch);
  fire(Event::BatchEnd);
}

TrainingStateBytes Trainer::heldState() {
  if (sharded_)
    return sharded_->memory(*optimizer_);
  auto bytes = [](const torch::Tensor &t) {
    return t.defined() ? int64_t(t.numel() * t.element_size()) : int64_t(0);
  };
  TrainingStateBytes held;
  for (const auto &[name, parameter] : state_.parameters)
    if (parameter.requires_grad()) {
      held.parameters += bytes(parameter);
      held.gradients += bytes(parameter.grad());
    }
  held.optimizerState = optimizer_->stateBytes();
  return held;
}

void Trainer::accumulateGradients(const Batch &batch) {
  zeroGradients(state_);
  int64_t size = microbatchSize_ > 0 ? std::min(microbatchSize_, batch.size())
                                     : batch.size();
  std::vector<Batch> parts = batch.split(size);
  const Loss &lossFunction = *state_.lossFunction;
  std::vector<double> shares(parts.size());
  double total = 0;
  for (size_t index = 0; index < parts.size(); ++index) {
    shares[index] = config_.accumulateOnTokens
                        ? double(lossFunction.termCount(parts[index].target))
                        : double(parts[index].size());
    total += shares[index];
  }
  // What the model and the loss see is recorded as algorithms leave it at
  // BEFORE_FORWARD and BEFORE_LOSS, so that recomputed gradients are those
  // of the same loss.
  std::vector<Microbatch> &microbatches = step_->microbatches();
  microbatches.clear();
  torch::Tensor batchLoss;
  for (size_t index = 0; index < parts.size(); ++index) {
    state_.microbatch = int64_t(index);
    state_.batch = std::move(parts[index]);
    Microbatch &microbatch = microbatches.emplace_back();
    microbatch.weight = total > 0 ? shares[index] / total : 0.0;
    {
      AutocastGuard autocast(config_.precision, config_.device);
      fire(Event::BeforeForward);
      microbatch.input = state_.batch.input;
      microbatch.columns = state_.batch.columns;
      state_.outputs = step_->forward(microbatch.input);
      fire(Event::AfterForward);
      fire(Event::BeforeLoss);
      microbatch.target = state_.batch.target;
      state_.loss = step_->loss(state_.outputs, microbatch.target);
      fire(Event::AfterLoss);
    }
    // Algorithms may replace the loss here (MixUp's interpolate_loss).
    fire(Event::BeforeBackward);
    torch::Tensor weighted = microbatch.weight == 1.0
                                 ? state_.loss
                                 : state_.loss * microbatch.weight;
    torch::Tensor share = weighted.detach().to(torch::kDouble);
    batchLoss = batchLoss.defined() ? batchLoss + share : share;
    step_->setOverlapReduction(!config_.autoMicrobatch &&
                               index + 1 == parts.size());
    step_->backward(weighted);
  }
  state_.microbatch = 0;
  state_.batch = batch;
  state_.loss = batchLoss;
}

void Trainer::accumulateGradientsAdapting(const Batch &batch) {
  if (microbatchSize_ <= 0)
    microbatchSize_ = batch.size();
  for (;;) {
    bool outOfMemory = false;
    try {
      accumulateGradients(batch);
    } catch (const std::exception &e) {
      if (!isOutOfMemory(e))
        throw;
      outOfMemory = true;
    }
    // Composer's rule: every rank halves when any rank ran out.
    if (Communicator *communicator = config_.communicator.get()) {
      torch::Tensor flag = torch::tensor({outOfMemory ? 1.0 : 0.0});
      communicator->allReduceSum(flag);
      outOfMemory = flag.item<double>() > 0;
    }
    if (!outOfMemory)
      return;
    // Free what the failed attempt holds before the next one.
    zeroGradients(state_);
    step_->microbatches().clear();
    state_.outputs = torch::Tensor();
    state_.loss = torch::Tensor();
    state_.microbatch = 0;
    state_.batch = batch;
    if (microbatchSize_ == 1)
      throw TrainingError("out of memory at epoch " +
                          std::to_string(state_.timestamp.epoch) + ", batch " +
                          std::to_string(state_.timestamp.batch) +
                          " with a microbatch of one sample; the model does "
                          "not fit");
    microbatchSize_ = (microbatchSize_ + 1) / 2;
    std::cerr << "composer-train: out of memory; retrying the batch with "
                 "device_train_microbatch_size "
              << microbatchSize_ << "\n";
  }
}

void Trainer::saveCheckpoint() {
  lastCheckpointBatch_ = state_.timestamp.batch;
  if (sharded_ && config_.shardedCheckpoints) {
    lastCheckpoint_ = checkpoints_->saveSharded(
        state_, extras_,
        sharded_->shardedState(config_.saveWeightsOnly ? nullptr
                                                       : optimizer_.get()),
        *config_.communicator);
    return;
  }
  // Ranks hold the same weights; one writes, all know the path. A sharded
  // run's ranks gather the optimizer state first, as one process holds it.
  std::unique_ptr<Optimizer> whole;
  if (sharded_ && !config_.saveWeightsOnly)
    whole = sharded_->gatherOptimizer(*optimizer_);
  // Under full_shard the weights are gathered for it, and freed after.
  bool gathersWeights = sharded_ && sharded_->shardsParameters();
  if (gathersWeights)
    sharded_->materializeParameters();
  if (state_.rank == 0) {
    OptimizerStandIn standIn(state_, whole.get());
    lastCheckpoint_ = checkpoints_->save(state_, extras_);
  } else {
    lastCheckpoint_ = checkpoints_->pathFor(state_);
  }
  if (gathersWeights)
    sharded_->releaseParameters(/*takeWeights=*/false);
}

void Trainer::maybeCheckpoint(Event event, const Time &interval) {
  if (checkpoints_ && crossedInterval(state_.time, state_.timestamp, interval,
                                      event == Event::EpochCheckpoint))
    saveCheckpoint();
  // As Composer, after every batch and epoch: callbacks that save decide
  // for themselves.
  fire(event);
}

void Trainer::evaluateDue(bool epochBoundary, bool all) {
  const Timestamp &now = state_.timestamp;
  std::vector<Evaluator *> due;
  for (size_t i = 0; i < config_.evaluators.size(); ++i) {
    Evaluator &evaluator = config_.evaluators[i];
    if (lastEvalBatch_[i] == now.batch)
      continue;
    if (all ||
        crossedInterval(state_.time, now,
                        evaluator.interval.value_or(config_.evalInterval),
                        epochBoundary))
      due.push_back(&evaluator);
  }
  if (due.empty())
    return;
  fire(Event::EvalBeforeAll);
  for (Evaluator *evaluator : due)
    evaluate(*evaluator);
  fire(Event::EvalAfterAll);
}

void Trainer::start() {
  if (started_)
    return;
  started_ = true;
  restore();
  logHyperparameters();
}

void Trainer::fit() {
  start();
  fire(Event::FitStart);
  Timestamp &now = state_.timestamp;
  BatchLoader &loader = *config_.trainLoader;
  while (!state_.time.reached(now, state_.time.maxDuration) &&
         !state_.stopRequested) {
    if (now.batchInEpoch == 0)
      fire(Event::EpochStart);
    // After a resumption at another world size the epoch may hold another
    // number of batches than batchesPerEpoch.
    const int64_t epochEnd =
        now.batchInEpoch +
        loader.resumeEpoch(now.epoch, now.batchInEpoch, now.sampleInEpoch);
    bool epochDone = false;
    while (!state_.stopRequested) {
      fire(Event::BeforeDataloader);
      std::optional<Batch> batch = loader.next();
      if (!batch) {
        epochDone = true;
        break;
      }
      state_.batch = onDevice(std::move(*batch), loader);
      loadedSamples_ = state_.batch.size();
      state_.batchTokens =
          loadedSamples_ * config_.trainLoader->spec().tokensPerSample();
      step_->selectBatch();
      fire(Event::AfterDataloader);
      trainBatch(std::move(state_.batch));
      // An interrupt stops the run after this batch, as a stopper does.
      if (interruptedBy_ && !state_.stopRequested) {
        state_.stopRequested = true;
        state_.stopReason = "interrupted by " + signalName(interruptedBy_);
      }
      evaluateDue(/*epochBoundary=*/false);
      maybeCheckpoint(Event::BatchCheckpoint, config_.saveInterval);
      if (now.batchInEpoch >= epochEnd) {
        epochDone = true;
        break;
      }
      if (state_.time.reached(now, state_.time.maxDuration))
        break;
    }
    if (!epochDone)
      continue;
    ++now.epoch;
    now.batchInEpoch = now.sampleInEpoch = now.tokenInEpoch = 0;
    fire(Event::EpochEnd);
    evaluateDue(/*epochBoundary=*/true);
    maybeCheckpoint(Event::EpochCheckpoint, config_.saveInterval);
  }
  // Every rank stops at the same batch; one says why.
  if (state_.stopRequested && !state_.stopReason.empty() && state_.rank == 0)
    std::cerr << "composer-train: stopping at batch " << now.batch << ": "
              << state_.stopReason << "\n";
  // The end of a run is always evaluated and saved.
  evaluateDue(/*epochBoundary=*/false, /*all=*/true);
  if (checkpoints_ && lastCheckpointBatch_ != now.batch)
    saveCheckpoint();
  fire(Event::FitEnd);
  config_.logger.flush();
}

EvalResult Trainer::evaluate() {
  if (config_.evaluators.empty())
    throw std::invalid_argument("no evaluation data");
  start();
  fire(Event::EvalStandaloneStart);
  EvalResult first;
  for (size_t i = 0; i < config_.evaluators.size(); ++i) {
    EvalResult result = evaluate(config_.evaluators[i]);
    if (i == 0)
      first = result;
  }
  fire(Event::EvalStandaloneEnd);
  return first;
}

EvalResult Trainer::evaluate(Evaluator &evaluator) {
  fire(Event::EvalStart);
  state_.model.eval();
  for (const auto &metric : evaluator.metrics)
    metric->reset();
  int64_t samples = 0;
  {
    torch::NoGradGuard noGrad;
    AutocastGuard autocast(config_.precision, config_.device);
    BatchLoader &loader = *evaluator.loader;
    loader.startEpoch(0);
    int64_t batches = 0;
    while (evaluator.subsetNumBatches == 0 ||
           batches < evaluator.subsetNumBatches) {
      std::optional<Batch> batch = loader.next();
      if (!batch)
        break;
      ++batches;
      state_.batch = onDevice(std::move(*batch), loader);
      fire(Event::EvalBatchStart);
      fire(Event::EvalBeforeForward);
      state_.outputs = forwardModel(state_, state_.batch.input);
      fire(Event::EvalAfterForward);
      for (const auto &metric : evaluator.metrics) {
        try {
          metric->update(state_.outputs, state_.batch.target);
        } catch (const std::invalid_argument &e) {
          throw TrainingError("evaluator '" + evaluator.label +
                              "': " + e.what());
        }
      }
      samples += state_.batch.size();
      fire(Event::EvalBatchEnd);
    }
  }
  // Every metric's totals, added across ranks in one collective.
  std::vector<torch::Tensor> totals;
  for (const auto &metric : evaluator.metrics)
    totals.push_back(metric->totals());
  totals.push_back(torch::tensor({double(samples)}, torch::kDouble));
  torch::Tensor all = torch::cat(totals);
  if (Communicator *communicator = config_.communicator.get())
    communicator->allReduceSum(all);
  std::map<std::string, double> values;
  int64_t offset = 0;
  for (const auto &metric : evaluator.metrics) {
    int64_t size = metric->totals().numel();
    if (std::optional<double> value =
            metric->compute(all.narrow(0, offset, size)))
      values[metric->name()] = *value;
    offset += size;
  }
  EvalResult result;
  result.samples = int64_t(all[offset].item<double>());
  result.accuracy = values.count("Accuracy") ? values["Accuracy"] : 0;
  result.loss = values.count("CrossEntropy") ? values["CrossEntropy"] : 0;
  state_.evalMetrics = values;
  state_.evalLabel = evaluator.label;
  std::map<std::string, double> logged;
  for (const auto &[name, value] : values)
    logged["metrics/" + evaluator.label + "/" + name] = value;
  config_.logger.logMetrics(logged, state_.timestamp.batch);
  lastEval_ = result;
  lastEvalBatch_[&evaluator - config_.evaluators.data()] =
      state_.timestamp.batch;
  fire(Event::EvalEnd);
  state_.model.train();
  return result;
}

} // namespace composer::runtime
