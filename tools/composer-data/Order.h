//===- Order.h - composer-data order: Streaming's sample order --*- C++ -*-===//
#ifndef COMPOSER_DATA_ORDER_H
#define COMPOSER_DATA_ORDER_H

#include <string>
#include <vector>

namespace composer::data {

/// order LOCAL [--remote URL] [--shuffle-algo A] [--seed S] [--epoch E]
///   [--num-canonical-nodes C] [--shuffle-block-size B] [--world-size W]
///   [--nodes N] [--rank R] [--workers K] [--batch-size N]
///   [--sample-in-epoch S] [--partition-algo orig|relaxed] [--no-shuffle]
/// prints, one per line, the samples rank R reads in epoch E, in the order
/// it reads them, as a StreamingDataset with these arguments gives them.
/// Throws std::invalid_argument on a bad command line, std::runtime_error
/// on data or arguments Streaming refuses.
int printOrder(const std::vector<std::string> &args);

} // namespace composer::data

#endif // COMPOSER_DATA_ORDER_H
