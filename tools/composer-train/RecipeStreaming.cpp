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

} // namespace composer::train
