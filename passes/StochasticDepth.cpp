//===- StochasticDepth.cpp - drop residual branches at random -------------===//
//
// Stochastic depth (Huang et al. 2016) and DropPath as METHODS.md states
// them. Residual blocks are found from the graph: an add of a branch, a
// chain of convolutions, norms and activations from a value x (or, for
// attention, the ops of its backward slice that compute from x), and of a
// shortcut that is x or a chain from x. `sample` scales the branch by a
// per-sample mask; `block` puts the branch in the then region of a
// composer.if that one draw per block decides, so a dropped block's branch
// is not computed. Rewritten adds carry `composer.stochastic_depth`, which
// keeps the pass idempotent. Also the lowerings of stochastic_depth and
// stochastic_depth_keep to aten ops (the runtime has no kernel for them).
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Analysis/PointwiseFunction.h"
#include "composer/Analysis/Projection.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/StatePaths.h"
#include "composer/Support/StochasticDepthState.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"

namespace composer {
#define GEN_PASS_DEF_STOCHASTICDEPTH
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

constexpr StringLiteral kRewrittenAttrName = "composer.stochastic_depth";

/// Typed ops a residual branch is made of; each computes from its operand 0:
/// layers, activations and dropouts, what other methods put in a branch
/// (blur pool, squeeze-excite, ghost batch norm, gyro dropout), casts and
/// copies. Not this pass's own ops: a dropped branch is no new site.
bool isBranchOp(Operation *op) {
  if (op->getNumOperands() == 0 ||
      isa<GenericOp, StochasticDepthOp, StochasticDepthKeepOp>(op))
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

Chain followChain(Value value) {
  Chain chain;
  chain.values.push_back(value);
  while (Operation *def = value.getDefiningOp()) {
    if (!isBranchOp(def))
      break;
    chain.ops.push_back(def);
    value = def->getOperand(0);
    chain.values.push_back(value);
  }
  return chain;
}

/// A residual block as the pass found it. Only ops are kept: an earlier
/// block's rewrite replaces the values they compute from.
struct ResidualBlock {
  AddOp add;
  unsigned branchOperand;
  /// What block mode moves into the then region, in order: the branch's
  /// ops and what only they need (a batch norm's counter update and checks).
  SmallVector<Operation *> branchOps;
  /// The add's only user when it is an activation, else null.
  Operation *activation = nullptr;
};

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
                                    bool &sharesInput) {
  Chain branch = followChain(add->getOperand(branchOperand));
  Chain shortcut = followChain(add->getOperand(1 - branchOperand));
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

/// The residual block `add` closes, or the reason it is none (empty for an
/// add this pass already rewrote, which is not a site).
FailureOr<ResidualBlock> matchResidualBlock(AddOp add, std::string &reason) {
  if (add->hasAttr(kRewrittenAttrName))
    return failure();
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
  SmallVector<Operation *> branchOps = findBranch(add, 0, sharesInput);
  SmallVector<Operation *> other = findBranch(add, 1, sharesInput);
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

struct Options {
  bool blockMode;
  bool warmup;
};

/// Rewrites each residual block the pass found, at its rate.
struct DropResidualBranch : OpRewritePattern<AddOp> {
  DropResidualBranch(MLIRContext *ctx, Options options,
                     const llvm::DenseMap<Operation *, double> &rates,
                     const llvm::DenseMap<Operation *, ResidualBlock> &blocks,
                     SymbolTable &moduleSymbols, SiteReport &report)
      : OpRewritePattern(ctx), options(options), rates(rates), blocks(blocks),
        moduleSymbols(moduleSymbols), report(report) {}

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    auto found = blocks.find(add);
    if (found == blocks.end())
      return failure();
    const ResidualBlock &block = found->second;
    double rate = rates.lookup(add);
    report.match(add);

    MLIRContext *ctx = getContext();
    Location loc = add.getLoc();
    rewriter.setInsertionPoint(add);
    // The flag of the module the add belongs to, as Composer's module reads
    // its own `self.training`.
    Value training = rewriter.create<GetAttrOp>(
        loc, BoolType::get(ctx), joinStatePath(getModulePath(add), "training"));
    Value scale;
    if (options.warmup) {
      auto scaleType =
          TorchTensorType::get(ctx, true, {}, Float32Type::get(ctx));
      auto one = DenseElementsAttr::get(
          RankedTensorType::get({}, Float32Type::get(ctx)), 1.0f);
      scale = createState<BufferOp>(rewriter, moduleSymbols,
                                    kStochasticDepthScaleBuffer, scaleType, one,
                                    loc);
    }
    FloatAttr rateAttr = rewriter.getF64FloatAttr(rate);
    unsigned branchOperand = block.branchOperand;
    auto scaleBranch = [&](StringRef method) {
      Value branch = add->getOperand(branchOperand);
      Value scaled = rewriter.create<StochasticDepthOp>(
          loc, branch.getType(), branch, training, scale,
          rewriter.getStringAttr(method), rateAttr);
      rewriter.modifyOpInPlace(add, [&] {
        add->setOperand(branchOperand, scaled);
        add->setAttr(kRewrittenAttrName, rewriter.getUnitAttr());
      });
    };
    if (!options.blockMode) {
      scaleBranch("sample");
      return success();
    }

    Value keep = rewriter.create<StochasticDepthKeepOp>(
        loc, BoolType::get(ctx), training, scale, rateAttr);
    Operation *last = block.activation ? block.activation : add;
    Value blockResult = last->getResult(0);
    auto ifOp =
        rewriter.create<IfOp>(loc, TypeRange{blockResult.getType()}, keep);
    // Then: the branch, its eval scaling, the add and the activation.
    rewriter.createBlock(&ifOp.getThenRegion());
    auto thenYield = rewriter.create<YieldOp>(loc, blockResult);
    for (Operation *op : block.branchOps)
      rewriter.moveOpBefore(op, thenYield);
    rewriter.setInsertionPoint(thenYield);
    scaleBranch("block");
    rewriter.moveOpBefore(add, thenYield);
    if (block.activation)
      rewriter.moveOpBefore(block.activation, thenYield);
    // Else: the shortcut through the activation, not in place: the
    // shortcut may be the block's input, which others read.
    rewriter.createBlock(&ifOp.getElseRegion());
    Value shortcut = add->getOperand(1 - branchOperand);
    if (block.activation) {
      IRMapping mapping;
      mapping.map(add.getResult(), shortcut);
      Operation *activation = rewriter.clone(*block.activation, mapping);
      activation->removeAttr("inplace");
      shortcut = activation->getResult(0);
    }
    rewriter.create<YieldOp>(loc, shortcut);
    rewriter.replaceUsesWithIf(
        blockResult, ifOp.getResult(0),
        [&](OpOperand &use) { return !ifOp->isAncestor(use.getOwner()); });
    return success();
  }

  Options options;
  const llvm::DenseMap<Operation *, double> &rates;
  const llvm::DenseMap<Operation *, ResidualBlock> &blocks;
  SymbolTable &moduleSymbols;
  SiteReport &report;
};

struct StochasticDepthPass
    : public composer::impl::StochasticDepthBase<StochasticDepthPass> {
  using StochasticDepthBase::StochasticDepthBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&]() {
      signalPassFailure();
      return module.emitError("composer-stochastic-depth: ");
    };
    std::string method = stochasticMethod, distribution = dropDistribution;
    if (method != "block" && method != "sample") {
      fail() << "stochastic-method must be 'block' or 'sample', got '" << method
             << "'";
      return;
    }
    if (distribution != "linear" && distribution != "uniform") {
      fail() << "drop-distribution must be 'linear' or 'uniform', got '"
             << distribution << "'";
      return;
    }
    if (!(dropRate >= 0.0 && dropRate <= 1.0)) {
      fail() << "drop-rate must be in [0, 1], got "
             << static_cast<double>(dropRate);
      return;
    }
    if (!(dropWarmup >= 0.0 && dropWarmup <= 1.0)) {
      fail() << "drop-warmup must be in [0, 1], got "
             << static_cast<double>(dropWarmup);
      return;
    }
    func::FuncOp forward = lookupForward(module, getArgument());
    if (!forward)
      return signalPassFailure();

    // Blocks are numbered in forward order before any is rewritten, since
    // the linear rate needs their count.
    SiteReport report(module, getArgument());
    llvm::DenseMap<Operation *, ResidualBlock> blocks;
    SmallVector<Operation *> order;
    forward.walk<WalkOrder::PreOrder>([&](AddOp add) {
      std::string reason;
      FailureOr<ResidualBlock> block = matchResidualBlock(add, reason);
      if (succeeded(block)) {
        blocks.try_emplace(add, *block);
        order.push_back(add);
      } else if (!reason.empty()) {
        report.skip(add, reason);
      }
    });
    llvm::DenseMap<Operation *, double> rates;
    for (auto [index, add] : llvm::enumerate(order))
      rates[add] = distribution == "uniform"
                       ? dropRate
                       : dropRate * static_cast<double>(index + 1) /
                             static_cast<double>(order.size());

    SymbolTableCollection symbolTables;
    RewritePatternSet patterns(&getContext());
    patterns.add<DropResidualBranch>(
        &getContext(), Options{method == "block", dropWarmup > 0.0}, rates,
        blocks, symbolTables.getSymbolTable(module), report);
    applyPatternsOnce(forward, std::move(patterns));
    if (dropWarmup > 0.0 && !order.empty() &&
        !symbolTables.getSymbolTable(module).lookup(
            kStochasticDepthWarmupBuffer)) {
      OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
      auto scalar = RankedTensorType::get({}, builder.getF32Type());
      builder.create<BufferOp>(
          module.getLoc(), builder.getStringAttr(kStochasticDepthWarmupBuffer),
          TypeAttr::get(TorchTensorType::get(&getContext(), true, {},
                                             builder.getF32Type())),
          /*frozen=*/UnitAttr(), /*channelsLast=*/UnitAttr(),
          DenseElementsAttr::get(scalar, static_cast<float>(dropWarmup)));
    }
    report.emit("residual blocks made stochastic");
  }
};

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

