//===- GLU.cpp - gated linear units in transformer feed-forwards ----------===//
//
// Gated linear units (Shazeer 2020) as METHODS.md states them and Composer's
// GatedLinearUnits computes them (BERTGatedFFOutput), on any feed-forward
// found in the graph: projection W1 -> activation -> [dropout] -> projection
// W2 becomes W2(dropout(act(Wg x) * (Wv x))). Projections are nn.Linear's
// or GPT-2's Conv1D (composer/Analysis/Projection.h); the activation is one
// op or arithmetic that writes one out, such as the tanh GELU
// (composer/Analysis/PointwiseFunction.h). A feed-forward that is already
// gated (SwiGLU) is skipped as such. The rewrite uses existing typed ops
// (linear, the activation's ops, mul), so it needs no lowering.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "Report.h"
#include "composer/Analysis/Matchers.h"
#include "composer/Analysis/PointwiseFunction.h"
#include "composer/Analysis/Projection.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace composer {
#define GEN_PASS_DEF_GATEDLINEARUNITS
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// Whether `value` is the output of a pointwise function of a projection:
/// act(W x), however each is written.
bool isActivatedProjection(Value value) {
  // The function's input is among the values it is computed from.
  SmallVector<Value> worklist = {value};
  llvm::SmallPtrSet<Value, 16> seen;
  while (!worklist.empty() && seen.size() < 64) {
    Value candidate = worklist.pop_back_val();
    if (!seen.insert(candidate).second)
      continue;
    if (matchProjection(candidate)) {
      std::optional<PointwiseFunction> act = matchPointwiseFunction(candidate);
      if (act && act->output == value)
        return true;
      continue;
    }
    if (Operation *def = candidate.getDefiningOp())
      for (Value operand : def->getOperands())
        if (isa<TorchTensorType>(operand.getType()))
          worklist.push_back(operand);
  }
  return false;
}

/// Whether `value` is a gated product act(W x) * (V x) (looking through a
/// dropout): what this pass writes, or a gated unit the model already has
/// (SwiGLU).
bool isGatedProduct(Value value) {
  if (auto dropout = value.getDefiningOp<DropoutOp>())
    value = dropout.getInput();
  Operation *mul = value.getDefiningOp();
  if (!mul || !(isa<MulOp>(mul) || isGenericOf(mul, {AtenKind::mul})) ||
      mul->getNumOperands() != 2)
    return false;
  auto isProjected = [](Value operand) {
    return matchProjection(operand).has_value();
  };
  Value lhs = mul->getOperand(0), rhs = mul->getOperand(1);
  return (isActivatedProjection(lhs) && isProjected(rhs)) ||
         (isProjected(lhs) && isActivatedProjection(rhs));
}

/// A feed-forward W2(dropout(act(W1 x))), anchored at W1's product, made
/// gated. W1 and W2 are projections in any form (nn.Linear, GPT-2's
/// Conv1D); the new projections are nn.Linear's.
struct GateFeedForward : RewritePattern {
  GateFeedForward(MLIRContext *ctx, bool gatedLayerBias, bool nonGatedLayerBias,
                  SymbolTableCollection &symbolTables, SiteReport &report)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        gatedLayerBias(gatedLayerBias), nonGatedLayerBias(nonGatedLayerBias),
        symbolTables(symbolTables), report(report) {}

