//===- Checkpoint.h - Saving and resuming a run -----------------*- C++ -*-===//
//
// A checkpoint is one pickled dict (torch.load reads it in Python too):
//   format, version, seed, pipeline,
//   timestamp     {epoch, batch, sample, token, batch_in_epoch, ...}
//   model         {state_dict name: tensor} (parameters and buffers)
//   frozen        [names of parameters that do not train]
//   optimizer     uint8 tensor: LibTorch's optimizer archive
//   rng           {"cpu": state, "cuda:N": state}
//   grad_scaler   {scale, growth_tracker}
//   algorithms    {name: uint8 tensor: the algorithm's archive}
// Files are written to a temporary name and renamed, so a run killed while
// saving leaves the previous checkpoint whole.
//
// A sharded run (ZeRO) may write a sharded checkpoint instead: a directory
// of the same name, written by every rank at once, without gathering:
//   index.pt      rank 0: the dict above without the sharded tensors and
//                 without `optimizer`, plus `sharding`: the world size, the
//                 optimizer's spec, the trainable parameters' names in
//                 order, and the flat groups' layout (each member's name,
//                 offset, sizes and strides; whether the group decays)
//   rank<R>.pt    rank R: its chunk of each group's weights, and the
//                 archive of its optimizer over the fp32 master chunks
// Loading consolidates it into the dict above in memory, so it resumes at
// any world size; `composer-train --consolidate` writes that dict out.
// The directory is written under `<name>.partial` and renamed once every
// rank has written its part.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_CHECKPOINT_H
#define COMPOSER_RUNTIME_CHECKPOINT_H

#include "composer/Runtime/Algorithm.h"
#include "composer/Runtime/Optim.h"
#include "composer/Runtime/Precision.h"
#include "composer/Runtime/State.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace composer::runtime {

class Communicator;

/// What besides `State` a checkpoint carries.
struct CheckpointExtras {
  const std::vector<std::unique_ptr<Algorithm>> *algorithms = nullptr;
  GradScaler *gradScaler = nullptr;
  /// The composer-opt pipeline the model went through, if known.
  std::string pipeline;
};

/// Writes `path` atomically. Throws std::runtime_error naming the path.
/// `weightsOnly` (Composer's save_weights_only) writes the model's tensors
/// and no training state: such a file starts runs, it does not resume them.
void saveCheckpoint(const std::string &path, const State &state,
                    const CheckpointExtras &extras, bool weightsOnly = false);

/// What a rank of a sharded run writes of its state: the trainable
/// parameters laid out in flat buffers (groups), each padded to a multiple
/// of the world size, of which rank r holds chunk r.
struct ShardedState {
  /// A parameter's place in its group's flat buffer.
  struct Member {
    std::string name;
    int64_t offset = 0;
    std::vector<int64_t> sizes, strides;

    /// Its elements in the whole buffer `flat`, laid out as the parameter.
    torch::Tensor placeIn(const torch::Tensor &flat) const;
    /// Its optimizer state: a copy of its elements of each of `flats`, the
    /// group's whole state tensors in optimizerStateTensors' order
    /// (undefined ones stay undefined), in a state like `like`.
    std::unique_ptr<torch::optim::OptimizerParamState>
    optimizerState(torch::optim::OptimizerParamState &like,
                   const std::vector<torch::Tensor> &flats) const;
  };
  struct Group {
    bool decayed = true;
    std::vector<Member> members;
    /// This rank's chunk of the weights, in the parameters' dtype.
    torch::Tensor chunk;
  };
  int rank = 0;
  int worldSize = 1;
  OptimizerSpec spec;
  /// The trainable parameters' names, in the order the whole optimizer
  /// takes them.
  std::vector<std::string> parameters;
  std::vector<Group> groups;
  /// The optimizer over the groups' fp32 master chunks: those of decayed
  /// groups, then the others, each in group order. Null writes weights
  /// only.
  Optimizer *optimizer = nullptr;
};

/// Writes this rank's part of a sharded checkpoint into the existing
/// directory `dir`: rank<R>.pt, and on rank 0 index.pt. `state.optimizer`
/// is not written; `shards.optimizer` is.
void saveCheckpointShard(const std::string &dir, const State &state,
                         const CheckpointExtras &extras,
                         const ShardedState &shards, bool weightsOnly);

