//===- Passes.h - composer passes -------------------------------*- C++ -*-===//

#ifndef COMPOSER_PASSES_PASSES_H
#define COMPOSER_PASSES_PASSES_H

#include "composer/Dialect/Composer.h"
#include "composer/Support/TorchUpstream.h"
#include "mlir/Pass/Pass.h"

namespace composer {

#define GEN_PASS_DECL
#include "composer/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "composer/Passes/Passes.h.inc"

/// Registers the named method pipelines (composer-mild, ...).
void registerComposerPipelines();

/// Registers every composer pass and pipeline.
inline void registerComposerPassesAndPipelines() {
  registerComposerPasses();
  registerComposerPipelines();
}

} // namespace composer

#endif // COMPOSER_PASSES_PASSES_H
