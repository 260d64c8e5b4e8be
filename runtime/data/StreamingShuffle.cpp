//===- StreamingShuffle.cpp - Streaming's shuffle algorithms --------------===//
//
// streaming/base/shuffle: naive, py1br, py1e, py1s and py2s. Each draws from
// two generators, a run generator seeded with `seed` (fixed for the run: the
// shards' assignment to canonical nodes) and an epoch generator seeded with
// `seed + epoch`, in exactly Streaming's sequence of calls.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/NumpyRandom.h"
#include "composer/Runtime/StreamingOrder.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace composer::runtime {
namespace {

/// A run of consecutive sample ids [begin, end).
struct Span {
  int64_t begin, end;
  int64_t size() const { return end - begin; }
};

std::vector<Span> shardSpans(const std::vector<int64_t> &shardSizes,
                             int64_t &numSamples) {
  std::vector<Span> spans;
  numSamples = 0;
  for (int64_t size : shardSizes) {
    if (size < 0)
      throw std::invalid_argument("shuffle: a shard has a negative size");
    spans.push_back({numSamples, numSamples + size});
    numSamples += size;
  }
  return spans;
}

/// divide_spans: splits the spans at canonical node boundaries (node k ends
/// at numSamples * (k + 1) / parts). Returns each node's [first, last) span.
std::vector<std::pair<size_t, size_t>>
divideSpans(std::vector<Span> &spans, int64_t numSamples, int64_t parts) {
  std::vector<Span> out;
  std::vector<std::pair<size_t, size_t>> nodes;
  size_t index = 0, nodeBegin = 0;
  int64_t sofar = 0;
  for (int64_t part = 0; part < parts; ++part) {
    int64_t partEnd = numSamples * (part + 1) / parts;
    while (index < spans.size()) {
      Span span = spans[index];
      if (partEnd < sofar + span.size()) {
        if (sofar < partEnd) {
          int64_t split = partEnd - sofar;
          out.push_back({span.begin, span.begin + split});
          spans[index].begin += split;
          sofar += split;
        }
        break;
      }
      out.push_back(span);
      ++index;
      sofar += span.size();
    }
    nodes.emplace_back(nodeBegin, out.size());
    nodeBegin = out.size();
  }
  spans = std::move(out);
  return nodes;
}

/// The shards in the run's order, divided among canonical nodes, then each
/// node's spans in this epoch's order: the part py1br, py1e and py1s share.
std::vector<std::pair<size_t, size_t>>
epochSpans(const std::vector<int64_t> &shardSizes, int64_t canonicalNodes,
           uint64_t seed, NumpyGenerator &epochRng, std::vector<Span> &spans,
           int64_t &numSamples) {
  spans = shardSpans(shardSizes, numSamples);
  NumpyGenerator runRng(seed);
  runRng.shuffle(spans);
  auto nodes = divideSpans(spans, numSamples, canonicalNodes);
  for (auto [begin, end] : nodes)
    epochRng.shuffle(spans.data() + begin, int64_t(end - begin));
  return nodes;
}

std::vector<int64_t> shuffleNaive(const std::vector<int64_t> &shardSizes,
                                  uint64_t seed, int64_t epoch) {
  int64_t n = std::accumulate(shardSizes.begin(), shardSizes.end(), int64_t(0));
  return NumpyGenerator(seed + uint64_t(epoch)).permutation(n);
}

std::vector<int64_t> shufflePy1s(const std::vector<int64_t> &shardSizes,
                                 int64_t canonicalNodes, uint64_t seed,
                                 int64_t epoch) {
  NumpyGenerator epochRng(seed + uint64_t(epoch));
  std::vector<Span> spans;
  int64_t n = 0;
  epochSpans(shardSizes, canonicalNodes, seed, epochRng, spans, n);
  std::vector<int64_t> ids(size_t(n), 0);
  int64_t offset = 0;
  for (const Span &span : spans) {
    std::iota(ids.begin() + offset, ids.begin() + offset + span.size(),
              span.begin);
    epochRng.shuffle(ids.data() + offset, span.size());
    offset += span.size();
  }
  return ids;
}

int64_t scaledBlock(int64_t blockSize, double factor) {
  return int64_t(factor * double(blockSize));
}

std::vector<int64_t> shufflePy1br(const std::vector<int64_t> &shardSizes,
                                  int64_t canonicalNodes, uint64_t seed,
                                  int64_t epoch, int64_t blockSize) {
  NumpyGenerator epochRng(seed + uint64_t(epoch));
  std::vector<Span> spans;
  int64_t n = 0;
  auto nodes = epochSpans(shardSizes, canonicalNodes, seed, epochRng, spans, n);
  std::vector<int64_t> ids(size_t(n), 0);
  std::vector<int64_t> stagger(static_cast<size_t>(canonicalNodes));
  for (int64_t &s : stagger)
    s = epochRng.integers(0, scaledBlock(blockSize, 0.75));
  int64_t nodeStop = 0;
  for (size_t node = 0; node < nodes.size(); ++node) {
    int64_t nodeStart = nodeStop;
    for (size_t k = nodes[node].first; k < nodes[node].second; ++k) {
      std::iota(ids.begin() + nodeStop,
                ids.begin() + nodeStop + spans[k].size(), spans[k].begin);
      nodeStop += spans[k].size();
    }
    // Blocks of random size, staggered per node so that nodes do not all
    // start new shards at once.
    std::vector<std::pair<int64_t, int64_t>> blocks;
    int64_t blocksEnd = nodeStart;
    while (blocksEnd < nodeStop) {
      int64_t size = epochRng.integers(scaledBlock(blockSize, 0.75),
                                       scaledBlock(blockSize, 1.25));
      int64_t start = std::max(blocksEnd - stagger[node], nodeStart);
      int64_t stop = std::min(blocksEnd + size - stagger[node], nodeStop);
      blocks.emplace_back(start, stop);
      blocksEnd += stop - start;
    }
    for (auto [start, stop] : blocks)
      epochRng.shuffle(ids.data() + start, stop - start);
  }
  return ids;
}

std::vector<int64_t> shufflePy1e(const std::vector<int64_t> &shardSizes,
                                 int64_t canonicalNodes, uint64_t seed,
                                 int64_t epoch, int64_t blockSize,
                                 std::string *warning) {
  NumpyGenerator epochRng(seed + uint64_t(epoch));
  std::vector<Span> spans;
  int64_t n = 0;
  auto nodes = epochSpans(shardSizes, canonicalNodes, seed, epochRng, spans, n);
  std::vector<int64_t> ids;
  ids.reserve(size_t(n));
  bool spanLargerThanBlock = false;
  for (auto [first, last] : nodes) {
    int64_t nodeSamples = 0;
    for (size_t k = first; k < last; ++k)
      nodeSamples += spans[k].size();
    if (nodeSamples == 0)
      throw std::invalid_argument(
          "shuffle: a canonical node has no samples: the data set has fewer "
          "samples than num_canonical_nodes (" +
          std::to_string(canonicalNodes) + "); reduce num_canonical_nodes");
    std::vector<int64_t> samples;
    samples.reserve(size_t(nodeSamples));
    for (size_t k = first; k < last; ++k) {
      size_t at = samples.size();
      for (int64_t id = spans[k].begin; id < spans[k].end; ++id)
        samples.push_back(id);
      epochRng.shuffle(samples.data() + at, spans[k].size());
    }
    // Each span's samples move by a uniform shift within a window of about
    // one block, clipped to the node; sorting by position mixes neighbours.
    std::vector<double> position(static_cast<size_t>(nodeSamples));
    for (int64_t i = 0; i < nodeSamples; ++i)
      position[i] = double(i);
    int64_t offset = 0;
    for (size_t k = first; k < last; ++k) {
      int64_t spanSize = spans[k].size();
      int64_t block = epochRng.integers(scaledBlock(blockSize, 0.75),
                                        scaledBlock(blockSize, 1.25));
      double cutoff = double(block - spanSize) / 2;
      if (cutoff < 0) {
        cutoff = 0;
        spanLargerThanBlock = true;
      }
      double lower = std::max(-cutoff, double(-offset));
      double upper = std::min(cutoff, double(nodeSamples - offset - spanSize));
      for (int64_t i = 0; i < spanSize; ++i)
        position[offset + i] += epochRng.uniform(lower, upper);
      offset += spanSize;
    }
    std::vector<int64_t> byPosition(static_cast<size_t>(nodeSamples));
    std::iota(byPosition.begin(), byPosition.end(), int64_t(0));
    std::stable_sort(
        byPosition.begin(), byPosition.end(),
        [&](int64_t a, int64_t b) { return position[a] < position[b]; });
    for (int64_t i : byPosition)
      ids.push_back(samples[i]);
  }
  if (warning && spanLargerThanBlock)
    *warning = "shuffle_block_size is smaller than some shards: their "
               "samples are not mixed with other shards'; raise "
               "shuffle_block_size for a better shuffle";
  return ids;
}

/// py2s's unit: a shard, or the part of one that fell in one canonical node.
struct ShardPart {
  std::vector<int64_t> samples;
};

std::vector<int64_t> shufflePy2s(const std::vector<int64_t> &shardSizes,
                                 int64_t canonicalNodes, uint64_t seed,
                                 int64_t epoch) {
  std::vector<ShardPart> shards;
  int64_t n = 0;
  for (int64_t size : shardSizes) {
    ShardPart part;
    for (int64_t i = 0; i < size; ++i)
      part.samples.push_back(n + i);
    n += size;
    shards.push_back(std::move(part));
  }
  NumpyGenerator fixedRng(seed);
  fixedRng.shuffle(shards);
  for (ShardPart &shard : shards)
    fixedRng.shuffle(shard.samples);

  // _partition: shards split at canonical node boundaries.
  std::vector<std::vector<ShardPart>> parts;
  size_t index = 0;
  int64_t sofar = 0;
  for (int64_t part = 0; part < canonicalNodes; ++part) {
    int64_t partEnd = n * (part + 1) / canonicalNodes;
    std::vector<ShardPart> partShards;
    while (index < shards.size()) {
      std::vector<int64_t> &samples = shards[index].samples;
      int64_t size = int64_t(samples.size());
      if (partEnd < sofar + size) {
        if (sofar < partEnd) {
          int64_t split = partEnd - sofar;
          partShards.push_back(
              {std::vector<int64_t>(samples.begin(), samples.begin() + split)});
          samples.erase(samples.begin(), samples.begin() + split);
          sofar += split;
        }
        break;
      }
      partShards.push_back(std::move(shards[index]));
      ++index;
      sofar += size;
    }
    parts.push_back(std::move(partShards));
  }

  NumpyGenerator epochRng(seed + uint64_t(epoch));
  std::vector<int64_t> ids;
  ids.reserve(size_t(n));
  for (auto &partShards : parts) {
    epochRng.shuffle(partShards);
    for (ShardPart &shard : partShards)
      epochRng.shuffle(shard.samples);
  }
  for (auto &partShards : parts)
    for (ShardPart &shard : partShards)
      ids.insert(ids.end(), shard.samples.begin(), shard.samples.end());
  return ids;
}

} // namespace

