//===- BlurPool.cpp - anti-aliased downsampling ---------------------------===//
//
// BlurPool (Zhang 2019) as METHODS.md states it: a binomial blur before each
// strided convolution (or after it, run at stride 1) and after each max
// pool, run at stride 1. Sites are found from the graph: any 2-D convolution
// with a stride above 1, any max pool. What the pass rewrote carries
// `composer.blurred`, so a second run leaves it alone while a conv that reads
// an earlier blur's output is still blurred again, as module surgery does.
// Also the lowerings of blur_pool2d to aten ops and to the runtime's
// operators.
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/PatternMatch.h"

namespace composer {
#define GEN_PASS_DEF_BLURPOOL
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// BlurPool's filter, [1,2,1]^T [1,2,1] / 16, as a 1x1x3x3 initializer that
/// export broadcasts to the buffer's C x 1 x 3 x 3.
DenseElementsAttr binomialFilter(MLIRContext *ctx) {
  auto type = RankedTensorType::get({1, 1, 3, 3}, Float32Type::get(ctx));
  const float taps[] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
  SmallVector<float> values;
  for (float tap : taps)
    values.push_back(tap / 16);
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

bool isStrided(ArrayRef<int64_t> stride) {
  return llvm::any_of(stride, [](int64_t s) { return s > 1; });
}

/// Marks a convolution or max pool the pass rewrote: the pass's own record,
/// which makes it idempotent.
constexpr llvm::StringLiteral kBlurredAttrName = "composer.blurred";

/// What the pass's patterns share: the module they add filters to, its
/// symbol tables and the site report.
struct BlurSites {
  ModuleOp module;
  SymbolTableCollection &symbolTables;
  SiteReport &report;

  /// A blur of `input` with `channels` channels, its filter a new buffer
  /// under `owner`: C x 1 x 3 x 3, or 1 x 1 x 3 x 3 expanded to the input's
  /// channels when run if the channel count is unknown.
  Value createBlur(OpBuilder &builder, Location loc, Value input,
                   std::optional<int64_t> channels, StringRef owner,
                   ArrayRef<int64_t> stride) {
    MLIRContext *ctx = builder.getContext();
    auto filterType = TorchTensorType::get(
        ctx, true, {channels.value_or(1), 1, 3, 3}, Float32Type::get(ctx));
    Value filter =
        createState<BufferOp>(builder, symbolTables.getSymbolTable(module),
                              joinStatePath(owner, "blurpool.filter"),
                              filterType, binomialFilter(ctx), loc);
    return builder.create<BlurPool2dOp>(loc, TorchTensorType::get(ctx), input,
                                        filter,
                                        builder.getDenseI64ArrayAttr(stride));
  }
};

/// A strided 2-D convolution: blurred before (blur-first) or run at stride
/// 1 and blurred after.
struct BlurStridedConvolution : OpInterfaceRewritePattern<ConvolutionLike> {
  BlurStridedConvolution(MLIRContext *ctx, BlurSites &sites, bool blurFirst,
                         int64_t minChannels)
      : OpInterfaceRewritePattern(ctx), sites(sites), blurFirst(blurFirst),
        minChannels(minChannels) {}

  LogicalResult matchAndRewrite(ConvolutionLike conv,
                                PatternRewriter &rewriter) const override {
    SmallVector<int64_t> stride(conv.getStride());
    // Not a site: stride-1 convolutions do not downsample.
    if (conv.isTransposed() || conv.getNumSpatialDims() != 2 ||
        !isStrided(stride))
      return failure();
    auto skip = [&](StringRef reason) {
      sites.report.skip(conv, reason);
      return failure();
    };
    if (conv->hasAttr(kBlurredAttrName))
      return skip("already blurred");
    TorchTensorType weightType =
        getDeclaredStateType(conv.getWeight(), sites.symbolTables);
    if (!weightType)
      return skip("weight is not a parameter");
    if (weightType.getRank() != 4)
      return skip("not a 2-D convolution");
    int64_t inChannels = weightType.getSizes()[1] * conv.getGroups();
    if (inChannels < minChannels)
      return skip("in_channels < min-channels");
    std::string owner =
        getStateOwnerPath(conv.getWeight()).value_or(getModulePath(conv));
    Location loc = conv->getLoc();
    if (blurFirst) {
      Value blurred = sites.createBlur(rewriter, loc, conv.getInput(),
                                       inChannels, owner, {1, 1});
      rewriter.modifyOpInPlace(conv, [&] {
        conv.getInputMutable().set(blurred);
        conv->setAttr(kBlurredAttrName, rewriter.getUnitAttr());
      });
    } else {
      Value result = conv->getResult(0);
      rewriter.modifyOpInPlace(conv, [&] {
        conv.setStride({1, 1});
        conv->setAttr(kBlurredAttrName, rewriter.getUnitAttr());
        // The output type no longer holds at stride 1.
        result.setType(TorchTensorType::get(rewriter.getContext()));
      });
      rewriter.setInsertionPointAfter(conv);
      Value blurred = sites.createBlur(rewriter, loc, result,
                                       weightType.getSizes()[0], owner, stride);
      rewriter.replaceAllUsesExcept(result, blurred, blurred.getDefiningOp());
    }
    sites.report.match(conv);
    return success();
  }

  BlurSites &sites;
  bool blurFirst;
  int64_t minChannels;
};

/// A max pool: run at stride 1 and blurred after with its stride.
struct BlurMaxPool : OpRewritePattern<MaxPool2dOp> {
  BlurMaxPool(MLIRContext *ctx, BlurSites &sites)
      : OpRewritePattern(ctx), sites(sites) {}

  LogicalResult matchAndRewrite(MaxPool2dOp pool,
                                PatternRewriter &rewriter) const override {
    auto skip = [&](StringRef reason) {
      sites.report.skip(pool, reason);
      return failure();
    };
    Value result = pool.getResult();
    if (pool->hasAttr(kBlurredAttrName))
      return skip("already blurred");
    // Unknown channels (nullopt) get a filter expanded when run.
    std::optional<int64_t> channels =
        inferChannels(pool.getSelf(), sites.symbolTables);
    SmallVector<int64_t> stride(pool.getStride());
    if (stride.empty())
      stride.assign(pool.getKernelSize().begin(), pool.getKernelSize().end());
    rewriter.modifyOpInPlace(pool, [&] {
      pool.setStrideAttr(rewriter.getDenseI64ArrayAttr({1, 1}));
      pool->setAttr(kBlurredAttrName, rewriter.getUnitAttr());
      result.setType(TorchTensorType::get(rewriter.getContext()));
    });
    rewriter.setInsertionPointAfter(pool);
    std::string owner = getModulePath(pool);
    Value blurred = sites.createBlur(rewriter, pool.getLoc(), result, channels,
                                     owner.empty() ? "maxpool" : owner, stride);
    rewriter.replaceAllUsesExcept(result, blurred, blurred.getDefiningOp());
    sites.report.match(pool);
    return success();
  }

  BlurSites &sites;
};

struct BlurPoolPass : public composer::impl::BlurPoolBase<BlurPoolPass> {
  using BlurPoolBase::BlurPoolBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SymbolTableCollection symbolTables;
    SiteReport report(module, getArgument());
    BlurSites sites{module, symbolTables, report};
    RewritePatternSet patterns(ctx);
    if (replaceConvs)
      patterns.add<BlurStridedConvolution>(ctx, sites, blurFirst, minChannels);
    if (replaceMaxpools)
      patterns.add<BlurMaxPool>(ctx, sites);
    applyPatternsOnce(module, std::move(patterns));
    report.emit("sites blurred");
  }
};

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

/// blur_pool2d as aten: a depthwise conv2d with the filter at padding 1, or,
/// when the input is smaller than the filter, the input subsampled by the
/// stride. A 1 x 1 x 3 x 3 filter (channels unknown when the pass ran) is
/// expanded to the input's channels, C = input.size(1), which is also the
/// conv's groups. The filter takes the input's dtype, so that the blur runs
/// in bf16 after mixed precision, as autocast's conv2d would.
struct BlurPoolToAten : OpConversionPattern<BlurPool2dOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BlurPool2dOp blur, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = blur.getContext();
    TorchTensorType filterType =
        getDeclaredStateType(adaptor.getFilter(), symbolTables);
    if (!filterType)
      filterType = cast<TorchTensorType>(adaptor.getFilter().getType());
    if (!filterType.hasStaticShape())
      return rewriter.notifyMatchFailure(
          blur, "the filter's channel count is unknown");
    int64_t channels = filterType.getSizes()[0];
    ArrayRef<int64_t> stride = blur.getStride();
    auto intType = IntType::get(ctx);
    auto tensorType = TorchTensorType::get(ctx);
    AtenBuilder aten(rewriter, blur.getLoc());
    Value input = adaptor.getInput();
    Value height =
        aten.node(AtenKind::size, {input, aten.integer(-2)}, intType);
    Value width = aten.node(AtenKind::size, {input, aten.integer(-1)}, intType);
    Value smallest = aten.node("prim::min", {height, width}, intType);
    Value tooSmall = aten.node(AtenKind::lt, {smallest, aten.integer(3)},
                               BoolType::get(ctx));
    auto subsample = [&]() {
      Value subsampled = input;
      for (auto [dim, step] : llvm::enumerate(stride))
        if (step > 1)
          subsampled = aten.node(AtenKind::slice,
                                 {subsampled, aten.integer(2 + dim),
                                  aten.none(), aten.none(), aten.integer(step)},
                                 tensorType);
      return subsampled;
    };
    auto blur2d = [&]() -> Value {
      Value filter = aten.node(AtenKind::type_as, {adaptor.getFilter(), input},
                               tensorType);
      if (channels == 1) {
        Value c = aten.node(AtenKind::size, {input, aten.integer(1)}, intType);
        Value shape =
            aten.node("prim::ListConstruct",
                      {c, aten.integer(1), aten.integer(3), aten.integer(3)},
                      ListType::get(ctx, intType));
        filter = aten.node(AtenKind::expand,
                           {filter, shape, aten.boolean(false)}, tensorType);
        return aten.node(AtenKind::conv2d,
                         {input, filter, aten.none(), aten.intList(stride),
                          aten.intList({1, 1}), aten.intList({1, 1}), c},
                         tensorType);
      }
      return rewriter.create<Conv2dOp>(blur.getLoc(), tensorType, input, filter,
                                       aten.none(),
                                       rewriter.getDenseI64ArrayAttr(stride),
                                       rewriter.getDenseI64ArrayAttr({1, 1}),
                                       rewriter.getDenseI64ArrayAttr({1, 1}),
                                       rewriter.getI64IntegerAttr(channels));
    };
    rewriter.replaceOp(
        blur,
        aten.ifElse(tooSmall, tensorType, subsample, blur2d)->getResults());
    return success();
  }

  /// The filters' declarations, looked up during one conversion, which adds
  /// no symbols.
  mutable SymbolTableCollection symbolTables;
};

