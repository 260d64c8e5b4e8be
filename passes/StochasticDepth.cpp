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
#include "composer/Analysis/ResidualBlocks.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/StatePaths.h"
#include "composer/Support/StochasticDepthState.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace composer {
#define GEN_PASS_DEF_STOCHASTICDEPTH
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

constexpr StringLiteral kRewrittenAttrName = "composer.stochastic_depth";

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
      if (add->hasAttr(kRewrittenAttrName))
        return;
      FailureOr<ResidualBlock> block =
          matchResidualBlock(add, reason, [](Operation *op) {
            return isa<StochasticDepthOp, StochasticDepthKeepOp>(op);
          });
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
