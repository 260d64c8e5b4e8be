//===- StreamingTestUtils.h - The data set of the Streaming tests -*- C++
//-*-===//

#ifndef COMPOSER_UNITTESTS_RUNTIME_STREAMINGTESTUTILS_H
#define COMPOSER_UNITTESTS_RUNTIME_STREAMINGTESTUTILS_H

#include "composer/Runtime/StreamingOrder.h"

namespace composer::runtime::testutils {

/// The recorded orders' data set (Inputs/streaming-orders.json): 423
/// samples in nine shards, eight of 50 and one of 23, on two canonical
/// nodes, shuffled in blocks of 64.
inline StreamingOrderSpec nineShardOrder() {
  StreamingOrderSpec spec;
  spec.samplesPerShard = {50, 50, 50, 50, 50, 50, 50, 50, 23};
  spec.numCanonicalNodes = 2;
  spec.shuffleBlockSize = 64;
  return spec;
}

} // namespace composer::runtime::testutils

#endif // COMPOSER_UNITTESTS_RUNTIME_STREAMINGTESTUTILS_H
