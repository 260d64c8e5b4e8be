//===- ShardParams.cpp - gather each unit's parameters (ZeRO-3) -----------===//
//
// Fully sharded data parallelism as a rewrite (SimpleFSDP, 2024): the
// parameters are grouped into units, each unit is a composer.checkpoint,
// and the reads of a unit's parameters become the results of one
// composer.gather_unit at its start. The runtime keeps each unit's
// parameters as one flat buffer sharded over the ranks; the gather
// all-gathers it while the unit runs, in forward and again in backward's
// recomputation, and reduce-scatters the gradients into the shard. The
// parameters outside every unit form the root unit, gathered at the start
// of forward. Also the lowerings: to the runtime's composer::gather_unit,
// and to aten as the identity.
//
//===----------------------------------------------------------------------===//

#include "ActivationCheckpointing.h"
#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"

namespace composer {
#define GEN_PASS_DEF_SHARDPARAMS
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// The parameter reads in a unit, by parameter name in first-read order.
using ParameterReads = llvm::MapVector<StringAttr, SmallVector<GetParamOp>>;

/// A unit and the parameters it reads: a composer.checkpoint's region, or
/// for the root (no op) forward's body outside every checkpoint.
struct ShardUnit {
  RecomputedRegionOp op;
  ParameterReads reads;

  StringRef getPath() { return op ? op.getUnit() : StringRef(); }
};

bool isParameterRead(Operation *op, SymbolTableCollection &symbolTables) {
  auto read = dyn_cast<GetParamOp>(op);
  return read &&
         isa_and_nonnull<ParameterOp>(lookupStateDecl(read, symbolTables));
}

/// Records in `unit` the reads nested in `root` of parameters (not
/// buffers: they stay whole on every rank), but those in checkpoints when
/// `intoCheckpoints` is false.
void collectParameterReads(Operation *root, ShardUnit &unit,
                           SymbolTableCollection &symbolTables,
                           bool intoCheckpoints) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!intoCheckpoints && isa<RecomputedRegionOp>(op))
      return WalkResult::skip();
    if (isParameterRead(op, symbolTables))
      unit.reads[cast<GetParamOp>(op).getNameAttr().getAttr()].push_back(
          cast<GetParamOp>(op));
    return WalkResult::advance();
  });
}

/// Whether `unit` reads a parameter, from outside or nested in its ops.
bool readsParameters(const ModuleUnit &unit,
                     SymbolTableCollection &symbolTables) {
  if (llvm::any_of(unit.clonedReads, [&](Value read) {
        return isParameterRead(read.getDefiningOp(), symbolTables);
      }))
    return true;
  return llvm::any_of(unit.ops, [&](Operation *root) {
    return root
        ->walk([&](Operation *op) {
          return isParameterRead(op, symbolTables) ? WalkResult::interrupt()
                                                   : WalkResult::advance();
        })
        .wasInterrupted();
  });
}

/// Replaces `unit`'s parameter reads by the results of one gather at the
/// start of `block`.
GatherUnitOp gatherAtStart(ShardUnit &unit, Block &block, Location loc) {
  OpBuilder builder = OpBuilder::atBlockBegin(&block);
  SmallVector<Value> params;
  for (auto &[name, reads] : unit.reads)
    params.push_back(builder.create<GetParamOp>(reads.front().getLoc(),
                                                reads.front().getType(),
                                                FlatSymbolRefAttr::get(name)));
  auto gather = builder.create<GatherUnitOp>(
      loc, ValueRange(params).getTypes(), unit.getPath(), StringAttr(), params);
  for (auto [entry, gathered] : llvm::zip(unit.reads, gather.getResults()))
    for (GetParamOp read : entry.second) {
      read.getResult().replaceAllUsesWith(gathered);
      read.erase();
    }
  return gather;
}

