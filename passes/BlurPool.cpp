//===- BlurPool.cpp - anti-aliased downsampling ---------------------------===//
//
// BlurPool (Zhang 2019) as METHODS.md states it: a binomial blur before each
// strided convolution (or after it, run at stride 1) and after each max
// pool, run at stride 1. Sites are found from the graph: any 2-D convolution
// with a stride above 1, any max pool.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/PassUtils.h"
#include "composer/Passes/Passes.h"
#include "composer/Passes/Report.h"

#include "mlir/IR/Builders.h"

namespace composer {
#define GEN_PASS_DEF_BLURPOOL
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// BlurPool's filter, [1,2,1]^T [1,2,1] / 16, as a 1x1x3x3 initializer that
/// export broadcasts to the buffer's C x 1 x 3 x 3.
DenseElementsAttr binomialFilter(MLIRContext *ctx) {
  auto type = RankedTensorType::get({1, 1, 3, 3}, Float32Type::get(ctx));
  const float taps[] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
  SmallVector<float> values;
  for (float tap : taps)
    values.push_back(tap / 16);
  return DenseElementsAttr::get(type, ArrayRef<float>(values));
}

bool isStrided(ArrayRef<int64_t> stride) {
  return llvm::any_of(stride, [](int64_t s) { return s > 1; });
}

struct BlurPoolPass : public composer::impl::BlurPoolBase<BlurPoolPass> {
  using BlurPoolBase::BlurPoolBase;

  void runOnOperation() override;

private:
  /// A blur of `input` with `channels` channels, its filter a new buffer
  /// under `owner`.
  Value createBlur(OpBuilder &builder, Location loc, Value input,
                   int64_t channels, StringRef owner, ArrayRef<int64_t> stride);
  void rewriteConv(Operation *conv, Value input, Value weight,
                   ArrayRef<int64_t> stride, int64_t groups,
                   SiteReport &report);
  void rewriteMaxPool(MaxPool2dOp pool, SiteReport &report);
};

Value BlurPoolPass::createBlur(OpBuilder &builder, Location loc, Value input,
                               int64_t channels, StringRef owner,
                               ArrayRef<int64_t> stride) {
  MLIRContext *ctx = &getContext();
  auto filterType = TorchTensorType::get(ctx, true, {channels, 1, 3, 3},
                                         Float32Type::get(ctx));
  Value filter = createBuffer(builder, getOperation(),
                              joinStatePath(owner, "blurpool.filter"),
                              filterType, binomialFilter(ctx), loc);
  return builder.create<BlurPool2dOp>(loc, TorchTensorType::get(ctx), input,
                                      filter,
                                      builder.getDenseI64ArrayAttr(stride));
}

void BlurPoolPass::rewriteConv(Operation *conv, Value input, Value weight,
                               ArrayRef<int64_t> stride, int64_t groups,
                               SiteReport &report) {
  if (!isStrided(stride))
    return; // Not a site: stride-1 convolutions do not downsample.
  TorchTensorType weightType = getDeclaredStateType(weight);
  if (!weightType)
    return report.skip(conv, "weight is not a parameter");
  if (weightType.getRank() != 4)
    return report.skip(conv, "not a 2-D convolution");
  int64_t inChannels = weightType.getSizes()[1] * groups;
  if (inChannels < minChannels)
    return report.skip(conv, "in_channels < min-channels");
  if (input.getDefiningOp<BlurPool2dOp>())
    return report.skip(conv, "input already blurred");
  std::string owner = getStateOwnerPath(weight).value_or(getModulePath(conv));
  OpBuilder builder(conv);
  Location loc = conv->getLoc();
  if (blurFirst) {
    Value blurred = createBlur(builder, loc, input, inChannels, owner, {1, 1});
    conv->setOperand(0, blurred);
  } else {
    conv->setAttr("stride", builder.getDenseI64ArrayAttr({1, 1}));
    builder.setInsertionPointAfter(conv);
    Value result = conv->getResult(0);
    // The output type no longer holds at stride 1.
    result.setType(TorchTensorType::get(&getContext()));
    Value blurred = createBlur(builder, loc, result, weightType.getSizes()[0],
                               owner, stride);
    result.replaceAllUsesExcept(blurred, blurred.getDefiningOp());
  }
  report.match(conv);
}

void BlurPoolPass::rewriteMaxPool(MaxPool2dOp pool, SiteReport &report) {
  Value result = pool.getResult();
  if (llvm::any_of(result.getUsers(),
                   [](Operation *user) { return isa<BlurPool2dOp>(user); }))
    return report.skip(pool, "already followed by a blur");
  std::optional<int64_t> channels = inferChannels(pool.getSelf());
  if (!channels)
    return report.skip(pool, "channel count unknown (give --input-spec)");
  SmallVector<int64_t> stride(pool.getStride());
  if (stride.empty())
    stride.assign(pool.getKernelSize().begin(), pool.getKernelSize().end());
  OpBuilder builder(pool);
  pool.setStrideAttr(builder.getDenseI64ArrayAttr({1, 1}));
  result.setType(TorchTensorType::get(&getContext()));
  builder.setInsertionPointAfter(pool);
  std::string owner = getModulePath(pool);
  Value blurred = createBlur(builder, pool.getLoc(), result, *channels,
                             owner.empty() ? "maxpool" : owner, stride);
  result.replaceAllUsesExcept(blurred, blurred.getDefiningOp());
  report.match(pool);
}

void BlurPoolPass::runOnOperation() {
  ModuleOp module = getOperation();
  SiteReport report(module, getArgument());
  // Collect first: rewriting inserts ops the walk would visit.
  SmallVector<Operation *> sites;
  module.walk([&](Operation *op) {
    if ((replaceConvs && isa<Conv2dOp, ConvolutionOp>(op)) ||
        (replaceMaxpools && isa<MaxPool2dOp>(op)))
      sites.push_back(op);
  });
  for (Operation *site : sites) {
    if (auto conv = dyn_cast<Conv2dOp>(site))
      rewriteConv(conv, conv.getInput(), conv.getWeight(), conv.getStride(),
                  conv.getGroups(), report);
    else if (auto conv = dyn_cast<ConvolutionOp>(site)) {
      if (conv.getTransposed() || conv.getStride().size() != 2)
        continue;
      rewriteConv(conv, conv.getInput(), conv.getWeight(), conv.getStride(),
                  conv.getGroups(), report);
    } else {
      rewriteMaxPool(cast<MaxPool2dOp>(site), report);
    }
  }
  report.emit("sites blurred");
}

} // namespace
