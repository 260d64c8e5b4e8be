//===- Factorize.cpp - large layers as low-rank pairs ---------------------===//
//
// Factorize (Composer) as METHODS.md states it: 2-D convolutions and
// projections (nn.Linear, GPT-2's Conv1D) become a rank-r pair of
// convolutions or linears, initialized at export from a
// truncated SVD of the original weight (lib/TorchScript/State.cpp). The
// pair is built from conv2d/convolution/linear ops, so nothing to lower.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "Report.h"
#include "composer/Analysis/Projection.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/FactorizeState.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Format.h"

namespace composer {
#define GEN_PASS_DEF_FACTORIZE
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// Marks the two ops of a pair the pass wrote, which keeps it idempotent.
constexpr llvm::StringLiteral kFactorizedAttrName = "composer.factorized";

/// Composer's latent size: `latent` truncated if >= 1, else that fraction of
/// min(in, out), at least 1.
int64_t getLatentSize(double latent, int64_t in, int64_t out) {
  if (latent >= 1)
    return int64_t(latent);
  return std::max<int64_t>(int64_t(latent * std::min(in, out)), 1);
}

/// What the two patterns share: the checks on the weight, the new factor
/// parameters and the pair's bookkeeping.
class Factorizer {
public:
  Factorizer(int64_t minSize, double latent, bool force,
             StringRef tooNarrowReason, SymbolTableCollection &symbolTables,
             SiteReport &report, SetVector<ParameterOp> &retired)
      : minSize(minSize), latent(latent), force(force),
        tooNarrowReason(tooNarrowReason), symbolTables(symbolTables),
        report(report), retired(retired) {}

  /// A site to factorize: the read of its weight, the weight's declaration
  /// and type, and the rank of the pair.
  struct Site {
    GetParamOp read;
    ParameterOp decl;
    TorchTensorType type;
    int64_t rank;
    WeightLayout layout;
  };
  /// The site if `op` with this weight is to be factorized, or failure
  /// after reporting why not. `weightRank` is the weight's expected rank (4
  /// for a convolution, 2 for a linear); `layout` says which of a 2-D
  /// weight's dimensions is out.
  FailureOr<Site> check(Operation *op, Value weight, int64_t weightRank,
                        WeightLayout layout = WeightLayout::OutIn) const {
    auto skip = [&](StringRef reason) {
      report.skip(op, reason);
      return failure();
    };
    if (op->hasAttr(kFactorizedAttrName))
      return skip("already factorized");
    auto read = weight.getDefiningOp<GetParamOp>();
    auto decl =
        read
            ? dyn_cast_or_null<ParameterOp>(lookupStateDecl(read, symbolTables))
            : ParameterOp();
    if (!decl || !decl.getTensorType().hasStaticShape() ||
        !decl.getTensorType().hasDtype() ||
        decl.getTensorType().getRank() != weightRank)
      return skip("weight is not a parameter of known shape");
    // A tied weight (a head sharing its embedding's) would stop training
    // where the other ops read it.
    if (isSharedWithOtherOps(decl, op))
      return skip("weight shared with other ops");
    TorchTensorType type = decl.getTensorType();
    SmallVector<int64_t> sizes(type.getSizes());
    if (layout == WeightLayout::InOut)
      std::swap(sizes[0], sizes[1]);
    int64_t out = sizes[0], in = sizes[1];
    int64_t fanIn = 1;
    for (int64_t size : ArrayRef(sizes).drop_front())
      fanIn *= size;
    if (std::min(in, out) < minSize)
      return skip(tooNarrowReason);
    // Beyond the weight's rank a pair computes nothing more.
    int64_t rank =
        std::min(getLatentSize(latent, in, out), std::min(out, fanIn));
    // Composer's rank <= ceil(fan_in * out / (fan_in + out) - 1).
    if (!force && rank * (fanIn + out) >= fanIn * out)
      return skip("does not cut MACs at rank r");
    return Site{read, decl, type, rank, layout};
  }

