//===- Trainer.h - The training loop ----------------------------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_TRAINER_H
#define COMPOSER_RUNTIME_TRAINER_H

#include "composer/Runtime/Algorithm.h"
#include "composer/Runtime/Checkpoint.h"
#include "composer/Runtime/Data.h"
#include "composer/Runtime/Distributed.h"
#include "composer/Runtime/Logger.h"
#include "composer/Runtime/Metrics.h"
#include "composer/Runtime/Optim.h"
#include "composer/Runtime/Precision.h"
#include "composer/Runtime/Sharding.h"
#include "composer/Runtime/State.h"
#include "composer/Runtime/TrainingStep.h"

#include <torch/script.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace composer::runtime {

/// A named evaluation set with its metrics, as Composer's Evaluator.
struct Evaluator {
  /// Logged as metrics/<label>/<Metric>.
  std::string label;
  std::shared_ptr<BatchLoader> loader;
  /// Empty: createDefaultMetrics of the recipe's loss.
  std::vector<std::shared_ptr<Metric>> metrics;
  /// Empty: TrainerConfig::evalInterval.
  std::optional<Time> interval;
  /// Evaluate on the first this many batches only; 0: all.
  int64_t subsetNumBatches = 0;
};

struct TrainerConfig {
  torch::jit::Module model;
  std::shared_ptr<BatchLoader> trainLoader;
  /// Optional: the evaluator labelled `eval`, with the default metrics, put
  /// before `evaluators`.
  std::shared_ptr<BatchLoader> evalLoader;
  /// Evaluated at their intervals and at the end of the run, in order;
  /// labels are unique.
  std::vector<Evaluator> evaluators;
  /// A registered loss (Losses.h).
  std::shared_ptr<const Loss> loss = createLoss("cross_entropy");
  /// Which columns reach forward, what is taken from its output, and
  /// whether the loss is the model's own (ModelCall.h).
  ModelCall modelCall;
  /// Gradient accumulation: each rank's batch runs through the model in
  /// microbatches of this many samples (the last may be smaller); 0 runs it
  /// whole. The gradient is the whole batch's mean either way.
  int64_t microbatchSize = 0;
  /// Composer's `auto`: start from the whole batch and halve the microbatch
  /// whenever a step runs out of memory on any rank, retrying that batch.
  bool autoMicrobatch = false;
  /// Weigh microbatches by the loss's terms (tokens that count) rather than
  /// by samples: the mean over every token of the batch, however unevenly
  /// the microbatches hold them.
  bool accumulateOnTokens = false;
  /// CPU only, 0 for none: each training step's allocations on the trainer's
  /// thread fail as out of memory beyond this many live bytes
  /// (ScopedCpuMemoryLimit), a device's memory played on the CPU.
  int64_t cpuMemoryLimit = 0;
  OptimizerSpec optimizer;
  SchedulerSpec scheduler;
  Time maxDuration{1, TimeUnit::Epoch};
  /// Stretches the run and every schedule milestone.
  double scaleScheduleRatio = 1.0;
  Time evalInterval{1, TimeUnit::Epoch};
  std::vector<std::unique_ptr<Algorithm>> algorithms;
  std::vector<std::unique_ptr<Callback>> callbacks;
  Precision precision = Precision::FP32;
  torch::Device device = torch::kCPU;
  uint64_t seed = 0;
  /// Intra-op threads; 0 leaves LibTorch's default.
  int threads = 0;
  /// Let TorchScript's profiling executor optimize the graph (autodiff
  /// subgraphs, fusion). Off by default: the optimized graph replaces the
  /// profiled one after a few calls, so numerics would depend on how many
  /// calls a process has made and a resumed run would not be bit-identical;
  /// the plain interpreter runs eager autograd, exactly as PyTorch does.
  bool jitOptimize = false;

