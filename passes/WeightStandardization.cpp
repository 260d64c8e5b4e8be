//===- WeightStandardization.cpp - standardized convolution weights -------===//
//
// Weight standardization (Qiao et al. 2019) as METHODS.md states it and
// Composer's apply_weight_standardization computes it: every convolution
// reads its weight through a standardize_weight, except the last
// n-last-layers-ignore ones. Also the lowering of standardize_weight to aten
// ops, which composer-lower-to-runtime uses as well (no fused kernel).
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace composer {
#define GEN_PASS_DEF_WEIGHTSTANDARDIZATION
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// Composer's epsilon (_standardize_weights: sqrt(var + 1e-10)).
constexpr double kStandardizeEpsilon = 1e-10;

/// The weight operand of a convolution, typed or left generic by the
/// importer (a scripted Conv1d's aten::conv1d), and whether it is
/// transposed; null for other ops. Every aten convolution schema, and so
/// every typed convolution op (operands in schema order), has the weight at
/// operand 1.
struct ConvolutionSite {
  OpOperand *weight = nullptr;
  bool transposed = false;
};

ConvolutionSite getConvolutionSite(Operation *op) {
  if (auto conv = dyn_cast<ConvolutionLike>(op)) {
    OpOperand &weight = op->getOpOperand(1);
    assert(weight.get() == conv.getWeight() && "weight is not operand 1");
    return {&weight, conv.isTransposed()};
  }
  auto generic = dyn_cast<GenericOp>(op);
  if (!generic || op->getNumOperands() < 2)
    return {};
  // aten::_convolution and aten::convolution are transposed or not by an
  // operand the importer could not read, else they would be typed.
  const AtenKindInfo *info = generic.getKindInfo();
  if (!info || !info->has(AtenTrait::Convolution) ||
      generic.isKind(AtenKind::_convolution) ||
      generic.isKind(AtenKind::convolution))
    return {};
  return {&op->getOpOperand(1), info->has(AtenTrait::Transposed)};
}

/// The use of the weight to standardize: the convolution's weight operand,
/// or, when that is a cast of its own (mixed precision's cast on use), the
/// cast's operand, so that the standardization runs on the fp32 master
/// weight before the cast, as autocast runs Composer's parametrization.
OpOperand &getStandardizedUse(OpOperand &weight) {
  auto cast = weight.get().getDefiningOp<ToDtypeOp>();
  if (cast && cast->hasOneUse())
    return cast.getSelfMutable();
  return weight;
}

/// The parameter a convolution's weight reads, looking through a
/// standardize_weight; empty if the weight is computed otherwise.
StringRef getWeightParameter(Value weight) {
  if (auto standardized = weight.getDefiningOp<StandardizeWeightOp>())
    weight = standardized.getWeight();
  if (auto read = weight.getDefiningOp<GetParamOp>())
    return read.getName();
  return {};
}

/// The convolution layers Composer would standardize, in the order @forward
/// first runs them: one per weight parameter (a module called twice is one
/// layer), transposed convolutions excluded (Composer matches Conv1d/2d/3d).
llvm::SetVector<StringRef> collectLayers(Operation *root) {
  llvm::SetVector<StringRef> layers;
  root->walk([&](Operation *op) {
    ConvolutionSite site = getConvolutionSite(op);
    if (!site.weight || site.transposed)
      return;
    StringRef parameter =
        getWeightParameter(getStandardizedUse(*site.weight).get());
    if (!parameter.empty())
      layers.insert(parameter);
  });
  return layers;
}

/// Standardizes one convolution's weight: a standardize_weight between the
/// weight and the convolution.
void standardizeSite(Operation *op, const llvm::StringSet<> &ignored,
                     SiteReport &report, PatternRewriter &rewriter) {
  ConvolutionSite site = getConvolutionSite(op);
  if (!site.weight)
    return;
  if (site.transposed)
    return report.skip(op, "transposed convolution");
  OpOperand &use = getStandardizedUse(*site.weight);
  Value weight = use.get();
  if (weight.getDefiningOp<StandardizeWeightOp>())
    return report.skip(op, "already standardized");
  StringRef parameter = getWeightParameter(weight);
  if (parameter.empty())
    return report.skip(op, "weight is not a parameter");
  if (ignored.contains(parameter))
    return report.skip(op, "in the last n-last-layers-ignore convolutions");
  report.match(op);
  // Next to its user, so that the standardized weight lives only as long as
  // the convolution needs it.
  Operation *user = use.getOwner();
  rewriter.setInsertionPoint(user);
  Value standardized = rewriter.create<StandardizeWeightOp>(
      op->getLoc(), weight.getType(), weight,
      rewriter.getF64FloatAttr(kStandardizeEpsilon));
  rewriter.modifyOpInPlace(user, [&] { use.set(standardized); });
}

struct StandardizeConvolution : OpInterfaceRewritePattern<ConvolutionLike> {
  StandardizeConvolution(MLIRContext *ctx, const llvm::StringSet<> &ignored,
                         SiteReport &report)
      : OpInterfaceRewritePattern(ctx), ignored(ignored), report(report) {}

  LogicalResult matchAndRewrite(ConvolutionLike conv,
                                PatternRewriter &rewriter) const override {
    standardizeSite(conv, ignored, report, rewriter);
    return success();
  }

  const llvm::StringSet<> &ignored;
  SiteReport &report;
};

struct StandardizeGenericConvolution : OpRewritePattern<GenericOp> {
  StandardizeGenericConvolution(MLIRContext *ctx,
                                const llvm::StringSet<> &ignored,
                                SiteReport &report)
      : OpRewritePattern(ctx), ignored(ignored), report(report) {}

  LogicalResult matchAndRewrite(GenericOp generic,
                                PatternRewriter &rewriter) const override {
    if (!getConvolutionSite(generic).weight)
      return failure();
    standardizeSite(generic, ignored, report, rewriter);
    return success();
  }

  const llvm::StringSet<> &ignored;
  SiteReport &report;
};

struct WeightStandardizationPass
    : public composer::impl::WeightStandardizationBase<
          WeightStandardizationPass> {
  using WeightStandardizationBase::WeightStandardizationBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (nLastLayersIgnore < 0) {
      module.emitError("composer-weight-standardization: "
                       "n-last-layers-ignore must be >= 0, got ")
          << static_cast<int64_t>(nLastLayersIgnore);
      return signalPassFailure();
    }
    // Counted over every convolution, standardized or not, so that a second
    // run leaves the same layers alone.
    llvm::SetVector<StringRef> layers = collectLayers(module);
    llvm::StringSet<> ignored;
    int64_t firstIgnored = std::max<int64_t>(
        static_cast<int64_t>(layers.size()) - nLastLayersIgnore, 0);
    for (StringRef layer : layers.getArrayRef().drop_front(firstIgnored))
      ignored.insert(layer);

    SiteReport report(module, getArgument());
    RewritePatternSet patterns(&getContext());
    patterns.add<StandardizeConvolution, StandardizeGenericConvolution>(
        &getContext(), ignored, report);
    applyPatternsOnce(module, std::move(patterns));
    report.emit("convolution weights standardized");
  }
};

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

