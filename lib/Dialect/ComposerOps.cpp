//===- ComposerOps.cpp - composer dialect ops -----------------------------===//

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace composer;

#include "composer/Dialect/ComposerInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "composer/Dialect/ComposerOps.cpp.inc"

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

static LogicalResult verifyStateDecl(Operation *op, StringRef name,
                                     TorchTensorType type) {
  if (name.empty())
    return op->emitOpError("needs a non-empty state_dict key");
  if (name.front() == '.' || name.back() == '.' || name.contains(".."))
    return op->emitOpError("state_dict key '")
           << name << "' has an empty path component";
  if (!type.hasStaticShape() || !type.hasDtype())
    return op->emitOpError("needs a fully known shape and dtype, got ")
           << type;
  return success();
}

LogicalResult ParameterOp::verify() {
  return verifyStateDecl(*this, getSymName(), getTensorType());
}

LogicalResult BufferOp::verify() {
  return verifyStateDecl(*this, getSymName(), getTensorType());
}

LogicalResult GetParamOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Operation *decl = symbols.lookupNearestSymbolFrom(*this, getNameAttr());
  if (!decl || !isa<ParameterOp, BufferOp>(decl))
    return emitOpError("'") << getName()
                            << "' does not name a composer.parameter or "
                               "composer.buffer";
  auto declType = cast<TorchTensorType>(
      isa<ParameterOp>(decl) ? cast<ParameterOp>(decl).getType()
                             : cast<BufferOp>(decl).getType());
  auto resultType = cast<TorchTensorType>(getType());
  if (!resultType.meet(declType))
    return emitOpError("result type ")
           << resultType << " contradicts the declared type " << declType;
  return success();
}

static LogicalResult verifyAttrPath(Operation *op, StringRef path) {
  if (path.empty() || path.front() == '.' || path.back() == '.' ||
      path.contains(".."))
    return op->emitOpError("expected a dotted attribute path, got '")
           << path << "'";
  return success();
}

LogicalResult GetAttrOp::verify() { return verifyAttrPath(*this, getPath()); }
LogicalResult SetAttrOp::verify() { return verifyAttrPath(*this, getPath()); }

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

ParseResult ConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  Attribute value;
  Type type;
  if (parser.parseLParen())
    return failure();
  if (succeeded(parser.parseOptionalKeyword("none"))) {
    value = UnitAttr::get(parser.getContext());
  } else if (parser.parseAttribute(value)) {
    return failure();
  }
  if (parser.parseRParen() || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type))
    return failure();
  // Scalars are printed without their builtin type; give them the canonical
  // one back so that printing round-trips.
  Builder builder(parser.getContext());
  if (auto intAttr = dyn_cast<IntegerAttr>(value)) {
    if (isa<BoolType>(type))
      value = builder.getBoolAttr(intAttr.getValue().getBoolValue());
    else if (isa<TorchFloatType>(type))
      value = builder.getF64FloatAttr(intAttr.getValue().getSExtValue());
    else if (!intAttr.getType().isInteger(1))
      value = builder.getI64IntegerAttr(intAttr.getValue().getSExtValue());
  }
  result.addAttribute("value", value);
  result.addTypes(type);
  return success();
}

void ConstantOp::print(OpAsmPrinter &p) {
  p << '(';
  Attribute value = getValue();
  if (isa<UnitAttr>(value))
    p << "none";
  else if (isa<IntegerAttr, FloatAttr>(value))
    p.printAttributeWithoutType(value);
  else
    p.printAttribute(value);
  p << ')';
  p.printOptionalAttrDict((*this)->getAttrs(), {"value"});
  p << " : " << getType();
}

