//===- ChannelsLast.cpp - NHWC memory format ------------------------------===//
//
// Channels-last as METHODS.md states it: convolution weights stored
// channels_last once (a property of the parameter, applied at export) and
// inputs converted once at the graph entry. oneDNN and cuDNN then pick NHWC
// kernels, and activations stay channels_last through the network.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace composer {
#define GEN_PASS_DEF_CHANNELSLAST
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;
using composer::torch_upstream::MemoryFormat;

namespace {

/// The weight of a convolution the importer left generic (a scripted
/// ConvTranspose2d's aten::conv_transpose2d, say): operand 1 of every aten
/// convolution schema; null for other ops.
Value getGenericConvolutionWeight(GenericOp op) {
  const AtenKindInfo *info = op.getKindInfo();
  if (op->getNumOperands() < 2 || !info || !info->has(AtenTrait::Convolution))
    return {};
  return op->getOperand(1);
}

/// Whether `value` flows into a convolution's input through ops that keep
/// the layout (so converting it at entry pays off).
bool reachesConvolution(Value value, unsigned depth = 0) {
  if (depth > 8)
    return false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto conv = dyn_cast<ConvolutionLike>(user))
      if (&use == &conv.getInputMutable())
        return true;
    if (auto generic = dyn_cast<GenericOp>(user))
      if (use.getOperandNumber() == 0 && getGenericConvolutionWeight(generic))
        return true;
    if (isLayoutSource(use) &&
        reachesConvolution(user->getResult(0), depth + 1))
      return true;
  }
  return false;
}

bool isConvertedAtEntry(Value arg) {
  return llvm::any_of(arg.getUsers(),
                      [](Operation *user) {
                        auto contiguous = dyn_cast<ContiguousOp>(user);
                        return contiguous && contiguous.getMemoryFormat() ==
                                                 MemoryFormat::ChannelsLast;
                      }) ||
         llvm::any_of(arg.getUsers(), [](Operation *user) {
           return isa<IfOp>(user) &&
                  user->hasAttr("composer.channels_last_entry");
         });
}

struct ChannelsLastPass
    : public composer::impl::ChannelsLastBase<ChannelsLastPass> {
  void runOnOperation() override;

private:
  /// `arg` as channels_last: a contiguous op if it is known 4-D, else one
  /// guarded by a rank check.
  Value convertAtEntry(OpBuilder &builder, BlockArgument arg);
};

Value ChannelsLastPass::convertAtEntry(OpBuilder &builder, BlockArgument arg) {
  MLIRContext *ctx = &getContext();
  Location loc = arg.getLoc();
  auto toChannelsLast = [&](Value input) -> Value {
    return builder.create<ContiguousOp>(
        loc, input.getType(), input,
        MemoryFormatAttr::get(ctx, MemoryFormat::ChannelsLast));
  };
  auto type = cast<TorchTensorType>(arg.getType());
  if (type.getHasRank())
    return toChannelsLast(arg);
  AtenBuilder aten(builder, loc);
  Value rank = aten.node(AtenKind::dim, {arg}, IntType::get(ctx));
  Value is4d =
      aten.node(AtenKind::eq, {rank, aten.integer(4)}, BoolType::get(ctx));
  IfOp ifOp = aten.ifElse(
      is4d, type, [&] { return toChannelsLast(arg); },
      [&]() -> Value { return arg; });
  ifOp->setAttr("composer.channels_last_entry", builder.getUnitAttr());
  return ifOp.getResult(0);
}

void ChannelsLastPass::runOnOperation() {
  ModuleOp module = getOperation();
  SiteReport report(module, getArgument());
  func::FuncOp forward = lookupForward(module, getArgument());
  if (!forward)
    return signalPassFailure();

  // Weights: a property of the parameter, applied once at export. Every
  // convolution, typed or generic, transposed or not.
  SymbolTableCollection symbolTables;
  llvm::StringSet<> weights;
  forward.walk([&](Operation *op) {
    Value weight;
    if (auto conv = dyn_cast<ConvolutionLike>(op))
      weight = conv.getWeight();
    else if (auto generic = dyn_cast<GenericOp>(op))
      weight = getGenericConvolutionWeight(generic);
    if (!weight)
      return;
    GetParamOp read = getStateRead(weight);
    TorchTensorType type = getDeclaredStateType(weight, symbolTables);
    if (!read || !type)
      return report.skip(op, "weight is not a parameter");
    if (type.getRank() != 4)
      return report.skip(op, "not a 2-D convolution");
    weights.insert(read.getName());
  });
  for (Operation &op : module.getBody()->getOperations()) {
    auto param = dyn_cast<ParameterOp>(op);
    if (param && weights.contains(param.getSymName())) {
      param.setChannelsLast(true);
      report.match(param);
    }
  }

  // Inputs: converted once at entry.
  OpBuilder builder(forward.getBody());
  for (BlockArgument arg : forward.getArguments()) {
    auto type = dyn_cast<TorchTensorType>(arg.getType());
    if (!type || (type.getHasRank() && type.getRank() != 4) ||
        !reachesConvolution(arg) || isConvertedAtEntry(arg))
      continue;
    // Uses from before the conversion exists: those it must not replace.
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : arg.getUses())
      uses.push_back(&use);
    Value converted = convertAtEntry(builder, arg);
    for (OpOperand *use : uses)
      use->set(converted);
  }
  report.emit("convolution weights made channels_last");
}

} // namespace
