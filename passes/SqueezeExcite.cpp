//===- SqueezeExcite.cpp - channel gates after large convolutions ---------===//
//
// Squeeze-Excite (Hu et al. 2018) as METHODS.md states it, on any 2-D
// convolution in the graph with enough channels. Also the lowerings of
// squeeze_excite to aten ops and to the runtime's operator.
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/PatternMatch.h"

namespace composer {
#define GEN_PASS_DEF_SQUEEZEEXCITE
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// A squeeze_excite after a 2-D convolution with enough channels.
struct GateConvolution : OpInterfaceRewritePattern<ConvolutionLike> {
  GateConvolution(MLIRContext *ctx, double latentChannels, int64_t minChannels,
                  SymbolTableCollection &symbolTables, SiteReport &report)
      : OpInterfaceRewritePattern(ctx), latentChannels(latentChannels),
        minChannels(minChannels), symbolTables(symbolTables), report(report) {}

  LogicalResult matchAndRewrite(ConvolutionLike conv,
                                PatternRewriter &rewriter) const override {
    auto skip = [&](StringRef reason) {
      report.skip(conv, reason);
      return failure();
    };
    if (conv.isTransposed() || conv.getNumSpatialDims() != 2)
      return skip("not a 2-D convolution");
    Value weight = conv.getWeight();
    TorchTensorType weightType = getDeclaredStateType(weight, symbolTables);
    if (!weightType || weightType.getRank() != 4)
      return skip("weight is not a 4-D parameter");
    int64_t outChannels = weightType.getSizes()[0];
    int64_t inChannels = weightType.getSizes()[1] * conv.getGroups();
    if (std::min(inChannels, outChannels) < minChannels)
      return skip("channels < min-channels");
    Value result = conv->getResult(0);
    if (llvm::any_of(result.getUsers(), [](Operation *user) {
          return isa<SqueezeExciteOp>(user);
        }))
      return skip("already followed by squeeze-excite");
    int64_t latent = latentChannels >= 1
                         ? int64_t(latentChannels)
                         : int64_t(latentChannels * outChannels);
    latent = std::max<int64_t>(latent, 1);
    std::string owner = getStateOwnerPath(weight).value_or(getModulePath(conv));
    MLIRContext *ctx = rewriter.getContext();
    SymbolTable &moduleSymbols =
        symbolTables.getSymbolTable(conv->getParentOfType<ModuleOp>());
    rewriter.setInsertionPointAfter(conv);
    Location loc = conv->getLoc();
    auto f32 = Float32Type::get(ctx);
    auto init = rewriter.getStringAttr(kLinearDefaultInit);
    Value fc1 = createState<ParameterOp>(
        rewriter, moduleSymbols, joinStatePath(owner, "se.fc1.weight"),
        TorchTensorType::get(ctx, true, {latent, outChannels}, f32), init, loc);
    Value fc2 = createState<ParameterOp>(
        rewriter, moduleSymbols, joinStatePath(owner, "se.fc2.weight"),
        TorchTensorType::get(ctx, true, {outChannels, latent}, f32), init, loc);
    auto gated = rewriter.create<SqueezeExciteOp>(loc, result.getType(), result,
                                                  fc1, fc2);
    rewriter.replaceAllUsesExcept(result, gated, gated);
    report.match(conv);
    return success();
  }

  double latentChannels;
  int64_t minChannels;
  SymbolTableCollection &symbolTables;
  SiteReport &report;
};

struct SqueezeExcitePass
    : public composer::impl::SqueezeExciteBase<SqueezeExcitePass> {
  using SqueezeExciteBase::SqueezeExciteBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (latentChannels <= 0) {
      module.emitError("composer-squeeze-excite: latent-channels must be > 0");
      return signalPassFailure();
    }
    // Channel counts are int64 in the IR (and in PyTorch).
    if (!(latentChannels < 0x1p63)) {
      module.emitError("composer-squeeze-excite: latent-channels=")
          << latentChannels << " is more channels than 64 bits count";
      return signalPassFailure();
    }
    SymbolTableCollection symbolTables;
    SiteReport report(module, getArgument());
    RewritePatternSet patterns(&getContext());
    patterns.add<GateConvolution>(&getContext(), latentChannels, minChannels,
                                  symbolTables, report);
    applyPatternsOnce(module, std::move(patterns));
    report.emit("convolutions given squeeze-excite");
  }
};

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

/// squeeze_excite as aten: mean over H and W, fc1, relu, fc2, sigmoid, and
/// the input scaled by the gate broadcast over H and W.
struct SqueezeExciteToAten : OpConversionPattern<SqueezeExciteOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SqueezeExciteOp se, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = se.getContext();
    Location loc = se.getLoc();
    AtenBuilder aten(rewriter, loc);
    auto tensorType = TorchTensorType::get(ctx);
    Value pooled = aten.node(AtenKind::mean,
                             {adaptor.getInput(), aten.intList({2, 3}),
                              aten.boolean(false), aten.none()},
                             tensorType);
    // The weights follow the activation's dtype: under mixed precision the
    // input is bf16/fp16 while the new weights stay fp32 (master weights).
    auto like = [&](Value weight) {
      return aten.node(AtenKind::type_as, {weight, pooled}, tensorType);
    };
    Value hidden = rewriter.create<LinearOp>(
        loc, tensorType, pooled, like(adaptor.getFc1()), aten.none());
    hidden = rewriter.create<ReluOp>(loc, tensorType, hidden, UnitAttr());
    Value gate = rewriter.create<LinearOp>(loc, tensorType, hidden,
                                           like(adaptor.getFc2()), aten.none());
    gate = rewriter.create<SigmoidOp>(loc, tensorType, gate, UnitAttr());
    for (int i = 0; i < 2; ++i)
      gate =
          aten.node(AtenKind::unsqueeze, {gate, aten.integer(-1)}, tensorType);
    rewriter.replaceOpWithNewOp<MulOp>(se, tensorType, adaptor.getInput(), gate,
                                       UnitAttr());
    return success();
  }
};

/// composer::squeeze_excite(input, fc1, fc2).
struct SqueezeExciteToRuntime : OpConversionPattern<SqueezeExciteOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(SqueezeExciteOp se, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    replaceWithRuntimeCall(rewriter, se, "composer::squeeze_excite",
                           adaptor.getOperands(), se.getLoc());
    return success();
  }
};

} // namespace

static void populateSqueezeExciteToAtenPatterns(RewritePatternSet &patterns) {
  patterns.add<SqueezeExciteToAten>(patterns.getContext());
}

static void
populateSqueezeExciteToRuntimePatterns(RewritePatternSet &patterns) {
  patterns.add<SqueezeExciteToRuntime>(patterns.getContext());
}

static MethodLoweringRegistration squeezeExciteLowering(
    {"squeeze-excite", populateSqueezeExciteToAtenPatterns,
     populateSqueezeExciteToRuntimePatterns});
