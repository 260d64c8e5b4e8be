//===- Autocast.cpp - autocast's dtype rules as a rewrite -----------------===//

#include "Autocast.h"
#include "PassUtils.h"
#include "composer/Analysis/Matchers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace composer;
using composer::torch_upstream::ScalarType;

namespace {

/// Whether `op` is a convolution whose `transposed` operand (argument 6 of
/// aten::_convolution and aten::convolution) is a constant true.
bool isTransposedConvolution(Operation *op) {
  if (auto conv = dyn_cast<ConvolutionLike>(op))
    return conv.isTransposed();
  auto generic = dyn_cast<GenericOp>(op);
  constexpr unsigned kTransposedOperand = 6;
  if (!generic ||
      !(generic.isKind(AtenKind::_convolution) ||
        generic.isKind(AtenKind::convolution)) ||
      op->getNumOperands() <= kTransposedOperand)
    return false;
  auto constant =
      op->getOperand(kTransposedOperand).getDefiningOp<ConstantOp>();
  auto flag = constant ? dyn_cast<BoolAttr>(constant.getValue()) : BoolAttr();
  return flag && flag.getValue();
}

/// The class autocast on `device` gives `op`: the table's, except that a
/// transposed convolution keeps fp32 where conv_transpose does (CPU:
/// LibTorch 1.13 has no bf16 kernel for it, and the call fails).
AutocastClass getAutocastClass(Operation *op, const AtenKindInfo *info,
                               AutocastDevice device) {
  if (!info)
    return AutocastClass::Follow;
  AutocastClass autocast = info->getAutocastClass(device);
  if (autocast == AutocastClass::Lower && isTransposedConvolution(op))
    return getAtenKindInfo(AtenKind::conv_transpose2d).getAutocastClass(device);
  // Cast to another dtype, an in-place op writes into the cast's copy, not
  // into its operand 0: that is unobservable only where nothing else reads
  // operand 0 and the op runs once per definition of it (not in a loop's
  // body over a value from outside). Elsewhere it runs in its operand's
  // dtype.
  bool castsItsOperand =
      autocast == AutocastClass::Lower || autocast == AutocastClass::Fp32;
  if (castsItsOperand && info->has(AtenTrait::InPlace) &&
      op->getNumOperands() > 0 &&
      (!op->getOperand(0).hasOneUse() ||
       op->getOperand(0).getParentBlock() != op->getBlock()))
    return AutocastClass::Follow;
  return autocast;
}

/// The operands of `op` its kind's autocast class names.
SmallVector<unsigned> getAutocastOperands(Operation *op,
                                          const AtenKindInfo &info) {
  SmallVector<unsigned> indices;
  for (unsigned i = 0, e = op->getNumOperands(); i < e; ++i)
    if (info.isAutocastOperand(i))
      indices.push_back(i);
  return indices;
}

/// Whether `predicate` holds for an operand of `op` or for a value its
/// regions yield (an if's or a loop's results are what its regions yield).
bool anyInput(Operation *op, function_ref<bool(Value)> predicate) {
  if (llvm::any_of(op->getOperands(), predicate))
    return true;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (!block.empty() &&
          block.back().hasTrait<mlir::OpTrait::IsTerminator>() &&
          llvm::any_of(block.back().getOperands(), predicate))
        return true;
  return false;
}

/// Whether `value` is known to be an fp32 tensor of rank 1 or more, by its
/// type or by the declared type of the state it reads.
bool isDimensionedFp32(Value value, SymbolTableCollection &symbolTables) {
  auto isIt = [](TorchTensorType type) {
    return type && type.getDtype() && type.getDtype().isF32() &&
           type.getHasRank() && type.getRank() > 0;
  };
  return isIt(dyn_cast<TorchTensorType>(value.getType())) ||
         isIt(getDeclaredStateType(value, symbolTables));
}

bool isKnownNonFloat(Value value) {
  auto type = dyn_cast<TorchTensorType>(value.getType());
  return type && type.getDtype() && !isa<FloatType>(type.getDtype());
}

} // namespace

bool composer::isLayerOrGroupNorm(Operation *op) {
  if (isa<LayerNormOp, GroupNormOp>(op))
    return true;
  auto generic = dyn_cast<GenericOp>(op);
  return generic && (generic.isKind(AtenKind::layer_norm) ||
                     generic.isKind(AtenKind::group_norm));
}

