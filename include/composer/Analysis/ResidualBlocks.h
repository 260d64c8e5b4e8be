//===- ResidualBlocks.h - residual blocks found from the graph --*- C++ -*-===//
//
// A residual block is an add (alpha 1) of a branch and a shortcut computed
// from one value x: the branch a chain of convolutions, norms, activations,
// dropouts and method ops (or, for a branch that is no chain, such as
// attention, the ops of its backward slice that compute from x) with a
// convolution or linear in it; the shortcut x itself or a chain from x (a
// downsample). Stochastic depth drops such branches; activation
// checkpointing recomputes the modules that hold them.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ANALYSIS_RESIDUALBLOCKS_H
#define COMPOSER_ANALYSIS_RESIDUALBLOCKS_H

#include "composer/Dialect/Composer.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace composer {

/// A residual block. Only ops are kept: a rewrite of an earlier block
/// replaces the values they compute from.
struct ResidualBlock {
  AddOp add;
  /// Which operand of `add` is the branch.
  unsigned branchOperand;
  /// The branch's ops and what only they need (a batch norm's counter
  /// update and checks), in block order: what can move with the branch.
  llvm::SmallVector<mlir::Operation *> branchOps;
  /// The add's only user when it is an activation beside it, else null.
  mlir::Operation *activation = nullptr;
};

/// Ops a branch never holds, beyond those it cannot hold.
using BranchOpFilter = llvm::function_ref<bool(mlir::Operation *)>;

/// The residual block `add` closes, or failure with `reason` set (left
/// empty for an add of a constant, which is no candidate at all). The
/// branch and shortcut chains stop at the ops `excluded` names (stochastic
/// depth's own: a dropped branch is no new block).
mlir::FailureOr<ResidualBlock>
matchResidualBlock(AddOp add, std::string &reason,
                   BranchOpFilter excluded = nullptr);

} // namespace composer

#endif // COMPOSER_ANALYSIS_RESIDUALBLOCKS_H
