//===- CheckpointFiles.h - Shared by whole and sharded ones -*- C++ -*-===//
//-*-===//
//
// Internal to the runtime: the file helpers and the dict saveCheckpoint
// writes, which a sharded checkpoint's index and its consolidation share.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_CHECKPOINTFILES_H
#define COMPOSER_RUNTIME_CHECKPOINTFILES_H

#include "composer/Runtime/Checkpoint.h"

#include <torch/serialize.h>

#include <set>
#include <string>

namespace composer::runtime::checkpoint_files {

using Dict = c10::impl::GenericDict;

inline constexpr const char *kFormat = "composer-train-checkpoint";
inline constexpr int64_t kVersion = 1;

[[noreturn]] void fail(const std::string &path, const std::string &message);

/// Writes `path` through a temporary file and a rename, so readers see the
/// old file or the whole new one, never a part.
void writeAtomically(const std::string &path, const char *data, size_t size,
                     const std::string &what);
/// Pickles `dict` to `path` atomically.
void writeDict(const std::string &path, const Dict &dict,
               const std::string &what);
/// The pickled dict at `path`; throws naming the path when it cannot be
/// read or is not a dict.
Dict readDict(const std::string &path, const std::string &what);

/// An archive's bytes as a uint8 tensor, and back.
torch::Tensor archiveTensor(torch::serialize::OutputArchive &archive);
void readArchive(const torch::Tensor &bytes,
                 torch::serialize::InputArchive &archive);

/// The entry `key` of a checkpoint's dict; throws naming `path` when absent.
const c10::IValue &lookup(const Dict &dict, const std::string &key,
                          const std::string &path);

/// saveCheckpoint's dict, without the model tensors named in `leftOut`.
Dict checkpointDict(const State &state, const CheckpointExtras &extras,
                    bool weightsOnly,
                    const std::set<std::string> &leftOut = {});

/// Reads the sharded checkpoint directory `dir` into saveCheckpoint's dict.
Dict consolidate(const std::string &dir);

} // namespace composer::runtime::checkpoint_files

#endif // COMPOSER_RUNTIME_CHECKPOINTFILES_H