Value AutocastRewriter::castTo(Value value, ScalarType target,
                               Operation *user) {
  bool toLow = target == lowDtype;
  if (auto cast = value.getDefiningOp<ToDtypeOp>()) {
    // A cast to low of a value a rewrite (norms) has since made low.
    if (cast.getDtype() == target)
      return toLow && lowValues.contains(cast.getSelf()) ? cast.getSelf()
                                                         : value;
    // low -> f32 -> low is the identity.
    if (toLow && lowValues.contains(cast.getSelf()))
      return cast.getSelf();
    // An fp32 copy (an earlier run's, for an fp32 op) is cast from its
    // source instead; the copy goes once unused.
    if (toLow && cast.getDtype() == ScalarType::Float)
      value = cast.getSelf();
  }
  if (toLow && lowValues.contains(value))
    return value;
  MLIRContext *ctx = context;
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
  if (toLow) {
    lowValues.insert(cast);
    maybeLowValues.insert(cast);
  }
  return cast;
}

/// The list construction `value` comes from when its elements are tensors
/// (einsum's and multi_dot's operands).
static GenericOp getTensorListConstruct(Value value) {
  auto list = value.getDefiningOp<GenericOp>();
  auto type = dyn_cast<ListType>(value.getType());
  if (!list || list.getKind() != "prim::ListConstruct" || !type ||
      !isa<TorchTensorType>(type.getElementType()))
    return nullptr;
  return list;
}

bool AutocastRewriter::castOperands(Operation *op,
                                    MutableArrayRef<OpOperand> operands,
                                    ScalarType target) {
  bool changed = false;
  for (OpOperand &operand : operands) {
    if (GenericOp list = getTensorListConstruct(operand.get())) {
      // A list of its own, so that other users of the list are unaffected.
      OpBuilder builder(op);
      auto copy = cast<GenericOp>(builder.clone(*list));
      if (castOperands(copy, copy->getOpOperands(), target)) {
        operand.set(copy->getResult(0));
        changed = true;
      } else {
        copy->erase();
      }
      continue;
    }
    if (!isa<TorchTensorType>(operand.get().getType()))
      continue;
    Value cast = castTo(operand.get(), target, op);
    changed |= cast != operand.get();
    operand.set(cast);
  }
  return changed;
}

/// Whether `value` is in `values`, or is a loop-carried value whose initial
/// value is.
static bool isOrCarries(const llvm::DenseSet<Value> &values, Value value) {
  if (values.contains(value))
    return true;
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getArgNumber() == 0)
    return false;
  auto loop = dyn_cast<LoopOp>(arg.getOwner()->getParentOp());
  return loop && arg.getArgNumber() - 1 < loop.getInits().size() &&
         isOrCarries(values, loop.getInits()[arg.getArgNumber() - 1]);
}

bool AutocastRewriter::mayBeLow(Value value) const {
  return isOrCarries(maybeLowValues, value);
}

bool AutocastRewriter::mayHaveBeenLow(Value value) const {
  return isOrCarries(originalLowValues, value);
}

bool AutocastRewriter::mayBeCalledLow(Value value) const {
  return isOrCarries(callerDtypeValues, value);
}

static bool isCastUpWhenLow(Operation *op) {
  auto generic = dyn_cast_or_null<GenericOp>(op);
  return generic && generic.isKind(AtenKind::_autocast_to_full_precision);
}

bool AutocastRewriter::castUpWhenCalledLow(OpOperand &operand,
                                           Operation *user) {
  Value value = operand.get();
  if (!isa<TorchTensorType>(value.getType()) ||
      isCastUpWhenLow(value.getDefiningOp()))
    return false;
  // An integer, fp32 or fp64 tensor passes through unchanged.
  OpBuilder builder(user);
  AtenBuilder aten(builder, user->getLoc());
  operand.set(aten.node(AtenKind::_autocast_to_full_precision,
                        {value, aten.boolean(device != AutocastDevice::Cpu),
                         aten.boolean(device != AutocastDevice::Cuda)},
                        TorchTensorType::get(context)));
  return true;
}

