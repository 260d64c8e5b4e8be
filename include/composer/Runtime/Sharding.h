//===- Sharding.h - Sharded data parallelism (ZeRO) -------------*- C++ -*-===//
//
// `parallelism: {sharding: ...}` in a recipe, as FSDP's strategies:
//   none           DDP: every rank holds the whole model, its gradients and
//                  the optimizer state.
//   shard_grad_op  ZeRO-2: gradients are reduce-scattered, each rank keeps
//                  and steps only its shard of the optimizer state and of
//                  the fp32 master weights, then the updated weights are
//                  all-gathered.
//   full_shard     ZeRO-3: parameters live sharded too (the
//                  composer-shard-params pass).
//
// ShardedDataParallel implements shard_grad_op as a link of the training
// step. The trainable parameters become views of flat buffers (buckets of
// up to 25 MB of one weight-decay group and dtype), each padded to a
// multiple of the world size, so rank r owns chunk r of each. After backward
// the local gradients are copied into a flat buffer and reduce-scattered; the
// whole ones are dropped. The optimizer steps fp32 master copies of the owned
// chunks, which are cast back and all-gathered into the buffers. The optimizer
// is elementwise (SGD, AdamW), so the update equals the unsharded one.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_SHARDING_H
#define COMPOSER_RUNTIME_SHARDING_H

#include "composer/Runtime/Gradients.h"
#include "composer/Runtime/Optim.h"
#include "composer/Runtime/Precision.h"
#include "composer/Runtime/TrainingStep.h"

#include <torch/torch.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace composer::runtime {

class Communicator;

enum class ShardingStrategy { None, ShardGradOp, FullShard };

/// "none", "shard_grad_op", "full_shard"; throws std::invalid_argument
/// listing them for anything else.
ShardingStrategy parseShardingStrategy(const std::string &name);
const char *getShardingStrategyName(ShardingStrategy strategy);

/// What one rank holds of the training state, in bytes.
struct TrainingStateBytes {
  int64_t parameters = 0;
  int64_t gradients = 0;
  int64_t optimizerState = 0;
};

/// ZeRO-2 over `communicator`, as the training step's innermost link above
/// the trainer's own. It replaces backward (no hooks: the gradients are
/// reduced once, after the last microbatch), reduce, unscale and the
/// optimizer step.
class ShardedDataParallel final : public StepStages, public GradientShards {
public:
  /// Makes `parameters` (the trainable ones, by state_dict name, already
  /// equal on every rank) views of flat buffers and takes this rank's fp32
  /// master shards. Throws std::invalid_argument for a parameter that is not
  /// dense.
  ShardedDataParallel(
      Communicator &communicator, const OptimizerSpec &spec,
      std::vector<std::pair<std::string, torch::Tensor>> parameters,
      GradScaler &scaler);
  ~ShardedDataParallel() override;

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

  /// What this rank holds now: the flat parameters, the gradient shards,
  /// and the master shards with the optimizer's state.
  TrainingStateBytes memory(Optimizer &shards) const;

  // StepStages.
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
  Communicator &communicator() override { return communicator_; }

private:
  struct Member {
    std::string name;
    torch::Tensor parameter;
    int64_t offset = 0;
    int64_t numel = 0;
    /// The parameter's version after this rank last wrote it: a newer one
    /// means something else changed the weights (SWA, a checkpoint load),
    /// and the master shard is taken from them again.
    int64_t version = 0;
  };
  struct FlatGroup {
    bool decayed = true;
    std::vector<Member> members;
    /// The parameters' storage: members at their offsets, then padding.
    torch::Tensor flat;
    /// This rank's chunk of `flat` in fp32; the optimizer steps it, and its
    /// .grad is the averaged gradient's chunk after reduce.
    torch::Tensor master;
    int64_t shardSize() const { return master.numel(); }
    /// The members' elements, without padding.
    int64_t elements() const {
      return members.empty() ? 0 : members.back().offset + members.back().numel;
    }
    int64_t shardBegin = 0;
  };

  /// The members' .grad laid out as `group.flat` (zeros where a member has
  /// none) in a new tensor of `options`; the .grad are dropped.
  static torch::Tensor takeGradients(FlatGroup &group,
                                     const torch::TensorOptions &options);
  /// Copies the parameters whose weights changed since the last all-gather
  /// into the master shards.
  void refreshMasters();
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
  std::set<std::string> announced_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_SHARDING_H
