//===- StreamingPartition.cpp - Streaming's partitions and resampling -----===//
//
// streaming/base/partition (orig, relaxed), the DataLoader's round-robin over
// its workers, streaming/base/sampling.py, Stream.apply_weights and
// StreamingDataset.resample_streams, as Streaming computes them.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/NumpyRandom.h"
#include "composer/Runtime/StreamingOrder.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace composer::runtime {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

void checkWorld(const StreamingWorld &world, int64_t batchSize) {
  if (world.nodes <= 0 || world.ranksPerNode <= 0 || world.workersPerRank <= 0)
    throw std::invalid_argument("partition: nodes, ranks per node and workers "
                                "per rank must be positive");
  if (world.rank < 0 || world.rank >= world.worldSize())
    throw std::invalid_argument(
        "partition: rank " + std::to_string(world.rank) +
        " is outside world size " + std::to_string(world.worldSize()));
  if (batchSize <= 0)
    throw std::invalid_argument("partition: the batch size must be positive");
}

/// The canonical nodes' rows of sample positions: row c holds the positions
/// of canonical node c, padded so physical nodes divide them evenly.
std::vector<int64_t> canonicalRows(int64_t numSamples, int64_t cn, int64_t pn,
                                   int64_t &padded) {
  int64_t perNode = ceilDiv(numSamples, cn);
  int64_t nodeRatio = 0, padding = 0;
  if (cn < pn) {
    nodeRatio = pn / cn;
    if (int64_t overflow = perNode % nodeRatio)
      padding = nodeRatio - overflow;
  }
  padded = perNode + padding;
  std::vector<int64_t> rows(static_cast<size_t>(cn * padded));
  if (numSamples > cn || (numSamples == cn && cn >= pn)) {
    // Padding repeats positions from just before the padding, skipping the
    // last node_ratio - 1 so that each physical node's share stays distinct.
    int64_t source = padded - 2 * padding - nodeRatio + 1;
    if (padding && source < 0)
      throw std::invalid_argument("partition: too few samples (" +
                                  std::to_string(numSamples) +
                                  ") to pad canonical nodes for " +
                                  std::to_string(pn) + " physical nodes");
    for (int64_t c = 0; c < cn; ++c) {
      int64_t start = c * numSamples / cn, stop = (c + 1) * numSamples / cn;
      int64_t *row = rows.data() + c * padded;
      for (int64_t j = 0; j < padded; ++j)
        row[j] = start + j;
      if (stop - start < perNode)
        row[perNode - 1] -= 1;
      for (int64_t t = 0; t < padding; ++t)
        row[padded - padding + t] = row[source + t];
    }
  } else {
    for (size_t k = 0; k < rows.size(); ++k)
      rows[k] = int64_t(k) % numSamples;
  }
  return rows;
}

