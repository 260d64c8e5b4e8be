//===- GhostBatchNorm.cpp - batch norm over ghost batches -----------------===//
//
// Ghost BatchNorm (Hoffer et al. 2017) as METHODS.md states it: every
// batch_norm in the graph normalizes training batches chunk by chunk. Also
// the lowerings of ghost_batch_norm to aten ops and to the runtime's
// operator.
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace composer {
#define GEN_PASS_DEF_GHOSTBATCHNORM
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;
using composer::torch_upstream::ScalarType;

namespace {

/// batch_norm -> ghost_batch_norm with the same operands and attributes.
struct MakeBatchNormGhost : OpRewritePattern<BatchNormOp> {
  MakeBatchNormGhost(MLIRContext *ctx, int64_t ghostBatchSize,
                     SiteReport &report)
      : OpRewritePattern(ctx), ghostBatchSize(ghostBatchSize), report(report) {}

  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    report.match(bn);
    rewriter.replaceOpWithNewOp<GhostBatchNormOp>(
        bn, bn.getType(), bn.getInput(), bn.getWeight(), bn.getBias(),
        bn.getRunningMean(), bn.getRunningVar(), bn.getTraining(),
        bn.getMomentum(), bn.getEpsAttr(), bn.getCudnnEnabledAttr(),
        rewriter.getI64IntegerAttr(ghostBatchSize));
    return success();
  }

  int64_t ghostBatchSize;
  SiteReport &report;
};

struct GhostBatchNormPass
    : public composer::impl::GhostBatchNormBase<GhostBatchNormPass> {
  using GhostBatchNormBase::GhostBatchNormBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ghostBatchSize < 1) {
      module.emitError("composer-ghost-batchnorm: ghost-batch-size must be "
                       ">= 1, got ")
          << static_cast<int64_t>(ghostBatchSize);
      return signalPassFailure();
    }
    SiteReport report(module, getArgument());
    RewritePatternSet patterns(&getContext());
    patterns.add<MakeBatchNormGhost>(&getContext(), ghostBatchSize, report);
    applyPatternsOnce(module, std::move(patterns));
    report.emit("batch norms made ghost");
  }
};

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

/// ghost_batch_norm as aten, as Composer does: in training, the batch in
/// ceil(B / ghost_batch_size) chunks (torch.chunk: 80 in ghost batches of 32
/// is 27, 27, 26), batch_norm on each with momentum / that number,
/// concatenated; otherwise batch_norm.
struct GhostBatchNormToAten : OpConversionPattern<GhostBatchNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GhostBatchNormOp ghost, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = ghost.getContext();
    Location loc = ghost.getLoc();
    AtenBuilder aten(rewriter, loc);
    auto tensorType = TorchTensorType::get(ctx);
    auto listType = ListType::get(ctx, tensorType);
    auto intType = IntType::get(ctx);
    auto batchNorm = [&](Value input, Value momentum) -> Value {
      return rewriter.create<BatchNormOp>(
          loc, tensorType, input, adaptor.getWeight(), adaptor.getBias(),
          adaptor.getRunningMean(), adaptor.getRunningVar(),
          adaptor.getTraining(), momentum, ghost.getEpsAttr(),
          ghost.getCudnnEnabledAttr());
    };

    auto inChunks = [&]() -> Value {
      int64_t ghostBatchSize = ghost.getGhostBatchSize();
      Value batch = aten.node(AtenKind::size,
                              {adaptor.getInput(), aten.integer(0)}, intType);
      Value numChunks = aten.node(
          AtenKind::floordiv,
          {aten.node(AtenKind::add, {batch, aten.integer(ghostBatchSize - 1)},
                     intType),
           aten.integer(ghostBatchSize)},
          intType);
      Value chunks =
          aten.node(AtenKind::chunk,
                    {adaptor.getInput(), numChunks, aten.integer(0)}, listType);
      // The loop runs over the list torch.chunk returned.
      Value count = aten.node(AtenKind::len, {chunks}, intType);
      Value momentum =
          aten.node(AtenKind::div, {adaptor.getMomentum(), numChunks},
                    TorchFloatType::get(ctx));
      Value normalized = aten.node("prim::ListConstruct", {}, listType);
      Value isTrue = aten.boolean(true);
      auto loop = rewriter.create<LoopOp>(loc, TypeRange{}, count, isTrue,
                                          ValueRange{});
      {
        OpBuilder::InsertionGuard loopGuard(rewriter);
        Block *body =
            rewriter.createBlock(&loop.getBody(), {}, {intType}, {loc});
        Value chunk = aten.node(AtenKind::getitem,
                                {chunks, body->getArgument(0)}, tensorType);
        aten.node(AtenKind::append, {normalized, batchNorm(chunk, momentum)},
                  listType);
        rewriter.create<YieldOp>(loc, ValueRange{isTrue});
      }
      return rewriter.create<CatOp>(loc, tensorType, normalized,
                                    rewriter.getI64IntegerAttr(0));
    };
    auto whole = [&]() {
      return batchNorm(adaptor.getInput(), adaptor.getMomentum());
    };
    rewriter.replaceOp(
        ghost, aten.ifElse(adaptor.getTraining(), tensorType, inChunks, whole)
                   ->getResults());
    return success();
  }
};

