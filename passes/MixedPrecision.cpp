//===- MixedPrecision.cpp - autocast as a graph rewrite -------------------===//
//
// Casts inserted on use, as torch.autocast does at run time: matmul-like ops
// in the low dtype, numerically sensitive ops in fp32, the rest following
// their inputs.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/Passes.h"
#include "composer/Passes/Report.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace composer {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

// c10::ScalarType codes.
constexpr int64_t kFloat16 = 5;
constexpr int64_t kFloat32 = 6;
constexpr int64_t kBFloat16 = 15;

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
  /// `value` as `dtype`, cast just before `user`: the cast is skipped when
  /// `value` is already such a cast or undoes a cast up from `dtype`.
  Value castTo(Value value, int64_t dtype, Operation *user);

  /// The builtin element type of a c10::ScalarType code this pass uses.
  Type dtypeType(int64_t code) {
    Builder b(&getContext());
    return code == kBFloat16  ? Type(b.getBF16Type())
           : code == kFloat16 ? Type(b.getF16Type())
                              : Type(b.getF32Type());
  }

  int64_t lowDtype = kBFloat16;
  /// Values known to be in the low dtype (results of rewritten ops, casts).
  llvm::DenseSet<Value> lowValues;
};

Value MixedPrecisionPass::castTo(Value value, int64_t dtype, Operation *user) {
  if (auto cast = value.getDefiningOp<ToDtypeOp>()) {
    if (cast.getDtype() == dtype)
      return value;
    // low -> f32 -> low is the identity.
    if (dtype == lowDtype && lowValues.contains(cast.getSelf()))
      return cast.getSelf();
  }
  if (dtype == lowDtype && lowValues.contains(value))
    return value;
  OpBuilder builder(user);
  auto type = dyn_cast<TorchTensorType>(value.getType());
  auto castType = TorchTensorType::get(
      &getContext(), type && type.getHasRank(),
      type && type.getHasRank() ? type.getSizes() : ArrayRef<int64_t>(),
      dtypeType(dtype));
  auto cast = builder.create<ToDtypeOp>(
      user->getLoc(), castType, value, builder.getI64IntegerAttr(dtype),
      builder.getBoolAttr(false), builder.getBoolAttr(false), IntegerAttr());
  if (dtype == lowDtype)
    lowValues.insert(cast);
  return cast;
}

void MixedPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (dtype == "bf16") {
    lowDtype = kBFloat16;
  } else if (dtype == "f16") {
    lowDtype = kFloat16;
  } else {
    module.emitError("composer-mixed-precision: dtype must be bf16 or f16, "
                     "got '")
        << dtype << "'";
    return signalPassFailure();
  }
  SiteReport report(module, getArgument());
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) { ops.push_back(op); });
  for (Operation *op : ops) {
    bool matmulLike = isa<Conv2dOp, ConvolutionOp, LinearOp, MatmulOp>(op);
    bool lowNorm = lowPrecisionNorms && isa<LayerNormOp, GroupNormOp>(op);
    bool fp32 = isa<SoftmaxOp, BatchNormOp, GhostBatchNormOp>(op) ||
                (!lowPrecisionNorms && isa<LayerNormOp, GroupNormOp>(op)) ||
                (isa<GenericOp>(op) &&
                 isFp32GenericKind(cast<GenericOp>(op).getKind()));
    if (!matmulLike && !lowNorm && !fp32)
      continue;
    int64_t target = fp32 ? kFloat32 : lowDtype;
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
      if (target == lowDtype)
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