StreamingPartition partitionOrig(int64_t numSamples, int64_t cn,
                                 const StreamingWorld &world, int64_t batchSize,
                                 int64_t dropFirst) {
  const int64_t pn = world.nodes, rpn = world.ranksPerNode,
                wpr = world.workersPerRank;
  if ((cn < pn && pn % cn) || (pn < cn && cn % pn))
    throw std::invalid_argument(
        "partition: num_canonical_nodes (" + std::to_string(cn) +
        ") and the number of nodes (" + std::to_string(pn) +
        ") must divide one another");
  if (numSamples <= 0)
    throw std::invalid_argument("partition: the epoch has no samples");
  dropFirst -= dropFirst % pn;

  int64_t padded = 0;
  std::vector<int64_t> rows = canonicalRows(numSamples, cn, pn, padded);
  // Column-major over canonical nodes, the first samples dropped, then dealt
  // to physical nodes in turn.
  std::vector<int64_t> sequence;
  for (int64_t j = 0; j < padded; ++j)
    for (int64_t c = 0; c < cn; ++c)
      sequence.push_back(rows[size_t(c * padded + j)]);
  sequence.erase(sequence.begin(),
                 sequence.begin() +
                     std::min<int64_t>(dropFirst, int64_t(sequence.size())));
  const int64_t perNode = int64_t(sequence.size()) / pn;
  std::vector<std::vector<int64_t>> nodes(static_cast<size_t>(pn));
  for (int64_t p = 0; p < pn; ++p)
    for (int64_t i = 0; i < perNode; ++i)
      nodes[p].push_back(sequence[size_t(i * pn + p)]);

  // Each node's share padded by repeats to a multiple of its ranks.
  if (int64_t overflow = perNode % rpn) {
    int64_t underflow = rpn - overflow;
    for (auto &node : nodes) {
      std::vector<int64_t> last;
      if (rpn + underflow - 1 <= perNode) {
        int64_t from = perNode - rpn - underflow + 1;
        last.assign(node.begin() + from, node.begin() + from + underflow);
      } else {
        for (int64_t k = 0; k < underflow; ++k)
          last.push_back(node[size_t(k % perNode)]);
      }
      node.insert(node.end(), last.begin(), last.end());
    }
  }
  const int64_t rowsPerNode = int64_t(nodes[0].size()) / rpn;
  const int64_t perBatchRound = wpr * batchSize;
  const int64_t batches = ceilDiv(rowsPerNode, perBatchRound);

  StreamingPartition out;
  int64_t dims[5] = {pn, rpn, wpr, batches, batchSize};
  std::copy(dims, dims + 5, out.dims);
  out.ids.assign(size_t(pn * rpn * wpr * batches * batchSize), -1);
  for (int64_t p = 0; p < pn; ++p)
    for (int64_t r = 0; r < rpn; ++r)
      for (int64_t w = 0; w < wpr; ++w)
        for (int64_t b = 0; b < batches; ++b)
          for (int64_t s = 0; s < batchSize; ++s) {
            int64_t row = (b * wpr + w) * batchSize + s;
            if (row < rowsPerNode)
              out.ids[size_t(
                  (((p * rpn + r) * wpr + w) * batches + b) * batchSize + s)] =
                  nodes[p][size_t(row * rpn + r)];
          }
  return out;
}

/// NumPy's sum of float64 values: the first, plus a pairwise sum of the rest.
double pairwiseSum(const double *a, int64_t n) {
  if (n < 8) {
    double sum = 0.;
    for (int64_t i = 0; i < n; ++i)
      sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    std::copy(a, a + 8, r);
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j)
        r[j] += a[i + j];
    double sum =
        ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i)
      sum += a[i];
    return sum;
  }
  int64_t half = n / 2;
  half -= half % 8;
  return pairwiseSum(a, half) + pairwiseSum(a + half, n - half);
}

double numpySum(const std::vector<double> &values) {
  return values.empty() ? 0.
                        : values[0] + pairwiseSum(values.data() + 1,
                                                  int64_t(values.size()) - 1);
}

/// choose_per_stream for relative weights: each stream's share of the epoch
/// truncated, the shortfall given one each to streams drawn at random.
std::vector<int64_t> chooseByProportion(std::vector<double> proportions,
                                        int64_t epochSize, uint64_t seed) {
  double total = numpySum(proportions);
  std::vector<int64_t> choose;
  int64_t chosen = 0;
  for (double &p : proportions) {
    p /= total;
    choose.push_back(int64_t(double(epochSize) * p));
    chosen += choose.back();
  }
  NumpyGenerator rng(seed);
  for (int64_t index : rng.choiceWithoutReplacement(int64_t(proportions.size()),
                                                    epochSize - chosen))
    ++choose[size_t(index)];
  return choose;
}

} // namespace

