//===- LowerToAten.cpp - method ops as plain aten ops ---------------------===//
//
// Expands each method op into the aten ops that compute it, so the exported
// model needs no library beyond stock PyTorch.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/PassUtils.h"
#include "composer/Passes/Passes.h"
#include "composer/Passes/Report.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace composer {
#define GEN_PASS_DEF_LOWERTOATEN
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// blur_pool2d: a depthwise conv2d with the filter at padding 1, or, when
/// the input is smaller than the filter, the input subsampled by the stride.
FailureOr<Value> lowerBlurPool(BlurPool2dOp blur, OpBuilder &builder,
                               AtenBuilder &aten) {
  MLIRContext *ctx = blur.getContext();
  TorchTensorType filterType = getDeclaredStateType(blur.getFilter());
  if (!filterType)
    filterType = cast<TorchTensorType>(blur.getFilter().getType());
  if (!filterType.hasStaticShape())
    return blur.emitError(
        "cannot lower: the filter's channel count is unknown");
  int64_t channels = filterType.getSizes()[0];
  ArrayRef<int64_t> stride = blur.getStride();
  auto intType = IntType::get(ctx);
  auto tensorType = TorchTensorType::get(ctx);
  Value input = blur.getInput();
  Value height = aten.node("aten::size", {input, aten.integer(-2)}, intType);
  Value width = aten.node("aten::size", {input, aten.integer(-1)}, intType);
  Value smallest = aten.node("prim::min", {height, width}, intType);
  Value tooSmall =
      aten.node("aten::lt", {smallest, aten.integer(3)}, BoolType::get(ctx));
  auto subsample = [&]() {
    Value subsampled = input;
    for (auto [dim, step] : llvm::enumerate(stride))
      if (step > 1)
        subsampled = aten.node("aten::slice",
                               {subsampled, aten.integer(2 + dim), aten.none(),
                                aten.none(), aten.integer(step)},
                               tensorType);
    return subsampled;
  };
  auto blur2d = [&]() -> Value {
    return builder.create<Conv2dOp>(blur.getLoc(), tensorType, input,
                                    blur.getFilter(), aten.none(),
                                    builder.getDenseI64ArrayAttr(stride),
                                    builder.getDenseI64ArrayAttr({1, 1}),
                                    builder.getDenseI64ArrayAttr({1, 1}),
                                    builder.getI64IntegerAttr(channels));
  };
  return aten.ifElse(tooSmall, tensorType, subsample, blur2d).getResult(0);
}

/// ghost_batch_norm: in training, batch_norm on each chunk of
/// ghost_batch_size samples with momentum / chunks, concatenated; otherwise
/// batch_norm.
FailureOr<Value> lowerGhostBatchNorm(GhostBatchNormOp ghost, OpBuilder &builder,
                                     AtenBuilder &aten) {
  MLIRContext *ctx = ghost.getContext();
  Location loc = ghost.getLoc();
  auto tensorType = TorchTensorType::get(ctx);
  auto listType = ListType::get(ctx, tensorType);
  auto intType = IntType::get(ctx);
  auto batchNorm = [&](Value input, Value training, Value momentum) -> Value {
    return builder.create<BatchNormOp>(
        loc, tensorType, input, ghost.getWeight(), ghost.getBias(),
        ghost.getRunningMean(), ghost.getRunningVar(), training, momentum,
        ghost.getEpsAttr(), ghost.getCudnnEnabledAttr());
  };

  auto inChunks = [&]() -> Value {
    Value chunks =
        aten.node("aten::split",
                  {ghost.getInput(), aten.integer(ghost.getGhostBatchSize()),
                   aten.integer(0)},
                  listType);
    Value count = aten.node("aten::len", {chunks}, intType);
    Value momentum = aten.node("aten::div", {ghost.getMomentum(), count},
                               TorchFloatType::get(ctx));
    Value normalized = aten.node("prim::ListConstruct", {}, listType);
    Value isTrue = aten.boolean(true);
    auto loop =
        builder.create<LoopOp>(loc, TypeRange{}, count, isTrue, ValueRange{});
    {
      OpBuilder::InsertionGuard loopGuard(builder);
      Block &body = loop.getBody().emplaceBlock();
      Value index = body.addArgument(intType, loc);
      builder.setInsertionPointToEnd(&body);
      Value chunk = aten.node("aten::__getitem__", {chunks, index}, tensorType);
      Value y = batchNorm(chunk, ghost.getTraining(), momentum);
      aten.node("aten::append", {normalized, y}, listType);
      builder.create<YieldOp>(loc, ValueRange{isTrue});
    }
    return builder.create<CatOp>(loc, tensorType, normalized,
                                 builder.getI64IntegerAttr(0));
  };
  auto whole = [&]() {
    return batchNorm(ghost.getInput(), ghost.getTraining(),
                     ghost.getMomentum());
  };
  return aten.ifElse(ghost.getTraining(), tensorType, inChunks, whole)
      .getResult(0);
}