void AutocastRewriter::restoreResultDtype(OpOperand &operand, Operation *user) {
  Value value = operand.get();
  if (isa<TorchTensorType>(value.getType())) {
    if (mayBeLow(value) && !mayHaveBeenLow(value))
      operand.set(castTo(value, ScalarType::Float, user));
    return;
  }
  // A tuple, list or dict of outputs: its elements (a dict's keys are not
  // tensors), where nothing else uses it.
  auto construct = value.getDefiningOp<GenericOp>();
  if (construct && construct->hasOneUse() &&
      (construct.getKind() == "prim::TupleConstruct" ||
       construct.getKind() == "prim::DictConstruct" ||
       getTensorListConstruct(value))) {
    for (OpOperand &element : construct->getOpOperands())
      restoreResultDtype(element, construct);
    return;
  }
  // A list or dict the model fills and never reads (torchvision's
  // segmentation models: `result["out"] = x`): the elements it puts in.
  SmallVector<OpOperand *> elements;
  for (OpOperand &use : value.getUses()) {
    if (use.getOwner() == user)
      continue;
    auto fill = dyn_cast<GenericOp>(use.getOwner());
    if (!fill || use.getOperandNumber() != 0)
      return;
    if (fill.isKind(AtenKind::_set_item) && fill->getNumOperands() == 3)
      elements.push_back(&fill->getOpOperand(2));
    else if (fill.isKind(AtenKind::append) && fill->getNumOperands() == 2)
      elements.push_back(&fill->getOpOperand(1));
    else
      return;
  }
  for (OpOperand *element : elements)
    restoreResultDtype(*element, element->getOwner());
}

bool AutocastRewriter::isOnlyReadLow(Value value) const {
  if (value.use_empty())
    return false;
  for (Operation *user : value.getUsers()) {
    if (auto cast = dyn_cast<ToDtypeOp>(user)) {
      if (cast.getDtype() != lowDtype)
        return false;
      continue;
    }
    // The user computes from `value` alone (its other operands are scalars
    // or options), so low in, low out; its result must in turn be read low.
    const AtenKindInfo *info = lookupAtenKind(user);
    if (!info || info->getAutocastClass(device) != AutocastClass::Follow ||
        info->has(AtenTrait::InPlace) ||
        !(info->has(AtenTrait::ElementwiseUnary) ||
          info->has(AtenTrait::DropoutLike) || info->has(AtenTrait::View)) ||
        user->getNumResults() != 1 || user->getNumRegions() != 0 ||
        user->getOperand(0) != value ||
        llvm::any_of(user->getOperands().drop_front(),
                     [](Value operand) {
                       return isa<TorchTensorType>(operand.getType());
                     }) ||
        !isOnlyReadLow(user->getResult(0)))
      return false;
  }
  return true;
}

void AutocastRewriter::runLowWhereOnlyReadLow(Operation *op) {
  const AtenKindInfo *info = lookupAtenKind(op);
  if (!info || !info->has(AtenTrait::AccumulatesInFp32) ||
      op->getNumOperands() == 0 || op->getNumResults() != 1)
    return;
  auto upcast = op->getOperand(0).getDefiningOp<ToDtypeOp>();
  if (!upcast || upcast.getDtype() != ScalarType::Float ||
      !mayBeLow(upcast.getSelf()) || !isOnlyReadLow(op->getResult(0)))
    return;
  // Where the input is fp32 after all, the op runs in fp32 as before.
  op->setOperand(0, upcast.getSelf());
  maybeLowValues.insert(op->getResult(0));
}