StreamingPartition streamingPartition(std::string_view algo, int64_t numSamples,
                                      int64_t numCanonicalNodes,
                                      const StreamingWorld &world,
                                      int64_t batchSize, int64_t dropFirst,
                                      int64_t initialNodes) {
  checkWorld(world, batchSize);
  if (numCanonicalNodes <= 0)
    throw std::invalid_argument("partition: num_canonical_nodes must be "
                                "positive");
  if (dropFirst < 0 || dropFirst > numSamples + world.worldSize())
    throw std::invalid_argument("partition: resuming further into the epoch (" +
                                std::to_string(dropFirst) +
                                ") than it has samples (" +
                                std::to_string(numSamples) + ")");
  const int64_t cn = numCanonicalNodes, pn = world.nodes;
  if (algo == "orig")
    return partitionOrig(numSamples, cn, world, batchSize, dropFirst);
  if (algo != "relaxed")
    throw std::invalid_argument("unknown partition_algo '" + std::string(algo) +
                                "' (Streaming's are orig, relaxed)");
  if (initialNodes <= 0 || (pn <= cn && cn % pn == 0) ||
      (pn > cn && pn % cn == 0))
    return partitionOrig(numSamples, cn, world, batchSize, dropFirst);

  // The run started on another node count: partition as it did, with its
  // per-device batch size, then deal its global batches to today's ranks.
  const int64_t rpn = world.ranksPerNode, wpr = world.workersPerRank;
  const int64_t globalBatch = pn * rpn * batchSize;
  const int64_t initialDevices = initialNodes * rpn;
  if (globalBatch % initialDevices)
    throw std::invalid_argument(
        "partition: the global batch size " + std::to_string(globalBatch) +
        " does not divide among the initial " + std::to_string(initialDevices) +
        " devices; keep the global batch size when resuming");
  StreamingWorld initial = world;
  initial.nodes = initialNodes;
  initial.rank = 0;
  StreamingPartition first = partitionOrig(
      numSamples, cn, initial, globalBatch / initialDevices, dropFirst);
  const int64_t *d = first.dims;
  std::vector<int64_t> flat;
  flat.reserve(first.ids.size());
  for (int64_t b = 0; b < d[3]; ++b)
    for (int64_t w = 0; w < d[2]; ++w)
      for (int64_t p = 0; p < d[0]; ++p)
        for (int64_t r = 0; r < d[1]; ++r)
          for (int64_t s = 0; s < d[4]; ++s)
            flat.push_back(first.at(p, r, w, b, s));
  const int64_t rounds = int64_t(flat.size()) / (wpr * pn * rpn * batchSize);
  StreamingPartition out;
  int64_t dims[5] = {pn, rpn, wpr, rounds, batchSize};
  std::copy(dims, dims + 5, out.dims);
  out.ids.resize(flat.size());
  for (int64_t p = 0; p < pn; ++p)
    for (int64_t r = 0; r < rpn; ++r)
      for (int64_t w = 0; w < wpr; ++w)
        for (int64_t x = 0; x < rounds; ++x)
          for (int64_t s = 0; s < batchSize; ++s)
            out.ids[size_t(
                (((p * rpn + r) * wpr + w) * rounds + x) * batchSize + s)] =
                flat[size_t((((x * wpr + w) * pn + p) * rpn + r) * batchSize +
                            s)];
  return out;
}

std::vector<std::vector<int64_t>>
rankBatches(const StreamingPartition &partition, const StreamingWorld &world,
            int64_t batchSize) {
  checkWorld(world, batchSize);
  const int64_t node = world.rank / world.ranksPerNode,
                rank = world.rank % world.ranksPerNode;
  std::vector<std::vector<std::vector<int64_t>>> perWorker(
      size_t(partition.dims[2]));
  for (int64_t w = 0; w < partition.dims[2]; ++w) {
    std::vector<int64_t> samples;
    for (int64_t b = 0; b < partition.dims[3]; ++b)
      for (int64_t s = 0; s < partition.dims[4]; ++s)
        if (int64_t id = partition.at(node, rank, w, b, s); id != -1)
          samples.push_back(id);
    for (size_t at = 0; at < samples.size(); at += size_t(batchSize))
      perWorker[w].emplace_back(
          samples.begin() + at,
          samples.begin() + std::min(samples.size(), at + size_t(batchSize)));
  }
  std::vector<std::vector<int64_t>> batches;
  for (size_t round = 0;; ++round) {
    bool any = false;
    for (auto &worker : perWorker)
      if (round < worker.size()) {
        batches.push_back(std::move(worker[round]));
        any = true;
      }
    if (!any)
      return batches;
  }
}

