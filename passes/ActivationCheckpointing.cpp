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

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Analysis/ResidualBlocks.h"
#include "composer/Passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/GlobPattern.h"

namespace composer {
#define GEN_PASS_DEF_ACTIVATIONCHECKPOINTING
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// Whether the module at `path` is `unit` or inside it.
bool isWithin(StringRef path, StringRef unit) {
  return path.starts_with(unit) &&
         (path.size() == unit.size() || path[unit.size()] == '.');
}

/// The longest dotted module path all of `ops` are within; empty if none.
std::string commonModulePath(ArrayRef<Operation *> ops) {
  std::optional<std::string> common;
  for (Operation *op : ops) {
    std::string path = getModulePath(op);
    if (!common) {
      common = path;
      continue;
    }
    while (!common->empty() && !isWithin(path, *common))
      common->resize(StringRef(*common).rfind('.') == StringRef::npos
                         ? 0
                         : StringRef(*common).rfind('.'));
  }
  return common.value_or("");
}

/// Reads of constants, module attributes and state: cloned into a unit
/// that uses them rather than passed to it.
bool isRead(Operation *op) {
  return isa<ConstantOp, GetAttrOp, GetParamOp>(op);
}

/// Whether `use` may write the tensor it uses: batch norm's running
/// statistics, an in-place op's first operand, a method op's buffers.
bool mayWrite(OpOperand &use) {
  Operation *user = use.getOwner();
  if (isa<BatchNormOp>(user))
    return true;
  if (use.getOperandNumber() == 0 &&
      (user->hasAttr("inplace") ||
       (isa<GenericOp>(user) && hasAtenTrait(user, AtenTrait::InPlace))))
    return true;
  if (isa<MethodOp>(user))
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(user))
      return effects.hasEffect<MemoryEffects::Write>();
  return false;
}

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
      if (isRead(op) || isa<RecomputedRegionOp>(op))
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

/// A unit as the pass will rewrite it.
struct Unit {
  std::string path;
  /// Its ops in forward's body, in order, but reads: those stay where they
  /// are (TorchScript pools one module's constants for all), and the unit
  /// uses clones.
  SmallVector<Operation *> ops;
  /// Tensors from outside, in first-use order.
  SmallVector<Value> inputs;
  /// Reads from outside, cloned into the region.
  SmallVector<Value> clonedReads;
  /// Its results used after it.
  SmallVector<Value> outputs;
  /// The buffers it may write.
  SmallVector<GetParamOp> writtenBuffers;
  /// Estimated bytes it keeps for backward unchecked, and checkpointed.
  std::optional<double> keptBytes, checkpointedBytes;
};

