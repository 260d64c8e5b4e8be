//===- RecipeStreaming.h - StreamingDataset's arguments in a recipe -*- C++
//-*-===//
//
// The keys of an `mds` data section that MosaicML Streaming's
// StreamingDataset takes for its sample order (docs/data-formats.md lists
// each, supported or not).
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_TRAIN_RECIPESTREAMING_H
#define COMPOSER_TRAIN_RECIPESTREAMING_H

#include "RecipeReader.h"

#include "composer/Runtime/Data.h"
#include "composer/Runtime/Mds.h"
#include "composer/Runtime/Remote.h"

namespace composer::train {

/// shuffle_algo (Streaming's, default py1e, or `composer` for the loader's
/// own order), shuffle_seed, shuffle_block_size, num_canonical_nodes,
/// partition_algo, sampling_method and sampling_granularity, into
/// `options` (its streaming order, or its shuffleBlockSize for `composer`).
void readStreamingOrder(RecipeReader &reader, const RecipeValue &spec,
                        runtime::DataLoaderOptions &options);

/// Where an mds section's shards come from: `remote` (a directory, file://
/// or http(s):// URL), download_retry, download_timeout, cache_limit and
/// validate_hash. Returns the remote, empty when the shards are local; a
/// scheme without a downloader is an error at its line. The download
/// options need a remote: the section's, or its streams'.
std::string readStreamingRemote(RecipeReader &reader, const RecipeValue &spec,
                                runtime::RemoteOptions &remote,
                                runtime::MdsOptions &mds,
                                bool streamsHaveRemotes);

/// One of an mds section's `streams`.
struct StreamPlan {
  std::string remote, local;
  runtime::StreamWeight weight;
  llvm::SMLoc loc;
};

/// `streams` (a list, or a map of named streams) of {remote, local,
/// proportion | repeat | choose}, and `epoch_size`, refusing the
/// combinations Streaming refuses at their line. Empty without streams;
/// then `local` (and `remote`) must be given beside them, else not.
std::vector<StreamPlan> readStreams(RecipeReader &reader,
                                    const RecipeValue &spec,
                                    std::optional<int64_t> &epochSize);

} // namespace composer::train

#endif // COMPOSER_TRAIN_RECIPESTREAMING_H