/// The rank of the weight `op` standardizes: from its type, or from the
/// declaration of the parameter it reads; nullopt if neither says.
std::optional<int64_t> getWeightRank(StandardizeWeightOp op) {
  auto type = dyn_cast<TorchTensorType>(op.getWeight().getType());
  if (!type || !type.getHasRank()) {
    SymbolTableCollection symbolTables;
    type = getDeclaredStateType(op.getWeight(), symbolTables);
  }
  if (!type || !type.getHasRank())
    return std::nullopt;
  return type.getRank();
}

/// standardize_weight as aten, as Composer's _standardize_weights:
/// var, mean = var_mean(W, dims 1.., unbiased=False, keepdim=True);
/// (W - mean) / sqrt(var + eps). Where the rank is unknown, the same on
/// W.flatten(1), reshaped back like W.
struct StandardizeWeightToAten : OpConversionPattern<StandardizeWeightOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(StandardizeWeightOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AtenBuilder aten(rewriter, loc);
    auto tensorType = TorchTensorType::get(op.getContext());
    Value weight = adaptor.getWeight();
    std::optional<int64_t> rank = getWeightRank(op);
    if (!rank)
      weight = rewriter.create<FlattenOp>(loc, tensorType, weight,
                                          rewriter.getI64IntegerAttr(1),
                                          rewriter.getI64IntegerAttr(-1));
    SmallVector<int64_t> dims;
    for (int64_t dim = 1; dim < rank.value_or(2); ++dim)
      dims.push_back(dim);
    auto varMean = rewriter.create<GenericOp>(
        loc, TypeRange{tensorType, tensorType},
        getAtenKindName(AtenKind::var_mean),
        ValueRange{weight, aten.intList(dims), aten.boolean(false),
                   aten.boolean(true)},
        DictionaryAttr());
    Value var = varMean.getResult(0), mean = varMean.getResult(1);
    Value one = aten.integer(1);
    Value centered = aten.node(AtenKind::sub, {weight, mean, one}, tensorType);
    Value shifted = aten.node(
        AtenKind::add, {var, aten.floating(op.getEps().convertToDouble()), one},
        tensorType);
    Value std = aten.node(AtenKind::sqrt, {shifted}, tensorType);
    Type resultType = op.getResult().getType();
    Value standardized = aten.node(AtenKind::div, {centered, std},
                                   rank ? resultType : tensorType);
    if (!rank)
      standardized = aten.node(AtenKind::reshape_as,
                               {standardized, adaptor.getWeight()}, resultType);
    rewriter.replaceOp(op, standardized);
    return success();
  }
};

} // namespace

static void
populateWeightStandardizationToAtenPatterns(RewritePatternSet &patterns) {
  patterns.add<StandardizeWeightToAten>(patterns.getContext());
}

/// The runtime has no kernel for it: the aten composition, which autograd
/// differentiates, runs as is.
static void
populateWeightStandardizationToRuntimePatterns(RewritePatternSet &patterns) {
  populateWeightStandardizationToAtenPatterns(patterns);
}

static MethodLoweringRegistration weightStandardizationLowering(
    {"weight-standardization", populateWeightStandardizationToAtenPatterns,
     populateWeightStandardizationToRuntimePatterns});
