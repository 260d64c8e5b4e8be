//===- Sharding.h - Sharded data parallelism (ZeRO) -------------*- C++ -*-===//
//
// `parallelism: {sharding: ...}` in a recipe, as FSDP's strategies:
//   none           DDP: every rank holds the whole model, its gradients and
//                  the optimizer state.
//   shard_grad_op  ZeRO-2: gradients are reduce-scattered, each rank keeps
//                  and steps only its shard of the optimizer state and of
//                  the fp32 master weights, then the updated weights are
//                  all-gathered.
//   full_shard     ZeRO-3: parameters live sharded too. The model has been
//                  through composer-shard-params, whose composer::gather_unit
//                  calls gather each unit's parameters where it runs.
//
// ShardedDataParallel implements both as a link of the training step.
// Parameters are laid out in flat buffers, each padded to a multiple of the
// world size, so rank r owns chunk r of each. The optimizer steps fp32
// master copies of the owned chunks; it is elementwise (SGD, AdamW), so the
// update equals the unsharded one.
// - shard_grad_op: the buffers are buckets of up to 25 MB of one
//   weight-decay group and dtype, and the trainable parameters are views of
//   them. After backward the local gradients are copied into a flat buffer
//   and reduce-scattered; the whole ones are dropped. The updated masters
//   are cast back and all-gathered into the buffers.
// - full_shard: a buffer holds one unit's parameters of one weight-decay
//   group and dtype, and a rank keeps only its chunk; the module's
//   parameters are empty placeholders. It is the process's UnitGatherer:
//   each gather all-gathers the unit's chunks into a whole buffer that lives
//   as long as what uses it (inside a checkpointed unit, its forward), and
//   its backward reduce-scatters the unit's gradients into the shard. The
//   updated masters are the chunks (cast where the parameters are not fp32).
//   While a unit runs, the next unit's all-gather is already under way: in
//   forward the one the model names, in backward (which recomputes the
//   checkpointed units, last first) the one the previous backward gathered
//   next. So a rank holds at most two units whole, besides the root.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_SHARDING_H
#define COMPOSER_RUNTIME_SHARDING_H

#include "composer/Runtime/Checkpoint.h"
#include "composer/Runtime/Distributed.h"
#include "composer/Runtime/Gradients.h"
#include "composer/Runtime/Optim.h"
#include "composer/Runtime/Precision.h"
#include "composer/Runtime/TrainingStep.h"
#include "composer/Runtime/UnitGatherer.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace composer::runtime {

enum class ShardingStrategy { None, ShardGradOp, FullShard };

/// "none", "shard_grad_op", "full_shard"; throws std::invalid_argument
/// listing them for anything else.
ShardingStrategy parseShardingStrategy(const std::string &name);
const char *getShardingStrategyName(ShardingStrategy strategy);

/// A unit of composer-shard-params: its module path ("" for the root) and
/// the parameters its composer::gather_unit takes, in order.
struct GatheredUnit {
  std::string name;
  std::vector<torch::Tensor> parameters;
};

/// The units the composer::gather_unit calls of `model`'s methods gather,
/// in the order met; none for a model not through composer-shard-params.
/// Throws std::invalid_argument for a call that gathers something other
/// than module tensors, or a unit gathered with two lists.
std::vector<GatheredUnit> findGatheredUnits(const torch::jit::Module &model);

/// ZeRO-3's unit gathers, and how many of them a prefetch had started.
struct UnitGatherCounts {
  int64_t gathers = 0;
  int64_t prefetched = 0;
};

/// What one rank holds of the training state, in bytes.
struct TrainingStateBytes {
  int64_t parameters = 0;
  int64_t gradients = 0;
  int64_t optimizerState = 0;
};

