//===- LowerToRuntime.cpp - method ops as composer:: runtime ops ----------===//
//
// Rewrites each method op into one call of its operator in the runtime
// library (docs/runtime-ops.md), operands in the operator's schema order. Two
// neighbours fold into the call: the stride-1 max pool BlurPool leaves in
// front of a blur, and the fp32 cast mixed precision puts on a ghost batch
// norm's input, so neither is materialized at full size.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/PassUtils.h"
#include "composer/Passes/Passes.h"
#include "composer/Passes/Report.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace composer {
#define GEN_PASS_DEF_LOWERTORUNTIME
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

// c10::ScalarType::Float; a ScalarType is an int in TorchScript.
constexpr int64_t kFloat32 = 6;

/// The max pool `blur` can take over: its input, used by nothing else, at
/// stride 1 (where ceil_mode changes nothing). Null otherwise.
MaxPool2dOp getFusableMaxPool(BlurPool2dOp blur) {
  auto pool = blur.getInput().getDefiningOp<MaxPool2dOp>();
  if (!pool || !pool->hasOneUse())
    return {};
  // An empty stride is the kernel size, as in aten::max_pool2d.
  ArrayRef<int64_t> stride =
      pool.getStride().empty() ? pool.getKernelSize() : pool.getStride();
  if (!llvm::all_of(stride, [](int64_t step) { return step == 1; }))
    return {};
  return pool;
}

/// The cast `ghost`'s kernel can do itself: a plain aten::to(float32) of a
/// floating-point tensor (no copy, non_blocking or memory format to keep).
/// Null otherwise.
ToDtypeOp getAbsorbableCast(GhostBatchNormOp ghost) {
  auto toDtype = ghost.getInput().getDefiningOp<ToDtypeOp>();
  if (!toDtype || toDtype.getDtype() != kFloat32 || toDtype.getNonBlocking() ||
      toDtype.getCopy() || toDtype.getMemoryFormat())
    return {};
  // The kernels take floating-point activations only.
  auto sourceType = cast<TorchTensorType>(toDtype.getSelf().getType());
  if (sourceType.hasDtype() && !isa<FloatType>(sourceType.getDtype()))
    return {};
  return toDtype;
}

class RuntimeLowering {
public:
  explicit RuntimeLowering(Operation *op)
      : builder(op), aten(builder, op->getLoc()), loc(op->getLoc()) {}

  /// composer::blur_max_pool2d(input, filter, kernel_size, padding,
  /// dilation, stride) for a blur of a fusable max pool, else
  /// composer::blur_pool2d(input, filter, stride).
  Value lower(BlurPool2dOp blur) {
    if (MaxPool2dOp pool = getFusableMaxPool(blur)) {
      fusedPool = pool;
      loc = FusedLoc::get(blur.getContext(), {pool.getLoc(), loc});
      return call(
          "composer::blur_max_pool2d", blur,
          {pool.getSelf(), blur.getFilter(), aten.intList(pool.getKernelSize()),
           aten.intList(pool.getPadding()), aten.intList(pool.getDilation()),
           aten.intList(blur.getStride())});
    }
    return call(
        "composer::blur_pool2d", blur,
        {blur.getInput(), blur.getFilter(), aten.intList(blur.getStride())});
  }

  /// composer::ghost_batch_norm(input, weight, bias, running_mean,
  /// running_var, training, momentum, eps, ghost_batch_size, dtype), with
  /// an fp32 input cast absorbed as dtype.
  Value lower(GhostBatchNormOp ghost) {
    absorbedCast = getAbsorbableCast(ghost);
    Value input = absorbedCast ? absorbedCast.getSelf() : ghost.getInput();
    return call("composer::ghost_batch_norm", ghost,
                {input, ghost.getWeight(), ghost.getBias(),
                 ghost.getRunningMean(), ghost.getRunningVar(),
                 ghost.getTraining(), ghost.getMomentum(),
                 aten.floating(ghost.getEps().convertToDouble()),
                 aten.integer(ghost.getGhostBatchSize()),
                 absorbedCast ? aten.integer(kFloat32) : aten.none()});
  }

  /// composer::squeeze_excite(input, fc1, fc2).
  Value lower(SqueezeExciteOp se) {
    return call("composer::squeeze_excite", se,
                {se.getInput(), se.getFc1(), se.getFc2()});
  }

  /// Set by lower() when it folded the op's max pool or input cast in.
  MaxPool2dOp fusedPool;
  ToDtypeOp absorbedCast;

private:
  Value call(StringRef kind, Operation *methodOp, ValueRange operands) {
    return builder
        .create<GenericOp>(loc, methodOp->getResultTypes(), kind, operands,
                           DictionaryAttr())
        .getResult(0);
  }

  OpBuilder builder;
  AtenBuilder aten;
  Location loc;
};

struct LowerToRuntimePass
    : public composer::impl::LowerToRuntimeBase<LowerToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SiteReport report(module, getArgument());
    SmallVector<Operation *> methodOps;
    module.walk([&](Operation *op) {
      if (isa<BlurPool2dOp, GhostBatchNormOp, SqueezeExciteOp>(op))
        methodOps.push_back(op);
    });
    unsigned fusedPools = 0, absorbedCasts = 0;
    for (Operation *op : methodOps) {
      report.match(op);
      RuntimeLowering lowering(op);
      Value lowered =
          llvm::TypeSwitch<Operation *, Value>(op)
              .Case<BlurPool2dOp, GhostBatchNormOp, SqueezeExciteOp>(
                  [&](auto methodOp) { return lowering.lower(methodOp); });
      op->getResult(0).replaceAllUsesWith(lowered);
      op->erase();
      if (MaxPool2dOp pool = lowering.fusedPool) {
        ++fusedPools;
        pool->erase(); // Its only user was the blur.
      }
      if (ToDtypeOp cast = lowering.absorbedCast) {
        ++absorbedCasts;
        // Other users (another ghost batch norm not lowered yet) keep it.
        if (cast->use_empty())
          cast->erase();
      }
    }
    // Nothing to lower is the normal case for an unchanged model.
    if (report.getNumMatched())
      report.emit((Twine("method ops lowered to runtime ops (") +
                   Twine(fusedPools) + " max pools fused, " +
                   Twine(absorbedCasts) + " input casts absorbed)")
                      .str());
  }
};

} // namespace