/// The drop rate as aten: a float, or drop_rate * scale, a 0-d tensor, when
/// the warm-up buffer scales it.
Value buildDropRate(AtenBuilder &aten, Value scale, double rate,
                    MLIRContext *ctx) {
  if (!scale)
    return aten.floating(rate);
  return aten.node(AtenKind::mul, {scale, aten.floating(rate)},
                   TorchTensorType::get(ctx));
}

/// 1 - drop rate, as buildDropRate.
Value buildKeepRate(AtenBuilder &aten, Value scale, double rate,
                    MLIRContext *ctx) {
  if (!scale)
    return aten.floating(1.0 - rate);
  return aten.node(AtenKind::rsub,
                   {buildDropRate(aten, scale, rate, ctx), aten.floating(1.0),
                    aten.integer(1)},
                   TorchTensorType::get(ctx));
}

/// stochastic_depth as aten. sample: when training, timm's drop_path,
/// `x * (rand([B, 1, ...]) < keep).type_as(x) / keep` (keep clamped away
/// from 0, where the mask is all 0); otherwise x. block: when training x,
/// otherwise `x * keep`.
struct StochasticDepthToAten : OpConversionPattern<StochasticDepthOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StochasticDepthOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    AtenBuilder aten(rewriter, op.getLoc());
    auto tensorType = TorchTensorType::get(ctx);
    auto intType = IntType::get(ctx);
    auto intListType = ListType::get(ctx, intType);
    Value branch = adaptor.getBranch();
    Value scale = adaptor.getScale();
    double rate = op.getDropRate().convertToDouble();

    auto unchanged = [&] { return branch; };
    auto expectation = [&]() -> Value {
      return aten.node(AtenKind::mul,
                       {branch, buildKeepRate(aten, scale, rate, ctx)},
                       tensorType);
    };
    auto dropPath = [&]() -> Value {
      // (B,) + (1,) * (x.dim() - 1), for a branch of any rank.
      Value batch =
          aten.node(AtenKind::size, {branch, aten.integer(0)}, intType);
      Value rank = aten.node(AtenKind::dim, {branch}, intType);
      Value trailing =
          aten.node(AtenKind::sub, {rank, aten.integer(1)}, intType);
      Value ones = aten.node(
          AtenKind::mul,
          {aten.node("prim::ListConstruct", {aten.integer(1)}, intListType),
           trailing},
          intListType);
      Value shape = aten.node(
          AtenKind::add,
          {aten.node("prim::ListConstruct", {batch}, intListType), ones},
          intListType);
      Value noise = aten.node(
          AtenKind::rand,
          {shape, aten.node("prim::dtype", {branch}, intType), aten.none(),
           aten.node("prim::device", {branch}, DeviceType::get(ctx)),
           aten.none()},
          tensorType);
      Value keepRate = buildKeepRate(aten, scale, rate, ctx);
      Value mask = aten.node(
          AtenKind::type_as,
          {aten.node(AtenKind::lt, {noise, keepRate}, tensorType), branch},
          tensorType);
      Value divisor =
          scale ? aten.node(AtenKind::clamp_min,
                            {keepRate, aten.floating(1e-12)}, tensorType)
                : aten.floating(std::max(1.0 - rate, 1e-12));
      return aten.node(
          AtenKind::mul,
          {branch, aten.node(AtenKind::div, {mask, divisor}, tensorType)},
          tensorType);
    };
    IfOp lowered = op.getMethod() == "sample"
                       ? aten.ifElse(adaptor.getTraining(), tensorType,
                                     dropPath, unchanged)
                       : aten.ifElse(adaptor.getTraining(), tensorType,
                                     unchanged, expectation);
    rewriter.replaceOp(op, lowered->getResults());
    return success();
  }
};