/// composer::ghost_batch_norm(input, weight, bias, running_mean,
/// running_var, training, momentum, eps, ghost_batch_size, dtype), with
/// `input` cast to `dtype` by the kernel (None: as is).
void replaceWithRuntimeGhostBatchNorm(GhostBatchNormOp ghost,
                                      GhostBatchNormOp::Adaptor adaptor,
                                      Value input, bool castToFloat,
                                      ConversionPatternRewriter &rewriter) {
  AtenBuilder aten(rewriter, ghost.getLoc());
  replaceWithRuntimeCall(
      rewriter, ghost, "composer::ghost_batch_norm",
      {input, adaptor.getWeight(), adaptor.getBias(), adaptor.getRunningMean(),
       adaptor.getRunningVar(), adaptor.getTraining(), adaptor.getMomentum(),
       aten.floating(ghost.getEps().convertToDouble()),
       aten.integer(ghost.getGhostBatchSize()),
       castToFloat ? aten.integer(static_cast<int64_t>(ScalarType::Float))
                   : aten.none()},
      ghost.getLoc());
}

struct GhostBatchNormToRuntime : OpConversionPattern<GhostBatchNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GhostBatchNormOp ghost, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    replaceWithRuntimeGhostBatchNorm(ghost, adaptor, adaptor.getInput(),
                                     /*castToFloat=*/false, rewriter);
    return success();
  }
};

/// The cast `ghost`'s kernel can do itself: a plain aten::to(float32) of a
/// floating-point tensor (no copy, non_blocking or memory format to keep).
/// Null otherwise.
ToDtypeOp getAbsorbableCast(GhostBatchNormOp ghost) {
  auto toDtype = ghost.getInput().getDefiningOp<ToDtypeOp>();
  if (!toDtype || toDtype.getDtype() != ScalarType::Float ||
      toDtype.getNonBlocking() || toDtype.getCopy() ||
      toDtype.getMemoryFormat())
    return {};
  // The kernels take floating-point activations only.
  auto sourceType = cast<TorchTensorType>(toDtype.getSelf().getType());
  if (sourceType.hasDtype() && !isa<FloatType>(sourceType.getDtype()))
    return {};
  return toDtype;
}

/// Mixed precision's fp32 cast of the input absorbed as dtype float32, so
/// the full-size fp32 copy is never materialized. The cast goes once every
/// user has absorbed it; other users keep it.
struct CastGhostBatchNormToRuntime : OpConversionPattern<GhostBatchNormOp> {
  explicit CastGhostBatchNormToRuntime(MLIRContext *ctx)
      : OpConversionPattern(ctx, kFusionBenefit) {}

  LogicalResult
  matchAndRewrite(GhostBatchNormOp ghost, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ToDtypeOp cast = getAbsorbableCast(ghost);
    if (!cast)
      return failure();
    replaceWithRuntimeGhostBatchNorm(ghost, adaptor, cast.getSelf(),
                                     /*castToFloat=*/true, rewriter);
    // The conversion replaces ops only at its end, so the cast's users are
    // those it had: when all of them absorb it, the first erases it.
    bool allAbsorb = llvm::all_of(cast->getUsers(), [&](Operation *user) {
      auto other = dyn_cast<GhostBatchNormOp>(user);
      return other && getAbsorbableCast(other) == cast;
    });
    if (allAbsorb && *cast->user_begin() == ghost)
      rewriter.eraseOp(cast);
    return success();
  }
};

} // namespace

static void populateGhostBatchNormToAtenPatterns(RewritePatternSet &patterns) {
  patterns.add<GhostBatchNormToAten>(patterns.getContext());
}

static void
populateGhostBatchNormToRuntimePatterns(RewritePatternSet &patterns) {
  patterns.add<GhostBatchNormToRuntime>(patterns.getContext());
  patterns.addWithLabel<CastGhostBatchNormToRuntime>({"input casts absorbed"},
                                                     patterns.getContext());
}

static MethodLoweringRegistration ghostBatchNormLowering(
    {"ghost-batchnorm", populateGhostBatchNormToAtenPatterns,
     populateGhostBatchNormToRuntimePatterns});
