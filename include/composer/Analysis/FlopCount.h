//===- FlopCount.h - FLOPs of one training step -----------------*- C++ -*-===//
//
// Forward and backward FLOPs of a model's @forward, summed from each op's
// FlopCountOpInterface (conventions in composer/Dialect/FlopCost.h), for
// reports and model FLOP utilization. Backward counts only the gradients
// training computes: a value needs a gradient when it is computed from a
// trainable (not `frozen`) parameter through anything but a stop_gradient,
// so a frozen layer's weight gradient, and everything upstream of a
// stop_gradient that nothing else needs, cost nothing. A composer.if
// decided by stochastic_depth_keep counts its expectation (the branch
// weighted by 1 - drop_rate, at a warm-up scale of 1); one on the training
// flag or a constant counts the branch a training step takes; any other
// counts its costlier branch. A loop counts its body times its constant
// trip count. Ops whose sizes are unknown are listed, never counted as 0.
// Attention's share is counted apart as well: the products and softmax of
// each attention site (composer/Analysis/Attention.h) and fused attention
// ops.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ANALYSIS_FLOPCOUNT_H
#define COMPOSER_ANALYSIS_FLOPCOUNT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace composer {

struct FlopCounts {
  /// Expected FLOPs of one forward and one backward over the batch the
  /// input types say.
  double forward = 0;
  double backward = 0;
  /// Of `forward` and `backward`: attention's q k^T and probabilities-v
  /// products and its softmax, and fused attention ops
  /// (aten::scaled_dot_product_attention).
  double attention = 0;
  /// Ops whose FLOPs depend on sizes the IR does not know (run
  /// composer-refine-types, composer-opt --input-spec) or that have no cost
  /// model: not in the sums.
  llvm::SmallVector<mlir::Operation *> uncounted;
  /// Loops whose trip count is unknown: their body is counted once.
  llvm::SmallVector<mlir::Operation *> unknownTripCounts;

  double total() const { return forward + backward; }
  bool complete() const {
    return uncounted.empty() && unknownTripCounts.empty();
  }
};

/// The FLOP count of `module`'s @forward, as an MLIR analysis
/// (getAnalysis<FlopCountAnalysis>() in a pass) or on its own.
class FlopCountAnalysis {
public:
  explicit FlopCountAnalysis(mlir::Operation *moduleOp);

  const FlopCounts &getCounts() const { return counts; }

private:
  FlopCounts counts;
};

/// Counts `module`'s @forward; a module without one counts nothing.
FlopCounts countFlops(mlir::ModuleOp module);

} // namespace composer

#endif // COMPOSER_ANALYSIS_FLOPCOUNT_H