/// stochastic_depth_keep as aten: when training,
/// `bool(torch.rand(()) >= drop_rate)`; otherwise true.
struct StochasticDepthKeepToAten : OpConversionPattern<StochasticDepthKeepOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StochasticDepthKeepOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = op.getContext();
    AtenBuilder aten(rewriter, op.getLoc());
    auto tensorType = TorchTensorType::get(ctx);
    auto boolType = BoolType::get(ctx);
    auto draw = [&]() -> Value {
      Value noise = aten.node(AtenKind::rand,
                              {aten.intList({}), aten.none(), aten.none(),
                               aten.none(), aten.none()},
                              tensorType);
      Value drop = buildDropRate(aten, adaptor.getScale(),
                                 op.getDropRate().convertToDouble(), ctx);
      return aten.node(AtenKind::Bool,
                       {aten.node(AtenKind::ge, {noise, drop}, tensorType)},
                       boolType);
    };
    auto always = [&] { return aten.boolean(true); };
    rewriter.replaceOp(
        op, aten.ifElse(adaptor.getTraining(), boolType, draw, always)
                ->getResults());
    return success();
  }
};

} // namespace

static void populateStochasticDepthToAtenPatterns(RewritePatternSet &patterns) {
  patterns.add<StochasticDepthToAten, StochasticDepthKeepToAten>(
      patterns.getContext());
}

// No runtime kernel: the aten composition is a mask and a multiply.
static void
populateStochasticDepthToRuntimePatterns(RewritePatternSet &patterns) {
  populateStochasticDepthToAtenPatterns(patterns);
}

static MethodLoweringRegistration stochasticDepthLowering(
    {"stochastic-depth", populateStochasticDepthToAtenPatterns,
     populateStochasticDepthToRuntimePatterns});