  /// Declares `<owner>.factor0.weight` (rank x the weight's other dims) and
  /// `<owner>.factor1.weight` (out x rank, then 1s), initialized from the
  /// SVD of the site's weight (of its transpose for a weight stored [in,
  /// out]), and returns reads of both at `rewriter`'s insertion point.
  std::pair<Value, Value> createFactors(PatternRewriter &rewriter, Site site,
                                        Operation *op) const {
    MLIRContext *ctx = rewriter.getContext();
    StringRef source = site.read.getName();
    std::string owner(getStateOwner(source));
    SymbolTable &moduleSymbols =
        symbolTables.getSymbolTable(op->getParentOfType<ModuleOp>());
    SmallVector<int64_t> sizes(site.type.getSizes());
    bool transposed = site.layout == WeightLayout::InOut;
    if (transposed)
      std::swap(sizes[0], sizes[1]);
    SmallVector<int64_t> firstSizes(sizes);
    firstSizes[0] = site.rank;
    SmallVector<int64_t> secondSizes(sizes.size(), 1);
    secondSizes[0] = sizes[0];
    secondSizes[1] = site.rank;
    auto declare = [&](StringRef name, ArrayRef<int64_t> factorSizes,
                       StringRef init) {
      return createState<ParameterOp>(
          rewriter, moduleSymbols, joinStatePath(owner, name),
          TorchTensorType::get(ctx, true, factorSizes, site.type.getDtype()),
          rewriter.getStringAttr(makeInitializer(init, source)), op->getLoc());
    };
    return {declare("factor0.weight", firstSizes,
                    transposed ? kSvdFirstOfTransposeInit : kSvdFirstInit),
            declare("factor1.weight", secondSizes,
                    transposed ? kSvdSecondOfTransposeInit : kSvdSecondInit)};
  }

  /// After the site was replaced: the original weight stays in the model,
  /// and its read goes if nothing else uses it. It is frozen once all sites
  /// are done (freezeRetiredWeights), if no site kept it.
  void retireWeight(PatternRewriter &rewriter, Site site, Operation *op) const {
    retired.insert(site.decl);
    if (site.read->use_empty())
      rewriter.eraseOp(site.read);
    report.match(op);
  }

private:
  /// Whether the weight is read other than as the weight of a convolution
  /// or projection (say a tied embedding), which freezing it would change;
  /// the same layer called twice has its sites factorized alike.
  bool isSharedWithOtherOps(ParameterOp decl, Operation *op) const {
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(decl, op->getParentOfType<ModuleOp>());
    if (!uses)
      return true;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto read = dyn_cast<GetParamOp>(use.getUser());
      if (!read)
        return true;
      for (OpOperand &operand : read->getUses()) {
        Operation *user = operand.getOwner();
        // Operand 1 is the weight of convolutions and linears (schema
        // order), operand 2 of an addmm.
        unsigned weightOperand = isa<ConvolutionLike, LinearOp>(user) ? 1
                                 : isProjectionProduct(user)          ? 2
                                                                      : 0;
        if (weightOperand == 0 || operand.getOperandNumber() != weightOperand)
          return true;
      }
    }
    return false;
  }

  int64_t minSize;
  double latent;
  bool force;
  StringRef tooNarrowReason;
  SymbolTableCollection &symbolTables;
  SiteReport &report;
  SetVector<ParameterOp> &retired;
};

/// Freezes the factorized weights the graph no longer reads. One still read
/// (the same layer called again at a site left alone, say a transposed
/// convolution or one below the gate) keeps training there.
void freezeRetiredWeights(ModuleOp module,
                          const SetVector<ParameterOp> &retired) {
  for (ParameterOp decl : retired)
    if (SymbolTable::symbolKnownUseEmpty(decl, module))
      decl.setFrozen(true);
}

/// The type of the first op of a pair: the site's result type with `rank`
/// channels (dimension `dim`) if its shape is known.
Type withLatentSize(Type resultType, int64_t dim, int64_t rank) {
  auto type = dyn_cast<TorchTensorType>(resultType);
  if (!type || !type.getHasRank() || type.getRank() <= dim)
    return resultType;
  SmallVector<int64_t> sizes(type.getSizes());
  sizes[dim] = rank;
  return TorchTensorType::get(type.getContext(), true, sizes, type.getDtype());
}

void markFactorized(Operation *op) {
  op->setAttr(kFactorizedAttrName, UnitAttr::get(op->getContext()));
}

/// A 2-D convolution as a k x k convolution in -> r (no bias) and a 1x1
/// convolution r -> out (the bias), both of the site's op kind.
struct FactorizeConvolution : OpInterfaceRewritePattern<ConvolutionLike> {
  FactorizeConvolution(MLIRContext *ctx, const Factorizer &factorizer,
                       SiteReport &report)
      : OpInterfaceRewritePattern(ctx), factorizer(factorizer), report(report) {
  }

