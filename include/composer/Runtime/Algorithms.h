//===- Algorithms.h - The runtime algorithms, by name -----------*- C++ -*-===//
//
// Every runtime algorithm of METHODS.md registers itself from its own file
// with an AlgorithmRegistration (Options.h): its recipe name, its options
// struct and a description of that struct's recipe keys. Nothing else lists
// the algorithms.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_ALGORITHMS_H
#define COMPOSER_RUNTIME_ALGORITHMS_H

#include "composer/Runtime/Algorithm.h"
#include "composer/Runtime/Options.h"

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace composer::runtime {

/// A registered algorithm; its name is also its Algorithm::name().
using AlgorithmInfo = ComponentInfo<Algorithm>;
/// An algorithm's options by recipe key.
using AlgorithmOptions = OptionValues;

/// Every algorithm linked in, sorted by name.
std::vector<const AlgorithmInfo *> getRegisteredAlgorithms();

/// The algorithm registered as `name`, or null.
const AlgorithmInfo *findAlgorithm(std::string_view name);

/// Creates the algorithm registered as `name`; throws std::invalid_argument
/// for an unknown name or bad options.
std::unique_ptr<Algorithm>
createAlgorithm(std::string_view name, const AlgorithmOptions &options = {});

/// Adds `info` to the registry; a name registered twice is noted as a conflict
/// (takeRegistrationConflicts).
void registerAlgorithm(AlgorithmInfo info);

/// Registers `AlgorithmT`, constructed from `Options`, at static
/// initialization. Defaults are those of a value-initialized `Options`:
///
///   struct CutOutOptions {
///     int64_t numHoles = 1;
///     double length = 0.5;
///   };
///   const AlgorithmRegistration<CutOut, CutOutOptions> cutOutRegistration(
///       "cutout", {{"num_holes", &CutOutOptions::numHoles, "holes per image"},
///                  {"length", &CutOutOptions::length, "side of a hole"}});
///
/// The runtime compiles its files in unity batches, so the registration's
/// name, like every internal name, must be unique among the algorithms.
/// The runtime's algorithms are linked as object files (never as archive
/// members), so no registration is dropped by the linker.
template <typename AlgorithmT, typename Options> class AlgorithmRegistration {
public:
  AlgorithmRegistration(std::string name,
                        std::initializer_list<OptionField<Options>> fields) {
    registerAlgorithm(describeComponent<Algorithm, AlgorithmT, Options>(
        std::move(name), fields));
  }
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ALGORITHMS_H
