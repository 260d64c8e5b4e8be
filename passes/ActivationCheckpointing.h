//===- ActivationCheckpointing.h - units as recomputed regions --*- C++ -*-===//
//
// Private to passes/: what activation checkpointing gives the methods built
// on its regions (parameter sharding gathers inside them).
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_ACTIVATIONCHECKPOINTING_H
#define COMPOSER_PASSES_ACTIVATIONCHECKPOINTING_H

#include "ModuleUnits.h"

namespace composer {

/// Moves `unit` into a composer.checkpoint after its last op.
RecomputedRegionOp outlineIntoCheckpoint(ModuleUnit &unit);

} // namespace composer

#endif // COMPOSER_PASSES_ACTIVATIONCHECKPOINTING_H