/// squeeze_excite: mean over H and W, fc1, relu, fc2, sigmoid, and the
/// input scaled by the gate broadcast over H and W.
FailureOr<Value> lowerSqueezeExcite(SqueezeExciteOp se, OpBuilder &builder,
                                    AtenBuilder &aten) {
  MLIRContext *ctx = se.getContext();
  Location loc = se.getLoc();
  auto tensorType = TorchTensorType::get(ctx);
  Value pooled = aten.node(
      "aten::mean",
      {se.getInput(), aten.intList({2, 3}), aten.boolean(false), aten.none()},
      tensorType);
  // The weights follow the activation's dtype: under mixed precision the
  // input is bf16/fp16 while the new weights stay fp32 (master weights).
  auto like = [&](Value weight) {
    return aten.node("aten::type_as", {weight, pooled}, tensorType);
  };
  Value hidden = builder.create<LinearOp>(loc, tensorType, pooled,
                                          like(se.getFc1()), aten.none());
  hidden = builder.create<ReluOp>(loc, tensorType, hidden, UnitAttr());
  Value gate = builder.create<LinearOp>(loc, tensorType, hidden,
                                        like(se.getFc2()), aten.none());
  gate = builder.create<SigmoidOp>(loc, tensorType, gate, UnitAttr());
  for (int i = 0; i < 2; ++i)
    gate = aten.node("aten::unsqueeze", {gate, aten.integer(-1)}, tensorType);
  Value scaled =
      builder.create<MulOp>(loc, tensorType, se.getInput(), gate, UnitAttr());
  return scaled;
}

struct LowerToAtenPass
    : public composer::impl::LowerToAtenBase<LowerToAtenPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SiteReport report(module, getArgument());
    SmallVector<Operation *> methodOps;
    module.walk([&](Operation *op) {
      if (isa<BlurPool2dOp, GhostBatchNormOp, SqueezeExciteOp>(op))
        methodOps.push_back(op);
    });
    for (Operation *op : methodOps) {
      report.match(op);
      OpBuilder builder(op);
      AtenBuilder aten(builder, op->getLoc());
      FailureOr<Value> lowered =
          llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
              .Case<BlurPool2dOp>(
                  [&](auto blur) { return lowerBlurPool(blur, builder, aten); })
              .Case<GhostBatchNormOp>([&](auto ghost) {
                return lowerGhostBatchNorm(ghost, builder, aten);
              })
              .Case<SqueezeExciteOp>([&](auto se) {
                return lowerSqueezeExcite(se, builder, aten);
              });
      if (failed(lowered))
        return signalPassFailure();
      op->getResult(0).replaceAllUsesWith(*lowered);
      op->erase();
    }
    // Nothing to lower is the normal case for an unchanged model.
    if (report.getNumMatched())
      report.emit("method ops lowered to aten");
  }
};

} // namespace
