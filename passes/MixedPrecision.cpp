//===- MixedPrecision.cpp - autocast as a graph rewrite -------------------===//
//
// Casts inserted on use, as torch.autocast does at run time: matmul-like ops
// in the low dtype, numerically sensitive ops in fp32, the rest following
// their inputs.
//
//===----------------------------------------------------------------------===//

#include "Report.h"
#include "composer/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace composer {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;
using composer::torch_upstream::ScalarType;

namespace {

/// Generic ops autocast runs in fp32 (its fp32 list, by node kind).
bool isFp32GenericKind(StringRef kind) {
  return llvm::StringSwitch<bool>(kind)
      .Cases("aten::exp", "aten::log", "aten::log10", "aten::log2",
             "aten::log1p", "aten::pow", "aten::sum", "aten::mean", true)
      .Cases("aten::log_softmax", "aten::cross_entropy", "aten::nll_loss",
             "aten::mse_loss", "aten::l1_loss", "aten::smooth_l1_loss", true)
      .Cases("aten::binary_cross_entropy_with_logits", "aten::kl_div",
             "aten::norm", "aten::cumsum", "aten::prod", "aten::rsqrt", true)
      .Default(false);
}

struct MixedPrecisionPass
    : public composer::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;

  void runOnOperation() override;

private:
  /// `value` as `target`, cast just before `user`: the cast is skipped when
  /// `value` is already such a cast or undoes a cast up from `target`.
  Value castTo(Value value, ScalarType target, Operation *user);

  /// The low-precision dtype, as the `dtype` option names it.
  ScalarType getLowDtype() const { return dtype; }

  /// Values known to be in the low dtype (results of rewritten ops, casts).
  llvm::DenseSet<Value> lowValues;
};

Value MixedPrecisionPass::castTo(Value value, ScalarType target,
                                 Operation *user) {
  bool toLow = target == getLowDtype();
  if (auto cast = value.getDefiningOp<ToDtypeOp>()) {
    if (cast.getDtype() == target)
      return value;
    // low -> f32 -> low is the identity.
    if (toLow && lowValues.contains(cast.getSelf()))
      return cast.getSelf();
  }
  if (toLow && lowValues.contains(value))
    return value;
  MLIRContext *ctx = &getContext();
  OpBuilder builder(user);
  auto type = dyn_cast<TorchTensorType>(value.getType());
  auto castType = TorchTensorType::get(
      ctx, type && type.getHasRank(),
      type && type.getHasRank() ? type.getSizes() : ArrayRef<int64_t>(),
      getDtypeType(ctx, target));
  auto cast = builder.create<ToDtypeOp>(
      user->getLoc(), castType, value, ScalarTypeAttr::get(ctx, target),
      builder.getBoolAttr(false), builder.getBoolAttr(false),
      MemoryFormatAttr());
  if (toLow)
    lowValues.insert(cast);
  return cast;
}

void MixedPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  lowValues.clear(); // The pass may run on several modules.
  SiteReport report(module, getArgument());
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    bool matmulLike = isa<ConvolutionLike, LinearOp, MatmulOp>(op);
    bool lowNorm = lowPrecisionNorms && isa<LayerNormOp, GroupNormOp>(op);
    bool fp32 = isa<SoftmaxOp, BatchNormOp, GhostBatchNormOp>(op) ||
                (!lowPrecisionNorms && isa<LayerNormOp, GroupNormOp>(op)) ||
                (isa<GenericOp>(op) &&
                 isFp32GenericKind(cast<GenericOp>(op).getKind()));
    if (!matmulLike && !lowNorm && !fp32)
      continue;
    ScalarType target = fp32 ? ScalarType::Float : getLowDtype();
    bool changed = false;
    for (OpOperand &operand : op->getOpOperands()) {
      // Casting running statistics would detach the module's buffers.
      if (isa<BatchNormOp, GhostBatchNormOp>(op) &&
          operand.getOperandNumber() > 0)
        break;
      if (!isa<TorchTensorType>(operand.get().getType()))
        continue;
      Value cast = castTo(operand.get(), target, op);
      changed |= cast != operand.get();
      operand.set(cast);
    }
    // What the types knew of the old result dtype no longer holds; it is
    // left unknown (rather than set) so that region results and yields
    // typed with the old dtype stay compatible.
    for (Value result : op->getResults()) {
      if (target == getLowDtype())
        lowValues.insert(result);
      if (auto type = dyn_cast<TorchTensorType>(result.getType()))
        if (type.getDtype())
          result.setType(TorchTensorType::get(&getContext(), type.getHasRank(),
                                              type.getSizes(), Type()));
    }
    if (changed)
      report.match(op);
    else
      report.skip(op, "already in the target dtype");
  }
  // Casts whose results nobody uses any more (a cancelled pair's first half).
  module.walk([](ToDtypeOp cast) {
    if (cast->use_empty())
      cast->erase();
  });
  // Signatures follow what the functions now return.
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    func.setFunctionType(FunctionType::get(
        &getContext(), func.getArgumentTypes(), ret.getOperandTypes()));
  }
  report.emit("ops given their autocast dtype");
}

} // namespace
