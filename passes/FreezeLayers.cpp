//===- FreezeLayers.cpp - freeze the first layers -------------------------===//
//
// The static half of layer freezing (METHODS.md): the runtime schedules how
// many layers are frozen; this pass freezes a given prefix and cuts the
// gradient at its frontier.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace composer {
#define GEN_PASS_DEF_FREEZELAYERS
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// Which parameters a value is computed from.
struct Dependence {
  bool frozen = false;
  bool trainable = false;
  bool onlyFrozen() const { return frozen && !trainable; }
  void merge(Dependence other) {
    frozen |= other.frozen;
    trainable |= other.trainable;
  }
};

struct FreezeLayersPass
    : public composer::impl::FreezeLayersBase<FreezeLayersPass> {
  using FreezeLayersBase::FreezeLayersBase;

  void runOnOperation() override;
};

/// The parameter `read` reads, or null (a buffer).
ParameterOp lookupParameter(GetParamOp read,
                            SymbolTableCollection &symbolTables) {
  return dyn_cast_or_null<ParameterOp>(lookupStateDecl(read, symbolTables));
}

/// The modules owning parameters, in the order @forward first reads them.
SmallVector<std::string>
layersInForwardOrder(func::FuncOp forward,
                     SymbolTableCollection &symbolTables) {
  SmallVector<std::string> layers;
  llvm::StringSet<> seen;
  forward.walk([&](GetParamOp read) {
    if (!lookupParameter(read, symbolTables))
      return;
    std::string owner = *getStateOwnerPath(read.getResult());
    if (seen.insert(owner).second)
      layers.push_back(owner);
  });
  return layers;
}

void FreezeLayersPass::runOnOperation() {
  SymbolTableCollection symbolTables;
  ModuleOp module = getOperation();
  SiteReport report(module, getArgument());
  func::FuncOp forward = lookupForward(module, getArgument());
  if (!forward)
    return signalPassFailure();
  SmallVector<std::string> layers = layersInForwardOrder(forward, symbolTables);
  int64_t count = numLayers;
  if (!upTo.empty()) {
    auto it = llvm::find(layers, upTo.getValue());
    if (it == layers.end()) {
      module.emitError("composer-freeze-layers: no layer '")
          << upTo.getValue() << "' (layers are modules with parameters, e.g. '"
          << (layers.empty() ? std::string() : layers.front()) << "')";
      return signalPassFailure();
    }
    count = std::distance(layers.begin(), it) + 1;
  }
  if (count < 0) {
    module.emitError("composer-freeze-layers: num-layers must be >= 0");
    return signalPassFailure();
  }
  // The last layer always trains.
  int64_t limit = layers.empty() ? 0 : int64_t(layers.size()) - 1;
  if (count > limit) {
    emitWarning(module.getLoc(), "composer-freeze-layers: freezing ")
        << limit << " of " << layers.size() << " layers, not " << count
        << ": the last layer always trains";
    count = limit;
  }
  llvm::StringSet<> frozenLayers;
  for (int64_t i = 0; i < count; ++i)
    frozenLayers.insert(layers[i]);

  // Freeze the parameters.
  for (ParameterOp param : module.getOps<ParameterOp>()) {
    if (frozenLayers.contains(getStateOwner(param.getSymName()))) {
      param.setFrozen(true);
      report.match(param);
    }
  }

  // Cut every edge from a value computed only from frozen parameters into
  // an op that is not. Ops with regions count as one unit.
  llvm::DenseMap<Value, Dependence> dependence;
  auto dependenceOf = [&](Value value) {
    auto it = dependence.find(value);
    return it == dependence.end() ? Dependence() : it->second;
  };
  llvm::DenseMap<Value, Value> cut;
  Block &body = forward.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(body)) {
    Dependence dep;
    if (auto read = dyn_cast<GetParamOp>(op)) {
      if (ParameterOp param = lookupParameter(read, symbolTables)) {
        bool isFrozen = param.getFrozen();
        dep.frozen = isFrozen;
        dep.trainable = !isFrozen;
      }
    } else if (isa<StopGradientOp>(op)) {
      // Autograd sees nothing behind a stop_gradient.
    } else {
      // Everything the op (and its regions) reads from outside.
      op.walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          dep.merge(dependenceOf(operand));
        if (auto read = dyn_cast<GetParamOp>(inner))
          if (ParameterOp param = lookupParameter(read, symbolTables))
            dep.merge(Dependence{param.getFrozen(), !param.getFrozen()});
      });
    }
    for (Value result : op.getResults())
      dependence[result] = dep;
    if (dep.onlyFrozen() || isa<func::ReturnOp>(op) || isa<StopGradientOp>(op))
      continue;
    op.walk([&](Operation *inner) {
      for (OpOperand &use : inner->getOpOperands()) {
        Value value = use.get();
        if (!isa<TorchTensorType>(value.getType()) ||
            !dependenceOf(value).onlyFrozen())
          continue;
        Value &stopped = cut[value];
        if (!stopped) {
          OpBuilder builder(&getContext());
          builder.setInsertionPointAfterValue(value);
          stopped = builder.create<StopGradientOp>(value.getLoc(),
                                                   value.getType(), value);
          dependence[stopped] = Dependence();
        }
        use.set(stopped);
      }
    });
  }

  // Export records these on the model as the attributes the runtime reads,
  // kLayersAttrName and kFrozenLayersAttrName.
  Builder builder(&getContext());
  SmallVector<Attribute> layerNames;
  for (const std::string &layer : layers)
    layerNames.push_back(builder.getStringAttr(layer));
  module->setAttr("composer.layers", builder.getArrayAttr(layerNames));
  module->setAttr("composer.frozen_layers", builder.getI64IntegerAttr(count));
  report.emit("parameters frozen");
  if (count)
    emitRemark(module.getLoc(), "composer-freeze-layers: ")
        << count << " of " << layers.size() << " layers frozen, " << cut.size()
        << " frontier value(s) cut from autograd";
}

} // namespace