  /// Data-parallel training: this process's place in the group. The loaders
  /// must shard by the same rank and world size. Null: one process.
  std::shared_ptr<Communicator> communicator;
  /// Let a step leave some trainable parameters without a gradient (needed
  /// with layer freezing when data-parallel).
  bool findUnusedParameters = false;
  /// How data-parallel ranks divide the training state (Sharding.h). In
  /// one process there is nothing to divide.
  ShardingStrategy sharding = ShardingStrategy::None;
  /// Under sharding, each rank writes its own part of a checkpoint, which
  /// then is a directory (Checkpoint.h); otherwise the state is gathered
  /// and rank 0 writes one file (FSDP's state_dict_type sharded and full).
  bool shardedCheckpoints = true;
  /// How long a collective may wait for a peer (for createCommunicator).
  std::chrono::milliseconds distributedTimeout{60000};

  /// Checkpointing: empty folder saves nothing. Only rank 0 writes.
  std::string saveFolder;
  Time saveInterval{1, TimeUnit::Epoch};
  int saveNumCheckpointsToKeep = -1;
  /// Save the model's tensors only (Composer's save_weights_only); such
  /// checkpoints start runs (loadOptions.weightsOnly) but cannot resume
  /// them, so autoresume is refused with it.
  bool saveWeightsOnly = false;
  /// Continue from the newest checkpoint in `saveFolder` if there is one.
  bool autoresume = false;
  /// Start from this checkpoint (ignored when autoresume finds one), taking
  /// what `loadOptions` says.
  std::string loadPath;
  LoadOptions loadOptions;
  std::string pipeline;
  /// The run's name (Composer's run_name), logged with the hyperparameters;
  /// empty: named from the time the run starts.
  std::string runName;
  /// What the run was asked to do, by dotted key (the resolved recipe),
  /// logged once at the first FIT_START with the run's name.
  std::map<std::string, std::string> hyperparameters;

  Logger logger;
};

struct EvalResult {
  double accuracy = 0;
  double loss = 0;
  int64_t samples = 0;
};

class Trainer {
public:
  /// Fires INIT. Throws std::invalid_argument for an inconsistent config.
  explicit Trainer(TrainerConfig config);
  ~Trainer();

  /// Trains to `maxDuration` (resuming first if asked, at the first call).
  /// Throws TrainingError when the run must stop.
  void fit();
  /// Moves the end of the run to `duration` past where it stands (in that
  /// duration's unit, as Composer's fit(duration=...)); the next fit()
  /// trains it. Throws std::invalid_argument for a duration in `dur` or not
  /// positive.
  void extendDuration(const Time &duration);
  /// The model's whole output (ModelCall's forward, in eval mode, without
  /// gradients, at the run's precision) for each batch of `loader`, or its
  /// first `subsetNumBatches` when positive, with Composer's PREDICT_*
  /// events.
  std::vector<c10::IValue> predict(BatchLoader &loader,
                                   int64_t subsetNumBatches = 0);
  /// Runs every evaluator (with EMA weights if EMA is on), after resuming
  /// or loading as fit() does when no run has started; returns the first's
  /// result. Throws std::invalid_argument without any.
  EvalResult evaluate();
  /// Writes the model for inference, after loading as evaluate() does:
  /// TorchScript at `modelPath`, frozen in eval mode (torch.jit.freeze,
  /// without numerics-changing folds: what acts only in training is gone,
  /// the weights are constants; unfrozen, with a warning, where freezing
  /// fails), with the weights the run ends with (EMA's or SWA's average
  /// where they swapped it in), and, when
  /// `stateDictPath` is not empty, its parameters and buffers as a
  /// torch.load-able state_dict, contiguous, keeping only `names` when that
  /// is not empty. Each file is written atomically. Throws
  /// std::invalid_argument under full_shard (the weights are in shards:
  /// consolidate a checkpoint first) and std::runtime_error naming a file
  /// it cannot write.
  void exportForInference(const std::string &modelPath,
                          const std::string &stateDictPath,
                          const std::set<std::string> &names = {});