bool AutocastRewriter::makeDtypesAgree(Operation *op,
                                       ArrayRef<unsigned> indices,
                                       bool inplace) {
  SmallVector<unsigned> tensors;
  for (unsigned index : indices)
    if (index < op->getNumOperands() &&
        isa<TorchTensorType>(op->getOperand(index).getType()) &&
        !isKnownNonFloat(op->getOperand(index)))
      tensors.push_back(index);
  auto isLow = [&](unsigned i) {
    return lowValues.contains(op->getOperand(i));
  };
  auto isMaybeLow = [&](unsigned i) { return mayBeLow(op->getOperand(i)); };
  // All fp32 (no low value reaches them) or all known low: they agree.
  if (tensors.size() < 2 || llvm::none_of(tensors, isMaybeLow) ||
      llvm::all_of(tensors, isLow))
    return false;
  bool changed = false;
  if (inplace && tensors.front() == 0) {
    // The dtype of `self` is fixed; what it is may only be known at run time.
    Value self = op->getOperand(0);
    OpBuilder builder(op);
    AtenBuilder aten(builder, op->getLoc());
    for (unsigned index : ArrayRef(tensors).drop_front()) {
      Value other = op->getOperand(index);
      auto typeAs = other.getDefiningOp<GenericOp>();
      if ((lowValues.contains(self) && lowValues.contains(other)) ||
          (typeAs && typeAs.isKind(AtenKind::type_as) &&
           typeAs.getOperand(1) == self))
        continue;
      op->setOperand(index, aten.node(AtenKind::type_as, {other, self},
                                      TorchTensorType::get(context)));
      changed = true;
    }
    return changed;
  }
  for (unsigned index : tensors) {
    if (!isMaybeLow(index))
      continue;
    Value cast = castTo(op->getOperand(index), ScalarType::Float, op);
    changed |= cast != op->getOperand(index);
    op->setOperand(index, cast);
  }
  return changed;
}

