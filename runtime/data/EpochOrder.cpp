//===- EpochOrder.cpp - Which samples each batch of an epoch reads --------===//

#include "EpochOrder.h"

#include "composer/Runtime/SampleTransform.h"
#include "composer/Runtime/StreamingOrder.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <stdexcept>

namespace composer::runtime {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The whole epoch's order. A dataset stored in shards is shuffled in two
/// levels, shards then samples within blocks of consecutive shards, so the
/// loader's reads stay within a few shards at a time.
torch::Tensor epochPermutation(const Dataset &ds, const DataLoaderOptions &o,
                               int64_t epoch) {
  const int64_t n = ds.size();
  if (!o.shuffle)
    return torch::arange(n, torch::kLong);
  uint64_t seed = splitmix64(o.seed * 1000003ULL + uint64_t(epoch));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<int64_t> starts = ds.shardStarts();
  if (starts.size() <= 1 || n <= o.shuffleBlockSize)
    return torch::randperm(n, gen, torch::kLong);
  starts.push_back(n);
  const int64_t numShards = int64_t(starts.size()) - 1;
  torch::Tensor shardOrder = torch::randperm(numShards, gen, torch::kLong);
  torch::Tensor perm = torch::empty({n}, torch::kLong);
  int64_t *out = perm.data_ptr<int64_t>();
  int64_t filled = 0;
  for (int64_t k = 0; k < numShards; ++k) {
    int64_t shard = shardOrder.data_ptr<int64_t>()[k];
    for (int64_t i = starts[shard]; i < starts[shard + 1]; ++i)
      out[filled++] = i;
  }
  for (int64_t begin = 0; begin < n; begin += o.shuffleBlockSize) {
    int64_t len = std::min(o.shuffleBlockSize, n - begin);
    torch::Tensor block = perm.narrow(0, begin, len);
    block.copy_(block.index_select(0, torch::randperm(len, gen, torch::kLong)));
  }
  return perm;
}

/// The loader's own order for this rank: the (shuffled) epoch padded by
/// repeating from its start, as torch's DistributedSampler pads, then every
/// worldSize-th entry from `rank`, cut into batches of batchSize.
EpochOrder ownOrder(const Dataset &ds, const DataLoaderOptions &o,
                    int64_t epoch) {
  const int64_t n = ds.size();
  torch::Tensor perm = epochPermutation(ds, o, epoch);
  const int64_t share = ceilDiv(n, o.worldSize);
  EpochOrder order;
  if (o.worldSize == 1) {
    order.samples = perm;
  } else {
    order.samples = torch::empty({share}, torch::kLong);
    const int64_t *p = perm.data_ptr<int64_t>();
    int64_t *out = order.samples.data_ptr<int64_t>();
    for (int64_t k = 0; k < share; ++k)
      out[k] = p[(o.rank + k * o.worldSize) % n];
  }
  const int64_t batches =
      o.dropLast ? share / o.batchSize : ceilDiv(share, o.batchSize);
  for (int64_t b = 1; b <= batches; ++b)
    order.starts.push_back(std::min(b * o.batchSize, share));
  return order;
}

EpochOrder streamingOrder(const Dataset &ds, const DataLoaderOptions &o,
                          int64_t epoch, int64_t sampleInEpoch) {
  StreamingOrderSpec spec = *o.streaming;
  if (spec.samplesPerShard.empty()) {
    std::vector<int64_t> starts = ds.shardStarts();
    if (starts.empty())
      starts.push_back(0);
    starts.push_back(ds.size());
    for (size_t k = 0; k + 1 < starts.size(); ++k)
      spec.samplesPerShard.push_back(starts[k + 1] - starts[k]);
  }
  int64_t held = 0;
  for (int64_t n : spec.samplesPerShard)
    held += n;
  if (held != ds.size())
    throw std::invalid_argument(
        "DataLoader: the shards of Streaming's order hold " +
        std::to_string(held) + " samples, the dataset " +
        std::to_string(ds.size()));
  spec.shuffle = o.shuffle;
  std::vector<std::vector<int64_t>> batches = streamingRankOrder(
      spec, streamingWorld(o), o.batchSize, epoch, sampleInEpoch);
  EpochOrder order;
  std::vector<int64_t> samples;
  for (const auto &batch : batches) {
    // drop_last drops each worker's short last batch, as torch's DataLoader
    // does with an IterableDataset.
    if (o.dropLast && int64_t(batch.size()) < o.batchSize)
      continue;
    samples.insert(samples.end(), batch.begin(), batch.end());
    order.starts.push_back(int64_t(samples.size()));
  }
  order.samples = torch::tensor(samples, torch::kLong);
  return order;
}

} // namespace

StreamingWorld streamingWorld(const DataLoaderOptions &o) {
  StreamingWorld world;
  world.ranksPerNode = o.ranksPerNode > 0 ? o.ranksPerNode : o.worldSize;
  if (o.worldSize % world.ranksPerNode)
    throw std::invalid_argument(
        "DataLoader: " + std::to_string(world.ranksPerNode) +
        " ranks per node do not divide world size " +
        std::to_string(o.worldSize));
  world.nodes = o.worldSize / world.ranksPerNode;
  world.workersPerRank = std::max(1, o.numWorkers);
  world.rank = o.rank;
  return world;
}

EpochOrder epochOrder(const Dataset &ds, const DataLoaderOptions &o,
                      int64_t epoch, int64_t sampleInEpoch) {
  if (o.streaming)
    return streamingOrder(ds, o, epoch, sampleInEpoch);
  if (sampleInEpoch != 0)
    throw std::logic_error("DataLoader: only Streaming's order starts "
                           "mid-epoch by samples");
  return ownOrder(ds, o, epoch);
}

} // namespace composer::runtime
