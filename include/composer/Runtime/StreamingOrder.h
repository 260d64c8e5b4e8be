//===- StreamingOrder.h - MosaicML Streaming's sample order -----*- C++ -*-===//
//
// The order in which a StreamingDataset gives its samples: each epoch's
// shuffle of the global sample space (streaming/base/shuffle), its partition
// over nodes, ranks, DataLoader workers and batches (streaming/base/
// partition), and the per-stream resampling that mixes streams
// (streaming/base/sampling.py, Stream.apply_weights). All randomness is
// NumPy's default_rng (NumpyRandom.h), so for the same shard sizes, seed,
// epoch and world every function returns what Streaming returns, element for
// element (unittests/Runtime/StreamingOrderTest.cpp, against orders recorded
// by running Streaming's own code).
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_STREAMINGORDER_H
#define COMPOSER_RUNTIME_STREAMINGORDER_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace composer::runtime {

/// Streaming's shuffle algorithms by name.
const std::vector<std::string> &streamingShuffleAlgos();

/// get_shuffle(algo, shard_sizes, num_canonical_nodes, seed, epoch,
/// block_size): entry i is the sample that position i of the epoch reads.
/// Throws std::invalid_argument for an unknown algorithm or arguments
/// Streaming refuses. `warning`, when given, receives Streaming's warning
/// (py1e: spans larger than the block stay unshuffled) or stays empty.
std::vector<int64_t> streamingShuffle(std::string_view algo,
                                      const std::vector<int64_t> &shardSizes,
                                      int64_t numCanonicalNodes, uint64_t seed,
                                      int64_t epoch, int64_t blockSize,
                                      std::string *warning = nullptr);

/// Who reads: Streaming's World, for one rank.
struct StreamingWorld {
  int64_t nodes = 1;
  int64_t ranksPerNode = 1;
  int64_t workersPerRank = 1;
  /// This rank: node * ranksPerNode + rank within the node.
  int64_t rank = 0;
  int64_t worldSize() const { return nodes * ranksPerNode; }
};

/// A 5-D partition (nodes, ranks per node, workers per rank, batches per
/// worker, batch size) of sample positions, -1 where padded.
struct StreamingPartition {
  int64_t dims[5] = {0, 0, 0, 0, 0};
  std::vector<int64_t> ids;
  int64_t at(int64_t node, int64_t rank, int64_t worker, int64_t batch,
             int64_t slot) const {
    return ids[size_t(
        (((node * dims[1] + rank) * dims[2] + worker) * dims[3] + batch) *
            dims[4] +
        slot)];
  }
};

/// get_partitions(algo, ...) for algo "orig" or "relaxed". `dropFirst` is the
/// number of the epoch's samples already seen (Streaming's sample_in_epoch);
/// `initialNodes` (0: none) the node count the run started with.
StreamingPartition streamingPartition(std::string_view algo, int64_t numSamples,
                                      int64_t numCanonicalNodes,
                                      const StreamingWorld &world,
                                      int64_t batchSize, int64_t dropFirst,
                                      int64_t initialNodes = 0);

/// The batches one rank's DataLoader yields from a partition: each worker's
/// samples (positions != -1) cut into batches of `batchSize`, the workers
/// taken in turn by batch as torch's DataLoader takes them, skipping a
/// worker once it is exhausted. Entries are partition values (positions).
std::vector<std::vector<int64_t>>
rankBatches(const StreamingPartition &partition, const StreamingWorld &world,
            int64_t batchSize);

/// One stream's weight, as a Stream is given at most one.
struct StreamWeight {
  std::optional<double> proportion;
  std::optional<double> repeat;
  std::optional<int64_t> choose;
};

/// Stream.apply_weights: the samples each stream gives per epoch. Throws
/// std::invalid_argument with Streaming's reasons (a stream with two
/// weights, relative mixed with absolute weights, epoch_size with absolute
/// weights), naming the stream.
std::vector<int64_t> streamChoices(const std::vector<StreamWeight> &weights,
                                   const std::vector<int64_t> &samplesPerStream,
                                   std::optional<int64_t> epochSize,
                                   uint64_t seed);

/// get_sampling: how many samples each shard of one stream gives.
std::vector<int64_t> shardChoices(const std::vector<int64_t> &samplesPerShard,
                                  int64_t choose, int64_t granularity,
                                  uint64_t seed, int64_t epoch, bool useEpoch);

/// StreamingDataset.resample_streams for all streams: the shuffle units
/// (per shard, full repeats then any partial one) and, for each resampled
/// position, the underlying sample. `shardsPerStream` and
/// `choosePerStream` are per stream; shards are in stream order.
struct Resampled {
  std::vector<int64_t> shuffleUnits;
  std::vector<int64_t> samples;
};
Resampled resampleStreams(const std::vector<int64_t> &samplesPerShard,
                          const std::vector<int64_t> &shardsPerStream,
                          const std::vector<int64_t> &choosePerStream,
                          int64_t granularity, uint64_t seed, int64_t epoch,
                          bool balanced, bool shuffle);

/// Everything that fixes one rank's order (StreamingDataset's arguments).
struct StreamingOrderSpec {
  std::vector<int64_t> samplesPerShard;
  /// Shards per stream, in order; empty: one stream of every shard.
  std::vector<int64_t> shardsPerStream;
  /// Samples each stream gives per epoch (streamChoices); empty: all.
  std::vector<int64_t> choosePerStream;
  bool shuffle = true;
  std::string shuffleAlgo = "py1e";
  uint64_t shuffleSeed = 9176;
  /// 0: Streaming's default for the algorithm and world.
  int64_t numCanonicalNodes = 0;
  int64_t shuffleBlockSize = 0;
  std::string partitionAlgo = "relaxed";
  bool balancedSampling = true;
  int64_t samplingGranularity = 1;
  int64_t initialNodes = 0;

  /// The defaults Streaming resolves at the start of an epoch.
  int64_t canonicalNodesFor(const StreamingWorld &world) const;
  int64_t blockSizeFor(int64_t canonicalNodes) const;
};

/// generate_work_random_batching for one rank: its batches of underlying
/// sample indices in the order its DataLoader yields them, `sampleInEpoch`
/// samples of the epoch (global, as Streaming's state_dict counts them)
/// already seen.
std::vector<std::vector<int64_t>>
streamingRankOrder(const StreamingOrderSpec &spec, const StreamingWorld &world,
                   int64_t batchSize, int64_t epoch, int64_t sampleInEpoch,
                   std::string *warning = nullptr);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_STREAMINGORDER_H