void AutocastRewriter::run(ModuleOp module, SiteReport &report,
                           function_ref<bool(Operation *)> reported) {
  lowValues.clear();
  maybeLowValues.clear();
  originalLowValues.clear();
  callerDtypeValues.clear();
  // What the model itself keeps in the low dtype, by known types: a value's
  // own, or the declared type of the state it reads.
  Type lowType = getDtypeType(context, lowDtype);
  SymbolTableCollection symbolTables;
  auto seedOriginalLow = [&](Value value) {
    auto type = dyn_cast<TorchTensorType>(value.getType());
    if (!type)
      return;
    TorchTensorType declared = getDeclaredStateType(value, symbolTables);
    if (type.getDtype() == lowType ||
        (declared && declared.getDtype() == lowType))
      originalLowValues.insert(value);
  };
  // Post-order: operands (and the yields of an op's regions) are seen
  // before the op.
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    ops.push_back(op);
    forEachDefinedValue(op, seedOriginalLow);
  });
  // A model's tensor inputs of unknown dtype, or of a 16-bit float other
  // than the low dtype (an fp16 input under bf16): autocast casts them up
  // at an fp32 op when called low. Inputs in the low dtype are the model's
  // own low values, seeded above.
  auto mayBeCallerLow = [&](TorchTensorType type) {
    auto floatType = dyn_cast_or_null<FloatType>(type.getDtype());
    return !type.getDtype() ||
           (floatType && floatType.getWidth() < 32 && floatType != lowType);
  };
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      for (BlockArgument arg : func.getArguments())
        if (auto type = dyn_cast<TorchTensorType>(arg.getType());
            type && mayBeCallerLow(type))
          callerDtypeValues.insert(arg);
  for (Operation *op : ops) {
    auto generic = dyn_cast<GenericOp>(op);
    const AtenKindInfo *info = lookupAtenKind(op);
    AutocastClass autocast = getAutocastClass(op, info, device);
    // Before the rewrite, an op that is not a cast was low where an input
    // was: mixed float dtypes fail in matmul-like ops and promote elsewhere.
    bool wasLow = anyInput(op, [&](Value v) { return mayHaveBeenLow(v); });
    if (auto cast = dyn_cast<ToDtypeOp>(op))
      wasLow = cast.getDtype() == lowDtype;
    if (wasLow)
      originalLowValues.insert(op->result_begin(), op->result_end());
    bool matmulLike = autocast == AutocastClass::Lower;
    bool lowNorm = lowNorms && isLayerOrGroupNorm(op);
    // Batch norm is on neither of autocast's lists (CPU in LibTorch 1.13,
    // CUDA): it follows its input, and its kernels take a low input with
    // fp32 weights and running statistics, accumulating in fp32.
    bool fp32 = !lowNorm && autocast == AutocastClass::Fp32;
    if (!matmulLike && !lowNorm && !fp32) {
      // Follows its inputs, so may be low where one of them may be.
      bool inplace = info && info->has(AtenTrait::InPlace);
      bool changed = false;
      if (autocast == AutocastClass::SameDtype)
        changed = makeDtypesAgree(op, getAutocastOperands(op, *info), inplace);
      SmallVector<unsigned> promoted;
      if (autocast == AutocastClass::Promote)
        promoted = getAutocastOperands(op, *info);
      // Only where an operand is surely not low: an op of values that may
      // all be low keeps their dtype, as under autocast.
      if (!changed && !promoted.empty() &&
          llvm::any_of(promoted, [&](unsigned i) {
            return isa<TorchTensorType>(op->getOperand(i).getType()) &&
                   !isKnownNonFloat(op->getOperand(i)) &&
                   // A number a trace recorded: type promotion lets it
                   // change no dimensioned operand's dtype of its category.
                   !isZeroDimConstant(op->getOperand(i)) &&
                   !mayBeLow(op->getOperand(i));
          }))
        changed = makeDtypesAgree(op, promoted, inplace);
      if (changed && reported(op))
        report.match(op);
      bool low = anyInput(op, [&](Value v) { return mayBeLow(v); });
      if (auto cast = dyn_cast<ToDtypeOp>(op)) {
        // A cast sets the dtype whatever its input (a run before this one
        // may have inserted it).
        low = cast.getDtype() == lowDtype;
        if (low)
          lowValues.insert(cast);
      }
      if (low)
        maybeLowValues.insert(op->result_begin(), op->result_end());
      // An fp32 tensor with dimensions among the operands decides the
      // result's dtype (type promotion; an embedding's weight), whatever
      // the caller passes; an in-place op's result has its self's dtype.
      ValueRange deciding = op->getOperands();
      if (inplace && !deciding.empty())
        deciding = deciding.take_front();
      if (!isa<ToDtypeOp>(op) && !isCastUpWhenLow(op) &&
          anyInput(op, [&](Value v) { return mayBeCalledLow(v); }) &&
          llvm::none_of(deciding, [&](Value v) {
            return isDimensionedFp32(v, symbolTables);
          }))
        callerDtypeValues.insert(op->result_begin(), op->result_end());
      continue;
    }
    ScalarType target = fp32 ? ScalarType::Float : lowDtype;
    bool changed = false;
    for (OpOperand &operand : op->getOpOperands()) {
      // A typed op's or a matmul-like op's float inputs are those its kind
      // names: a mask after them keeps its dtype.
      if (!(generic && fp32) && info &&
          !info->isAutocastOperand(operand.getOperandNumber()))
        continue;
      // An fp32 op casts only what may be low, as autocast casts only low
      // floats up: fp32 and fp64 operands, and integer ones (targets,
      // indices), keep their dtype. What the caller decides is cast when
      // called.
      if (fp32 && !mayBeLow(operand.get()) && !mayHaveBeenLow(operand.get())) {
        if (mayBeCalledLow(operand.get()))
          changed |= castUpWhenCalledLow(operand, op);
        continue;
      }
      changed |= castOperands(op, MutableArrayRef(operand), target);
    }
    // What the types knew of the old result dtype no longer holds; it is
    // left unknown (rather than set) so that region results and yields
    // typed with the old dtype stay compatible.
    for (Value result : op->getResults()) {
      if (target == lowDtype) {
        lowValues.insert(result);
        maybeLowValues.insert(result);
      }
      if (auto type = dyn_cast<TorchTensorType>(result.getType()))
        if (type.getDtype())
          result.setType(TorchTensorType::get(context, type.getHasRank(),
                                              type.getSizes(), Type()));
    }
    if (!reported(op))
      continue;
    if (changed)
      report.match(op);
    else
      report.skip(op, fp32 ? "no operand may be low"
                           : "already in the target dtype");
  }
  // Softmax before a low matmul: its fp32 result would be rounded anyway.
  for (Operation *op : ops)
    runLowWhereOnlyReadLow(op);
  // Casts whose results nobody uses any more (a cancelled pair's first half).
  module.walk([](ToDtypeOp cast) {
    if (cast->use_empty())
      cast->erase();
  });
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    // The model's interface keeps its dtypes: results the rewrite made low
    // go back to fp32, so that a loss or metric computed outside the model
    // runs in fp32 as under autocast, and meets fp32 targets (mse_loss's
    // backward fails on a bf16 output against an fp32 target).
    Operation *ret = func.getBody().back().getTerminator();
    for (OpOperand &result : ret->getOpOperands())
      restoreResultDtype(result, ret);
  }
  syncFunctionTypes(module);
}
