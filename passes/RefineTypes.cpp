//===- RefineTypes.cpp - shapes and dtypes from input specs ---------------===//
//
// Propagates tensor shapes and dtypes forward from @forward's declared input
// specs and the parameter declarations. The rules are the ops' own
// (InferTorchTypeOpInterface); this pass only drives them.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

#include "mlir/AsmParser/AsmParser.h"

namespace composer {
#define GEN_PASS_DEF_REFINETYPES
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// Whether running `block` surely raises before it yields: it raises
/// outright, or an op's operand types prove that it fails.
bool surelyRaises(Block &block) {
  return llvm::any_of(block, [](Operation &op) {
    auto generic = dyn_cast<GenericOp>(&op);
    return (generic && generic.getKind() == "prim::RaiseException") ||
           failsToBroadcast(&op);
  });
}

/// What is known of `value`'s tensor type (nothing if it is not a tensor).
TorchTensorType getKnownTensorType(Value value) {
  auto type = dyn_cast<TorchTensorType>(value.getType());
  return type ? type : TorchTensorType::get(value.getContext());
}

/// The type of an if's result #`index`: the join of what its branches
/// yield, leaving out a branch that surely raises (a residual add of
/// mismatched channel counts, the branch not taken in MobileNetV2's blocks)
/// where what that branch yields does not contradict the result.
TorchTensorType inferIfResultType(IfOp op, unsigned index) {
  SmallVector<Block *> branches = {&op.getThenRegion().front(),
                                   &op.getElseRegion().front()};
  auto yielded = [&](Block *block) {
    return getKnownTensorType(block->getTerminator()->getOperand(index));
  };
  auto joinOver = [&](ArrayRef<Block *> blocks) {
    TorchTensorType joined;
    for (Block *block : blocks)
      joined = joined ? joined.join(yielded(block)) : yielded(block);
    return joined;
  };
  SmallVector<Block *> live = llvm::to_vector(llvm::make_filter_range(
      branches, [](Block *b) { return !surelyRaises(*b); }));
  if (live.empty() || live.size() == branches.size())
    return joinOver(branches);
  TorchTensorType joined = joinOver(live);
  bool compatible = llvm::all_of(branches, [&](Block *block) {
    return static_cast<bool>(yielded(block).meet(joined));
  });
  return compatible ? joined : joinOver(branches);
}

struct RefineTypesPass
    : public composer::impl::RefineTypesBase<RefineTypesPass> {
  using RefineTypesBase::RefineTypesBase;

  void runOnOperation() override;

private:
  LogicalResult refineArguments(func::FuncOp forward);
};

LogicalResult RefineTypesPass::refineArguments(func::FuncOp forward) {
  MLIRContext *ctx = &getContext();
  SmallVector<BlockArgument> tensorArgs;
  for (BlockArgument arg : forward.getArguments())
    if (isa<TorchTensorType>(arg.getType()))
      tensorArgs.push_back(arg);
  if (inputSpecs.size() != tensorArgs.size())
    return forward.emitError("input-specs gives ")
           << inputSpecs.size() << " spec(s) but @forward takes "
           << tensorArgs.size() << " tensor argument(s)";
  // Check every spec before changing any argument.
  SmallVector<TorchTensorType> refinedTypes;
  for (auto [spec, arg] : llvm::zip_equal(inputSpecs, tensorArgs)) {
    std::string text = "!composer.tensor<" + spec + ">";
    std::string parseError;
    TorchTensorType specType;
    size_t consumed = 0;
    {
      // The parser's message refers to the synthesized text; fold it into
      // this pass's error instead.
      ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &diag) {
        parseError = diag.str();
        return success();
      });
      specType = dyn_cast_or_null<TorchTensorType>(
          parseType(text, ctx, &consumed, /*isKnownNullTerminated=*/false));
    }
    if (!specType || consumed != text.size() || !specType.getHasRank())
      return forward.emitError("invalid input spec '")
             << spec << "': expected dimensions and a dtype such as "
             << "1x3x224x224xf32"
             << (parseError.empty() ? "" : " (" + parseError + ")");
    TorchTensorType refined =
        specType.meet(cast<TorchTensorType>(arg.getType()));
    if (!refined)
      return forward.emitError("input spec '")
             << spec << "' contradicts argument #" << arg.getArgNumber()
             << " of type " << arg.getType();
    refinedTypes.push_back(refined);
  }
  for (auto [arg, type] : llvm::zip_equal(tensorArgs, refinedTypes))
    arg.setType(type);
  return success();
}