  LogicalResult matchAndRewrite(ConvolutionLike conv,
                                PatternRewriter &rewriter) const override {
    if (conv.isTransposed() || conv.getNumSpatialDims() != 2) {
      report.skip(conv, "not a 2-D convolution");
      return failure();
    }
    if (conv.getGroups() != 1) {
      report.skip(conv, "groups > 1");
      return failure();
    }
    FailureOr<Factorizer::Site> site =
        factorizer.check(conv, conv.getWeight(), /*weightRank=*/4);
    if (failed(site))
      return failure();
    // Both convolution ops take (input, weight, bias) first, in schema
    // order; each factor is a copy of the site with its own operands.
    assert(conv->getOperand(1) == conv.getWeight() &&
           conv->getOperand(2) == conv.getBias() && "schema order");
    rewriter.setInsertionPoint(conv);
    auto [factor0, factor1] = factorizer.createFactors(rewriter, *site, conv);
    Value none = AtenBuilder(rewriter, conv->getLoc()).none();

    Operation *first = rewriter.clone(*conv);
    first->setOperand(1, factor0);
    first->setOperand(2, none);
    first->getResult(0).setType(
        withLatentSize(conv->getResult(0).getType(), 1, site->rank));
    markFactorized(first);

    auto second = cast<ConvolutionLike>(rewriter.clone(*conv));
    second->setOperand(0, first->getResult(0));
    second->setOperand(1, factor1);
    second.setStride({1, 1});
    second->setAttr("padding", rewriter.getDenseI64ArrayAttr({0, 0}));
    second->setAttr("dilation", rewriter.getDenseI64ArrayAttr({1, 1}));
    markFactorized(second);

    rewriter.replaceOp(conv, second->getResults());
    factorizer.retireWeight(rewriter, *site, second);
    return success();
  }

  const Factorizer &factorizer;
  SiteReport &report;
};

/// A projection (nn.Linear, or GPT-2's Conv1D) as linears in -> r (no bias)
/// then r -> out (the bias).
struct FactorizeLinear : RewritePattern {
  FactorizeLinear(MLIRContext *ctx, const Factorizer &factorizer)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        factorizer(factorizer) {}

  LogicalResult matchAndRewrite(Operation *product,
                                PatternRewriter &rewriter) const override {
    std::optional<Projection> projection = matchProjectionAt(product);
    if (!projection)
      return failure();
    FailureOr<Factorizer::Site> site = factorizer.check(
        product, projection->weight, /*weightRank=*/2, projection->layout);
    if (failed(site))
      return failure();
    rewriter.setInsertionPoint(product);
    auto [factor0, factor1] =
        factorizer.createFactors(rewriter, *site, product);
    Location loc = product->getLoc();
    Value none = AtenBuilder(rewriter, loc).none();
    Type resultType = projection->result.getType();
    int64_t lastDim = cast<TorchTensorType>(resultType).getHasRank()
                          ? cast<TorchTensorType>(resultType).getRank() - 1
                          : 0;
    auto first = rewriter.create<LinearOp>(
        loc, withLatentSize(resultType, lastDim, site->rank), projection->input,
        factor0, none);
    markFactorized(first);
    auto second = rewriter.create<LinearOp>(loc, resultType, first, factor1,
                                            projection->bias);
    markFactorized(second);
    rewriter.replaceAllUsesWith(projection->result, second);
    for (Operation *op : llvm::reverse(projection->ops))
      rewriter.eraseOp(op);
    factorizer.retireWeight(rewriter, *site, second);
    return success();
  }

  const Factorizer &factorizer;
};

struct FactorizePass : public composer::impl::FactorizeBase<FactorizePass> {
  using FactorizeBase::FactorizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [name, value] :
         {std::pair<StringRef, double>{"latent-channels", latentChannels},
          {"latent-features", latentFeatures}}) {
      // Latent sizes are int64 in the IR (and in PyTorch).
      if (!(value > 0) || !(value < 0x1p63)) {
        std::string text;
        llvm::raw_string_ostream(text) << llvm::format("%g", value);
        module.emitError("composer-factorize: ")
            << name << "=" << text << " must be > 0 and below 2^63";
        return signalPassFailure();
      }
    }
    SymbolTableCollection symbolTables;
    SiteReport report(module, getArgument());
    SetVector<ParameterOp> retired;
    Factorizer convs(minChannels, latentChannels, force,
                     "channels < min-channels", symbolTables, report, retired);
    Factorizer linears(minFeatures, latentFeatures, force,
                       "features < min-features", symbolTables, report,
                       retired);
    RewritePatternSet patterns(&getContext());
    if (factorizeConvs)
      patterns.add<FactorizeConvolution>(&getContext(), convs, report);
    if (factorizeLinears)
      patterns.add<FactorizeLinear>(&getContext(), linears);
    applyPatternsOnce(module, std::move(patterns));
    freezeRetiredWeights(module, retired);
    report.emit("layers factorized");
  }
};

} // namespace