struct ShardParamsPass
    : public composer::impl::ShardParamsBase<ShardParamsPass> {
  using ShardParamsBase::ShardParamsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<UnitSelection> selection =
        UnitSelection::parse(units, module, getArgument());
    if (failed(selection))
      return signalPassFailure();
    func::FuncOp original = lookupForward(module, getArgument());
    if (!original)
      return signalPassFailure();
    SiteReport report(module, getArgument());
    // Sharded already: applied twice equals once.
    if (!original.getOps<GatherUnitOp>().empty() ||
        llvm::any_of(original.getOps<RecomputedRegionOp>(),
                     [](RecomputedRegionOp op) {
                       return !op.getUnitBody().getOps<GatherUnitOp>().empty();
                     })) {
      report.emit("units sharded");
      return;
    }

    // A module whose parameters are also read outside it (tied weights)
    // cannot be a unit of its own: its parameters join the root unit, and
    // the rewrite starts again without it. Each round takes out at least
    // one module, so this ends.
    llvm::StringMap<std::string> shared;
    for (;;) {
      SiteReport attempt(module, getArgument());
      OwningOpRef<ModuleOp> copy = module.clone();
      FailureOr<bool> done = shardCopy(*copy, *selection, shared, attempt);
      if (failed(done))
        return signalPassFailure();
      if (!*done)
        continue;
      // The rewrite worked on a copy, taken only now that every parameter
      // belongs to one unit: a failed run leaves the model as it was.
      module.getBodyRegion().takeBody(copy->getBodyRegion());
      attempt.emit("units sharded");
      return;
    }
  }

  /// Outlines the selected modules of `copy` into units, but those in
  /// `shared`, and gathers each unit's parameters at its start. Returns
  /// false, having added to `shared`, when a parameter is read in two units.
  FailureOr<bool> shardCopy(ModuleOp copy, const UnitSelection &selection,
                            llvm::StringMap<std::string> &shared,
                            SiteReport &report) {
    func::FuncOp forward = lookupForward(copy, getArgument());
    Block &body = forward.getBody().front();
    SymbolTableCollection symbolTables;
    for (const std::string &path : selection.findModules(forward, report)) {
      std::string reason;
      Operation *site = nullptr;
      FailureOr<ModuleUnit> unit =
          collectModuleUnit(body, path, symbolTables, reason, site);
      if (failed(unit)) {
        if (!reason.empty())
          report.skip(site, "module '" + path + "': " + reason +
                                "; its parameters join the root unit");
        continue;
      }
      if (auto it = shared.find(path); it != shared.end()) {
        report.skip(unit->ops.front(),
                    "module '" + path + "' shares parameter '" + it->second +
                        "' with code outside it (tied weights); its "
                        "parameters join the root unit");
        continue;
      }
      // Recomputing a unit pays only for the weights it frees.
      if (!readsParameters(*unit, symbolTables)) {
        report.skip(unit->ops.front(),
                    "module '" + path + "' reads no parameters");
        continue;
      }
      outlineIntoCheckpoint(*unit);
    }

    // Every checkpoint is a unit, those of activation checkpointing too;
    // the root is first, as forward gathers it first.
    std::vector<ShardUnit> found(1);
    collectParameterReads(forward, found.front(), symbolTables,
                          /*intoCheckpoints=*/false);
    for (RecomputedRegionOp op : forward.getOps<RecomputedRegionOp>()) {
      ShardUnit &unit = found.emplace_back();
      unit.op = op;
      collectParameterReads(op, unit, symbolTables, /*intoCheckpoints=*/true);
    }
    FailureOr<bool> disjoint = checkDisjoint(found, shared);
    if (failed(disjoint) || !*disjoint)
      return disjoint;

    SmallVector<GatherUnitOp> gathers;
    for (ShardUnit &unit : found) {
      if (unit.reads.empty()) {
        if (unit.op)
          report.skip(unit.op, "module '" + unit.getPath().str() +
                                   "' reads no parameters");
        continue;
      }
      Block &block = unit.op ? unit.op.getUnitBody() : body;
      Location loc = unit.op ? unit.op.getLoc() : forward.getLoc();
      gathers.push_back(gatherAtStart(unit, block, loc));
      report.match(gathers.back());
    }
    if (prefetch)
      for (size_t i = 0; i + 1 < gathers.size(); ++i)
        gathers[i].setPrefetch(gathers[i + 1].getUnit());
    // Sharding the root alone shards no parameter while the step runs.
    if (gathers.size() == 1 && gathers.front().getUnit().empty())
      emitWarning(forward.getLoc(), getArgument())
          << ": no unit but the root was found, so every parameter is "
             "gathered for the whole step and only the gradients and the "
             "optimizer state stay sharded; name the units (units=...)";
    return true;
  }

  /// Whether every parameter is read in one unit only. A parameter read in
  /// two units puts the modules behind them (not the root) into `shared`;
  /// fails, at a read, when only the root and activation checkpointing's
  /// regions, which cannot be taken out, read it.
  FailureOr<bool> checkDisjoint(MutableArrayRef<ShardUnit> found,
                                llvm::StringMap<std::string> &shared) {
    llvm::DenseMap<StringAttr, ShardUnit *> owner;
    bool disjoint = true;
    for (ShardUnit &unit : found)
      for (auto &[name, reads] : unit.reads) {
        auto [it, inserted] = owner.try_emplace(name, &unit);
        if (inserted)
          continue;
        bool excluded = false;
        for (ShardUnit *sharing : {it->second, &unit})
          if (sharing->op && !sharing->getPath().empty() &&
              !shared.count(sharing->getPath()))
            excluded |=
                shared.try_emplace(sharing->getPath(), name.getValue().str())
                    .second;
        if (excluded) {
          disjoint = false;
          continue;
        }
        auto describe = [](ShardUnit unit) {
          return unit.op ? "unit '" + unit.getPath().str() + "'"
                         : std::string("the root unit");
        };
        emitError(reads.front().getLoc(), getArgument())
            << ": parameter '" << name.getValue() << "' is read by "
            << describe(*it->second) << " and " << describe(unit)
            << "; a parameter belongs to one unit: choose units that "
               "contain every read of it (units=...)";
        return failure();
      }
    return disjoint;
  }
};

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