/// The checkpoint at `path` as saveCheckpoint's dict: a file as it is, a
/// sharded directory consolidated (the whole weights under their
/// state_dict names, the whole optimizer). Throws std::runtime_error naming
/// the file at fault.
c10::impl::GenericDict readCheckpoint(const std::string &path);

/// Writes the sharded checkpoint `dir` as one file at `out` (atomically),
/// in saveCheckpoint's layout. Throws std::runtime_error naming the file at
/// fault, or when `dir` is not a sharded checkpoint.
void consolidateCheckpoint(const std::string &dir, const std::string &out);

/// How much of a checkpoint a load takes: Composer's load_weights_only,
/// load_strict_model_weights and load_ignore_keys.
struct LoadOptions {
  /// The model's tensors only: the run keeps its own time (zero), optimizer,
  /// schedule, random state and algorithms.
  bool weightsOnly = false;
  /// Every model tensor in the checkpoint and every checkpoint tensor in the
  /// model. Otherwise the names both have are loaded and the others listed
  /// in the LoadReport; a name both have must agree in shape and type.
  bool strict = true;
  /// Checkpoint tensors whose state_dict name matches one of these glob
  /// patterns (fnmatch; a Composer "state/model/" prefix is dropped) are not
  /// loaded: the model keeps its own.
  std::vector<std::string> ignoreKeys;
};

/// What a non-strict load left out.
struct LoadReport {
  /// Model tensors the checkpoint lacks (they keep their values).
  std::vector<std::string> missing;
  /// Checkpoint tensors the model lacks.
  std::vector<std::string> unexpected;
  /// Checkpoint tensors left out by ignoreKeys.
  std::vector<std::string> ignored;
};

/// Restores what `options` asks of what `saveCheckpoint` (or the ranks'
/// saveCheckpointShard) wrote into `state`
/// (whose model and optimizer must already exist) and `extras`. Throws
/// std::runtime_error naming the path and the mismatch (missing tensor,
/// shape, corrupt file, a weights-only file loaded to resume) before
/// changing anything.
LoadReport loadCheckpoint(const std::string &path, State &state,
                          CheckpointExtras &extras,
                          const LoadOptions &options = {});

/// Reads `path` (a checkpoint, or a sharded checkpoint's directory) as
/// loadCheckpoint would, checking the CRC-32 of every archive entry, and
/// changes nothing. Throws std::runtime_error naming the file, and the
/// entry, at fault.
void verifyCheckpoint(const std::string &path);

/// Keeps the newest checkpoints of a run in one folder, named
/// `ep<E>-ba<B>.ckpt`, with a `latest` file naming the newest.
class CheckpointFolder {
public:
  /// `keep` <= 0 keeps every checkpoint; `weightsOnly` saves the model's
  /// tensors alone.
  CheckpointFolder(std::string folder, int keep, bool weightsOnly = false);
  /// Saves at the current timestamp, updates `latest`, prunes old ones.
  /// Returns the path written.
  std::string save(const State &state, const CheckpointExtras &extras);
  /// The same for a sharded checkpoint: every rank of `communicator` calls
  /// it with its `shards`. Throws std::runtime_error on every rank when one
  /// of them fails to write its part; the checkpoint is then not published.
  std::string saveSharded(const State &state, const CheckpointExtras &extras,
                          const ShardedState &shards,
                          Communicator &communicator);
  /// Where `save` writes the checkpoint of `state`'s timestamp.
  std::string pathFor(const State &state) const;
  /// The newest complete checkpoint, if any.
  std::optional<std::string> latest() const;
  /// Every checkpoint of the folder, newest first (the one `latest` names
  /// first), for --autoresume to take the newest that verifies.
  std::vector<std::string> candidates() const;
  const std::string &folder() const { return folder_; }

private:
  /// Points `latest` at `path` and prunes the oldest checkpoints.
  void publish(const std::string &path);

  std::string folder_;
  int keep_;
  bool weightsOnly_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_CHECKPOINT_H