std::vector<int64_t> streamChoices(const std::vector<StreamWeight> &weights,
                                   const std::vector<int64_t> &samplesPerStream,
                                   std::optional<int64_t> epochSize,
                                   uint64_t seed) {
  if (weights.empty() || weights.size() != samplesPerStream.size())
    throw std::invalid_argument("streams: one weight per stream is needed");
  const bool relative = weights[0].proportion.has_value();
  bool unspecified = true;
  for (size_t i = 0; i < weights.size(); ++i) {
    const StreamWeight &w = weights[i];
    int given =
        w.proportion.has_value() + w.repeat.has_value() + w.choose.has_value();
    if (given > 1)
      throw std::invalid_argument(
          "streams: stream " + std::to_string(i) +
          " gives more than one of proportion, repeat and choose");
    if (relative != w.proportion.has_value())
      throw std::invalid_argument(
          "streams: stream " + std::to_string(i) +
          ": relative weights (proportion) and absolute ones (repeat, "
          "choose, none) do not mix");
    if (given)
      unspecified = false;
    if ((w.proportion && !(*w.proportion >= 0)) ||
        (w.repeat && !(*w.repeat >= 0)) || (w.choose && *w.choose < 0))
      throw std::invalid_argument("streams: stream " + std::to_string(i) +
                                  " has a negative weight");
  }
  if (epochSize && *epochSize < 0)
    throw std::invalid_argument("epoch_size cannot be negative");
  const int64_t total = std::accumulate(samplesPerStream.begin(),
                                        samplesPerStream.end(), int64_t(0));
  if (relative) {
    std::vector<double> proportions;
    for (const StreamWeight &w : weights)
      proportions.push_back(*w.proportion);
    return chooseByProportion(std::move(proportions),
                              epochSize && *epochSize ? *epochSize : total,
                              seed);
  }
  if (unspecified && epochSize && *epochSize) {
    std::vector<double> proportions(samplesPerStream.begin(),
                                    samplesPerStream.end());
    return chooseByProportion(std::move(proportions), *epochSize, seed);
  }
  if (epochSize && *epochSize)
    throw std::invalid_argument("epoch_size needs streams weighted by "
                                "proportion, or not weighted at all");
  std::vector<int64_t> choose;
  for (size_t i = 0; i < weights.size(); ++i) {
    const StreamWeight &w = weights[i];
    choose.push_back(w.repeat ? int64_t(*w.repeat * double(samplesPerStream[i]))
                     : w.choose ? *w.choose
                                : samplesPerStream[i]);
  }
  return choose;
}

std::vector<int64_t> shardChoices(const std::vector<int64_t> &samplesPerShard,
                                  int64_t choose, int64_t granularity,
                                  uint64_t seed, int64_t epoch, bool useEpoch) {
  if (choose < 0)
    throw std::invalid_argument("sampling: choose must be non-negative");
  if (granularity <= 0)
    throw std::invalid_argument("sampling_granularity must be positive");
  const int64_t numSamples = std::accumulate(samplesPerShard.begin(),
                                             samplesPerShard.end(), int64_t(0));
  if (numSamples <= 0)
    throw std::invalid_argument("sampling: the stream has no samples");
  std::vector<int64_t> out;
  if (choose % numSamples == 0) {
    for (int64_t s : samplesPerShard)
      out.push_back(s * choose / numSamples);
    return out;
  }
  // Whole repeats of every shard, then granules of `granularity` samples
  // taken in a random order until the remainder is reached.
  std::vector<int64_t> pickShard, pickSamples;
  for (size_t shard = 0; shard < samplesPerShard.size(); ++shard) {
    int64_t picks = ceilDiv(samplesPerShard[shard], granularity);
    for (int64_t k = 0; k < picks; ++k) {
      pickShard.push_back(int64_t(shard));
      pickSamples.push_back(k + 1 < picks
                                ? granularity
                                : samplesPerShard[shard] - k * granularity);
    }
  }
  NumpyGenerator rng(useEpoch ? seed + uint64_t(epoch) : seed);
  std::vector<int64_t> order = rng.permutation(int64_t(pickShard.size()));
  for (int64_t s : samplesPerShard)
    out.push_back(s * (choose / numSamples));
  int64_t left = choose % numSamples;
  for (int64_t pick : order) {
    int64_t taken = std::min(left, pickSamples[size_t(pick)]);
    out[size_t(pickShard[size_t(pick)])] += taken;
    left -= taken;
    if (!left)
      break;
  }
  return out;
}