  State &state() { return state_; }
  /// The microbatch size in use (what `auto` settled on); 0 when batches
  /// run whole.
  int64_t microbatchSize() const { return microbatchSize_; }
  Logger &logger() { return config_.logger; }
  /// The checkpoint the run resumed from, if any.
  const std::optional<std::string> &resumedFrom() const { return resumed_; }
  /// The newest checkpoint written, if any.
  const std::optional<std::string> &lastCheckpoint() const {
    return lastCheckpoint_;
  }
  /// The signal (SIGINT, SIGTERM) that stopped the run after a batch, as
  /// every rank saw it (Interrupt.h); 0 when none did.
  int interruptedBy() const { return interruptedBy_; }
  /// Warnings about the configuration (also printed to stderr), e.g. two
  /// algorithms that both interpolate the loss.
  const std::vector<std::string> &warnings() const { return warnings_; }

private:
  /// The trainable parameters, their gradients and the optimizer state this
  /// rank holds after a step, as logged under memory/.
  TrainingStateBytes heldState();
  void fire(Event event);
  /// Applies `algorithm` at `event`; under full_shard, with the whole
  /// weights gathered when it reads them.
  void applyAlgorithm(Algorithm &algorithm, Event event);
  Batch onDevice(Batch batch, const BatchLoader &loader) const;
  void trainBatch(Batch batch);
  /// Forward, loss and backward of `batch` in microbatches of the current
  /// size, recording them in the training step; leaves the whole batch's
  /// loss in the state.
  void accumulateGradients(const Batch &batch);
  /// accumulateGradients under `auto`: on out of memory on any rank, every
  /// rank halves the microbatch and runs the batch again.
  void accumulateGradientsAdapting(const Batch &batch);
  /// The group's mean of this batch's loss; throws TrainingError when it is
  /// not finite. Notes in interruptedBy_ whether any rank was interrupted.
  double groupLoss();
  void saveCheckpoint();
  void maybeCheckpoint(Event event, const Time &interval);
  /// Runs the evaluators whose interval the run just crossed (or all when
  /// `all`) and have not yet run at this batch.
  void evaluateDue(bool epochBoundary, bool all = false);
  EvalResult evaluate(Evaluator &evaluator);
  void restore();
  /// The newest checkpoint of `folder` that verifies, warning about each
  /// newer one skipped; throws listing every one when none does.
  std::optional<std::string> newestVerified(const CheckpointFolder &folder);
  /// restore() and the hyperparameters' logging, at the first fit,
  /// evaluation or export.
  void start();
  /// Logs the configuration's hyperparameters and the run's name.
  void logHyperparameters();

  TrainerConfig config_;
  State state_;
  std::unique_ptr<Optimizer> optimizer_;
  /// Under shard_grad_op, the link that shards; optimizer_ steps its shards.
  std::unique_ptr<ShardedDataParallel> sharded_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<GradScaler> gradScaler_;
  std::unique_ptr<StandardStages> standardStages_;
  /// Links the algorithms' stages around standardStages_.
  std::unique_ptr<TrainingStep> step_;
  std::unique_ptr<CheckpointFolder> checkpoints_;
  CheckpointExtras extras_;
  std::optional<std::string> resumed_, lastCheckpoint_;
  /// The algorithms full_shard has gathered the weights for (said once).
  std::set<std::string> wholeWeightReaders_;
  int64_t lastCheckpointBatch_ = -1;
  /// Whether restore() and the hyperparameters' logging have run (once,
  /// at the first fit).
  bool started_ = false;
  /// The first interrupt the group agreed on (see interruptedBy()).
  int interruptedBy_ = 0;
  /// What this rank had sent when the last batch's metrics were logged.
  CommunicationVolume loggedVolume_;
  EvalResult lastEval_;
  /// The batch each evaluator last ran at, by index into config_.evaluators.
  std::vector<int64_t> lastEvalBatch_;
  /// Samples the loader gave this batch (algorithms may drop some).
  int64_t loadedSamples_ = 0;
  /// The microbatch size in use; 0 runs batches whole.
  int64_t microbatchSize_ = 0;
  std::vector<std::string> warnings_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_TRAINER_H