void RefineTypesPass::runOnOperation() {
  ModuleOp module = getOperation();
  SiteReport report(module, getArgument());
  func::FuncOp forward = lookupForward(module, getArgument());
  if (!forward)
    return signalPassFailure();
  if (failed(refineArguments(forward)))
    return signalPassFailure();

  auto refine = [&](Value value, TorchTensorType inferred) -> LogicalResult {
    auto current = cast<TorchTensorType>(value.getType());
    TorchTensorType met = current.meet(inferred);
    if (!met)
      return value.getDefiningOp()->emitError("inferred type ")
             << inferred << " contradicts the declared " << current;
    value.setType(met);
    return success();
  };

  // One cache of symbol lookups (get_param -> declaration) for the walk.
  SymbolTableCollection symbolTables;
  // An op counts as refined when all its tensor results have static shapes.
  auto reportRefined = [&](Operation *op) {
    if (llvm::all_of(op->getResultTypes(), [](Type type) {
          auto tensor = dyn_cast<TorchTensorType>(type);
          return !tensor || tensor.hasStaticShape();
        }))
      report.match(op);
    else
      report.skip(op, "shape partly unknown after inference");
  };

  // Post-order: an if's branches are refined before the if.
  WalkResult walked = forward.walk([&](Operation *op) -> WalkResult {
    if (auto ifOp = dyn_cast<IfOp>(op)) {
      bool anyTensor = false;
      for (auto [index, result] : llvm::enumerate(ifOp.getResults())) {
        if (!isa<TorchTensorType>(result.getType()))
          continue;
        anyTensor = true;
        if (failed(refine(result, inferIfResultType(ifOp, index))))
          return WalkResult::interrupt();
      }
      if (anyTensor)
        reportRefined(op);
      return WalkResult::advance();
    }
    if (op->getNumResults() > 1) {
      // Several results (prim::ListUnpack): refined where the op can tell,
      // and reported only then.
      auto rule = dyn_cast<InferTorchTypeOpInterface>(op);
      bool any = false;
      for (auto [index, result] : llvm::enumerate(op->getResults())) {
        if (!rule || !isa<TorchTensorType>(result.getType()))
          continue;
        TorchTensorType inferred = rule.inferResultTypeAt(symbolTables, index);
        if (!inferred)
          continue;
        if (failed(refine(result, inferred)))
          return WalkResult::interrupt();
        any = true;
      }
      if (any)
        reportRefined(op);
      return WalkResult::advance();
    }
    if (op->getNumResults() != 1 ||
        !isa<TorchTensorType>(op->getResult(0).getType()))
      return WalkResult::advance();
    TorchTensorType inferred;
    if (auto rule = dyn_cast<InferTorchTypeOpInterface>(op))
      inferred = rule.inferResultType(symbolTables);
    if (!inferred) {
      report.skip(op,
                  "no shape rule for " + op->getName().getStringRef().str() +
                      (isa<GenericOp>(op)
                           ? " \"" + cast<GenericOp>(op).getKind().str() + "\""
                           : std::string()));
      return WalkResult::advance();
    }
    if (failed(refine(op->getResult(0), inferred)))
      return WalkResult::interrupt();
    reportRefined(op);
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return signalPassFailure();

  // The signature follows the refined arguments and returned values.
  syncFunctionTypes(module);
  report.emit("tensor results fully refined");
}

} // namespace
