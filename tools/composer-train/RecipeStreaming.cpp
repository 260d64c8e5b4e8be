//===- RecipeStreaming.cpp - StreamingDataset's arguments in a recipe -----===//

#include "RecipeStreaming.h"

#include "composer/Runtime/StreamingOrder.h"

#include "llvm/ADT/StringExtras.h"

using namespace composer::runtime;

namespace composer::train {
namespace {

/// A positive integer at `key`, or 0 when absent.
int64_t positive(RecipeReader &reader, const RecipeValue &spec,
                 llvm::StringRef key) {
  const RecipeValue *value = reader.get(spec, key);
  if (!value)
    return 0;
  int64_t n = reader.integer(spec, key, 0);
  if (n <= 0)
    reader.error(value->loc, "'" + key + "' must be a positive integer");
  return n;
}

/// The string at `key`, which must be one of `allowed`.
std::string oneOf(RecipeReader &reader, const RecipeValue &spec,
                  llvm::StringRef key, const std::string &fallback,
                  const std::vector<std::string> &allowed) {
  std::string value = reader.string(spec, key, fallback);
  if (llvm::is_contained(allowed, value))
    return value;
  reader.error(reader.get(spec, key)->loc, "unknown " + key + " '" + value +
                                               "'; expected " +
                                               llvm::join(allowed, ", "));
  return fallback;
}

} // namespace

void readStreamingOrder(RecipeReader &reader, const RecipeValue &spec,
                        DataLoaderOptions &options) {
  std::vector<std::string> algos = streamingShuffleAlgos();
  algos.push_back("composer");
  std::string algo = oneOf(reader, spec, "shuffle_algo", "py1e", algos);
  int64_t blockSize = positive(reader, spec, "shuffle_block_size");
  if (algo == "composer") {
    options.streaming.reset();
    if (blockSize)
      options.shuffleBlockSize = blockSize;
    return;
  }
  StreamingOrderSpec order;
  order.shuffleAlgo = algo;
  order.shuffleBlockSize = blockSize;
  if (const RecipeValue *seed = reader.get(spec, "shuffle_seed")) {
    int64_t value = reader.integer(spec, "shuffle_seed", 9176);
    if (value < 0)
      reader.error(seed->loc, "'shuffle_seed' must not be negative");
    order.shuffleSeed = uint64_t(std::max<int64_t>(value, 0));
  }
  order.numCanonicalNodes = positive(reader, spec, "num_canonical_nodes");
  order.partitionAlgo =
      oneOf(reader, spec, "partition_algo", "relaxed", {"orig", "relaxed"});
  order.balancedSampling = oneOf(reader, spec, "sampling_method", "balanced",
                                 {"balanced", "fixed"}) == "balanced";
  if (int64_t granularity = positive(reader, spec, "sampling_granularity"))
    order.samplingGranularity = granularity;
  options.streaming = std::move(order);
}

std::string readStreamingRemote(RecipeReader &reader, const RecipeValue &spec,
                                RemoteOptions &remote, MdsOptions &mds,
                                bool streamsHaveRemotes) {
  std::string url = reader.string(spec, "remote", "");
  if (const RecipeValue *value = reader.get(spec, "remote")) {
    try {
      downloaderFor(url);
    } catch (const std::exception &e) {
      reader.error(value->loc, e.what());
    }
  }
  if (const RecipeValue *retry = reader.get(spec, "download_retry")) {
    remote.retry = int(reader.integer(spec, "download_retry", remote.retry));
    if (remote.retry < 0)
      reader.error(retry->loc, "'download_retry' must not be negative");
  }
  if (const RecipeValue *timeout = reader.get(spec, "download_timeout")) {
    remote.timeoutSeconds =
        reader.number(spec, "download_timeout", remote.timeoutSeconds);
    if (!(remote.timeoutSeconds > 0))
      reader.error(timeout->loc, "'download_timeout' must be positive");
  }
  if (const RecipeValue *limit = reader.get(spec, "cache_limit")) {
    try {
      remote.cacheLimit = parseMdsSize(limit->scalar);
    } catch (const std::exception &e) {
      reader.error(limit->loc, std::string("'cache_limit': ") + e.what());
    }
  }
  if (const RecipeValue *hash = reader.get(spec, "validate_hash")) {
    // Every hash the index lists is checked; naming one asks for checks.
    if (!isMdsHash(hash->scalar))
      reader.error(hash->loc, "unknown validate_hash '" + hash->scalar + "'");
    mds.verifyHashes = true;
  }
  if ((remote.cacheLimit || reader.get(spec, "download_retry") ||
       reader.get(spec, "download_timeout")) &&
      url.empty() && !streamsHaveRemotes)
    reader.error(spec.loc, "download_retry, download_timeout and "
                           "cache_limit need a 'remote'");
  return url;
}

std::vector<StreamPlan> readStreams(RecipeReader &reader,
                                    const RecipeValue &spec,
                                    std::optional<int64_t> &epochSize) {
  std::vector<StreamPlan> plans;
  const RecipeValue *streams = reader.get(spec, "streams");
  if (const RecipeValue *size = reader.get(spec, "epoch_size")) {
    epochSize = reader.integer(spec, "epoch_size", 0);
    if (*epochSize < 0)
      reader.error(size->loc, "'epoch_size' must not be negative");
  }
  if (!streams)
    return plans;
  std::vector<const RecipeValue *> items;
  if (streams->kind == RecipeValue::Kind::Sequence)
    for (const RecipeValue &item : streams->items)
      items.push_back(&item);
  else if (streams->kind == RecipeValue::Kind::Mapping)
    for (const RecipeValue::Entry &entry : streams->entries) {
      entry.used = true; // a stream's name
      items.push_back(&entry.value);
    }
  if (items.empty()) {
    reader.error(streams->loc, "'streams' must be a list or a map of "
                               "streams, each {remote, local, proportion | "
                               "repeat | choose}");
    return plans;
  }
  for (const RecipeValue *item : items) {
    StreamPlan plan;
    plan.loc = item->loc;
    if (item->kind != RecipeValue::Kind::Mapping) {
      reader.error(item->loc, "a stream must be a mapping");
      continue;
    }
    plan.remote = reader.string(*item, "remote", "");
    if (const RecipeValue *remote = reader.get(*item, "remote")) {
      try {
        downloaderFor(plan.remote);
      } catch (const std::exception &e) {
        reader.error(remote->loc, e.what());
      }
    }
    if (const RecipeValue *local = reader.require(*item, "local", "stream"))
      plan.local = local->scalar;
    if (reader.get(*item, "proportion"))
      plan.weight.proportion = reader.number(*item, "proportion", 0);
    if (reader.get(*item, "repeat"))
      plan.weight.repeat = reader.number(*item, "repeat", 0);
    if (reader.get(*item, "choose"))
      plan.weight.choose = reader.integer(*item, "choose", 0);
    plans.push_back(std::move(plan));
  }
  // Streaming's rules, checked now on stand-in sizes; the sizes come with
  // the shards.
  std::vector<StreamWeight> weights;
  for (const StreamPlan &plan : plans)
    weights.push_back(plan.weight);
  try {
    streamChoices(weights, std::vector<int64_t>(plans.size(), 1), epochSize, 0);
  } catch (const std::invalid_argument &e) {
    std::string what = e.what();
    size_t stream = plans.size();
    if (what.rfind("streams: stream ", 0) == 0)
      stream = std::stoul(what.substr(16));
    reader.error(stream < plans.size() ? plans[stream].loc
                 : reader.get(spec, "epoch_size")
                     ? reader.get(spec, "epoch_size")->loc
                     : streams->loc,
                 what);
  }
  return plans;
}

} // namespace composer::train
