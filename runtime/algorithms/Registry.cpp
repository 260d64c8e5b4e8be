//===- Registry.cpp - The runtime algorithms, by name ---------------------===//

#include "composer/Runtime/Algorithms.h"

namespace composer::runtime {
namespace {

ComponentRegistry<Algorithm> &registry() {
  static ComponentRegistry<Algorithm> algorithms("algorithm");
  return algorithms;
}

} // namespace

std::vector<const AlgorithmInfo *> getRegisteredAlgorithms() {
  return registry().all();
}

const AlgorithmInfo *findAlgorithm(std::string_view name) {
  return registry().find(name);
}

std::unique_ptr<Algorithm> createAlgorithm(std::string_view name,
                                           const AlgorithmOptions &options) {
  return registry().create(name, options);
}

void registerAlgorithm(AlgorithmInfo info) { registry().add(std::move(info)); }

} // namespace composer::runtime
