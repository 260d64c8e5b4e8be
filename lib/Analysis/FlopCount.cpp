//===- FlopCount.cpp - FLOPs of one training step -------------------------===//

#include "composer/Analysis/FlopCount.h"
#include "composer/Analysis/Attention.h"
#include "composer/Dialect/Composer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace composer;

namespace {

/// Whether a value of `type` can carry a gradient: tensors and containers
/// of them, not TorchScript's scalars (sizes, flags).
bool canCarryGradient(Type type) {
  return !isa<IntType, TorchFloatType, BoolType, StrType, TorchNoneType,
              DeviceType, DtypeType>(type);
}

class Counter {
public:
  explicit Counter(func::FuncOp forward) {
    markGradients(forward.getBody().front());
    for (const AttentionSite &site : findAttentionSites(forward)) {
      attentionOps.insert(site.scoresProduct);
      attentionOps.insert(site.softmax);
      attentionOps.insert(site.valueProduct);
    }
  }

  void count(Block &block, double weight, FlopCounts &counts);

private:
  /// Marks the values that need a gradient, in program order.
  void markGradients(Block &block);
  bool needsGradient(Value value) const { return withGradient.contains(value); }
  bool isTrainableParameter(GetParamOp op);
  bool isAttention(Operation *op) const;
  void countOp(Operation *op, double weight, FlopCounts &counts);
  /// The probability a training step takes an if's then-region; nullopt
  /// when the condition is unknown.
  std::optional<double> thenProbability(Value condition);

  SymbolTableCollection symbolTables;
  llvm::DenseSet<Value> withGradient;
  /// The products and softmaxes of the function's attention sites.
  llvm::DenseSet<Operation *> attentionOps;
};

bool Counter::isTrainableParameter(GetParamOp op) {
  auto param =
      symbolTables.lookupNearestSymbolFrom<ParameterOp>(op, op.getNameAttr());
  return param && !param.getFrozen();
}

bool Counter::isAttention(Operation *op) const {
  if (attentionOps.contains(op))
    return true;
  const AtenKindInfo *kind = lookupAtenKind(op);
  return kind && kind->flopRule == FlopRule::Attention;
}

void Counter::markGradients(Block &block) {
  auto markIf = [&](Value value, bool needs) {
    if (needs && canCarryGradient(value.getType()))
      withGradient.insert(value);
  };
  auto anyNeeds = [&](ValueRange values) {
    return llvm::any_of(values, [&](Value v) { return needsGradient(v); });
  };
  for (Operation &op : block) {
    if (auto getParam = dyn_cast<GetParamOp>(op)) {
      markIf(getParam.getResult(), isTrainableParameter(getParam));
      continue;
    }
    if (isa<StopGradientOp>(op))
      continue;
    if (auto loop = dyn_cast<LoopOp>(op)) {
      Block &body = loop.getBody().front();
      // Arguments: the index, then the carried values.
      for (auto [arg, init] :
           llvm::zip(body.getArguments().drop_front(), loop.getInits()))
        markIf(arg, needsGradient(init));
      markGradients(body);
      auto yield = cast<YieldOp>(body.getTerminator());
      for (auto [result, init, next] :
           llvm::zip(loop.getResults(), loop.getInits(),
                     yield.getValues().drop_front()))
        markIf(result, needsGradient(init) || needsGradient(next));
      continue;
    }
    if (isa<RecomputedRegionOp>(op)) {
      Block &body = op.getRegion(0).front();
      for (auto [arg, input] : llvm::zip(body.getArguments(), op.getOperands()))
        markIf(arg, needsGradient(input));
      markGradients(body);
      auto yield = cast<YieldOp>(body.getTerminator());
      for (auto [result, value] : llvm::zip(op.getResults(), yield.getValues()))
        markIf(result, needsGradient(value));
      continue;
    }
    if (auto ifOp = dyn_cast<IfOp>(op)) {
      markGradients(ifOp.getThenRegion().front());
      markGradients(ifOp.getElseRegion().front());
      auto thenYield = cast<YieldOp>(ifOp.getThenRegion().front().back());
      auto elseYield = cast<YieldOp>(ifOp.getElseRegion().front().back());
      for (auto [result, a, b] : llvm::zip(
               ifOp.getResults(), thenYield.getValues(), elseYield.getValues()))
        markIf(result, needsGradient(a) || needsGradient(b));
      continue;
    }
    bool needs = anyNeeds(op.getOperands());
    for (Value result : op.getResults())
      markIf(result, needs);
  }
}

std::optional<double> Counter::thenProbability(Value condition) {
  Operation *def = condition.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto random = dyn_cast<RandomConditionOp>(def))
    return random.getProbabilityOfTrue();
  if (auto constant = dyn_cast<ConstantOp>(def))
    if (auto flag = dyn_cast<BoolAttr>(constant.getValue()))
      return flag.getValue() ? 1.0 : 0.0;
  // A training step runs with every module's training flag set.
  if (auto attr = dyn_cast<GetAttrOp>(def))
    if (attr.getPath() == "training" || attr.getPath().ends_with(".training"))
      return 1.0;
  if (auto generic = dyn_cast<GenericOp>(def))
    if (generic.isKind(AtenKind::not_operator) && generic.getNumOperands() == 1)
      if (std::optional<double> p = thenProbability(generic.getOperand(0)))
        return 1.0 - *p;
  return std::nullopt;
}

