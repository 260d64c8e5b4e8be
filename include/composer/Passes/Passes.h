//===- Passes.h - composer passes -------------------------------*- C++ -*-===//

#ifndef COMPOSER_PASSES_PASSES_H
#define COMPOSER_PASSES_PASSES_H

#include "composer/Dialect/Composer.h"
#include "composer/Support/TorchUpstream.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace composer {

#define GEN_PASS_DECL
#include "composer/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "composer/Passes/Passes.h.inc"

/// Each method's lowering patterns, from its pass file, which registers
/// them with composer-lower-to-aten and composer-lower-to-runtime: for
/// pipelines that build their own conversion.
void populateBlurPoolToAtenPatterns(mlir::RewritePatternSet &patterns);
void populateBlurPoolToRuntimePatterns(mlir::RewritePatternSet &patterns);
void populateGhostBatchNormToAtenPatterns(mlir::RewritePatternSet &patterns);
void populateGhostBatchNormToRuntimePatterns(mlir::RewritePatternSet &patterns);
void populateSqueezeExciteToAtenPatterns(mlir::RewritePatternSet &patterns);
void populateSqueezeExciteToRuntimePatterns(mlir::RewritePatternSet &patterns);
void populateWeightStandardizationToAtenPatterns(
    mlir::RewritePatternSet &patterns);
void populateWeightStandardizationToRuntimePatterns(
    mlir::RewritePatternSet &patterns);
void populateStochasticDepthToAtenPatterns(mlir::RewritePatternSet &patterns);
void populateStochasticDepthToRuntimePatterns(
    mlir::RewritePatternSet &patterns);
void populateGyroDropoutToAtenPatterns(mlir::RewritePatternSet &patterns);
void populateGyroDropoutToRuntimePatterns(mlir::RewritePatternSet &patterns);

/// Registers the named method pipelines (composer-mild, ...).
void registerComposerPipelines();

/// Registers every composer pass and pipeline.
inline void registerComposerPassesAndPipelines() {
  registerComposerPasses();
  registerComposerPipelines();
}

} // namespace composer

#endif // COMPOSER_PASSES_PASSES_H
