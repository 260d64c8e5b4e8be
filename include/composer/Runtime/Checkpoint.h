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
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_CHECKPOINT_H
#define COMPOSER_RUNTIME_CHECKPOINT_H

#include "composer/Runtime/Algorithm.h"
#include "composer/Runtime/Precision.h"
#include "composer/Runtime/State.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace composer::runtime {

/// What besides `State` a checkpoint carries.
struct CheckpointExtras {
  const std::vector<std::unique_ptr<Algorithm>> *algorithms = nullptr;
  GradScaler *gradScaler = nullptr;
  /// The composer-opt pipeline the model went through, if known.
  std::string pipeline;
};

/// Writes `path` atomically. Throws std::runtime_error naming the path.
void saveCheckpoint(const std::string &path, const State &state,
                    const CheckpointExtras &extras);

/// Restores everything `saveCheckpoint` wrote into `state` (whose model and
/// optimizer must already exist) and `extras`. Throws std::runtime_error
/// naming the path and the mismatch (missing tensor, shape, corrupt file).
void loadCheckpoint(const std::string &path, State &state,
                    CheckpointExtras &extras);

/// Keeps the newest checkpoints of a run in one folder, named
/// `ep<E>-ba<B>.ckpt`, with a `latest` file naming the newest.
class CheckpointFolder {
public:
  /// `keep` <= 0 keeps every checkpoint.
  CheckpointFolder(std::string folder, int keep);
  /// Saves at the current timestamp, updates `latest`, prunes old ones.
  /// Returns the path written.
  std::string save(const State &state, const CheckpointExtras &extras);
  /// Where `save` writes the checkpoint of `state`'s timestamp.
  std::string pathFor(const State &state) const;
  /// The newest complete checkpoint, if any (for --autoresume).
  std::optional<std::string> latest() const;
  const std::string &folder() const { return folder_; }

private:
  std::string folder_;
  int keep_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_CHECKPOINT_H
