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
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/IntEqClasses.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace composer {
#define GEN_PASS_DEF_FREEZELAYERS
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

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

//===----------------------------------------------------------------------===//
// Layer order
//===----------------------------------------------------------------------===//

/// Orders layers as Composer does (module order): by first call, with
/// layers that no path orders (reached on different branches of one
/// composer.if) in definition order, the declaration order of their first
/// parameter (state_dict order).
class LayerOrder {
public:
  LayerOrder(ModuleOp module, SymbolTableCollection &symbolTables)
      : symbolTables(symbolTables) {
    for (ParameterOp param : module.getOps<ParameterOp>())
      definitionIndex.try_emplace(getStateOwner(param.getSymName()),
                                  definitionIndex.size());
  }

  /// The layers `block` (and the regions in it) reads parameters of.
  SmallVector<StringRef> inBlock(Block &block) {
    SmallVector<StringRef> order;
    for (Operation &op : block) {
      if (auto read = dyn_cast<GetParamOp>(op)) {
        if (ParameterOp param = lookupParameter(read, symbolTables))
          order.push_back(getStateOwner(param.getSymName()));
        continue;
      }
      // The regions of an op are alternatives (the branches of an if) or
      // one body: either way, no region runs before another.
      SmallVector<SmallVector<StringRef>> alternatives;
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          alternatives.push_back(inBlock(nested));
      llvm::append_range(order, merge(alternatives));
    }
    return deduplicated(order);
  }

private:
  static SmallVector<StringRef> deduplicated(ArrayRef<StringRef> order) {
    SmallVector<StringRef> unique;
    llvm::StringSet<> seen;
    for (StringRef layer : order)
      if (seen.insert(layer).second)
        unique.push_back(layer);
    return unique;
  }

  /// One order respecting each of `orders` (without duplicates): the next
  /// layer is, among those no order still has anything before, the first
  /// defined; if orders disagree (a cycle), the first defined of their
  /// heads.
  SmallVector<StringRef> merge(ArrayRef<SmallVector<StringRef>> orders) {
    if (orders.size() == 1)
      return orders.front();
    SmallVector<StringRef> merged;
    llvm::StringSet<> emitted;
    SmallVector<size_t> next(orders.size(), 0);
    // The first layer of orders[i] not yet merged (the root module's is
    // ""), or nullopt.
    auto head = [&](size_t i) -> std::optional<StringRef> {
      while (next[i] < orders[i].size() && emitted.contains(orders[i][next[i]]))
        ++next[i];
      if (next[i] == orders[i].size())
        return std::nullopt;
      return orders[i][next[i]];
    };
    auto ready = [&](StringRef layer) {
      for (size_t i = 0; i < orders.size(); ++i)
        if (head(i) != layer &&
            llvm::is_contained(ArrayRef(orders[i]).drop_front(next[i]), layer))
          return false;
      return true;
    };
    while (true) {
      std::optional<StringRef> first, firstReady;
      for (size_t i = 0; i < orders.size(); ++i) {
        std::optional<StringRef> layer = head(i);
        if (!layer)
          continue;
        if (!first || definedBefore(*layer, *first))
          first = layer;
        if (ready(*layer) &&
            (!firstReady || definedBefore(*layer, *firstReady)))
          firstReady = layer;
      }
      if (!first)
        return merged;
      StringRef chosen = firstReady ? *firstReady : *first;
      emitted.insert(chosen);
      merged.push_back(chosen);
    }
  }

  bool definedBefore(StringRef a, StringRef b) const {
    return definitionIndex.lookup(a) < definitionIndex.lookup(b);
  }

  SymbolTableCollection &symbolTables;
  llvm::StringMap<unsigned> definitionIndex;
};

//===----------------------------------------------------------------------===//
// Dependence on parameters
//===----------------------------------------------------------------------===//

/// Which parameters a value's data may come from.
struct Dependence {
  bool frozen = false;
  bool trainable = false;
  bool onlyFrozen() const { return frozen && !trainable; }
  /// Returns whether this changed.
  bool merge(Dependence other) {
    Dependence before = *this;
    frozen |= other.frozen;
    trainable |= other.trainable;
    return frozen != before.frozen || trainable != before.trainable;
  }
};

/// Whether values of `type` are plain data that cannot hold or alias a
/// tensor.
bool isScalarType(Type type) {
  return isa<IntType, TorchFloatType, BoolType, StrType, TorchNoneType,
             DeviceType, DtypeType, NumberType>(type);
}

/// What each value of @forward may be computed from, flow-insensitively: a
/// value's dependence is what it is computed from, plus every in-place
/// write to anything that may share its data (views, in-place results, a
/// list and what is read from or appended to it, values carried through
/// regions: one class). So a value that is only frozen holds nothing
/// derived from a trainable parameter at any point, wherever it is used,
/// and cutting its gradient loses none. What a list was built from joins
/// the list's class only if what is read from it may be written in place:
/// appending to DenseNet's feature list writes none of the features in it.
class DependenceAnalysis {
public:
  DependenceAnalysis(func::FuncOp forward, SymbolTableCollection &symbolTables)
      : symbolTables(symbolTables) {
    forward.walk([&](Operation *op) { joinAliases(op); });
    joinWrittenElements();
    classes.compress();
    computed.resize(index.size());
    written.resize(classes.getNumClasses());
    // Dependence only grows, two bits per value: a few sweeps reach the
    // fixpoint (writes after reads, loop back edges).
    bool changed = true;
    while (changed) {
      changed = false;
      forward.walk([&](Operation *op) { changed |= propagate(op); });
    }
  }

  Dependence of(Value value) const {
    auto it = index.find(value);
    if (it == index.end())
      return {};
    Dependence dep = computed[it->second];
    dep.merge(written[classes[it->second]]);
    return dep;
  }

  /// The op's operands, results and, for a parameter read, the parameter.
  Dependence ofOp(Operation *op) const {
    Dependence dep = readDependence(op);
    for (Value operand : op->getOperands())
      dep.merge(of(operand));
    for (Value result : op->getResults())
      dep.merge(of(result));
    return dep;
  }

private:
  unsigned indexOf(Value value) {
    auto [it, inserted] = index.try_emplace(value, index.size());
    if (inserted)
      classes.grow(index.size());
    return it->second;
  }
  void join(Value a, Value b) {
    if (isScalarType(a.getType()) || isScalarType(b.getType()))
      return;
    classes.join(indexOf(a), indexOf(b));
  }

  static bool isElementStore(GenericOp op) {
    return op.getKind() == "prim::ListConstruct" ||
           op.getKind() == "prim::TupleConstruct";
  }

  /// The values `op` may write in place.
  static SmallVector<Value> writtenOperands(Operation *op) {
    SmallVector<Value> values;
    if (auto generic = dyn_cast<GenericOp>(op)) {
      if (isElementStore(generic))
        return values;
      // Nodes that write a tensor are named so (aten::add_, aten::copy_);
      // any may write a list or other container it takes (aten::append).
      StringRef kind = generic.getKind();
      bool writesTensors = kind.ends_with("_") && !kind.ends_with("__");
      for (Value operand : op->getOperands())
        if (!isScalarType(operand.getType()) &&
            (writesTensors || !isa<TorchTensorType>(operand.getType())))
          values.push_back(operand);
      return values;
    }
    // A typed op writes in place only what it declares.
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
      SmallVector<MemoryEffects::EffectInstance> writes;
      effects.getEffects<MemoryEffects::Write>(writes);
      for (const MemoryEffects::EffectInstance &write : writes)
        if (Value value = write.getValue())
          values.push_back(value);
    }
    return values;
  }

  void joinAliases(Operation *op) {
    forEachDefinedValue(op, [&](Value value) { indexOf(value); });
    for (Value value : writtenOperands(op))
      if (isa<TorchTensorType>(value.getType()))
        tensorWrites.push_back(value);
    if (isa<GetParamOp, StopGradientOp>(op))
      return;
    if (isa<IfOp, LoopOp>(op)) {
      forEachCarried(op, [&](Value from, Value to) { join(from, to); });
      return;
    }
    if (auto generic = dyn_cast<GenericOp>(op)) {
      if (isElementStore(generic)) {
        for (Value element : op->getOperands())
          if (!isScalarType(element.getType()))
            elements.push_back({op->getResult(0), element});
        return;
      }
      // A node of unknown semantics may store any operand into another
      // (append), return a view or an element of one.
      SmallVector<Value> values(op->getOperands());
      llvm::append_range(values, op->getResults());
      for (Value value : values)
        join(values.front(), value);
      return;
    }
    // A typed op's result may be what it writes, or a view of its one
    // tensor operand (view, reshape, dropout in eval, ...).
    SmallVector<Value> aliased = writtenOperands(op);
    auto nonScalars = llvm::make_filter_range(
        op->getOperands(), [](Value v) { return !isScalarType(v.getType()); });
    if (llvm::hasSingleElement(nonScalars) &&
        isa<TorchTensorType>((*nonScalars.begin()).getType()))
      aliased.push_back(*nonScalars.begin());
    for (Value value : aliased)
      for (Value result : op->getResults())
        join(value, result);
  }

  /// Calls `fn(from, to)` for each value a composer.if or composer.loop
  /// passes on: what its regions yield (and a loop's inits) to its results
  /// and to a loop's carried block arguments.
  static void forEachCarried(Operation *op,
                             function_ref<void(Value, Value)> fn) {
    auto loop = dyn_cast<LoopOp>(op);
    for (Region &region : op->getRegions()) {
      for (Block &block : region) {
        auto yield = dyn_cast<YieldOp>(block.getTerminator());
        if (!yield)
          continue;
        // A loop yields its condition first, then the carried values, which
        // its block arguments after the index receive.
        ValueRange carried = yield.getValues().drop_front(loop ? 1 : 0);
        for (auto [value, result] : llvm::zip(carried, op->getResults()))
          fn(value, result);
        if (!loop)
          continue;
        for (auto [value, arg] :
             llvm::zip(carried, block.getArguments().drop_front()))
          fn(value, arg);
        for (auto [init, arg] :
             llvm::zip(loop.getInits(), block.getArguments().drop_front()))
          fn(init, arg);
      }
    }
    if (loop)
      for (auto [init, result] : llvm::zip(loop.getInits(), op->getResults()))
        fn(init, result);
  }

  /// Joins each element stored in a list or tuple with it once anything
  /// read from it may be written in place, which writes the element.
  void joinWrittenElements() {
    bool changed = true;
    while (changed) {
      changed = false;
      llvm::DenseSet<unsigned> writtenClasses;
      for (Value value : tensorWrites)
        writtenClasses.insert(classes.findLeader(indexOf(value)));
      for (auto [container, element] : elements) {
        unsigned leader = classes.findLeader(indexOf(container));
        if (writtenClasses.contains(leader) &&
            leader != classes.findLeader(indexOf(element))) {
          classes.join(indexOf(container), indexOf(element));
          changed = true;
        }
      }
    }
  }

  Dependence readDependence(Operation *op) const {
    if (auto read = dyn_cast<GetParamOp>(op))
      if (ParameterOp param = lookupParameter(read, symbolTables))
        return Dependence{param.getFrozen(), !param.getFrozen()};
    return {};
  }

  bool propagate(Operation *op) {
    // Autograd sees nothing behind a stop_gradient.
    if (isa<StopGradientOp, YieldOp>(op))
      return false;
    bool changed = false;
    if (isa<IfOp, LoopOp>(op)) {
      forEachCarried(op, [&](Value from, Value to) {
        changed |= computed[index.lookup(to)].merge(of(from));
      });
      return changed;
    }
    Dependence dep = readDependence(op);
    for (Value operand : op->getOperands())
      dep.merge(of(operand));
    for (Value result : op->getResults())
      changed |= computed[index.lookup(result)].merge(dep);
    for (Value value : writtenOperands(op))
      changed |= written[classes[index.lookup(value)]].merge(dep);
    return changed;
  }

  SymbolTableCollection &symbolTables;
  llvm::DenseMap<Value, unsigned> index;
  llvm::IntEqClasses classes;
  /// Per value, what it is computed from.
  SmallVector<Dependence> computed;
  /// Per class, what is written into it in place.
  SmallVector<Dependence> written;
  /// Tensors written in place.
  SmallVector<Value> tensorWrites;
  /// (list or tuple, value stored in it when it was built).
  SmallVector<std::pair<Value, Value>> elements;
};

