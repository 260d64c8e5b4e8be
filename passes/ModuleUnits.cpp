//===- ModuleUnits.cpp - modules' forwards as units of a rewrite ----------===//

#include "ModuleUnits.h"

#include "PassUtils.h"
#include "composer/Analysis/ResidualBlocks.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace composer;

bool composer::isWithinModule(StringRef path, StringRef unit) {
  return path.starts_with(unit) &&
         (path.size() == unit.size() || path[unit.size()] == '.');
}

bool composer::isStateOrConstantRead(Operation *op) {
  return isa<ConstantOp, GetAttrOp, GetParamOp>(op);
}

namespace {

/// The longest dotted module path all of `ops` are within; empty if none.
std::string commonModulePath(ArrayRef<Operation *> ops) {
  std::optional<std::string> common;
  for (Operation *op : ops) {
    std::string path = getModulePath(op);
    if (!common) {
      common = path;
      continue;
    }
    while (!common->empty() && !isWithinModule(path, *common)) {
      size_t dot = StringRef(*common).rfind('.');
      common->resize(dot == StringRef::npos ? 0 : dot);
    }
  }
  return common.value_or("");
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

/// `paths` without those inside another of them.
SmallVector<std::string> outermost(SmallVector<std::string> paths) {
  SmallVector<std::string> result;
  for (const std::string &path : paths)
    if (llvm::none_of(paths, [&](const std::string &other) {
          return other != path && isWithinModule(path, other);
        }))
      result.push_back(path);
  return result;
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

} // namespace

FailureOr<UnitSelection> UnitSelection::parse(StringRef text, Operation *anchor,
                                              StringRef passName) {
  UnitSelection selection;
  if (text == "blocks")
    return selection;
  SmallVector<StringRef> texts;
  text.split(texts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef pattern : texts) {
    llvm::Expected<llvm::GlobPattern> glob =
        llvm::GlobPattern::create(pattern.trim());
    if (!glob)
      return anchor->emitError(passName)
             << ": units: bad pattern '" << pattern.trim()
             << "': " << llvm::toString(glob.takeError());
    selection.patterns.push_back(std::move(*glob));
  }
  if (selection.patterns.empty())
    return anchor->emitError(passName)
           << ": units must be 'blocks' or glob patterns of module paths";
  return selection;
}

SmallVector<std::string> UnitSelection::findModules(func::FuncOp forward,
                                                    SiteReport &report) const {
  return patterns.empty()
             ? findBlockModules(forward, report)
             : findMatchingModules(forward.getBody().front(), patterns);
}

FailureOr<ModuleUnit>
composer::collectModuleUnit(Block &body, StringRef path,
                            SymbolTableCollection &symbolTables,
                            std::string &reason, Operation *&site) {
  ModuleUnit unit;
  unit.path = path.str();
  Operation *first = nullptr, *last = nullptr;
  for (Operation &op : body.without_terminator())
    if (!isStateOrConstantRead(&op) &&
        isWithinModule(getModulePath(&op), path)) {
      first = first ? first : &op;
      last = &op;
    }
  if (!first)
    return failure();
  // Ops between them that no module owns (the importer knows no module for
  // some ops TorchScript makes, such as the ifs of a short-circuit `and`)
  // are the unit's too.
  for (Operation *op = first; op != last->getNextNode(); op = op->getNextNode())
    if (!isStateOrConstantRead(op) &&
        (op == first || op == last || getModulePath(op).empty() ||
         isWithinModule(getModulePath(op), path)))
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
    if (members.contains(op) || isStateOrConstantRead(op))
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
        if (def && isStateOrConstantRead(def))
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

  return unit;
}
