//===- SqueezeExcite.cpp - channel gates after large convolutions ---------===//
//
// Squeeze-Excite (Hu et al. 2018) as METHODS.md states it, on any 2-D
// convolution in the graph with enough channels.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/PassUtils.h"
#include "composer/Passes/Passes.h"
#include "composer/Passes/Report.h"

#include "mlir/IR/Builders.h"

namespace composer {
#define GEN_PASS_DEF_SQUEEZEEXCITE
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// The initializer export reads as "PyTorch's nn.Linear default": uniform in
/// +-1/sqrt(fan_in), fan_in = size(1).
constexpr llvm::StringLiteral kLinearDefaultInit = "linear_default";

struct SqueezeExcitePass
    : public composer::impl::SqueezeExciteBase<SqueezeExcitePass> {
  using SqueezeExciteBase::SqueezeExciteBase;

  void runOnOperation() override;
};

void SqueezeExcitePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  if (latentChannels <= 0) {
    module.emitError("composer-squeeze-excite: latent-channels must be > 0");
    return signalPassFailure();
  }
  SiteReport report(module, getArgument());
  SmallVector<Operation *> convs;
  module.walk([&](Operation *op) {
    if (isa<Conv2dOp, ConvolutionOp>(op))
      convs.push_back(op);
  });
  for (Operation *conv : convs) {
    Value weight = conv->getOperand(1);
    int64_t groups = conv->getAttrOfType<IntegerAttr>("groups").getInt();
    if (auto convolution = dyn_cast<ConvolutionOp>(conv))
      if (convolution.getTransposed() || convolution.getStride().size() != 2) {
        report.skip(conv, "not a 2-D convolution");
        continue;
      }
    TorchTensorType weightType = getDeclaredStateType(weight);
    if (!weightType || weightType.getRank() != 4) {
      report.skip(conv, "weight is not a 4-D parameter");
      continue;
    }
    int64_t outChannels = weightType.getSizes()[0];
    int64_t inChannels = weightType.getSizes()[1] * groups;
    if (std::min(inChannels, outChannels) < minChannels) {
      report.skip(conv, "channels < min-channels");
      continue;
    }
    Value result = conv->getResult(0);
    if (llvm::any_of(result.getUsers(), [](Operation *user) {
          return isa<SqueezeExciteOp>(user);
        })) {
      report.skip(conv, "already followed by squeeze-excite");
      continue;
    }
    int64_t latent = latentChannels >= 1
                         ? int64_t(latentChannels)
                         : int64_t(latentChannels * outChannels);
    latent = std::max<int64_t>(latent, 1);
    std::string owner = getStateOwnerPath(weight).value_or(getModulePath(conv));
    OpBuilder builder(ctx);
    builder.setInsertionPointAfter(conv);
    Location loc = conv->getLoc();
    auto f32 = Float32Type::get(ctx);
    auto init = builder.getStringAttr(kLinearDefaultInit);
    Value fc1 = createParameter(
        builder, module, joinStatePath(owner, "se.fc1.weight"),
        TorchTensorType::get(ctx, true, {latent, outChannels}, f32), init, loc);
    Value fc2 = createParameter(
        builder, module, joinStatePath(owner, "se.fc2.weight"),
        TorchTensorType::get(ctx, true, {outChannels, latent}, f32), init, loc);
    auto gated = builder.create<SqueezeExciteOp>(loc, result.getType(), result,
                                                 fc1, fc2);
    result.replaceAllUsesExcept(gated, gated);
    report.match(conv);
  }
  report.emit("convolutions given squeeze-excite");
}

} // namespace
