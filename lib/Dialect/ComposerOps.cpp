//===- ComposerOps.cpp - composer dialect ops -----------------------------===//

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace composer;

#include "composer/Dialect/ComposerInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "composer/Dialect/ComposerOps.cpp.inc"

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

static LogicalResult verifyStateDecl(Operation *op, StringRef name,
                                     TorchTensorType type, bool channelsLast) {
  if (name.empty())
    return op->emitOpError("needs a non-empty state_dict key");
  if (name.front() == '.' || name.back() == '.' || name.contains(".."))
    return op->emitOpError("state_dict key '")
           << name << "' has an empty path component";
  if (!type.hasStaticShape() || !type.hasDtype())
    return op->emitOpError("needs a fully known shape and dtype, got ") << type;
  if (channelsLast && type.getRank() != 4)
    return op->emitOpError("channels_last needs a 4-D tensor, got ") << type;
  int64_t numElements = 1;
  for (int64_t size : type.getSizes())
    if (llvm::MulOverflow(numElements, size, numElements))
      return op->emitOpError("has more elements than 64 bits count: ") << type;
  return success();
}

LogicalResult ParameterOp::verify() {
  return verifyStateDecl(*this, getSymName(), getTensorType(),
                         getChannelsLast());
}

LogicalResult BufferOp::verify() {
  return verifyStateDecl(*this, getSymName(), getTensorType(),
                         getChannelsLast());
}

TorchTensorType
GetParamOp::getDeclaredType(SymbolTableCollection &symbolTables) {
  Operation *decl = symbolTables.lookupNearestSymbolFrom(*this, getNameAttr());
  if (auto param = dyn_cast_or_null<ParameterOp>(decl))
    return param.getTensorType();
  if (auto buffer = dyn_cast_or_null<BufferOp>(decl))
    return buffer.getTensorType();
  return {};
}

LogicalResult GetParamOp::verifySymbolUses(SymbolTableCollection &symbols) {
  TorchTensorType declType = getDeclaredType(symbols);
  if (!declType)
    return emitOpError("'") << getName()
                            << "' does not name a composer.parameter or "
                               "composer.buffer";
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
  result.addAttribute("value", value);
  result.addTypes(type);
  return success();
}

void ConstantOp::print(OpAsmPrinter &p) {
  p << '(';
  Attribute value = getValue();
  if (isa<UnitAttr>(value))
    p << "none";
  else if (isa<IntegerAttr>(value) ||
           (isa<FloatAttr>(value) &&
            cast<FloatAttr>(value).getValue().isFinite()))
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
    return emitOpError("value ")
           << value << " is not a constant of type " << type;
  };
  // TorchScript's int and float are 64-bit.
  auto isInt = [](Attribute attr) {
    auto intAttr = dyn_cast<IntegerAttr>(attr);
    return intAttr && intAttr.getType().isSignlessInteger(64);
  };
  auto isFloat = [](Attribute attr) {
    auto floatAttr = dyn_cast<FloatAttr>(attr);
    return floatAttr && floatAttr.getType().isF64();
  };
  if (isa<IntType>(type))
    return isInt(value) ? success() : mismatch();
  if (isa<BoolType>(type))
    return isa<BoolAttr>(value) ? success() : mismatch();
  if (isa<TorchFloatType>(type))
    return isFloat(value) ? success() : mismatch();
  if (isa<NumberType>(type))
    return isInt(value) || isFloat(value) ? success() : mismatch();
  if (isa<StrType, DeviceType>(type))
    return isa<StringAttr>(value) ? success() : mismatch();
  if (isa<TorchNoneType>(type))
    return isa<UnitAttr>(value) ? success() : mismatch();
  if (isa<ListType, TorchTupleType>(type))
    return isa<ArrayAttr>(value) ? success() : mismatch();
  // What import made of a constant of a type the dialect does not model (a
  // NamedTuple's elements, an enum member's name); export checks it.
  if (isa<TorchOpaqueType>(type))
    return isa<ArrayAttr, StringAttr>(value) ? success() : mismatch();
  if (auto tensorType = dyn_cast<TorchTensorType>(type)) {
    auto elements = dyn_cast<DenseElementsAttr>(value);
    if (!elements)
      return mismatch();
    auto shaped = elements.getType();
    if (!isValidDtype(shaped.getElementType()))
      return emitOpError("tensor value has element type ")
             << shaped.getElementType() << ", which is not a tensor dtype";
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
  auto lhsTuple = dyn_cast<TorchTupleType>(lhs);
  auto rhsTuple = dyn_cast<TorchTupleType>(rhs);
  if (lhsTuple && rhsTuple)
    return lhsTuple.getElementTypes().size() ==
               rhsTuple.getElementTypes().size() &&
           llvm::all_of(llvm::zip_equal(lhsTuple.getElementTypes(),
                                        rhsTuple.getElementTypes()),
                        [](auto pair) {
                          return areCompatibleTypes(std::get<0>(pair),
                                                    std::get<1>(pair));
                        });
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
  if (region.front().empty())
    return op->emitOpError(what) << " must end with composer.yield";
  auto yield = dyn_cast<YieldOp>(region.front().getTerminator());
  if (!yield)
    return op->emitOpError(what) << " must end with composer.yield";
  if (!allCompatible(yield.getValues().getTypes(), expected))
    return op->emitOpError(what) << " yields (" << yield.getValues().getTypes()
                                 << ") but the op expects (" << expected << ")";
  return success();
}

