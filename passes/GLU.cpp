//===- GLU.cpp - gated linear units in transformer feed-forwards ----------===//
//
// Gated linear units (Shazeer 2020) as METHODS.md states them and Composer's
// GatedLinearUnits computes them (BERTGatedFFOutput), on any feed-forward
// found in the graph: linear W1 -> activation -> [dropout] -> linear W2
// becomes W2(dropout(act(Wg x) * (Wv x))). The rewrite uses existing typed
// ops (linear, the activation, mul), so it needs no lowering.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringSet.h"

namespace composer {
#define GEN_PASS_DEF_GATEDLINEARUNITS
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// The initializer export reads as "PyTorch's nn.Linear default" for a
/// weight (uniform in +-1/sqrt(fan_in), fan_in = size(1)); a bias names its
/// layer's fan-in after a colon.
constexpr llvm::StringLiteral kLinearDefaultInit = "linear_default";

/// Elementwise activations TorchScript may leave as generic nodes: their
/// tensor is operand 0, any other operands are scalars.
bool isGenericActivation(GenericOp op) {
  static const llvm::StringSet<> kinds = {
      "aten::relu",        "aten::relu_",       "aten::gelu",
      "aten::gelu_",       "aten::silu",        "aten::silu_",
      "aten::sigmoid",     "aten::sigmoid_",    "aten::tanh",
      "aten::tanh_",       "aten::hardswish",   "aten::hardswish_",
      "aten::mish",        "aten::mish_",       "aten::elu",
      "aten::elu_",        "aten::selu",        "aten::selu_",
      "aten::celu",        "aten::celu_",       "aten::leaky_relu",
      "aten::leaky_relu_", "aten::softplus",    "aten::relu6",
      "aten::relu6_",      "aten::hardtanh",    "aten::hardtanh_",
      "aten::hardsigmoid", "aten::hardsigmoid_"};
  if (!kinds.contains(op.getKind()) || op->getNumResults() != 1 ||
      op->getNumOperands() == 0)
    return false;
  return llvm::none_of(op->getOperands().drop_front(), [](Value operand) {
    return isa<TorchTensorType>(operand.getType());
  });
}

/// Whether `op` is an elementwise activation of its operand 0.
bool isActivation(Operation *op) {
  if (isa<ReluOp, GeluOp, SiluOp, SigmoidOp, HardswishOp>(op))
    return true;
  auto generic = dyn_cast<GenericOp>(op);
  return generic && isGenericActivation(generic);
}

/// Whether `value` is a gated product act(linear) * linear (looking through a
/// dropout): what this pass writes, or a gated unit the model already has.
bool isGatedProduct(Value value) {
  if (auto dropout = value.getDefiningOp<DropoutOp>())
    value = dropout.getInput();
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul)
    return false;
  auto isActivatedLinear = [](Value operand) {
    Operation *act = operand.getDefiningOp();
    return act && isActivation(act) &&
           act->getOperand(0).getDefiningOp<LinearOp>();
  };
  auto isLinear = [](Value operand) {
    return static_cast<bool>(operand.getDefiningOp<LinearOp>());
  };
  return (isActivatedLinear(mul.getSelf()) && isLinear(mul.getOther())) ||
         (isLinear(mul.getSelf()) && isActivatedLinear(mul.getOther()));
}

/// A feed-forward W2(dropout(act(W1 x))), anchored at W1, made gated.
struct GateFeedForward : OpRewritePattern<LinearOp> {
  GateFeedForward(MLIRContext *ctx, bool gatedLayerBias, bool nonGatedLayerBias,
                  SymbolTableCollection &symbolTables, SiteReport &report)
      : OpRewritePattern(ctx), gatedLayerBias(gatedLayerBias),
        nonGatedLayerBias(nonGatedLayerBias), symbolTables(symbolTables),
        report(report) {}

