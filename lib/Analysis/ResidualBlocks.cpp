//===- ResidualBlocks.cpp - residual blocks found from the graph ----------===//

#include "composer/Analysis/ResidualBlocks.h"
#include "composer/Analysis/PointwiseFunction.h"
#include "composer/Analysis/Projection.h"
#include "composer/Support/StatePaths.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace composer;

namespace {

/// Typed ops a residual branch is made of; each computes from its operand 0:
/// layers, activations and dropouts, what other methods put in a branch
/// (blur pool, squeeze-excite, ghost batch norm, gyro dropout), casts and
/// copies; not those `excluded` names.
bool isBranchOp(Operation *op, BranchOpFilter excluded) {
  if (op->getNumOperands() == 0 || isa<GenericOp>(op) ||
      (excluded && excluded(op)))
    return false;
  return isa<ConvolutionLike, MethodOp, LinearOp, BatchNormOp, GroupNormOp,
             LayerNormOp, MaxPool2dOp, AvgPool2dOp, ToDtypeOp, ContiguousOp,
             StopGradientOp>(op) ||
         hasAtenTrait(op, AtenTrait::Activation) ||
         hasAtenTrait(op, AtenTrait::DropoutLike);
}

/// The activation the block applies to its sum, which a dropped block
/// applies to the shortcut alone, out of place: a typed op drops its
/// `inplace` attribute, so a generic one must already be out of place.
bool isActivation(Operation *op) {
  return isActivationOp(op) &&
         !(isa<GenericOp>(op) && hasAtenTrait(op, AtenTrait::InPlace));
}

/// `value` followed back through branch ops along their operand 0:
/// values[0] is `value`, ops[i] defines values[i] from values[i + 1].
struct Chain {
  SmallVector<Value> values;
  SmallVector<Operation *> ops;
};

Chain followChain(Value value, BranchOpFilter excluded) {
  Chain chain;
  chain.values.push_back(value);
  while (Operation *def = value.getDefiningOp()) {
    if (!isBranchOp(def, excluded))
      break;
    chain.ops.push_back(def);
    value = def->getOperand(0);
    chain.values.push_back(value);
  }
  return chain;
}

bool hasUnitAlpha(AddOp add) {
  Attribute alpha = add.getAlpha();
  if (auto integer = dyn_cast<IntegerAttr>(alpha))
    return integer.getValue() == 1;
  return cast<FloatAttr>(alpha).getValueAsDouble() == 1.0;
}

/// Constants and state reads stay where they are; both sides may use them.
bool isRead(Operation *op) {
  return isa<ConstantOp, GetAttrOp, GetParamOp>(op);
}

/// The module whose state a read reads ("layer1.0.bn1"), or "" for none.
std::string getReadOwner(Operation *op) {
  if (auto read = dyn_cast<GetAttrOp>(op))
    return std::string(getStateOwner(read.getPath().str()));
  if (auto read = dyn_cast<GetParamOp>(op))
    return std::string(getStateOwner(read.getName().str()));
  return {};
}

/// The values `op` and the ops nested in it use.
SmallVector<Value> getUsedValues(Operation *op) {
  SmallVector<Value> used;
  op->walk([&](Operation *nested) {
    llvm::append_range(used, nested->getOperands());
  });
  return used;
}

/// Linears in any form (nn.Linear's, GPT-2's Conv1D: an addmm), also
/// inside an op's regions (scripted nn.MultiheadAttention's projections
/// sit in the branches of its fast-path check).
bool hasConvolutionOrLinear(ArrayRef<Operation *> ops) {
  return llvm::any_of(ops, [](Operation *op) {
    return op
        ->walk([](Operation *nested) {
          return isa<ConvolutionLike>(nested) || isProjectionProduct(nested)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  });
}

/// A branch that is not a chain, such as attention (q, k and v computed
/// from one input, sizes read from it): the ops of `branchValue`'s backward
/// slice in `add`'s block that compute from the shortcut's chain, in block
/// order. What the slice reads from elsewhere (a mask, a sequence length
/// from another input) is an input of the branch and stays where it is.
/// Empty if the slice does not reach the shortcut's chain.
SmallVector<Operation *> findBranchSlice(AddOp add, Value branchValue,
                                         const Chain &shortcut) {
  Block *block = add->getBlock();
  llvm::SmallPtrSet<Value, 8> shortcutValues(shortcut.values.begin(),
                                             shortcut.values.end());
  // Nothing before the shortcut chain's first op computes from it: the
  // walk stops there, which keeps it within the block at hand.
  Operation *chainStart = shortcut.values.back().getDefiningOp();
  if (chainStart && chainStart->getBlock() != block)
    chainStart = nullptr;
  llvm::SmallPtrSet<Operation *, 32> visited;
  SmallVector<Operation *> slice;
  llvm::SmallPtrSet<Value, 4> forks;
  SmallVector<Value> worklist = {branchValue};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (shortcutValues.contains(value)) {
      forks.insert(value);
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != block || isRead(def) ||
        (chainStart && def->isBeforeInBlock(chainStart)) ||
        !visited.insert(def).second)
      continue;
    slice.push_back(def);
    llvm::append_range(worklist, getUsedValues(def));
  }
  if (forks.empty())
    return {};
  // In block order, an op is in the branch if it computes from a fork.
  llvm::sort(slice,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Value, 32> fromFork(forks.begin(), forks.end());
  for (Operation *op : slice) {
    if (llvm::none_of(getUsedValues(op),
                      [&](Value value) { return fromFork.contains(value); }))
      continue;
    ops.push_back(op);
    fromFork.insert(op->result_begin(), op->result_end());
  }
  return ops;
}

/// The branch side of `add` if `branchOperand` is its branch: the chain's
/// ops back to where the shortcut's chain forks from it, in forward order,
/// or else the branch's slice (findBranchSlice); empty if the sides do not
/// meet. Sets `sharesInput` if they do.
SmallVector<Operation *> findBranch(AddOp add, unsigned branchOperand,
                                    BranchOpFilter excluded,
                                    bool &sharesInput) {
  Chain branch = followChain(add->getOperand(branchOperand), excluded);
  Chain shortcut = followChain(add->getOperand(1 - branchOperand), excluded);
  llvm::SmallPtrSet<Value, 8> shortcutValues(shortcut.values.begin(),
                                             shortcut.values.end());
  // The fork: the first value of the branch chain the shortcut reaches.
  unsigned fork = 1;
  while (fork < branch.values.size() &&
         !shortcutValues.contains(branch.values[fork]))
    ++fork;
  SmallVector<Operation *> ops;
  if (fork < branch.values.size())
    ops.assign(branch.ops.rbegin() + (branch.ops.size() - fork),
               branch.ops.rend());
  else if (!shortcutValues.contains(add->getOperand(branchOperand)))
    ops = findBranchSlice(add, add->getOperand(branchOperand), shortcut);
  if (ops.empty())
    return {};
  sharesInput = true;
  if (!hasConvolutionOrLinear(ops))
    return {};
  return ops;
}

} // namespace

FailureOr<ResidualBlock>
composer::matchResidualBlock(AddOp add, std::string &reason,
                             BranchOpFilter excluded) {
  // An add of a constant (`1 + tanh(..)`, which a trace records with a 0-d
  // tensor and a script with a scalar) is no block and not a site, in
  // either form.
  if (llvm::any_of(add->getOperands(), [](Value operand) {
        return isa_and_nonnull<ConstantOp>(operand.getDefiningOp());
      }))
    return failure();
  if (!hasUnitAlpha(add)) {
    reason = "alpha is not 1";
    return failure();
  }
  // Either operand may be the branch; it is the longer side when both are
  // chains (a downsample shortcut is shorter than the branch).
  bool sharesInput = false;
  SmallVector<Operation *> branchOps =
      findBranch(add, 0, excluded, sharesInput);
  SmallVector<Operation *> other = findBranch(add, 1, excluded, sharesInput);
  unsigned branchOperand = 0;
  if (other.size() > branchOps.size()) {
    branchOps = std::move(other);
    branchOperand = 1;
  }
  if (branchOps.empty()) {
    reason = sharesInput ? "branch has no convolution or linear"
                         : "add operands do not share an input";
    return failure();
  }
  Block *block = add->getBlock();
  if (llvm::any_of(branchOps,
                   [&](Operation *op) { return op->getBlock() != block; })) {
    reason = "branch crosses a region";
    return failure();
  }
  // Writing x in place would write the shortcut only when the block runs.
  if (branchOps.front()->hasAttr("inplace")) {
    reason = "branch writes its input in place";
    return failure();
  }

  // Between the branch's first op and the add: what the shortcut needs (and
  // what uses that) stays; the branch, what uses it and what reads the
  // branch modules' state (a batch norm's counter update) moves.
  SmallVector<Operation *> range;
  for (Operation *op = branchOps.front(); op != add; op = op->getNextNode())
    range.push_back(op);
  llvm::SmallPtrSet<Operation *, 16> kept;
  llvm::DenseSet<Value> needed;
  needed.insert(add->getOperand(1 - branchOperand));
  for (Operation *op : llvm::reverse(range)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value value) { return needed.contains(value); }))
      continue;
    kept.insert(op);
    for (Value value : getUsedValues(op))
      needed.insert(value);
  }
  llvm::SmallPtrSet<Operation *, 16> isBranchOp(branchOps.begin(),
                                                branchOps.end());
  llvm::StringSet<> branchModules;
  for (Operation *op : branchOps)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && isRead(def))
        // Constants and the root's attributes belong to no block.
        if (std::string owner = getReadOwner(def); !owner.empty())
          branchModules.insert(owner);
  llvm::SmallPtrSet<Operation *, 16> moved;
  SmallVector<Operation *> toMove;
  for (Operation *op : range) {
    if (isRead(op))
      continue;
    bool usesKept = false, usesMoved = false, readsBranchState = false;
    for (Value value : getUsedValues(op)) {
      Operation *def = value.getDefiningOp();
      if (!def)
        continue;
      if (isRead(def)) {
        std::string owner = getReadOwner(def);
        readsBranchState |= !owner.empty() && branchModules.contains(owner);
      } else
        usesKept |= kept.contains(def);
      usesMoved |= moved.contains(def);
    }
    if (usesKept)
      kept.insert(op);
    if (kept.contains(op)) {
      if (isBranchOp.contains(op)) {
        reason = "branch shares ops with the shortcut";
        return failure();
      }
      continue;
    }
    if (isBranchOp.contains(op) || usesMoved || readsBranchState) {
      moved.insert(op);
      toMove.push_back(op);
    }
  }
  for (Operation *op : toMove)
    for (Operation *user : op->getUsers()) {
      Operation *owner = block->findAncestorOpInBlock(*user);
      if (owner != add && !moved.contains(owner)) {
        reason = "branch has other users";
        return failure();
      }
    }

  ResidualBlock residual{add, branchOperand, std::move(toMove)};
  // Only an activation beside the add: one in a nested region runs
  // conditionally and must not be moved.
  if (add->hasOneUse() && isActivation(*add->user_begin()) &&
      (*add->user_begin())->getBlock() == add->getBlock() &&
      (*add->user_begin())->getOperand(0) == add.getResult())
    residual.activation = *add->user_begin();
  return residual;
}