LogicalResult ConstantOp::verify() {
  Attribute value = getValue();
  Type type = getType();
  auto mismatch = [&]() {
    return emitOpError("value ") << value << " is not a constant of type "
                                 << type;
  };
  if (isa<IntType>(type))
    return isa<IntegerAttr>(value) && !cast<IntegerAttr>(value).getType().isInteger(1)
               ? success()
               : mismatch();
  if (isa<BoolType>(type))
    return isa<BoolAttr>(value) ? success() : mismatch();
  if (isa<TorchFloatType>(type))
    return isa<FloatAttr>(value) ? success() : mismatch();
  if (isa<NumberType>(type))
    return isa<IntegerAttr, FloatAttr>(value) ? success() : mismatch();
  if (isa<StrType, DeviceType>(type))
    return isa<StringAttr>(value) ? success() : mismatch();
  if (isa<TorchNoneType>(type))
    return isa<UnitAttr>(value) ? success() : mismatch();
  if (isa<ListType, TorchTupleType>(type))
    return isa<ArrayAttr>(value) ? success() : mismatch();
  if (auto tensorType = dyn_cast<TorchTensorType>(type)) {
    auto elements = dyn_cast<DenseElementsAttr>(value);
    if (!elements)
      return mismatch();
    auto shaped = elements.getType();
    auto expected = TorchTensorType::get(getContext(), true, shaped.getShape(),
                                    shaped.getElementType());
    if (!expected.meet(tensorType))
      return emitOpError("tensor value of type ")
             << shaped << " contradicts result type " << type;
    return success();
  }
  return emitOpError("cannot hold a constant of type ") << type;
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// GenericOp
//===----------------------------------------------------------------------===//

LogicalResult GenericOp::verify() {
  StringRef kind = getKind();
  size_t sep = kind.find("::");
  if (sep == StringRef::npos || sep == 0 || sep + 2 == kind.size())
    return emitOpError("expected a node kind 'namespace::name', got '")
           << kind << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

bool composer::areCompatibleTypes(Type lhs, Type rhs) {
  if (lhs == rhs)
    return true;
  // TorchScript subtyping: T and None flow into Optional[T].
  if (auto optional = dyn_cast<OptionalType>(rhs))
    return isa<TorchNoneType>(lhs) ||
           areCompatibleTypes(lhs, optional.getElementType());
  auto lhsTensor = dyn_cast<TorchTensorType>(lhs);
  auto rhsTensor = dyn_cast<TorchTensorType>(rhs);
  return lhsTensor && rhsTensor && lhsTensor.meet(rhsTensor);
}

static bool allCompatible(TypeRange from, TypeRange to) {
  return from.size() == to.size() &&
         llvm::all_of(llvm::zip_equal(from, to), [](auto pair) {
           return areCompatibleTypes(std::get<0>(pair), std::get<1>(pair));
         });
}

static LogicalResult verifyYield(Operation *op, Region &region,
                                 TypeRange expected, StringRef what) {
  auto yield = dyn_cast<YieldOp>(region.front().getTerminator());
  if (!yield)
    return op->emitOpError(what) << " must end with composer.yield";
  if (!allCompatible(yield.getValues().getTypes(), expected))
    return op->emitOpError(what)
           << " yields (" << yield.getValues().getTypes()
           << ") but the op expects (" << expected << ")";
  return success();
}

LogicalResult IfOp::verify() {
  for (Region *region : {&getThenRegion(), &getElseRegion()})
    if (region->getNumArguments() != 0)
      return emitOpError("regions take no arguments");
  if (failed(verifyYield(*this, getThenRegion(), getResultTypes(),
                         "then region")))
    return failure();
  return verifyYield(*this, getElseRegion(), getResultTypes(), "else region");
}

LogicalResult LoopOp::verify() {
  // Initial values may be subtypes of the carried types, as in TorchScript.
  if (!allCompatible(getInits().getTypes(), getResultTypes()))
    return emitOpError("carries (")
           << getInits().getTypes() << ") but returns (" << getResultTypes()
           << ")";
  Block &body = getBody().front();
  SmallVector<Type> argTypes{IntType::get(getContext())};
  llvm::append_range(argTypes, getResultTypes());
  if (!allCompatible(body.getArgumentTypes(), argTypes))
    return emitOpError("body must take the index (!composer.int) and the "
                       "carried values");
  SmallVector<Type> yieldTypes{BoolType::get(getContext())};
  llvm::append_range(yieldTypes, getResultTypes());
  return verifyYield(*this, getBody(), yieldTypes, "body");
}

//===----------------------------------------------------------------------===//
// Typed operators
//===----------------------------------------------------------------------===//

static LogicalResult verifyWindow(Operation *op, StringRef name,
                                  ArrayRef<int64_t> values, size_t rank,
                                  int64_t minimum) {
  if (values.size() != rank)
    return op->emitOpError(name) << " needs " << rank << " values, got "
                                 << values.size();
  for (int64_t value : values)
    if (value < minimum)
      return op->emitOpError(name)
             << " values must be >= " << minimum << ", got " << value;
  return success();
}

static LogicalResult verifyConvWeight(Operation *op, Value weight,
                                      int64_t groups, size_t spatialRank) {
  if (groups < 1)
    return op->emitOpError("groups must be >= 1, got ") << groups;
  auto type = cast<TorchTensorType>(weight.getType());
  if (type.getHasRank() && type.getRank() != int64_t(spatialRank) + 2)
    return op->emitOpError("weight must have rank ")
           << spatialRank + 2 << ", got " << type;
  if (type.getHasRank() && type.getSizes()[0] != TorchTensorType::kUnknownSize &&
      type.getSizes()[0] % groups != 0)
    return op->emitOpError("out_channels ")
           << type.getSizes()[0] << " is not divisible by groups " << groups;
  return success();
}

LogicalResult Conv2dOp::verify() {
  if (failed(verifyWindow(*this, "stride", getStride(), 2, 1)) ||
      failed(verifyWindow(*this, "padding", getPadding(), 2, 0)) ||
      failed(verifyWindow(*this, "dilation", getDilation(), 2, 1)))
    return failure();
  return verifyConvWeight(*this, getWeight(), getGroups(), 2);
}

LogicalResult ConvolutionOp::verify() {
  size_t rank = getStride().size();
  if (rank < 1 || rank > 3)
    return emitOpError("expected 1 to 3 spatial dimensions, got ") << rank;
  if (failed(verifyWindow(*this, "stride", getStride(), rank, 1)) ||
      failed(verifyWindow(*this, "padding", getPadding(), rank, 0)) ||
      failed(verifyWindow(*this, "dilation", getDilation(), rank, 1)))
    return failure();
  if (getTransposed())
    return success();
  return verifyConvWeight(*this, getWeight(), getGroups(), rank);
}

// Ops with an in-place variant write their first operand when `inplace`;
// dropout also advances the global RNG.
template <typename OpT>
static void
getMaybeInplaceEffects(OpT op, bool drawsRandom,
                       SmallVectorImpl<SideEffects::EffectInstance<
                           MemoryEffects::Effect>> &effects) {
  if (op.getInplace())
    effects.emplace_back(MemoryEffects::Write::get(),
                         &op->getOpOperand(0));
  if (drawsRandom) {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
}

#define COMPOSER_INPLACE_EFFECTS(OP, RANDOM)                                   \
  void OP::getEffects(                                                         \
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>      \
          &effects) {                                                          \
    getMaybeInplaceEffects(*this, RANDOM, effects);                            \
  }
COMPOSER_INPLACE_EFFECTS(ReluOp, false)
COMPOSER_INPLACE_EFFECTS(SigmoidOp, false)
COMPOSER_INPLACE_EFFECTS(SiluOp, false)
COMPOSER_INPLACE_EFFECTS(HardswishOp, false)
COMPOSER_INPLACE_EFFECTS(AddOp, false)
COMPOSER_INPLACE_EFFECTS(MulOp, false)
COMPOSER_INPLACE_EFFECTS(DropoutOp, true)
#undef COMPOSER_INPLACE_EFFECTS
