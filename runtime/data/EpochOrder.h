//===- EpochOrder.h - Which samples each batch of an epoch reads -*- C++
//-*-===//
//
// The DataLoader's two orders: its own (a pure function of seed and epoch,
// shards shuffled then blocks of samples) and MosaicML Streaming's
// (StreamingOrder.h), which a job moved from Composer keeps.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_DATA_EPOCHORDER_H
#define COMPOSER_RUNTIME_DATA_EPOCHORDER_H

#include "composer/Runtime/Data.h"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace composer::runtime {

/// One epoch of one rank: its samples in order, cut into batches.
struct EpochOrder {
  torch::Tensor samples;
  /// Batch b reads samples [starts[b], starts[b + 1]).
  std::vector<int64_t> starts{0};
  int64_t batches() const { return int64_t(starts.size()) - 1; }
};

/// This rank's batches of `epoch`, after the first `sampleInEpoch` samples
/// of all ranks. Only Streaming's order can start mid-epoch by samples (it
/// is the same global order at every world size); the loader's own order
/// takes 0.
EpochOrder epochOrder(const Dataset &ds, const DataLoaderOptions &o,
                      int64_t epoch, int64_t sampleInEpoch = 0);

/// Streaming's world for this loader: the ranks on each node and each rank's
/// DataLoader workers (at least one). Throws std::invalid_argument when the
/// ranks per node do not divide the world.
StreamingWorld streamingWorld(const DataLoaderOptions &o);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_DATA_EPOCHORDER_H
