//===- NoProcessGroup.cpp - Builds without c10d's Gloo headers ------------===//
//
// Only the process-group part needs gloo's headers; without them a build
// still trains in one process and says why it cannot do more.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Distributed.h"

#include <cstdlib>

namespace composer::runtime {

Communicator::~Communicator() = default;
PendingCollective::~PendingCollective() = default;

DistributedEnv DistributedEnv::fromEnvironment() {
  DistributedEnv env;
  if (const char *world = std::getenv("WORLD_SIZE"))
    if (std::atoi(world) > 1)
      throw std::invalid_argument(
          "WORLD_SIZE > 1, but this build has no c10d process groups (it "
          "was configured without gloo's headers)");
  return env;
}

std::unique_ptr<Communicator> createCommunicator(const DistributedEnv &,
                                                 const torch::Device &,
                                                 std::chrono::milliseconds) {
  throw DistributedError("this build has no c10d process groups");
}

} // namespace composer::runtime
