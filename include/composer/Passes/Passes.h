//===- Passes.h - composer passes -------------------------------*- C++ -*-===//

#ifndef COMPOSER_PASSES_PASSES_H
#define COMPOSER_PASSES_PASSES_H

#include "composer/Dialect/Composer.h"
#include "composer/Support/TorchUpstream.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/STLExtras.h"

namespace composer {

#define GEN_PASS_DECL
#include "composer/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "composer/Passes/Passes.h.inc"

/// The arguments of the method passes, sorted: the passes Passes.td
/// declares as MethodPass. The other composer passes are infrastructure
/// (type refinement, lowering), which tools comparing methods leave out.
inline constexpr llvm::StringLiteral kMethodPassArguments[] = {
#include "composer/Passes/MethodPasses.h.inc"
};

/// Whether `argument` ("composer-blurpool") names a method pass.
inline bool isMethodPass(llvm::StringRef argument) {
  return llvm::is_contained(kMethodPassArguments, argument);
}

/// Registers the named method pipelines (composer-mild, ...).
void registerComposerPipelines();

/// Registers every composer pass and pipeline.
inline void registerComposerPassesAndPipelines() {
  registerComposerPasses();
  registerComposerPipelines();
}

} // namespace composer

#endif // COMPOSER_PASSES_PASSES_H