/// ZeRO-2 or ZeRO-3 over `communicator`, as the training step's innermost
/// link above the trainer's own. It replaces backward (no hooks: under
/// ZeRO-2 the gradients are reduced once, after the last microbatch; under
/// ZeRO-3 each unit's as its backward ends), reduce, unscale and the
/// optimizer step.
class ShardedDataParallel final : public StepStages,
                                  public GradientShards,
                                  public UnitGatherer {
public:
  /// Lays out `parameters` (the trainable ones, by state_dict name, already
  /// equal on every rank) in flat buffers and takes this rank's fp32 master
  /// shards. Without `units`, ZeRO-2: the parameters become views of the
  /// buffers. With them, ZeRO-3: the buffers follow the units, this rank
  /// keeps its chunks, and the parameters become placeholders; parameters
  /// of no unit are never read, so they are left out. Throws
  /// std::invalid_argument for a parameter that is not dense, or one that
  /// two units gather.
  ShardedDataParallel(
      Communicator &communicator, const OptimizerSpec &spec,
      std::vector<std::pair<std::string, torch::Tensor>> parameters,
      GradScaler &scaler, const std::vector<GatheredUnit> &units = {});
  ~ShardedDataParallel() override;

  /// Whether the parameters live sharded (ZeRO-3).
  bool shardsParameters() const { return !units_.empty(); }
  /// ZeRO-3: gathers every unit's weights into the module's parameters, for
  /// what reads the whole model (a checkpoint). Every rank calls it.
  void materializeParameters();
  /// ZeRO-3: makes the parameters placeholders again; with `takeWeights`,
  /// this rank's chunks are taken from them first (after a load).
  void releaseParameters(bool takeWeights);

  /// The optimizer over this rank's master shards.
  std::unique_ptr<Optimizer> createOptimizer() const;

  /// Checkpoints hold the optimizer as one process would (any world size
  /// resumes them). Every rank calls these together.
  /// The whole optimizer, gathered from `shards` (an all-gather per state
  /// tensor).
  std::unique_ptr<Optimizer> gatherOptimizer(Optimizer &shards);
  /// An optimizer over the whole parameters, without state, to load a
  /// checkpoint into before scatterOptimizer.
  std::unique_ptr<Optimizer> createWholeOptimizer() const;
  /// Takes this rank's shard of `whole`'s state into `shards`.
  void scatterOptimizer(Optimizer &whole, Optimizer &shards);

  /// This rank's part of a sharded checkpoint: its chunks and `shards`, its
  /// optimizer (null for weights only). No collective.
  ShardedState shardedState(Optimizer *shards) const;

  /// What this rank holds now: the flat parameters (ZeRO-3: the chunks,
  /// plus the most whole units gathered at once so far), the gradient
  /// shards, and the master shards with the optimizer's state.
  TrainingStateBytes memory(Optimizer &shards) const;
  /// The unit gathers since the last call.
  UnitGatherCounts takeUnitGatherCounts();

  // StepStages. Under ZeRO-3, forward and backward turn a failed gather or
  // reduce-scatter, which the TorchScript interpreter or autograd reports
  // in their own words, back into the DistributedError naming the lost
  // rank.
  torch::Tensor forward(TrainingStep &step, const torch::Tensor &input,
                        ForwardNext next) override;
  void backward(TrainingStep &step, const torch::Tensor &loss,
                BackwardNext next) override;
  void reduce(TrainingStep &step, ReduceNext next) override;
  bool unscale(TrainingStep &step, UnscaleNext next) override;
  void optimizerStep(TrainingStep &step, bool finite,
                     OptimizerStepNext next) override;

  // GradientShards.
  std::vector<torch::Tensor> localGradients() override;
  void gatherGradients(const std::string &algorithm) override;
  void scatterGradients() override;
  std::vector<torch::Tensor> localWeights() override;
  void publishWeights() override;
  Communicator &communicator() override { return communicator_; }

  // UnitGatherer (ZeRO-3).
  bool shards(const std::string &unit) const override;
  std::vector<at::Tensor> gather(const std::string &unit,
                                 const std::string &prefetch,
                                 at::TensorList params) override;
  void reduceGradients(const std::string &unit, at::TensorList grads) override;

private:
  /// A parameter and its layout in the flat buffer.
  struct Member : ShardedState::Member {
    torch::Tensor parameter;
    int64_t numel = 0;
    /// The parameter's version after this rank last wrote it: a newer one
    /// means something else changed the weights (SWA, a checkpoint load),
    /// and the master shard is taken from them again.
    int64_t version = 0;
  };
  struct FlatGroup {
    bool decayed = true;
    std::vector<Member> members;
    /// ZeRO-2: the parameters' storage: members at their offsets, then
    /// padding. ZeRO-3: undefined; gathers make whole buffers like it.
    torch::Tensor flat;
    /// This rank's chunk of the buffer in the parameters' dtype: a view of
    /// `flat` (ZeRO-2), or what the ranks gather (ZeRO-3).
    torch::Tensor shard;
    /// This rank's chunk in fp32; the optimizer steps it, and its .grad is
    /// the averaged gradient's chunk after reduce. ZeRO-3 with fp32
    /// parameters: `shard` itself.
    torch::Tensor master;
    /// ZeRO-3: the sum of the reduce-scattered gradient chunks since the
    /// last reduce.
    torch::Tensor gradientSum;
    int64_t shardSize() const { return master.numel(); }
    int64_t paddedSize(int64_t world) const { return shardSize() * world; }
    /// The members' elements, without padding.
    int64_t elements() const {
      return members.empty() ? 0 : members.back().offset + members.back().numel;
    }
    int64_t shardBegin = 0;
  };
  /// ZeRO-3: a unit's buffers, and where each parameter its gather takes
  /// lives: a member of one of them, or (not trained) whole in the module.
  struct UnitLayout {
    std::vector<size_t> groups;
    struct Slot {
      size_t group = 0, member = 0;
      torch::Tensor whole;
    };
    std::vector<Slot> slots;
  };

  /// Lays out the units' parameters (ZeRO-3).
  void layOutUnits(const std::vector<GatheredUnit> &units);
  /// ZeRO-3: a unit's all-gathers, started before the unit runs.
  struct Prefetch {
    std::string unit;
    std::map<size_t, torch::Tensor> wholes;
    std::vector<std::unique_ptr<PendingCollective>> collectives;
  };

  /// `group`'s whole buffer, all-gathered from the ranks' chunks.
  torch::Tensor gatherGroup(const FlatGroup &group);
  /// Runs `fn`; a DistributedError it throws is remembered for forward and
  /// backward to rethrow.
  template <typename Fn> void noteCollectiveFailure(Fn fn);
  /// `unit`'s whole buffers: the prefetched ones when they are its, else
  /// gathered now.
  std::map<size_t, torch::Tensor> takeGathered(const std::string &unit);
  /// Starts all-gathering `unit`'s buffers.
  void startPrefetch(const std::string &unit);
  /// Waits for a started prefetch and discards it: the chunks are about to
  /// change, or another unit came first.
  void dropPrefetch();

  /// The members' .grad laid out as the group's whole buffer (zeros where
  /// a member has none) in a new tensor of `options`; the .grad are dropped.
  torch::Tensor takeGradients(FlatGroup &group,
                              const torch::TensorOptions &options);
  /// Copies the parameters whose weights changed since the last all-gather
  /// into the master shards.
  void refreshMasters();
  /// The elements of `member` this rank owns, [begin, end) in the flat
  /// buffer; empty at the shard's start when none.
  static std::pair<int64_t, int64_t> ownedRange(const FlatGroup &group,
                                                const Member &member);
  /// Copies `member`'s part of this rank's chunk from the weights into the
  /// master shard.
  static void copyToMaster(FlatGroup &group, const Member &member);
  /// Casts the master shards and all-gathers them into the parameters.
  void gatherParameters();

  Communicator &communicator_;
  OptimizerSpec spec_;
  std::vector<std::pair<std::string, torch::Tensor>> parameters_;
  GradScaler &scaler_;
  std::vector<FlatGroup> groups_;
  std::map<std::string, UnitLayout> units_;
  /// ZeRO-3: the whole buffers gathers made, while something holds them,
  /// and the most bytes alive at once.
  std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> gathered_;
  int64_t peakGatheredBytes_ = 0;
  std::optional<Prefetch> prefetch_;
  /// The units backward gathered, in order: the last backward's, and the
  /// running one's.
  std::vector<std::string> backwardOrder_, backwardOrderNow_;
  bool inBackward_ = false;
  UnitGatherCounts unitGathers_;
  /// The first collective of a gather or reduceGradients that failed.
  std::string collectiveFailure_;
  std::set<std::string> announced_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_SHARDING_H
