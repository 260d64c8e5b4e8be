//===- PassUtils.cpp - what method passes share ---------------------------===//

#include "composer/Passes/PassUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace composer;

func::FuncOp composer::lookupForward(ModuleOp module, StringRef passName) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    module.emitError(passName) << ": no func.func @forward";
  return forward;
}

TorchTensorType composer::getDeclaredStateType(Value value) {
  auto read = value.getDefiningOp<GetParamOp>();
  if (!read)
    return {};
  Operation *decl =
      SymbolTable::lookupNearestSymbolFrom(read, read.getNameAttr());
  if (auto param = dyn_cast_or_null<ParameterOp>(decl))
    return param.getTensorType();
  if (auto buffer = dyn_cast_or_null<BufferOp>(decl))
    return buffer.getTensorType();
  return {};
}

std::optional<std::string> composer::getStateOwnerPath(Value value) {
  auto read = value.getDefiningOp<GetParamOp>();
  if (!read)
    return std::nullopt;
  StringRef name = read.getName();
  size_t dot = name.rfind('.');
  return dot == StringRef::npos ? std::string() : name.take_front(dot).str();
}

std::string composer::getModulePath(Operation *op) {
  if (auto named = dyn_cast<NameLoc>(op->getLoc()))
    return named.getName().str();
  return {};
}

std::optional<int64_t> composer::inferChannels(Value value) {
  if (auto type = dyn_cast<TorchTensorType>(value.getType()))
    if (type.getHasRank() && type.getRank() >= 2 &&
        type.getSizes()[1] != TorchTensorType::kUnknownSize)
      return type.getSizes()[1];
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  auto outChannels = [](Value weight) -> std::optional<int64_t> {
    if (TorchTensorType type = getDeclaredStateType(weight))
      return type.getSizes()[0];
    return std::nullopt;
  };
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(def)
      .Case<Conv2dOp>(
          [&](Conv2dOp conv) { return outChannels(conv.getWeight()); })
      .Case<ConvolutionOp>([&](ConvolutionOp conv) -> std::optional<int64_t> {
        if (conv.getTransposed())
          return std::nullopt;
        return outChannels(conv.getWeight());
      })
      .Case<BatchNormOp, GhostBatchNormOp>([&](auto bn) {
        if (std::optional<int64_t> channels = outChannels(bn.getRunningMean()))
          return channels;
        return inferChannels(bn.getInput());
      })
      .Case<ReluOp, SigmoidOp, SiluOp, HardswishOp, GeluOp, DropoutOp,
            MaxPool2dOp, AvgPool2dOp, AdaptiveAvgPool2dOp, ContiguousOp,
            BlurPool2dOp, GroupNormOp>(
          [](Operation *op) { return inferChannels(op->getOperand(0)); })
      .Case<AddOp, MulOp>([](Operation *op) {
        if (std::optional<int64_t> channels = inferChannels(op->getOperand(0)))
          return channels;
        return inferChannels(op->getOperand(1));
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::string composer::joinStatePath(StringRef modulePath, StringRef name) {
  return modulePath.empty() ? name.str() : (modulePath + "." + name).str();
}

/// Declares a parameter or buffer named `baseName` (or with a numeric
/// suffix if an unrelated symbol has the name) before @forward, and reads it.
template <typename DeclOp>
static Value createState(OpBuilder &builder, ModuleOp module,
                         StringRef baseName, TorchTensorType type,
                         Attribute init, Location loc) {
  MLIRContext *ctx = module.getContext();
  SymbolTable symbols(module);
  std::string name = baseName.str();
  for (unsigned suffix = 1; Operation *existing = symbols.lookup(name);
       ++suffix) {
    // The same declaration again (one module's method reached on two
    // branches, say): read the one there is.
    auto same = dyn_cast<DeclOp>(existing);
    if (same && same.getType() == type && same.getInitializerAttr() == init)
      return builder.create<GetParamOp>(loc, type,
                                        FlatSymbolRefAttr::get(ctx, name));
    name = (baseName + "_" + Twine(suffix)).str();
  }
  // Declarations stay together, before @forward.
  OpBuilder declBuilder(ctx);
  auto funcs = module.getOps<func::FuncOp>();
  if (funcs.empty())
    declBuilder.setInsertionPointToEnd(module.getBody());
  else
    declBuilder.setInsertionPoint(*funcs.begin());
  declBuilder.create<DeclOp>(loc, builder.getStringAttr(name),
                             TypeAttr::get(type), /*frozen=*/UnitAttr(),
                             /*channels_last=*/UnitAttr(), init);
  return builder.create<GetParamOp>(loc, type,
                                    FlatSymbolRefAttr::get(ctx, name));
}

Value composer::createBuffer(OpBuilder &builder, ModuleOp module,
                             StringRef baseName, TorchTensorType type,
                             Attribute init, Location loc) {
  return createState<BufferOp>(builder, module, baseName, type, init, loc);
}

Value composer::createParameter(OpBuilder &builder, ModuleOp module,
                                StringRef baseName, TorchTensorType type,
                                Attribute init, Location loc) {
  return createState<ParameterOp>(builder, module, baseName, type, init, loc);
}
