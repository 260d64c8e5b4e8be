//===- PassUtils.cpp - what method passes share ---------------------------===//

#include "PassUtils.h"

#include "composer/Support/StatePaths.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Rewrite/PatternApplicator.h"

using namespace mlir;
using namespace composer;

func::FuncOp composer::lookupForward(ModuleOp module, StringRef passName) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    module.emitError(passName) << ": no func.func @forward";
  return forward;
}

Operation *composer::lookupStateDecl(GetParamOp read,
                                     SymbolTableCollection &symbolTables) {
  return symbolTables.lookupNearestSymbolFrom(read, read.getNameAttr());
}

GetParamOp composer::getStateRead(Value value) {
  Operation *def = value.getDefiningOp();
  while (def && def->hasTrait<composer::OpTrait::WeightView>() &&
         def->getNumOperands() > 0)
    def = def->getOperand(0).getDefiningOp();
  return dyn_cast_or_null<GetParamOp>(def);
}

TorchTensorType
composer::getDeclaredStateType(Value value,
                               SymbolTableCollection &symbolTables) {
  GetParamOp read = getStateRead(value);
  return read ? read.getDeclaredType(symbolTables) : TorchTensorType();
}

std::optional<std::string> composer::getStateOwnerPath(Value value) {
  GetParamOp read = getStateRead(value);
  if (!read)
    return std::nullopt;
  return std::string(getStateOwner(read.getName()));
}

std::string composer::getModulePath(Operation *op) {
  if (auto named = dyn_cast<NameLoc>(op->getLoc()))
    return named.getName().str();
  return {};
}

std::optional<int64_t>
composer::inferChannels(Value value, SymbolTableCollection &symbolTables) {
  if (auto type = dyn_cast<TorchTensorType>(value.getType()))
    if (type.getHasRank() && type.getRank() >= 2 &&
        type.getSizes()[1] != TorchTensorType::kUnknownSize)
      return type.getSizes()[1];
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  // A concatenation along the channels (SqueezeNet's Fire, GoogLeNet's
  // Inception): the sum of its operands' channels, when all are known.
  if (auto cat = dyn_cast<CatOp>(def)) {
    auto list = cat.getTensors().getDefiningOp<GenericOp>();
    if (cat.getDim() != 1 || !list || list.getKind() != "prim::ListConstruct")
      return std::nullopt;
    int64_t total = 0;
    for (Value operand : list->getOperands()) {
      std::optional<int64_t> channels = inferChannels(operand, symbolTables);
      if (!channels)
        return std::nullopt;
      total += *channels;
    }
    return total;
  }
  if (auto conv = dyn_cast<ConvolutionLike>(def)) {
    TorchTensorType weightType =
        getDeclaredStateType(conv.getWeight(), symbolTables);
    if (conv.isTransposed() || !weightType)
      return std::nullopt;
    return weightType.getSizes()[0];
  }
  if (!def->hasTrait<composer::OpTrait::PreservesLayout>())
    return std::nullopt;
  for (OpOperand &operand : def->getOpOperands())
    if (isLayoutSource(operand))
      if (std::optional<int64_t> channels =
              inferChannels(operand.get(), symbolTables))
        return channels;
  // The other tensor operands of a layout-preserving op are its parameters;
  // a 1-D one (a norm's weight or running statistics) is per channel.
  for (OpOperand &operand : def->getOpOperands()) {
    if (isLayoutSource(operand))
      continue;
    TorchTensorType type = getDeclaredStateType(operand.get(), symbolTables);
    if (type && type.getHasRank() && type.getRank() == 1)
      return type.getSizes()[0];
  }
  return std::nullopt;
}

template <typename DeclOp>
Value composer::createState(OpBuilder &builder, SymbolTable &moduleSymbols,
                            StringRef baseName, TorchTensorType type,
                            Attribute init, Location loc) {
  MLIRContext *ctx = builder.getContext();
  std::string name = baseName.str();
  for (unsigned suffix = 1; Operation *existing = moduleSymbols.lookup(name);
       ++suffix) {
    // The same declaration again (one module's method reached on two
    // branches, say): read the one there is.
    auto same = dyn_cast<DeclOp>(existing);
    if (same && same.getType() == type && same.getInitializerAttr() == init)
      return builder.create<GetParamOp>(loc, type,
                                        FlatSymbolRefAttr::get(ctx, name));
    name = (baseName + "_" + Twine(suffix)).str();
  }
  {
    // Declarations stay together, before @forward.
    OpBuilder::InsertionGuard guard(builder);
    auto module = cast<ModuleOp>(moduleSymbols.getOp());
    auto funcs = module.getOps<func::FuncOp>();
    if (funcs.empty())
      builder.setInsertionPointToEnd(module.getBody());
    else
      builder.setInsertionPoint(*funcs.begin());
    auto decl = builder.create<DeclOp>(loc, builder.getStringAttr(name),
                                       TypeAttr::get(type),
                                       /*frozen=*/UnitAttr(),
                                       /*channels_last=*/UnitAttr(), init);
    moduleSymbols.insert(decl);
  }
  return builder.create<GetParamOp>(loc, type,
                                    FlatSymbolRefAttr::get(ctx, name));
}

template Value composer::createState<ParameterOp>(OpBuilder &, SymbolTable &,
                                                  StringRef, TorchTensorType,
                                                  Attribute, Location);
template Value composer::createState<BufferOp>(OpBuilder &, SymbolTable &,
                                               StringRef, TorchTensorType,
                                               Attribute, Location);

void composer::forEachDefinedValue(Operation *op,
                                   function_ref<void(Value)> fn) {
  for (Value result : op->getResults())
    fn(result);
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Value arg : block.getArguments())
        fn(arg);
}

void composer::syncFunctionTypes(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    Operation *ret = func.getBody().back().getTerminator();
    func.setFunctionType(FunctionType::get(module.getContext(),
                                           func.front().getArgumentTypes(),
                                           ret->getOperandTypes()));
  }
}

void composer::applyPatternsOnce(Operation *root,
                                 const FrozenRewritePatternSet &patterns) {
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) { ops.push_back(op); });
  // A rewrite may erase ops still ahead in the list (a fusion taking its
  // neighbour); those are skipped, never touched.
  struct ErasureListener : RewriterBase::Listener {
    void notifyOperationErased(Operation *op) override { erased.insert(op); }
    llvm::DenseSet<Operation *> erased;
  } listener;
  PatternApplicator applicator(patterns);
  applicator.applyDefaultCostModel();
  PatternRewriter rewriter(root->getContext());
  rewriter.setListener(&listener);
  for (Operation *op : ops) {
    if (listener.erased.contains(op))
      continue;
    rewriter.setInsertionPoint(op);
    (void)applicator.matchAndRewrite(op, rewriter);
  }
}