Resampled resampleStreams(const std::vector<int64_t> &samplesPerShard,
                          const std::vector<int64_t> &shardsPerStream,
                          const std::vector<int64_t> &choosePerStream,
                          int64_t granularity, uint64_t seed, int64_t epoch,
                          bool balanced, bool shuffle) {
  if (shardsPerStream.size() != choosePerStream.size())
    throw std::invalid_argument("resample: one choice per stream is needed");
  NumpyGenerator rng(balanced ? seed + uint64_t(epoch) : seed);
  Resampled out;
  int64_t shardOffset = 0, sampleOffset = 0;
  for (size_t stream = 0; stream < shardsPerStream.size(); ++stream) {
    std::vector<int64_t> shards(samplesPerShard.begin() + shardOffset,
                                samplesPerShard.begin() + shardOffset +
                                    shardsPerStream[stream]);
    shardOffset += shardsPerStream[stream];
    std::vector<int64_t> choose =
        shardChoices(shards, choosePerStream[stream], granularity, seed, epoch,
                     shuffle && balanced);
    for (size_t k = 0; k < shards.size(); ++k) {
      const int64_t size = shards[k];
      if (size > 0) {
        for (int64_t r = 0; r < choose[k] / size; ++r) {
          out.shuffleUnits.push_back(size);
          for (int64_t i = 0; i < size; ++i)
            out.samples.push_back(sampleOffset + i);
        }
        if (int64_t partial = choose[k] % size) {
          out.shuffleUnits.push_back(partial);
          std::vector<int64_t> picked =
              rng.choiceWithoutReplacement(size, partial);
          std::sort(picked.begin(), picked.end());
          for (int64_t i : picked)
            out.samples.push_back(sampleOffset + i);
        }
      }
      sampleOffset += size;
    }
  }
  return out;
}

int64_t
StreamingOrderSpec::canonicalNodesFor(const StreamingWorld &world) const {
  if (numCanonicalNodes > 0)
    return numCanonicalNodes;
  return shuffleAlgo == "py1s" || shuffleAlgo == "py2s" ? 64 * world.nodes
                                                        : world.nodes;
}

int64_t StreamingOrderSpec::blockSizeFor(int64_t canonicalNodes) const {
  if (shuffleBlockSize > 0)
    return shuffleBlockSize;
  return std::max<int64_t>(4000000 / canonicalNodes, 1 << 18);
}

std::vector<std::vector<int64_t>>
streamingRankOrder(const StreamingOrderSpec &spec, const StreamingWorld &world,
                   int64_t batchSize, int64_t epoch, int64_t sampleInEpoch,
                   std::string *warning) {
  std::vector<int64_t> shardsPerStream = spec.shardsPerStream;
  std::vector<int64_t> choosePerStream = spec.choosePerStream;
  if (shardsPerStream.empty())
    shardsPerStream = {int64_t(spec.samplesPerShard.size())};
  if (choosePerStream.empty()) {
    int64_t offset = 0;
    for (int64_t shards : shardsPerStream) {
      choosePerStream.push_back(std::accumulate(
          spec.samplesPerShard.begin() + offset,
          spec.samplesPerShard.begin() + offset + shards, int64_t(0)));
      offset += shards;
    }
  }
  Resampled resampled =
      resampleStreams(spec.samplesPerShard, shardsPerStream, choosePerStream,
                      spec.samplingGranularity, spec.shuffleSeed, epoch,
                      spec.balancedSampling, spec.shuffle);
  const int64_t epochSize = int64_t(resampled.samples.size());
  const int64_t cn = spec.canonicalNodesFor(world);
  StreamingPartition partition =
      streamingPartition(spec.partitionAlgo, epochSize, cn, world, batchSize,
                         sampleInEpoch, spec.initialNodes);
  std::vector<int64_t> shuffled;
  if (spec.shuffle)
    shuffled = streamingShuffle(spec.shuffleAlgo, resampled.shuffleUnits, cn,
                                spec.shuffleSeed, epoch, spec.blockSizeFor(cn),
                                warning);
  std::vector<std::vector<int64_t>> batches =
      rankBatches(partition, world, batchSize);
  for (auto &batch : batches)
    for (int64_t &position : batch)
      position = resampled.samples[size_t(
          spec.shuffle ? shuffled[size_t(position)] : position)];
  return batches;
}

} // namespace composer::runtime
