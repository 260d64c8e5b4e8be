//===- Order.cpp - composer-data order: Streaming's sample order ----------===//

#include "Order.h"
#include "Arguments.h"

#include "composer/Runtime/Mds.h"
#include "composer/Runtime/StreamingOrder.h"

#include <cstdio>
#include <iostream>
#include <stdexcept>

using namespace composer::runtime;

namespace composer::data {

int printOrder(const std::vector<std::string> &args) {
  std::string local, remote;
  StreamingOrderSpec spec;
  int64_t epoch = 0, worldSize = 1, nodes = 1, rank = 0, workers = 1,
          batchSize = 1, sampleInEpoch = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--no-shuffle") {
      spec.shuffle = false;
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      if (!local.empty())
        throw std::invalid_argument("order takes one LOCAL directory");
      local = arg;
      continue;
    }
    if (i + 1 >= args.size())
      throw std::invalid_argument(arg + " needs a value");
    const std::string &value = args[++i];
    if (arg == "--shuffle-algo")
      spec.shuffleAlgo = value;
    else if (arg == "--seed")
      spec.shuffleSeed = uint64_t(integerArgument(arg, value, 0));
    else if (arg == "--epoch")
      epoch = integerArgument(arg, value, 0);
    else if (arg == "--num-canonical-nodes")
      spec.numCanonicalNodes = integerArgument(arg, value, 1);
    else if (arg == "--shuffle-block-size")
      spec.shuffleBlockSize = integerArgument(arg, value, 1);
    else if (arg == "--world-size")
      worldSize = integerArgument(arg, value, 1);
    else if (arg == "--nodes")
      nodes = integerArgument(arg, value, 1);
    else if (arg == "--rank")
      rank = integerArgument(arg, value, 0);
    else if (arg == "--workers")
      workers = integerArgument(arg, value, 1);
    else if (arg == "--batch-size")
      batchSize = integerArgument(arg, value, 1);
    else if (arg == "--sample-in-epoch")
      sampleInEpoch = integerArgument(arg, value, 0);
    else if (arg == "--partition-algo")
      spec.partitionAlgo = value;
    else if (arg == "--remote")
      remote = value;
    else
      throw std::invalid_argument("unknown option " + arg);
  }
  if (local.empty())
    throw std::invalid_argument("order takes LOCAL, a directory of MDS "
                                "shards");
  if (worldSize % nodes)
    throw std::invalid_argument("--nodes " + std::to_string(nodes) +
                                " does not divide --world-size " +
                                std::to_string(worldSize));
  if (rank >= worldSize)
    throw std::invalid_argument("--rank " + std::to_string(rank) +
                                " is outside --world-size " +
                                std::to_string(worldSize));

  MdsOptions options;
  options.verifyHashes = false; // the order needs the index only
  if (!remote.empty())
    options.remote =
        std::make_shared<ShardCache>(remote, local, RemoteOptions{});
  MdsReader reader(local, options);
  for (const MdsShard &shard : reader.shards())
    spec.samplesPerShard.push_back(shard.samples);
  StreamingWorld world{nodes, worldSize / nodes, workers, rank};
  std::vector<std::vector<int64_t>> batches;
  std::string warning;
  try {
    batches = streamingRankOrder(spec, world, batchSize, epoch, sampleInEpoch,
                                 &warning);
  } catch (const std::invalid_argument &e) {
    throw std::runtime_error(local + ": " + e.what());
  }
  if (!warning.empty())
    std::cerr << "composer-data: warning: " << warning << "\n";
  std::string out;
  for (const auto &batch : batches)
    for (int64_t sample : batch)
      out += std::to_string(sample) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

} // namespace composer::data