  LogicalResult matchAndRewrite(Operation *product,
                                PatternRewriter &rewriter) const override {
    std::optional<Projection> up = matchProjectionAt(product);
    if (!up)
      return failure();
    // Sites are the projections an activation reads; other projections are
    // not feed-forwards and go unreported.
    Value hidden = up->result;
    PointwiseMismatch mismatch = PointwiseMismatch::None;
    std::optional<PointwiseFunction> act =
        matchPointwiseFunction(hidden, &mismatch);
    auto skip = [&](StringRef reason) {
      report.skip(product, reason);
      return failure();
    };
    if (!act) {
      if (mismatch == PointwiseMismatch::InputHasOtherUsers)
        return skip("the linear's result has other users");
      if (mismatch == PointwiseMismatch::IntermediateHasOtherUsers)
        return skip("the activation's result has other users");
      // An activation in another region is none of this block's functions.
      if (llvm::any_of(hidden.getUsers(), [&](Operation *user) {
            return isActivationOp(user) &&
                   user->getBlock() != product->getBlock();
          }))
        return skip("the activation is in another region");
      return failure();
    }
    Value activated = act->output;
    if (llvm::any_of(activated.getUsers(), [](Operation *user) {
          return (isa<MulOp>(user) || isGenericOf(user, {AtenKind::mul})) &&
                 isGatedProduct(user->getResult(0));
        }))
      return skip("already gated");
    // Composer's gated unit keeps the dropout between the product and W2.
    Value downInput = activated;
    if (activated.hasOneUse())
      if (auto dropout = dyn_cast<DropoutOp>(*activated.user_begin()))
        downInput = dropout.getResult();
    SmallVector<Projection> down = findProjectionsOf(downInput);
    if (down.size() != 1 || !down.front().readsAllOfInput()) {
      if (downInput != activated && !downInput.hasOneUse())
        return skip("the dropout's result has other users");
      if (downInput == activated && !down.empty())
        return skip("the activation's result has other users");
      return skip("not followed by a linear");
    }
    // A chain linear -> act -> linear -> act -> linear: the middle linear is
    // the first unit's W2, which keeps its weight.
    if (isGatedProduct(up->input))
      return skip("reads a gated unit's output");
    // Read as it is: Wg and Wv replace W1 with its declared type, which a
    // view of it (a cast) would not have.
    TorchTensorType weightType = getDeclaredStateType(up->weight, symbolTables);
    if (!up->weight.getDefiningOp<GetParamOp>() || !weightType ||
        !weightType.getHasRank() || weightType.getRank() != 2)
      return skip("the weight is not a 2-D parameter");

    MLIRContext *ctx = rewriter.getContext();
    ModuleOp module = product->getParentOfType<ModuleOp>();
    SymbolTable &moduleSymbols = symbolTables.getSymbolTable(module);
    std::string owner = *getStateOwnerPath(up->weight);
    Location loc = product->getLoc();
    rewriter.setInsertionPoint(act->ops.front());
    // One None for the bias-free projections: W1's own if it has no bias.
    Value none;
    if (isa<TorchNoneType>(up->bias.getType()))
      none = up->bias;
    auto getNone = [&] {
      if (!none)
        none = AtenBuilder(rewriter, loc).none();
      return none;
    };
    int64_t outFeatures = weightType.getSizes()[up->getOutFeaturesDim()];
    int64_t inFeatures = weightType.getSizes()[up->getInFeaturesDim()];
    // nn.Linear's layout, whatever W1's.
    auto linearWeightType = TorchTensorType::get(
        ctx, true, {outFeatures, inFeatures}, weightType.getDtype());
    auto weightInit = rewriter.getStringAttr(kLinearDefaultInit);
    auto biasInit = rewriter.getStringAttr(
        makeInitializer(kLinearDefaultInit, std::to_string(inFeatures)));
    auto biasType =
        TorchTensorType::get(ctx, true, {outFeatures}, weightType.getDtype());
    // Named as Composer's BERTGatedFFOutput names its layers, under W1.
    auto project = [&](StringRef layer, bool withBias) -> Value {
      auto declare = [&](StringRef name, TorchTensorType type, Attribute init) {
        return createState<ParameterOp>(
            rewriter, moduleSymbols, joinStatePath(owner, (layer + name).str()),
            type, init, loc);
      };
      Value bias = withBias ? Value() : getNone();
      Value weight = declare(".weight", linearWeightType, weightInit);
      if (withBias)
        bias = declare(".bias", biasType, biasInit);
      return rewriter.create<LinearOp>(loc, hidden.getType(), up->input, weight,
                                       bias);
    };
    // act(gated_layer(x)) * non_gated_layer(x), in Composer's order.
    Value gate = project("gated_layer", gatedLayerBias);
    IRMapping mapping;
    mapping.map(hidden, gate);
    for (Operation *op : act->ops)
      rewriter.clone(*op, mapping);
    Value value = project("non_gated_layer", nonGatedLayerBias);
    Location actLoc = activated.getLoc();
    Value gated =
        rewriter.create<MulOp>(actLoc, activated.getType(),
                               mapping.lookup(activated), value, UnitAttr());
    rewriter.replaceAllUsesWith(activated, gated);
    for (Operation *op : llvm::reverse(act->ops))
      rewriter.eraseOp(op);

    // W1 is no longer used: its ops and reads go, and its parameters stay
    // in the model, frozen, unless something else (a tied weight) still
    // reads them.
    SmallVector<Value> oldState = {up->weight, up->bias};
    for (Operation *op : llvm::reverse(up->ops))
      rewriter.eraseOp(op);
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
