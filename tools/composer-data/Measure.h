//===- Measure.h - composer-data's measuring commands -----------*- C++ -*-===//
//
// The commands bench/data_throughput.py runs: the loader's images per second
// on an image folder, and one image decoded at full scale as raw RGB bytes,
// to compare with PIL's. Each throws std::invalid_argument on bad arguments.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_DATA_MEASURE_H
#define COMPOSER_DATA_MEASURE_H

#include <string>
#include <vector>

namespace composer::data {

/// throughput ROOT [--size N] [--batch-size B] [--workers W] [--batches K]
///   [--epochs E] [--remote URL]
/// ROOT is an image folder, or MDS shards (index.json; with --remote, the
/// cache they are downloaded into), read in Streaming's order. --epochs
/// times E whole epochs one by one (the first includes opening ROOT).
int throughput(const std::vector<std::string> &args);

/// decode FILE --out RAW: RGB uint8, rows of H x W x 3, and prints "H W".
int decode(const std::vector<std::string> &args);

} // namespace composer::data

#endif // COMPOSER_DATA_MEASURE_H