/// composer::blur_pool2d(input, filter, stride); the op expands a
/// 1 x 1 x 3 x 3 filter to the input's channels itself.
struct BlurPoolToRuntime : OpConversionPattern<BlurPool2dOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(BlurPool2dOp blur, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    AtenBuilder aten(rewriter, blur.getLoc());
    replaceWithRuntimeCall(rewriter, blur, "composer::blur_pool2d",
                           {adaptor.getInput(), adaptor.getFilter(),
                            aten.intList(blur.getStride())},
                           blur.getLoc());
    return success();
  }
};

/// The max pool BlurPool leaves in front of a blur, at stride 1 (where
/// ceil_mode changes nothing) and used by nothing else, fused with the blur
/// into composer::blur_max_pool2d(input, filter, kernel_size, padding,
/// dilation, stride), so the full-size pooled tensor is never materialized.
struct BlurMaxPoolToRuntime : OpConversionPattern<BlurPool2dOp> {
  explicit BlurMaxPoolToRuntime(MLIRContext *ctx)
      : OpConversionPattern(ctx, kFusionBenefit) {}

  LogicalResult
  matchAndRewrite(BlurPool2dOp blur, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto pool = adaptor.getInput().getDefiningOp<MaxPool2dOp>();
    if (!pool || !pool->hasOneUse())
      return failure();
    // An empty stride is the kernel size, as in aten::max_pool2d.
    ArrayRef<int64_t> poolStride =
        pool.getStride().empty() ? pool.getKernelSize() : pool.getStride();
    if (!llvm::all_of(poolStride, [](int64_t step) { return step == 1; }))
      return failure();
    AtenBuilder aten(rewriter, blur.getLoc());
    replaceWithRuntimeCall(
        rewriter, blur, "composer::blur_max_pool2d",
        {pool.getSelf(), adaptor.getFilter(),
         aten.intList(pool.getKernelSize()), aten.intList(pool.getPadding()),
         aten.intList(pool.getDilation()), aten.intList(blur.getStride())},
        FusedLoc::get(blur.getContext(), {pool.getLoc(), blur.getLoc()}));
    rewriter.eraseOp(pool);
    return success();
  }
};

} // namespace

static void populateBlurPoolToAtenPatterns(RewritePatternSet &patterns) {
  patterns.add<BlurPoolToAten>(patterns.getContext());
}

static void populateBlurPoolToRuntimePatterns(RewritePatternSet &patterns) {
  patterns.add<BlurPoolToRuntime>(patterns.getContext());
  patterns.addWithLabel<BlurMaxPoolToRuntime>({"max pools fused"},
                                              patterns.getContext());
}

static MethodLoweringRegistration
    blurPoolLowering({"blurpool", populateBlurPoolToAtenPatterns,
                      populateBlurPoolToRuntimePatterns});