  LogicalResult matchAndRewrite(LinearOp up,
                                PatternRewriter &rewriter) const override {
    // Sites are the linears an activation reads; other linears are not
    // feed-forwards and go unreported.
    Value hidden = up.getResult();
    auto actUse = llvm::find_if(hidden.getUses(), [](OpOperand &use) {
      return use.getOperandNumber() == 0 && isActivation(use.getOwner());
    });
    if (actUse == hidden.getUses().end())
      return failure();
    Operation *act = actUse->getOwner();
    auto skip = [&](StringRef reason) {
      report.skip(up, reason);
      return failure();
    };
    if (!hidden.hasOneUse())
      return skip("the linear's result has other users");
    if (act->getBlock() != up->getBlock())
      return skip("the activation is in another region");
    Value activated = act->getResult(0);
    if (activated.hasOneUse()) {
      Operation *next = *activated.user_begin();
      if (isa<MulOp>(next) && isGatedProduct(next->getResult(0)))
        return skip("already gated");
    }
    if (!activated.hasOneUse())
      return skip("the activation's result has other users");
    // Composer's gated unit keeps the dropout between the product and W2.
    Value product = activated;
    if (auto dropout = dyn_cast<DropoutOp>(*activated.user_begin())) {
      product = dropout.getResult();
      if (!product.hasOneUse())
        return skip("the dropout's result has other users");
    }
    OpOperand &downUse = *product.use_begin();
    if (!product.hasOneUse() || !isa<LinearOp>(downUse.getOwner()) ||
        downUse.getOperandNumber() != 0)
      return skip("not followed by a linear");
    // A chain linear -> act -> linear -> act -> linear: the middle linear is
    // the first unit's W2, which keeps its weight.
    if (isGatedProduct(up.getInput()))
      return skip("reads a gated unit's output");
    // Read as it is: Wg and Wv replace W1 with its declared type, which a
    // view of it (a cast) would not have.
    TorchTensorType weightType =
        getDeclaredStateType(up.getWeight(), symbolTables);
    if (!up.getWeight().getDefiningOp<GetParamOp>() || !weightType ||
        !weightType.getHasRank() || weightType.getRank() != 2)
      return skip("the weight is not a 2-D parameter");

    MLIRContext *ctx = rewriter.getContext();
    ModuleOp module = up->getParentOfType<ModuleOp>();
    SymbolTable &moduleSymbols = symbolTables.getSymbolTable(module);
    std::string owner = *getStateOwnerPath(up.getWeight());
    Location loc = up.getLoc();
    rewriter.setInsertionPoint(act);
    // One None for the bias-free projections: W1's own if it has no bias.
    Value none;
    if (isa<TorchNoneType>(up.getBias().getType()))
      none = up.getBias();
    auto getNone = [&] {
      if (!none)
        none = AtenBuilder(rewriter, loc).none();
      return none;
    };
    auto weightInit = rewriter.getStringAttr(kLinearDefaultInit);
    auto biasInit = rewriter.getStringAttr(
        (Twine(kLinearDefaultInit) + ":" + Twine(weightType.getSizes()[1]))
            .str());
    auto biasType = TorchTensorType::get(ctx, true, {weightType.getSizes()[0]},
                                         weightType.getDtype());
    // Named as Composer's BERTGatedFFOutput names its layers, under W1.
    auto project = [&](StringRef layer, bool withBias) -> Value {
      auto declare = [&](StringRef name, TorchTensorType type, Attribute init) {
        return createState<ParameterOp>(
            rewriter, moduleSymbols, joinStatePath(owner, (layer + name).str()),
            type, init, loc);
      };
      Value bias = withBias ? Value() : getNone();
      Value weight = declare(".weight", weightType, weightInit);
      if (withBias)
        bias = declare(".bias", biasType, biasInit);
      return rewriter.create<LinearOp>(loc, hidden.getType(), up.getInput(),
                                       weight, bias);
    };
    // act(gated_layer(x)) * non_gated_layer(x), in Composer's order.
    Value gate = project("gated_layer", gatedLayerBias);
    Operation *gateAct = rewriter.clone(*act);
    gateAct->setOperand(0, gate);
    Value value = project("non_gated_layer", nonGatedLayerBias);
    Value gated =
        rewriter.create<MulOp>(act->getLoc(), activated.getType(),
                               gateAct->getResult(0), value, UnitAttr());
    rewriter.replaceAllUsesWith(activated, gated);
    rewriter.eraseOp(act);

    // W1 is no longer used: its reads go, and its parameters stay in the
    // model, frozen, unless something else (a tied weight) still reads them.
    SmallVector<Value> oldState = {up.getWeight(), up.getBias()};
    rewriter.eraseOp(up);
    for (Value state : oldState) {
      auto read = state.getDefiningOp<GetParamOp>();
      if (!read || !read->use_empty())
        continue;
      auto decl =
          dyn_cast_or_null<ParameterOp>(lookupStateDecl(read, symbolTables));
      rewriter.eraseOp(read);
      if (decl && SymbolTable::symbolKnownUseEmpty(decl, module))
        rewriter.modifyOpInPlace(decl, [&] { decl.setFrozen(true); });
    }
    report.match(gated.getDefiningOp());
    return success();
  }

  bool gatedLayerBias;
  bool nonGatedLayerBias;
  SymbolTableCollection &symbolTables;
  SiteReport &report;
};

struct GatedLinearUnitsPass
    : public composer::impl::GatedLinearUnitsBase<GatedLinearUnitsPass> {
  using GatedLinearUnitsBase::GatedLinearUnitsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbolTables;
    SiteReport report(module, getArgument());
    RewritePatternSet patterns(&getContext());
    patterns.add<GateFeedForward>(&getContext(), gatedLayerBias,
                                  nonGatedLayerBias, symbolTables, report);
    applyPatternsOnce(module, std::move(patterns));
    report.emit("feed-forwards gated");
  }
};

} // namespace
