//===- ActivationCheckpointing.cpp - recompute units in backward ----------===//
//
// Activation checkpointing (Chen et al. 2016) as a rewrite: a unit, the ops
// of one module's forward (a transformer layer, a residual block), moves
// into the region of a composer.checkpoint, whose arguments are the tensors
// the unit takes. Reads of constants, module attributes and state the unit
// uses are cloned into the region, so it is isolated: the method the
// runtime lowering makes of it reads the model's state through `self`.
// Also the lowerings: to the runtime's composer::checkpoint
// (composer.checkpoint_call, which export makes a method and a call), and
// to aten, the unit computed in place.
//
//===----------------------------------------------------------------------===//

#include "ActivationCheckpointing.h"
#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/FormatVariadic.h"

namespace composer {
#define GEN_PASS_DEF_ACTIVATIONCHECKPOINTING
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

RecomputedRegionOp composer::outlineIntoCheckpoint(ModuleUnit &unit) {
  Operation *first = unit.ops.front(), *last = unit.ops.back();
  Location loc = NameLoc::get(StringAttr::get(last->getContext(), unit.path),
                              first->getLoc());
  OpBuilder builder(last->getContext());
  builder.setInsertionPointAfter(last);
  SmallVector<Value> preserved;
  for (GetParamOp read : unit.writtenBuffers)
    preserved.push_back(builder.create<GetParamOp>(
        read.getLoc(), read.getType(), read.getNameAttr()));
  SmallVector<Type> resultTypes;
  for (Value output : unit.outputs)
    resultTypes.push_back(output.getType());
  auto op = builder.create<CheckpointOp>(loc, resultTypes, unit.path,
                                         unit.inputs, preserved);
  Block *block = builder.createBlock(&op.getBody());
  for (Value input : unit.inputs)
    block->addArgument(input.getType(), input.getLoc());
  for (Operation *member : unit.ops)
    member->moveBefore(block, block->end());
  builder.setInsertionPointToStart(block);
  auto isInside = [&](OpOperand &use) {
    return op->isProperAncestor(use.getOwner());
  };
  for (Value read : unit.clonedReads) {
    read.replaceUsesWithIf(builder.clone(*read.getDefiningOp())->getResult(0),
                           isInside);
    if (read.use_empty())
      read.getDefiningOp()->erase();
  }
  for (auto [input, arg] : llvm::zip(unit.inputs, block->getArguments()))
    input.replaceUsesWithIf(arg, isInside);
  builder.setInsertionPointToEnd(block);
  builder.create<YieldOp>(loc, unit.outputs);
  for (auto [output, result] : llvm::zip(unit.outputs, op.getResults()))
    output.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !op->isAncestor(use.getOwner());
    });
  return cast<RecomputedRegionOp>(op.getOperation());
}

namespace {

/// Bytes of a tensor of `type`; nullopt if its shape or dtype is unknown.
std::optional<double> tensorBytes(Type type) {
  auto tensor = dyn_cast<TorchTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || !tensor.getDtype() ||
      !tensor.getDtype().isIntOrFloat())
    return std::nullopt;
  double elements = 1;
  for (int64_t size : tensor.getSizes())
    elements *= static_cast<double>(size);
  return elements *
         std::max<unsigned>(tensor.getDtype().getIntOrFloatBitWidth() / 8, 1);
}

/// What the ops nested in `ops` compute, in bytes: what autograd may keep
/// of them (an upper bound). Nullopt if a size is unknown.
std::optional<double> activationBytes(ArrayRef<Operation *> ops) {
  double total = 0;
  bool known = true;
  for (Operation *root : ops)
    root->walk([&](Operation *op) {
      if (isStateOrConstantRead(op) || isa<RecomputedRegionOp>(op))
        return;
      for (Type type : op->getResultTypes()) {
        if (!isa<TorchTensorType>(type))
          continue;
        std::optional<double> bytes = tensorBytes(type);
        known = known && bytes.has_value();
        total += bytes.value_or(0);
      }
    });
  return known ? std::optional<double>(total) : std::nullopt;
}

/// A unit with what it would keep for backward, unchecked and checkpointed
/// (estimates; nullopt where a size is unknown).
struct Candidate {
  ModuleUnit unit;
  std::optional<double> keptBytes, checkpointedBytes;