void FreezeLayersPass::runOnOperation() {
  SymbolTableCollection symbolTables;
  ModuleOp module = getOperation();
  SiteReport report(module, getArgument());
  func::FuncOp forward = lookupForward(module, getArgument());
  if (!forward)
    return signalPassFailure();
  SmallVector<StringRef> layers =
      LayerOrder(module, symbolTables).inBlock(forward.getBody().front());
  int64_t count = numLayers;
  if (!upTo.empty()) {
    auto it = llvm::find(layers, upTo.getValue());
    if (it == layers.end()) {
      module.emitError("composer-freeze-layers: no layer '")
          << upTo.getValue() << "' (layers are modules with parameters, e.g. '"
          << (layers.empty() ? StringRef() : layers.front()) << "')";
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

  // Cut every edge from a tensor computed only from frozen parameters into
  // an op that is not, at any depth.
  DependenceAnalysis dependence(forward, symbolTables);
  SmallVector<Operation *> consumers;
  forward.walk([&](Operation *op) {
    // Yields pass values on (their users are cut); a loop's inits would need
    // a cut before the loop, which nothing requires.
    if (!isa<StopGradientOp, YieldOp, func::ReturnOp, IfOp, LoopOp>(op) &&
        !dependence.ofOp(op).onlyFrozen())
      consumers.push_back(op);
  });
  llvm::DenseMap<Value, Value> cut;
  OpBuilder builder(&getContext());
  for (Operation *op : consumers) {
    for (OpOperand &use : op->getOpOperands()) {
      Value value = use.get();
      if (!isa<TorchTensorType>(value.getType()) ||
          value.getDefiningOp<StopGradientOp>() ||
          !dependence.of(value).onlyFrozen())
        continue;
      Value &stopped = cut[value];
      if (!stopped) {
        builder.setInsertionPointAfterValue(value);
        stopped = builder.create<StopGradientOp>(value.getLoc(),
                                                 value.getType(), value);
      }
      use.set(stopped);
    }
  }

  // Export records these on the model as the attributes the runtime reads,
  // kLayersAttrName and kFrozenLayersAttrName.
  SmallVector<Attribute> layerNames;
  for (StringRef layer : layers)
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