const std::vector<std::string> &streamingShuffleAlgos() {
  static const std::vector<std::string> algos{"naive", "py1br", "py1e", "py1s",
                                              "py2s"};
  return algos;
}

std::vector<int64_t> streamingShuffle(std::string_view algo,
                                      const std::vector<int64_t> &shardSizes,
                                      int64_t numCanonicalNodes, uint64_t seed,
                                      int64_t epoch, int64_t blockSize,
                                      std::string *warning) {
  if (warning)
    warning->clear();
  if (numCanonicalNodes <= 0)
    throw std::invalid_argument("shuffle: num_canonical_nodes must be "
                                "positive");
  if (epoch < 0)
    throw std::invalid_argument("shuffle: the epoch must be non-negative");
  if (algo == "naive")
    return shuffleNaive(shardSizes, seed, epoch);
  if (algo == "py1s")
    return shufflePy1s(shardSizes, numCanonicalNodes, seed, epoch);
  if (algo == "py2s")
    return shufflePy2s(shardSizes, numCanonicalNodes, seed, epoch);
  // Both draw block sizes from [0.75, 1.25) x shuffle_block_size; py1br
  // also staggers nodes by up to 0.75 x shuffle_block_size.
  if (algo == "py1e" || algo == "py1br") {
    int64_t minimum = algo == "py1e" ? 1 : 2;
    if (blockSize < minimum)
      throw std::invalid_argument(
          "shuffle: shuffle_block_size must be at least " +
          std::to_string(minimum) + " for " + std::string(algo));
    return algo == "py1e" ? shufflePy1e(shardSizes, numCanonicalNodes, seed,
                                        epoch, blockSize, warning)
                          : shufflePy1br(shardSizes, numCanonicalNodes, seed,
                                         epoch, blockSize);
  }
  std::string known;
  for (const std::string &name : streamingShuffleAlgos())
    known += (known.empty() ? "" : ", ") + name;
  throw std::invalid_argument("unknown shuffle_algo '" + std::string(algo) +
                              "' (Streaming's are " + known + ")");
}

} // namespace composer::runtime
