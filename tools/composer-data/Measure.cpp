//===- Measure.cpp - composer-data's measuring commands -------------------===//

#include "Measure.h"
#include "Arguments.h"

#include "composer/Runtime/Data.h"
#include "composer/Runtime/ImageCodec.h"
#include "composer/Runtime/ImageFolder.h"
#include "composer/Runtime/Mds.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

using namespace composer::runtime;

namespace composer::data {

int throughput(const std::vector<std::string> &args) {
  std::string root;
  int64_t size = 224, batchSize = 64, workers = 1, batches = 0, epochs = 0;
  std::string remote;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.rfind("--", 0) != 0) {
      if (!root.empty())
        throw std::invalid_argument("throughput takes one ROOT");
      root = arg;
      continue;
    }
    if (i + 1 >= args.size())
      throw std::invalid_argument(arg + " needs a value");
    const std::string &value = args[++i];
    if (arg == "--size")
      size = integerArgument(arg, value, 1);
    else if (arg == "--batch-size")
      batchSize = integerArgument(arg, value, 1);
    else if (arg == "--workers")
      workers = value == "0" ? 0 : integerArgument(arg, value, 1);
    else if (arg == "--batches")
      batches = integerArgument(arg, value, 1);
    else if (arg == "--epochs")
      epochs = integerArgument(arg, value, 1);
    else if (arg == "--remote")
      remote = value;
    else
      throw std::invalid_argument("unknown option " + arg);
  }
  if (root.empty())
    throw std::invalid_argument("throughput takes ROOT, an image folder");

  // What the ImageNet training recipes do per image, into uint8 batches
  // (normalization waits for the device).
  DataLoaderOptions options;
  options.batchSize = batchSize;
  options.numWorkers = int(workers);
  options.dropLast = true;
  options.transforms.randomResizedCrop = RandomResizedCrop{size, size};
  options.transforms.horizontalFlip = true;
  options.transforms.normalizeOnDevice = true;
  // The clock starts before the folder is listed (or the index read), as a
  // torchvision run's starts at its ImageFolder.
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const Dataset> dataset;
  std::error_code ec;
  if (!remote.empty() || std::filesystem::exists(root + "/index.json", ec)) {
    // MDS shards (from `remote` into ROOT), read in Streaming's order.
    MdsOptions mds;
    if (!remote.empty()) {
      mds.remote = std::make_shared<ShardCache>(remote, root, RemoteOptions{});
      options.predownload = 8 * batchSize;
    }
    auto reader = std::make_shared<const MdsReader>(root, mds);
    StreamingOrderSpec order;
    for (const MdsShard &shard : reader->shards())
      order.samplesPerShard.push_back(shard.samples);
    options.streaming = order;
    dataset = std::make_shared<MdsDataset>(reader, "image", "label");
  } else {
    dataset = openImageFolder(root);
  }
  DataLoader loader(dataset, options);
  if (epochs > 0) {
    // Whole epochs, each timed on its own (the first includes opening).
    std::cout << "epoch_seconds:";
    for (int64_t epoch = 0; epoch < epochs; ++epoch) {
      loader.startEpoch(epoch);
      while (loader.next()) {
      }
      auto now = std::chrono::steady_clock::now();
      std::cout << " " << std::chrono::duration<double>(now - start).count();
      start = now;
    }
    std::cout << "\n";
    return 0;
  }
  if (batches == 0)
    batches = loader.batchesPerEpoch();
  int64_t images = 0;
  for (int64_t epoch = 0; images < batches * batchSize; ++epoch) {
    loader.startEpoch(epoch);
    while (images < batches * batchSize) {
      std::optional<Batch> batch = loader.next();
      if (!batch)
        break;
      images += batch->size();
    }
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::cout << "images: " << images << "\nseconds: " << seconds
            << "\nimages_per_second: " << double(images) / seconds << "\n";
  return 0;
}

int decode(const std::vector<std::string> &args) {
  if (args.size() != 3 || args[1] != "--out")
    throw std::invalid_argument("decode takes FILE --out RAW");
  std::string bytes = readFileBytes(args[0]);
  torch::Tensor image = decodeImage(bytes.data(), bytes.size(), args[0]);
  torch::Tensor hwc = image.permute({1, 2, 0}).contiguous();
  std::ofstream out(args[2], std::ios::binary);
  out.write(static_cast<const char *>(hwc.data_ptr()),
            std::streamsize(hwc.numel()));
  if (!out)
    throw std::runtime_error(args[2] + ": cannot write");
  std::cout << image.size(1) << " " << image.size(2) << "\n";
  return 0;
}

} // namespace composer::data