/// The unit of module `path` in `body`, or the reason it cannot be one
/// (and the op the reason is about in `site`); an empty reason for a unit
/// already checkpointed.
FailureOr<Unit> collectUnit(Block &body, StringRef path,
                            SymbolTableCollection &symbolTables,
                            std::string &reason, Operation *&site) {
  Unit unit;
  unit.path = path.str();
  Operation *first = nullptr, *last = nullptr;
  for (Operation &op : body.without_terminator())
    if (!isRead(&op) && isWithin(getModulePath(&op), path)) {
      first = first ? first : &op;
      last = &op;
    }
  if (!first)
    return failure();
  // Ops between them that no module owns (the importer knows no module for
  // some ops TorchScript makes, such as the ifs of a short-circuit `and`)
  // are the unit's too.
  for (Operation *op = first; op != last->getNextNode(); op = op->getNextNode())
    if (!isRead(op) &&
        (op == first || op == last || getModulePath(op).empty() ||
         isWithin(getModulePath(op), path)))
      unit.ops.push_back(op);
  site = unit.ops.front();
  if (llvm::any_of(unit.ops,
                   [](Operation *op) { return isa<RecomputedRegionOp>(op); })) {
    if (unit.ops.size() > 1)
      reason = "part of it is checkpointed already";
    return failure();
  }

  llvm::SmallPtrSet<Operation *, 32> members(unit.ops.begin(), unit.ops.end());
  llvm::DenseSet<Value> defined;
  // What the unit's ops and the ops nested in them define.
  for (Operation *op : unit.ops)
    op->walk([&](Operation *nested) {
      forEachDefinedValue(nested, [&](Value value) { defined.insert(value); });
    });
  // Ops of other modules between its ops run before it once it is one op:
  // they must be free of effects and compute nothing from it.
  for (Operation *op = unit.ops.front(); op != unit.ops.back();
       op = op->getNextNode()) {
    if (members.contains(op) || isRead(op))
      continue;
    bool readsUnit = false;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        readsUnit |= defined.contains(operand);
    });
    if (readsUnit || !isMemoryEffectFree(op)) {
      site = op;
      reason = "ops of module '" + getModulePath(op) + "' run between its ops";
      return failure();
    }
  }

  llvm::SetVector<Value> inputs, reads;
  for (Operation *member : unit.ops) {
    WalkResult walked = member->walk([&](Operation *nested) {
      if (isa<SetAttrOp>(nested)) {
        site = nested;
        reason = "it assigns a module attribute, which a rerun repeats";
        return WalkResult::interrupt();
      }
      for (Value operand : nested->getOperands()) {
        if (defined.contains(operand))
          continue;
        Operation *def = operand.getDefiningOp();
        if (def && isRead(def))
          reads.insert(operand);
        else if (isa<TorchTensorType>(operand.getType()))
          inputs.insert(operand);
        else {
          site = nested;
          reason = "it takes a value that is no tensor from outside";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return failure();
  }
  unit.inputs = inputs.takeVector();
  unit.clonedReads = reads.takeVector();
  // Backward reruns the unit on the inputs it saved, which must be as
  // forward found them.
  for (Value input : unit.inputs)
    for (OpOperand &use : input.getUses())
      if (members.contains(body.findAncestorOpInBlock(*use.getOwner())) &&
          mayWrite(use)) {
        site = use.getOwner();
        reason = "it writes an input in place";
        return failure();
      }

  for (Operation *member : unit.ops)
    for (Value result : member->getResults()) {
      bool usedAfter = llvm::any_of(result.getUsers(), [&](Operation *user) {
        return !members.contains(body.findAncestorOpInBlock(*user));
      });
      if (!usedAfter)
        continue;
      if (!isa<TorchTensorType>(result.getType())) {
        site = member;
        reason = "it gives a value that is no tensor to ops after it";
        return failure();
      }
      unit.outputs.push_back(result);
    }

  llvm::DenseSet<StringRef> seen;
  for (Operation *member : unit.ops)
    member->walk([&](Operation *nested) {
      for (OpOperand &use : nested->getOpOperands()) {
        auto read = use.get().getDefiningOp<GetParamOp>();
        if (read && mayWrite(use) &&
            isa_and_nonnull<BufferOp>(lookupStateDecl(read, symbolTables)) &&
            seen.insert(read.getName()).second)
          unit.writtenBuffers.push_back(read);
      }
    });

  unit.keptBytes = activationBytes(unit.ops);
  double inputBytes = 0;
  bool known = unit.keptBytes.has_value();
  for (Value input : unit.inputs) {
    std::optional<double> bytes = tensorBytes(input.getType());
    known = known && bytes.has_value();
    inputBytes += bytes.value_or(0);
  }
  if (known)
    unit.checkpointedBytes = inputBytes;
  return unit;
}

/// Moves `unit` into a composer.checkpoint after its last op.
CheckpointOp checkpoint(Unit &unit) {
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
  return op;
}

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
    SmallVector<llvm::GlobPattern> patterns;
    if (units != "blocks") {
      SmallVector<StringRef> texts;
      StringRef(units).split(texts, ',', -1, /*KeepEmpty=*/false);
      for (StringRef text : texts) {
        llvm::Expected<llvm::GlobPattern> pattern =
            llvm::GlobPattern::create(text.trim());
        if (!pattern) {
          fail() << "units: bad pattern '" << text.trim()
                 << "': " << llvm::toString(pattern.takeError());
          return;
        }
        patterns.push_back(std::move(*pattern));
      }
      if (patterns.empty()) {
        fail() << "units must be 'blocks' or glob patterns of module paths";
        return;
      }
    }
    func::FuncOp forward = lookupForward(module, getArgument());
    if (!forward)
      return signalPassFailure();
    Block &body = forward.getBody().front();

    SiteReport report(module, getArgument());
    SmallVector<std::string> paths = patterns.empty()
                                         ? findBlockModules(forward, report)
                                         : findMatchingModules(body, patterns);
    SymbolTableCollection symbolTables;
    std::vector<Unit> found;
    for (const std::string &path : paths) {
      std::string reason;
      Operation *site = nullptr;
      FailureOr<Unit> unit =
          collectUnit(body, path, symbolTables, reason, site);
      if (succeeded(unit))
        found.push_back(std::move(*unit));
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
    for (auto [unit, isChosen] : llvm::zip(found, chosen)) {
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
      FailureOr<Unit> current =
          collectUnit(body, unit.path, symbolTables, reason, site);
      if (failed(current)) {
        report.skip(site, "module '" + unit.path + "': " + reason);
        continue;
      }
      report.match(checkpoint(*current));
    }
    report.emit("units checkpointed");
  }

  /// The modules holding the residual blocks of `forward`, in order: the
  /// add's, or the branch's when the add is in the root.
  SmallVector<std::string> findBlockModules(func::FuncOp forward,
                                            SiteReport &report) {
    SmallVector<std::string> paths;
    forward.walk<WalkOrder::PreOrder>([&](AddOp add) {
      for (Operation *parent = add->getParentOp(); parent;
           parent = parent->getParentOp())
        if (isa<RecomputedRegionOp>(parent))
          return;
      std::string reason;
      FailureOr<ResidualBlock> block = matchResidualBlock(add, reason);
      if (failed(block))
        return;
      std::string path = getModulePath(add);
      if (path.empty())
        path = commonModulePath(block->branchOps);
      if (path.empty()) {
        report.skip(add, "the residual block is in no module of its own");
        return;
      }
      if (!llvm::is_contained(paths, path))
        paths.push_back(path);
    });
    return outermost(std::move(paths));
  }

  /// The modules that `patterns` match, in the order of their first op.
  SmallVector<std::string>
  findMatchingModules(Block &body, ArrayRef<llvm::GlobPattern> patterns) {
    SmallVector<std::string> paths;
    for (Operation &op : body.without_terminator()) {
      std::string path = getModulePath(&op);
      // The module and each module it is in.
      for (size_t end = 0; end != std::string::npos && !path.empty();) {
        end = path.find('.', end + 1);
        std::string prefix = path.substr(0, end);
        if (llvm::any_of(patterns,
                         [&](const llvm::GlobPattern &pattern) {
                           return pattern.match(prefix);
                         }) &&
            !llvm::is_contained(paths, prefix))
          paths.push_back(prefix);
      }
    }
    return outermost(std::move(paths));
  }

  /// `paths` without those inside another of them.
  static SmallVector<std::string> outermost(SmallVector<std::string> paths) {
    SmallVector<std::string> result;
    for (const std::string &path : paths)
      if (llvm::none_of(paths, [&](const std::string &other) {
            return other != path && isWithin(path, other);
          }))
        result.push_back(path);
    return result;
  }

  /// Picks the units with the largest estimated savings until the
  /// estimated activations fit the budget, and says what it estimated.
  LogicalResult chooseUnderBudget(func::FuncOp forward, ArrayRef<Unit> found,
                                  SmallVector<bool> &chosen) {
    SmallVector<Operation *> all;
    for (Operation &op : forward.getBody().front())
      all.push_back(&op);
    std::optional<double> total = activationBytes(all);
    const Unit *unknown = llvm::find_if(found, [](const Unit &unit) {
      return !unit.keptBytes || !unit.checkpointedBytes;
    });
    if (!total || unknown != found.end()) {
      // Said at the first result whose size is unknown.
      Location where = forward.getLoc();
      forward.walk([&](Operation *op) {
        if (isRead(op) || llvm::all_of(op->getResultTypes(), [](Type type) {
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