/// The parameters as they are: one process holds them whole.
struct GatherUnitToAten : OpConversionPattern<GatherUnitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GatherUnitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The driver relaxed the results' types (lowerMethodOps), and gives the
    // refined ones back to what replaces them: the gather's own reads.
    for (auto [param, result] : llvm::zip(adaptor.getParams(), op.getResults()))
      if (param.getType() != result.getType()) {
        Operation *read = param.getDefiningOp();
        if (!read || !param.hasOneUse())
          return rewriter.notifyMatchFailure(op, "a parameter is no own read");
        Value value = param;
        Type type = result.getType();
        rewriter.modifyOpInPlace(read, [&] { value.setType(type); });
      }
    rewriter.replaceOp(op, adaptor.getParams());
    return success();
  }
};

/// composer::gather_unit(unit, prefetch, params) -> Tensor[], unpacked.
struct GatherUnitToRuntime : OpConversionPattern<GatherUnitOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GatherUnitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *context = op.getContext();
    Location loc = op.getLoc();
    auto str = StrType::get(context);
    auto tensorList = ListType::get(context, TorchTensorType::get(context));
    Value unit = rewriter.create<ConstantOp>(loc, str, op.getUnitAttr());
    Value next = rewriter.create<ConstantOp>(loc, str,
                                             op.getPrefetchAttr()
                                                 ? op.getPrefetchAttr()
                                                 : rewriter.getStringAttr(""));
    auto list = rewriter.create<GenericOp>(
        loc, TypeRange{tensorList}, "prim::ListConstruct", adaptor.getParams(),
        DictionaryAttr());
    auto call = rewriter.create<GenericOp>(
        loc, TypeRange{tensorList}, "composer::gather_unit",
        ValueRange{unit, next, list.getResult(0)}, DictionaryAttr());
    auto unpack =
        rewriter.create<GenericOp>(loc, op.getResultTypes(), "prim::ListUnpack",
                                   call->getResults(), DictionaryAttr());
    rewriter.replaceOp(op, unpack->getResults());
    return success();
  }
};

} // namespace

static void populateShardParamsToAtenPatterns(RewritePatternSet &patterns) {
  patterns.add<GatherUnitToAten>(patterns.getContext());
}

static void populateShardParamsToRuntimePatterns(RewritePatternSet &patterns) {
  patterns.add<GatherUnitToRuntime>(patterns.getContext());
}

static MethodLoweringRegistration
    shardParamsLowering({"shard-params", populateShardParamsToAtenPatterns,
                         populateShardParamsToRuntimePatterns});