LogicalResult IfOp::verify() {
  for (Region *region : {&getThenRegion(), &getElseRegion()})
    if (region->getNumArguments() != 0)
      return emitOpError("regions take no arguments");
  if (failed(
          verifyYield(*this, getThenRegion(), getResultTypes(), "then region")))
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

/// composer.checkpoint and its runtime form: the region takes the inputs
/// and yields the results.
template <typename CheckpointLike>
static LogicalResult verifyCheckpoint(CheckpointLike op) {
  if (op.getUnit().empty())
    return op.emitOpError("needs a unit name");
  if (!allCompatible(op.getInputs().getTypes(),
                     op.getBody().front().getArgumentTypes()))
    return op.emitOpError("region must take the inputs (")
           << op.getInputs().getTypes() << ")";
  return verifyYield(op, op.getBody(), op.getResultTypes(), "region");
}

LogicalResult CheckpointOp::verify() { return verifyCheckpoint(*this); }

LogicalResult CheckpointCallOp::verify() { return verifyCheckpoint(*this); }

LogicalResult GatherUnitOp::verify() {
  if (getParams().empty())
    return emitOpError("needs parameters to gather");
  if (!allCompatible(getParams().getTypes(), getResultTypes()))
    return emitOpError("results must have the parameters' types (")
           << getParams().getTypes() << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Typed operators
//===----------------------------------------------------------------------===//

bool composer::isLayoutSource(OpOperand &operand) {
  Operation *op = operand.getOwner();
  if (!op->hasTrait<OpTrait::PreservesLayout>())
    return false;
  return operand.getOperandNumber() == 0 ||
         (op->hasTrait<OpTrait::ElementwiseBinary>() &&
          operand.getOperandNumber() == 1);
}

static LogicalResult verifyWindow(Operation *op, StringRef name,
                                  ArrayRef<int64_t> values, size_t rank,
                                  int64_t minimum) {
  if (values.size() != rank)
    return op->emitOpError(name)
           << " needs " << rank << " values, got " << values.size();
  for (int64_t value : values)
    if (value < minimum)
      return op->emitOpError(name)
             << " values must be >= " << minimum << ", got " << value;
  return success();
}

static LogicalResult verifyConvWeight(Operation *op, Value weight,
                                      int64_t groups, size_t spatialRank,
                                      bool transposed) {
  if (groups < 1)
    return op->emitOpError("groups must be >= 1, got ") << groups;
  auto type = cast<TorchTensorType>(weight.getType());
  if (!type.getHasRank())
    return success();
  if (type.getRank() != int64_t(spatialRank) + 2)
    return op->emitOpError("weight must have rank ")
           << spatialRank + 2 << ", got " << type;
  // Dimension 0 is out_channels, or in_channels for a transposed conv; either
  // way it splits into `groups`.
  int64_t channels = type.getSizes()[0];
  if (channels != TorchTensorType::kUnknownSize && channels % groups != 0)
    return op->emitOpError(transposed ? "in_channels " : "out_channels ")
           << channels << " is not divisible by groups " << groups;
  return success();
}

LogicalResult Conv2dOp::verify() {
  if (failed(verifyWindow(*this, "stride", getStride(), 2, 1)) ||
      failed(verifyWindow(*this, "padding", getPadding(), 2, 0)) ||
      failed(verifyWindow(*this, "dilation", getDilation(), 2, 1)))
    return failure();
  return verifyConvWeight(*this, getWeight(), getGroups(), 2,
                          /*transposed=*/false);
}

LogicalResult ConvolutionOp::verify() {
  size_t rank = getStride().size();
  if (rank < 1 || rank > 3)
    return emitOpError("expected 1 to 3 spatial dimensions, got ") << rank;
  if (failed(verifyWindow(*this, "stride", getStride(), rank, 1)) ||
      failed(verifyWindow(*this, "padding", getPadding(), rank, 0)) ||
      failed(verifyWindow(*this, "dilation", getDilation(), rank, 1)) ||
      failed(
          verifyWindow(*this, "output_padding", getOutputPadding(), rank, 0)))
    return failure();
  return verifyConvWeight(*this, getWeight(), getGroups(), rank,
                          getTransposed());
}

bool ConvolutionOp::isTransposed() { return getTransposed(); }

static LogicalResult verifyPool(Operation *op, ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> stride,
                                ArrayRef<int64_t> padding) {
  if (failed(verifyWindow(op, "kernel_size", kernel, 2, 1)) ||
      (!stride.empty() && failed(verifyWindow(op, "stride", stride, 2, 1))) ||
      failed(verifyWindow(op, "padding", padding, 2, 0)))
    return failure();
  for (auto [pad, size] : llvm::zip_equal(padding, kernel))
    if (pad > size / 2)
      return op->emitOpError("padding ")
             << pad << " exceeds half the kernel size " << size;
  return success();
}

LogicalResult MaxPool2dOp::verify() {
  if (failed(verifyPool(*this, getKernelSize(), getStride(), getPadding())))
    return failure();
  return verifyWindow(*this, "dilation", getDilation(), 2, 1);
}

LogicalResult AvgPool2dOp::verify() {
  return verifyPool(*this, getKernelSize(), getStride(), getPadding());
}

LogicalResult AdaptiveAvgPool2dOp::verify() {
  return verifyWindow(*this, "output_size", getOutputSize(), 2, 1);
}

LogicalResult BlurPool2dOp::verify() {
  if (failed(verifyWindow(*this, "stride", getStride(), 2, 1)))
    return failure();
  auto filter = cast<TorchTensorType>(getFilter().getType());
  if (filter.getHasRank() &&
      (filter.getRank() != 4 || filter.getSizes()[1] != 1 ||
       filter.getSizes()[2] != 3 || filter.getSizes()[3] != 3))
    return emitOpError("filter must be C x 1 x 3 x 3, got ") << filter;
  return success();
}

LogicalResult GhostBatchNormOp::verify() {
  if (getGhostBatchSize() < 1)
    return emitOpError("ghost_batch_size must be >= 1, got ")
           << getGhostBatchSize();
  return success();
}

static LogicalResult verifyDropRate(Operation *op, double rate) {
  if (!(rate >= 0.0 && rate <= 1.0))
    return op->emitOpError("drop_rate must be in [0, 1], got ") << rate;
  return success();
}

LogicalResult StochasticDepthOp::verify() {
  if (getMethod() != "block" && getMethod() != "sample")
    return emitOpError("method must be 'block' or 'sample', got '")
           << getMethod() << "'";
  return verifyDropRate(*this, getDropRate().convertToDouble());
}

LogicalResult StochasticDepthKeepOp::verify() {
  return verifyDropRate(*this, getDropRate().convertToDouble());
}

double StochasticDepthKeepOp::getProbabilityOfTrue() {
  // At the full drop rate: the scale's warmup only lowers it early on.
  return 1.0 - getDropRate().convertToDouble();
}

LogicalResult GyroDropoutOp::verify() {
  double p = getP().convertToDouble();
  if (!(p >= 0.0 && p < 1.0))
    return emitOpError("p must be in [0, 1), got ") << p;
  if (getSigma() < 1 || getTau() < 1)
    return emitOpError("sigma and tau must be >= 1, got ")
           << getSigma() << " and " << getTau();
  if (getFeatureDim() != 1 && getFeatureDim() != -1)
    return emitOpError("feature_dim must be 1 or -1, got ") << getFeatureDim();
  // Shapes where the buffers' types tell them.
  auto masks = cast<TorchTensorType>(getMasks().getType());
  if (masks.getHasRank() &&
      (masks.getRank() != 2 ||
       (masks.getSizes()[0] != getSigma() &&
        masks.getSizes()[0] != TorchTensorType::kUnknownSize)))
    return emitOpError("masks must be sigma (")
           << getSigma() << ") x F, got " << masks;
  auto selected = cast<TorchTensorType>(getSelected().getType());
  if (selected.getHasRank() &&
      (selected.getRank() != 1 ||
       (selected.getSizes()[0] != getTau() &&
        selected.getSizes()[0] != TorchTensorType::kUnknownSize)))
    return emitOpError("selected must hold tau (")
           << getTau() << ") indices, got " << selected;
  return success();
}

// Ops with an in-place variant write their first operand when `inplace`;
// dropout also advances the global RNG.
template <typename OpT>
static void getMaybeInplaceEffects(
    OpT op, bool drawsRandom,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (op.getInplace())
    effects.emplace_back(MemoryEffects::Write::get(), &op->getOpOperand(0));
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