void Counter::countOp(Operation *op, double weight, FlopCounts &counts) {
  if (auto ifOp = dyn_cast<IfOp>(op)) {
    Block &thenBlock = ifOp.getThenRegion().front();
    Block &elseBlock = ifOp.getElseRegion().front();
    if (std::optional<double> p = thenProbability(ifOp.getCondition())) {
      if (*p > 0)
        count(thenBlock, weight * *p, counts);
      if (*p < 1)
        count(elseBlock, weight * (1 - *p), counts);
      return;
    }
    FlopCounts thenCounts, elseCounts;
    count(thenBlock, weight, thenCounts);
    count(elseBlock, weight, elseCounts);
    FlopCounts &costlier =
        thenCounts.total() >= elseCounts.total() ? thenCounts : elseCounts;
    counts.forward += costlier.forward;
    counts.backward += costlier.backward;
    counts.attention += costlier.attention;
    for (FlopCounts *branch : {&thenCounts, &elseCounts}) {
      counts.uncounted.append(branch->uncounted);
      counts.unknownTripCounts.append(branch->unknownTripCounts);
    }
    return;
  }
  if (auto loop = dyn_cast<LoopOp>(op)) {
    double trips = 1;
    auto constant = loop.getMaxTripCount().getDefiningOp<ConstantOp>();
    auto tripAttr =
        constant ? dyn_cast<IntegerAttr>(constant.getValue()) : IntegerAttr();
    if (tripAttr)
      trips = std::max<int64_t>(tripAttr.getInt(), 0);
    FlopCounts body;
    if (trips > 0)
      count(loop.getBody().front(), weight * trips, body);
    // A loop over sizes (scripted modules check their input's rank so)
    // computes nothing: its trip count does not matter.
    if (!tripAttr && (body.total() > 0 || !body.complete()))
      counts.unknownTripCounts.push_back(op);
    counts.forward += body.forward;
    counts.backward += body.backward;
    counts.attention += body.attention;
    counts.uncounted.append(body.uncounted);
    counts.unknownTripCounts.append(body.unknownTripCounts);
    return;
  }
  if (isa<RecomputedRegionOp>(op)) {
    // Backward runs the unit's forward again.
    FlopCounts unit;
    count(op->getRegion(0).front(), weight, unit);
    counts.forward += unit.forward;
    counts.backward += unit.backward + unit.forward;
    counts.attention += unit.attention;
    counts.uncounted.append(unit.uncounted);
    counts.unknownTripCounts.append(unit.unknownTripCounts);
    return;
  }
  auto costly = dyn_cast<FlopCountOpInterface>(op);
  if (!costly) {
    // Reads of state and constants cost nothing; an op that computes a
    // tensor from tensors without a cost model is not guessed at.
    auto isTensor = [](Type type) { return isa<TorchTensorType>(type); };
    if (llvm::any_of(op->getResultTypes(), isTensor) &&
        llvm::any_of(op->getOperandTypes(), isTensor))
      counts.uncounted.push_back(op);
    return;
  }
  FlopCost cost = costly.getFlopCost();
  if (!cost.forward) {
    counts.uncounted.push_back(op);
    return;
  }
  bool inputNeeds = false, weightNeeds = false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!needsGradient(operand.get()))
      continue;
    if (llvm::is_contained(cost.weightOperands, operand.getOperandNumber()))
      weightNeeds = true;
    else
      inputNeeds = true;
  }
  counts.forward += weight * double(*cost.forward);
  if (inputNeeds)
    counts.backward += weight * double(cost.inputGradient);
  if (weightNeeds)
    counts.backward += weight * double(cost.weightGradient);
  if (isAttention(op))
    counts.attention +=
        weight *
        (double(*cost.forward) + (inputNeeds ? double(cost.inputGradient) : 0) +
         (weightNeeds ? double(cost.weightGradient) : 0));
}

void Counter::count(Block &block, double weight, FlopCounts &counts) {
  for (Operation &op : block)
    countOp(&op, weight, counts);
}

} // namespace

FlopCounts composer::countFlops(ModuleOp module) {
  FlopCounts counts;
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.isExternal())
    return counts;
  Counter counter(forward);
  counter.count(forward.getBody().front(), 1.0, counts);
  return counts;
}

FlopCountAnalysis::FlopCountAnalysis(Operation *moduleOp)
    : counts(countFlops(cast<ModuleOp>(moduleOp))) {}