  explicit Candidate(ModuleUnit found) : unit(std::move(found)) {
    keptBytes = activationBytes(unit.ops);
    double inputBytes = 0;
    bool known = keptBytes.has_value();
    for (Value input : unit.inputs) {
      std::optional<double> bytes = tensorBytes(input.getType());
      known = known && bytes.has_value();
      inputBytes += bytes.value_or(0);
    }
    if (known)
      checkpointedBytes = inputBytes;
  }
};

std::string formatBytes(double bytes) {
  if (bytes < 1024.0 * 1024.0)
    return llvm::formatv("{0:F1} KiB", bytes / 1024.0).str();
  return llvm::formatv("{0:F1} MiB", bytes / (1024.0 * 1024.0)).str();
}

struct ActivationCheckpointingPass
    : public composer::impl::ActivationCheckpointingBase<
          ActivationCheckpointingPass> {
  using ActivationCheckpointingBase::ActivationCheckpointingBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&]() {
      signalPassFailure();
      return module.emitError("composer-activation-checkpointing: ");
    };
    if (every < 1) {
      fail() << "every must be at least 1, got " << static_cast<int64_t>(every);
      return;
    }
    if (!(memoryBudgetMb >= 0.0)) {
      fail() << "memory-budget-mb must be at least 0, got "
             << static_cast<double>(memoryBudgetMb);
      return;
    }
    if (memoryBudgetMb > 0.0 && every != 1) {
      fail() << "every and memory-budget-mb choose units each; give one";
      return;
    }
    FailureOr<UnitSelection> selection =
        UnitSelection::parse(units, module, getArgument());
    if (failed(selection))
      return signalPassFailure();
    func::FuncOp forward = lookupForward(module, getArgument());
    if (!forward)
      return signalPassFailure();
    Block &body = forward.getBody().front();

    SiteReport report(module, getArgument());
    SmallVector<std::string> paths = selection->findModules(forward, report);
    SymbolTableCollection symbolTables;
    std::vector<Candidate> found;
    for (const std::string &path : paths) {
      std::string reason;
      Operation *site = nullptr;
      FailureOr<ModuleUnit> unit =
          collectModuleUnit(body, path, symbolTables, reason, site);
      if (succeeded(unit))
        found.emplace_back(std::move(*unit));
      else if (!reason.empty())
        report.skip(site, "module '" + path + "': " + reason);
    }

    SmallVector<bool> chosen(found.size(), false);
    if (memoryBudgetMb > 0.0) {
      if (failed(chooseUnderBudget(forward, found, chosen)))
        return signalPassFailure();
    } else {
      for (size_t i = 0; i < found.size(); ++i)
        chosen[i] = i % every == 0;
    }
    for (auto [candidate, isChosen] : llvm::zip(found, chosen)) {
      const ModuleUnit &unit = candidate.unit;
      if (!isChosen) {
        report.skip(unit.ops.front(),
                    memoryBudgetMb > 0.0
                        ? "the budget holds without it"
                        : "not among every " + std::to_string(every));
        continue;
      }
      // Collected again: the units rewritten before it replaced values it
      // takes, and one whose ops interleave with it may now stand between
      // its ops as one op with effects.
      std::string reason;
      Operation *site = nullptr;
      FailureOr<ModuleUnit> current =
          collectModuleUnit(body, unit.path, symbolTables, reason, site);
      if (failed(current)) {
        report.skip(site, "module '" + unit.path + "': " + reason);
        continue;
      }
      report.match(outlineIntoCheckpoint(*current));
    }
    report.emit("units checkpointed");
  }

  /// Picks the units with the largest estimated savings until the
  /// estimated activations fit the budget, and says what it estimated.
  LogicalResult chooseUnderBudget(func::FuncOp forward,
                                  ArrayRef<Candidate> found,
                                  SmallVector<bool> &chosen) {
    SmallVector<Operation *> all;
    for (Operation &op : forward.getBody().front())
      all.push_back(&op);
    std::optional<double> total = activationBytes(all);
    const Candidate *unknown = llvm::find_if(found, [](const Candidate &unit) {
      return !unit.keptBytes || !unit.checkpointedBytes;
    });
    if (!total || unknown != found.end()) {
      // Said at the first result whose size is unknown.
      Location where = forward.getLoc();
      forward.walk([&](Operation *op) {
        if (isStateOrConstantRead(op) ||
            llvm::all_of(op->getResultTypes(), [](Type type) {
              return !isa<TorchTensorType>(type) || tensorBytes(type);
            }))
          return WalkResult::advance();
        where = op->getLoc();
        return WalkResult::interrupt();
      });
      emitError(where, "composer-activation-checkpointing: "
                       "memory-budget-mb needs every size known, and this "
                       "result's is not; refine the types from input specs "
                       "first (composer-opt --input-spec)");
      return failure();
    }
    SmallVector<size_t> order(found.size());
    for (size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    auto saving = [&](size_t i) {
      return *found[i].keptBytes - *found[i].checkpointedBytes;
    };
    llvm::stable_sort(
        order, [&](size_t a, size_t b) { return saving(a) > saving(b); });
    double budget = memoryBudgetMb * 1024.0 * 1024.0, estimate = *total;
    unsigned count = 0;
    for (size_t i : order) {
      if (estimate <= budget)
        break;
      if (saving(i) <= 0)
        continue;
      chosen[i] = true;
      estimate -= saving(i);
      ++count;
    }
    std::string message = "composer-activation-checkpointing: estimated "
                          "activations " +
                          formatBytes(*total) + ", " + formatBytes(estimate) +
                          " with " + std::to_string(count) +
                          " units checkpointed, budget " + formatBytes(budget);
    if (estimate > budget)
      emitWarning(forward.getLoc(), message + ": the budget cannot be met");
    else
      emitRemark(forward.getLoc(), message);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Lowerings
//===----------------------------------------------------------------------===//

/// The unit computed in place: the unchecked model, for stock PyTorch.
struct CheckpointToAten : OpConversionPattern<CheckpointOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CheckpointOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Said once per model: this form keeps every activation.
    auto forward = op->getParentOfType<func::FuncOp>();
    CheckpointOp first;
    forward.walk([&](CheckpointOp any) {
      if (!first)
        first = any;
    });
    if (first == op)
      emitWarning(op.getLoc(),
                  "checkpointed units lowered to aten run as unchecked code "
                  "and save no memory; lower to the runtime "
                  "(--lower-to=runtime) to recompute them");
    // Cloned rather than inlined: the conversion then has no block
    // arguments to replace by values other units' lowerings replace.
    Block &body = op.getBody().front();
    IRMapping mapping;
    mapping.map(body.getArguments(), adaptor.getInputs());
    for (Operation &nested : body.without_terminator())
      rewriter.clone(nested, mapping);
    SmallVector<Value> results;
    for (auto [value, result] :
         llvm::zip(cast<YieldOp>(body.getTerminator()).getValues(),
                   op.getResults())) {
      Value cloned = mapping.lookup(value);
      // The driver relaxed the results' types (lowerMethodOps) and gives
      // the refined ones back to what replaces them.
      if (cloned.getType() != result.getType())
        rewriter.modifyOpInPlace(cloned.getDefiningOp(),
                                 [&] { cloned.setType(result.getType()); });
      results.push_back(cloned);
    }
    rewriter.replaceOp(op, results);
    for (Value value : adaptor.getPreserved())
      if (Operation *read = value.getDefiningOp(); read && read->hasOneUse())
        rewriter.eraseOp(read);
    return success();
  }
};

/// The unit called through the runtime's composer::checkpoint.
struct CheckpointToRuntime : OpConversionPattern<CheckpointOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(CheckpointOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto call = rewriter.create<CheckpointCallOp>(
        op.getLoc(), op.getResultTypes(), op.getUnit(), adaptor.getInputs(),
        adaptor.getPreserved());
    rewriter.inlineRegionBefore(op.getBody(), call.getBody(),
                                call.getBody().end());
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

} // namespace

static void
populateActivationCheckpointingToAtenPatterns(RewritePatternSet &patterns) {
  patterns.add<CheckpointToAten>(patterns.getContext());
}

static void
populateActivationCheckpointingToRuntimePatterns(RewritePatternSet &patterns) {
  patterns.add<CheckpointToRuntime>(patterns.getContext());
}

static MethodLoweringRegistration activationCheckpointingLowering(
    {"activation-checkpointing", populateActivationCheckpointingToAtenPatterns,
     populateActivationCheckpointingToRuntimePatterns});
