//===- TypeInference.cpp - shape and dtype rules of the ops ---------------===//
//
// InferTorchTypeOpInterface: what each typed op's result type is, given what
// is known of its operands' types and its attributes. composer-refine-types
// applies these rules forward from @forward's input specs.
//
//===----------------------------------------------------------------------===//

#include "composer/Dialect/Composer.h"

#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace composer;

namespace {

constexpr int64_t kUnknown = TorchTensorType::kUnknownSize;

/// What is known of a tensor: rank and sizes (some unknown), dtype (or
/// null), or nothing.
struct Shape {
  bool ranked = false;
  SmallVector<int64_t> sizes;
  Type dtype;

  static Shape of(Value value) {
    Shape shape;
    if (auto type = dyn_cast<TorchTensorType>(value.getType())) {
      shape.ranked = type.getHasRank();
      shape.sizes.assign(type.getSizes().begin(), type.getSizes().end());
      shape.dtype = type.getDtype();
    }
    return shape;
  }
  static Shape unranked(Type dtype) {
    Shape shape;
    shape.dtype = dtype;
    return shape;
  }
  TorchTensorType toType(MLIRContext *ctx) const {
    return TorchTensorType::get(ctx, ranked,
                                ranked ? sizes : ArrayRef<int64_t>{}, dtype);
  }
};

/// Output size of a sliding window along one dimension.
int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                     int64_t dilation, bool ceilMode) {
  if (in == kUnknown)
    return kUnknown;
  int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0)
    return kUnknown;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch drops a last window that would start inside the right padding.
  if (ceilMode && (out - 1) * stride >= in + pad)
    --out;
  return out;
}

/// A window over the trailing `kernel.size()` dimensions; the dimension
/// before them becomes `channels` unless that is unknown. An empty `stride`
/// means the kernel size, an empty `dilation` 1.
Shape inferWindowed(Value input, ArrayRef<int64_t> kernel,
                    ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                    ArrayRef<int64_t> dilation, bool ceilMode,
                    int64_t channels) {
  Shape shape = Shape::of(input);
  size_t spatial = kernel.size();
  if (!shape.ranked || shape.sizes.size() < spatial + 1)
    return Shape::unranked(shape.dtype);
  size_t first = shape.sizes.size() - spatial;
  if (channels != kUnknown)
    shape.sizes[first - 1] = channels;
  for (size_t i = 0; i < spatial; ++i)
    shape.sizes[first + i] =
        windowOutput(shape.sizes[first + i], kernel[i],
                     stride.empty() ? kernel[i] : stride[i], padding[i],
                     dilation.empty() ? 1 : dilation[i], ceilMode);
  return shape;
}

Shape inferConvolution(ConvolutionLike conv) {
  Shape w = Shape::of(conv.getWeight());
  Type dtype = Shape::of(conv.getInput()).dtype;
  if (!w.ranked)
    return Shape::unranked(dtype);
  ArrayRef<int64_t> kernel = ArrayRef<int64_t>(w.sizes).drop_front(2);
  if (llvm::is_contained(kernel, kUnknown))
    return Shape::unranked(dtype);
  return inferWindowed(conv.getInput(), kernel, conv.getStride(),
                       conv.getPadding(), conv.getDilation(),
                       /*ceilMode=*/false, w.sizes[0]);
}

/// out = (in - 1) * stride - 2 * pad + dilation * (k - 1) + output_pad + 1,
/// channels = weight[1] * groups.
Shape inferTransposedConvolution(ConvolutionOp op) {
  Shape in = Shape::of(op.getInput()), w = Shape::of(op.getWeight());
  size_t spatial = op.getNumSpatialDims();
  if (!in.ranked || !w.ranked || in.sizes.size() < spatial + 1 ||
      w.sizes.size() != spatial + 2)
    return Shape::unranked(in.dtype);
  size_t first = in.sizes.size() - spatial;
  in.sizes[first - 1] =
      w.sizes[1] == kUnknown ? kUnknown : w.sizes[1] * op.getGroups();
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = in.sizes[first + i], kernel = w.sizes[2 + i];
    in.sizes[first + i] = size == kUnknown || kernel == kUnknown
                              ? kUnknown
                              : (size - 1) * op.getStride()[i] -
                                    2 * op.getPadding()[i] +
                                    op.getDilation()[i] * (kernel - 1) +
                                    op.getOutputPadding()[i] + 1;
  }
  return in;
}

/// NumPy broadcasting of two dimension lists aligned at the right; a pair
/// that neither matches nor has a 1 is unknown.
SmallVector<int64_t> broadcastSizes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> sizes;
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    sizes.push_back(x == 1 ? y : (y == 1 || x == y ? x : kUnknown));
  }
  return sizes;
}

/// How PyTorch's type promotion ranks an operand: by the category of its
/// dtype (bool, integer, floating point), then a tensor with dimensions
/// over a 0-d one over a number.
struct PromotionOperand {
  int category = -1; // -1: unknown
  int priority = -1; // 2 dimensioned, 1 0-d, 0 a number; -1 unknown
  Type dtype;        // null for a number
};

PromotionOperand describePromotion(Value value) {
  PromotionOperand operand;
  Type type = value.getType();
  if (auto tensor = dyn_cast<TorchTensorType>(type)) {
    operand.dtype = tensor.getDtype();
    if (tensor.getHasRank())
      operand.priority = tensor.getSizes().empty() ? 1 : 2;
  } else {
    operand.priority = 0;
  }
  Type element = operand.dtype;
  if (isa<BoolType>(type) || (element && element.isInteger(1)))
    operand.category = 0;
  else if (isa<IntType>(type) || (element && isa<IntegerType>(element)))
    operand.category = 1;
  else if (isa<TorchFloatType>(type) || (element && isa<FloatType>(element)))
    operand.category = 2;
  return operand;
}

/// Two dtypes of one category promoted: the wider; bf16 with f16 is f32,
/// uint8 with int8 int16.
Type promotePair(MLIRContext *ctx, Type a, Type b) {
  if (a == b)
    return a;
  unsigned wa = a.getIntOrFloatBitWidth(), wb = b.getIntOrFloatBitWidth();
  if (isa<FloatType>(a) && isa<FloatType>(b))
    return wa != wb ? (wa > wb ? a : b) : Type(Float32Type::get(ctx));
  auto ia = dyn_cast<IntegerType>(a), ib = dyn_cast<IntegerType>(b);
  if (!ia || !ib)
    return Type();
  if (ia.isUnsigned() != ib.isUnsigned()) {
    IntegerType sign = ia.isUnsigned() ? ib : ia;
    IntegerType unsign = ia.isUnsigned() ? ia : ib;
    return sign.getWidth() > unsign.getWidth()
               ? Type(sign)
               : Type(IntegerType::get(ctx, 2 * unsign.getWidth()));
  }
  return wa > wb ? a : b;
}

/// The dtype of an elementwise op on `operands` under PyTorch's type
/// promotion (the highest category wins; within it, the highest priority;
/// a number alone gives the category's default: bool, int64, float32);
/// null where an operand's dtype or rank is unknown.
Type promoteDtypes(MLIRContext *ctx, ArrayRef<Value> operands) {
  SmallVector<PromotionOperand> described;
  for (Value value : operands) {
    described.push_back(describePromotion(value));
    if (described.back().category < 0 || described.back().priority < 0)
      return Type();
  }
  int category = 0, priority = 0;
  for (const PromotionOperand &operand : described)
    category = std::max(category, operand.category);
  for (const PromotionOperand &operand : described)
    if (operand.category == category)
      priority = std::max(priority, operand.priority);
  Type dtype;
  for (const PromotionOperand &operand : described) {
    if (operand.category != category || operand.priority != priority)
      continue;
    if (!operand.dtype)
      return category == 2   ? Type(Float32Type::get(ctx))
             : category == 1 ? Type(IntegerType::get(ctx, 64))
                             : Type(IntegerType::get(ctx, 1));
    dtype = dtype ? promotePair(ctx, dtype, operand.dtype) : operand.dtype;
    if (!dtype)
      return Type();
  }
  return dtype;
}

Shape broadcast(Value lhs, Value rhs) {
  Shape a = Shape::of(lhs), b = Shape::of(rhs);
  Type dtype = promoteDtypes(lhs.getContext(), {lhs, rhs});
  if (!a.ranked || !b.ranked)
    return Shape::unranked(dtype);
  Shape out;
  out.ranked = true;
  out.dtype = dtype;
  out.sizes = broadcastSizes(a.sizes, b.sizes);
  return out;
}

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t result = 1;
  for (int64_t size : sizes) {
    if (size == kUnknown)
      return kUnknown;
    result *= size;
  }
  return result;
}

/// The int list a constant `composer.constant [..] : !composer.list<int>`
/// holds, if `value` is one.
std::optional<SmallVector<int64_t>> constantIntList(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto array = dyn_cast<ArrayAttr>(constant.getValue());
  if (!array)
    return std::nullopt;
  SmallVector<int64_t> result;
  for (Attribute element : array) {
    auto intAttr = dyn_cast<IntegerAttr>(element);
    if (!intAttr)
      return std::nullopt;
    result.push_back(intAttr.getInt());
  }
  return result;
}

/// `dim` counted from 0 for a tensor of `rank` (`extra` more for a dim that
/// may name the position after the last, as unsqueeze's), if in range.
std::optional<size_t> normalizeDim(int64_t dim, size_t rank, size_t extra = 0) {
  int64_t bound = int64_t(rank + extra);
  if (dim < -bound || dim >= bound)
    return std::nullopt;
  return size_t(dim < 0 ? dim + bound : dim);
}

std::optional<int64_t> knownSize(int64_t size) {
  if (size == kUnknown)
    return std::nullopt;
  return size;
}

/// Python's floor division.
int64_t floorDivide(int64_t a, int64_t b) {
  int64_t quotient = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient;
}

std::optional<int64_t> knownInt(Value value);

/// An int module attribute's value as imported, where nothing in the model
/// assigns it.
std::optional<int64_t> importedInt(GetAttrOp read) {
  IntegerAttr imported = read.getImportedAttr();
  auto module = read->getParentOfType<ModuleOp>();
  if (!imported || !module)
    return std::nullopt;
  WalkResult assigned = module.walk([&](SetAttrOp write) {
    return write.getPath() == read.getPath() ? WalkResult::interrupt()
                                             : WalkResult::advance();
  });
  if (assigned.wasInterrupted())
    return std::nullopt;
  return imported.getInt();
}

/// The integer a 0-d integer tensor holds where it is known, as a traced
/// model computes sizes: prim::NumToTensor of a known integer, a constant,
/// or integer arithmetic on known ones.
std::optional<int64_t> knownScalar(Value tensor) {
  if (auto constant = tensor.getDefiningOp<ConstantOp>()) {
    auto dense = dyn_cast<DenseIntElementsAttr>(constant.getValue());
    if (!dense || dense.getNumElements() != 1)
      return std::nullopt;
    return (*dense.begin()).getSExtValue();
  }
  auto op = tensor.getDefiningOp<GenericOp>();
  if (!op)
    return std::nullopt;
  if (op.getKind() == "prim::NumToTensor" && op->getNumOperands() == 1)
    return knownInt(op->getOperand(0));
  if (op->getNumOperands() < 2)
    return std::nullopt;
  std::optional<int64_t> a = knownScalar(op->getOperand(0));
  std::optional<int64_t> b = knownScalar(op->getOperand(1));
  if (!a || !b)
    return std::nullopt;
  if (op.isKind(AtenKind::mul))
    return *a * *b;
  if (op.isKind(AtenKind::floor_divide) && *b != 0)
    return floorDivide(*a, *b);
  return std::nullopt;
}

/// The value of the integer `value` where it is known: a constant, a size
/// of a tensor whose size is known (aten::size with a dim, or an element of
/// aten::size's list through prim::ListUnpack), or integer arithmetic on
/// known integers, an int module attribute nothing assigns, or aten::Int or
/// aten::ScalarImplicit of a known 0-d tensor.
std::optional<int64_t> knownInt(Value value) {
  if (!isa<IntType, NumberType>(value.getType()))
    return std::nullopt;
  if (auto constant = value.getDefiningOp<ConstantOp>()) {
    if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
      return integer.getInt();
    return std::nullopt;
  }
  if (auto read = value.getDefiningOp<GetAttrOp>())
    return importedInt(read);
  auto op = value.getDefiningOp<GenericOp>();
  if (!op)
    return std::nullopt;
  if ((op.isKind(AtenKind::Int) || op.isKind(AtenKind::ScalarImplicit)) &&
      op->getNumOperands() == 1)
    return knownScalar(op->getOperand(0));
  if (op.getKind() == "prim::ListUnpack") {
    auto sizes = op->getOperand(0).getDefiningOp<GenericOp>();
    if (!sizes || !sizes.isKind(AtenKind::size) || sizes->getNumOperands() != 1)
      return std::nullopt;
    Shape shape = Shape::of(sizes->getOperand(0));
    if (!shape.ranked || shape.sizes.size() != op->getNumResults())
      return std::nullopt;
    return knownSize(shape.sizes[cast<OpResult>(value).getResultNumber()]);
  }
  if (op->getNumOperands() != 2)
    return std::nullopt;
  if (op.isKind(AtenKind::size)) {
    Shape shape = Shape::of(op->getOperand(0));
    std::optional<int64_t> dim = knownInt(op->getOperand(1));
    if (!shape.ranked || !dim)
      return std::nullopt;
    std::optional<size_t> index = normalizeDim(*dim, shape.sizes.size());
    return index ? knownSize(shape.sizes[*index]) : std::nullopt;
  }
  std::optional<int64_t> a = knownInt(op->getOperand(0));
  std::optional<int64_t> b = knownInt(op->getOperand(1));
  if (!a || !b)
    return std::nullopt;
  if (op.isKind(AtenKind::add))
    return *a + *b;
  if (op.isKind(AtenKind::sub))
    return *a - *b;
  if (op.isKind(AtenKind::mul))
    return *a * *b;
  if (op.isKind(AtenKind::floordiv) && *b != 0)
    return floorDivide(*a, *b);
  return std::nullopt;
}

/// The integers of a list where all are known: a constant list, or a
/// prim::ListConstruct of known integers.
std::optional<SmallVector<int64_t>> knownIntList(Value list) {
  if (std::optional<SmallVector<int64_t>> constant = constantIntList(list))
    return constant;
  auto construct = list.getDefiningOp<GenericOp>();
  if (!construct || construct.getKind() != "prim::ListConstruct")
    return std::nullopt;
  SmallVector<int64_t> result;
  for (Value element : construct->getOperands()) {
    std::optional<int64_t> known = knownInt(element);
    if (!known)
      return std::nullopt;
    result.push_back(*known);
  }
  return result;
}

/// view and reshape: the size list where its integers are known, with one
/// -1 inferred from the element count.
Shape inferReshape(Value input, Value sizeList) {
  Shape in = Shape::of(input);
  std::optional<SmallVector<int64_t>> sizes = knownIntList(sizeList);
  if (!sizes)
    return Shape::unranked(in.dtype);
  Shape out;
  out.ranked = true;
  out.dtype = in.dtype;
  int64_t known = 1, inferred = -1;
  for (auto [i, size] : llvm::enumerate(*sizes)) {
    if (size < -1)
      return Shape::unranked(in.dtype);
    if (size == -1)
      inferred = i;
    else
      known *= size;
    out.sizes.push_back(size == -1 ? kUnknown : size);
  }
  int64_t total = in.ranked ? product(in.sizes) : kUnknown;
  if (inferred >= 0 && total != kUnknown && known != 0)
    out.sizes[inferred] = total / known;
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise ops (the interface's default)
//===----------------------------------------------------------------------===//

TorchTensorType composer::inferElementwiseResultType(Operation *op) {
  Shape shape = op->hasTrait<OpTrait::ElementwiseBinary>()
                    ? broadcast(op->getOperand(0), op->getOperand(1))
                    : Shape::of(op->getOperand(0));
  return shape.toType(op->getContext());
}

bool composer::failsToBroadcast(Operation *op) {
  if (!op->hasTrait<OpTrait::ElementwiseBinary>())
    return false;
  Shape a = Shape::of(op->getOperand(0)), b = Shape::of(op->getOperand(1));
  if (!a.ranked || !b.ranked)
    return false;
  // Aligned at the right: two known sizes that differ, neither of them 1.
  for (auto [x, y] : llvm::zip(llvm::reverse(a.sizes), llvm::reverse(b.sizes)))
    if (x != kUnknown && y != kUnknown && x != y && x != 1 && y != 1)
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Per-op rules
//===----------------------------------------------------------------------===//

/// Whether a generic node of `kind` gives its result operand 0's shape and
/// dtype, whatever its scalar operands: the table's ShapePreserving kinds.
/// An in-place kind the table lacks writes operand 0 and returns it; those
/// that change its metadata (squeeze_, resize_) are in the table as views.
static bool preservesShapeAndDtype(StringRef kind) {
  if (const AtenKindInfo *info = lookupAtenKind(kind))
    return info->has(AtenTrait::ShapePreserving);
  return kind.starts_with("aten::") && kind.ends_with("_") &&
         !kind.ends_with("__");
}

/// The numbers of a constant list: a list constant, or a
/// prim::ListConstruct of number constants.
static std::optional<SmallVector<double>> getConstantNumbers(Value list) {
  SmallVector<Attribute> elements;
  if (auto constant = list.getDefiningOp<ConstantOp>()) {
    auto array = dyn_cast<ArrayAttr>(constant.getValue());
    if (!array)
      return std::nullopt;
    llvm::append_range(elements, array.getValue());
  } else if (auto construct = list.getDefiningOp<GenericOp>();
             construct && construct.getKind() == "prim::ListConstruct") {
    for (Value element : construct->getOperands()) {
      auto constant = element.getDefiningOp<ConstantOp>();
      if (!constant)
        return std::nullopt;
      elements.push_back(constant.getValue());
    }
  } else {
    return std::nullopt;
  }
  SmallVector<double> numbers;
  for (Attribute element : elements) {
    if (auto integer = dyn_cast<IntegerAttr>(element))
      numbers.push_back(double(integer.getInt()));
    else if (auto number = dyn_cast<FloatAttr>(element))
      numbers.push_back(number.getValueAsDouble());
    else
      return std::nullopt;
  }
  return numbers;
}

/// aten::upsample_{nearest,bilinear,bicubic}2d.vec (input, output_size?,
/// [align_corners,] scale_factors?): the last two sizes are output_size,
/// or floor(size * scale) as PyTorch computes them. Unranked where neither
/// is a constant.
static std::optional<Shape> inferUpsample2d(GenericOp op) {
  bool nearest = op.isKind(AtenKind::upsample_nearest2d);
  if (!nearest && !op.isKind(AtenKind::upsample_bilinear2d) &&
      !op.isKind(AtenKind::upsample_bicubic2d))
    return std::nullopt;
  unsigned scalesOperand = nearest ? 2 : 3;
  Shape shape = Shape::of(op->getOperand(0));
  if (op->getNumOperands() != scalesOperand + 1 || !shape.ranked ||
      shape.sizes.size() != 4)
    return Shape::unranked(shape.dtype);
  std::optional<SmallVector<double>> outputSize =
      getConstantNumbers(op->getOperand(1));
  std::optional<SmallVector<double>> scales =
      getConstantNumbers(op->getOperand(scalesOperand));
  for (unsigned i = 0; i < 2; ++i) {
    int64_t &size = shape.sizes[2 + i];
    if (outputSize && outputSize->size() == 2)
      size = int64_t((*outputSize)[i]);
    else if (scales && scales->size() == 2 && size != kUnknown)
      size = int64_t(std::floor(double(size) * (*scales)[i]));
    else
      size = kUnknown;
  }
  return shape;
}

/// An ElementwiseBinary kind (add, mul, pow, the comparisons, ...) of a
/// tensor and a tensor or a number: the broadcast shape; bool for a
/// comparison, else the promoted dtype (float32 for true division of
/// integers).
static std::optional<Shape> inferElementwiseBinary(GenericOp op) {
  const AtenKindInfo *info = lookupAtenKind(op.getKind());
  if (!info || !info->has(AtenTrait::ElementwiseBinary) ||
      op->getNumOperands() < 2)
    return std::nullopt;
  Value other = op->getOperand(1);
  Shape shape;
  if (isa<TorchTensorType>(other.getType())) {
    shape = broadcast(op->getOperand(0), other);
  } else {
    shape = Shape::of(op->getOperand(0));
    shape.dtype = promoteDtypes(op.getContext(), {op->getOperand(0), other});
  }
  MLIRContext *ctx = op.getContext();
  if (info->has(AtenTrait::BoolResult))
    shape.dtype = IntegerType::get(ctx, 1);
  else if ((op.isKind(AtenKind::div) || op.isKind(AtenKind::true_divide)) &&
           shape.dtype && isa<IntegerType>(shape.dtype))
    shape.dtype = Float32Type::get(ctx); // true division of integers
  return shape;
}

/// aten::transpose(self, dim0, dim1) and aten::unsqueeze(self, dim).
static std::optional<Shape> inferDimensionMove(GenericOp op) {
  bool transpose = op.isKind(AtenKind::transpose);
  if (!transpose && !op.isKind(AtenKind::unsqueeze))
    return std::nullopt;
  Shape shape = Shape::of(op->getOperand(0));
  if (op->getNumOperands() != (transpose ? 3u : 2u) || !shape.ranked)
    return Shape::unranked(shape.dtype);
  size_t rank = shape.sizes.size();
  std::optional<int64_t> first = knownInt(op->getOperand(1));
  std::optional<size_t> a =
      first ? normalizeDim(*first, rank, transpose ? 0 : 1) : std::nullopt;
  if (!a)
    return Shape::unranked(shape.dtype);
  if (!transpose) {
    shape.sizes.insert(shape.sizes.begin() + *a, 1);
    return shape;
  }
  std::optional<int64_t> second = knownInt(op->getOperand(2));
  std::optional<size_t> b = second ? normalizeDim(*second, rank) : std::nullopt;
  if (!b)
    return Shape::unranked(shape.dtype);
  std::swap(shape.sizes[*a], shape.sizes[*b]);
  return shape;
}

/// aten::slice(self, dim, start, end, step), as Python slices clamp.
static std::optional<Shape> inferSlice(GenericOp op) {
  if (!op.isKind(AtenKind::slice))
    return std::nullopt;
  Shape shape = Shape::of(op->getOperand(0));
  if (op->getNumOperands() != 5 || !shape.ranked)
    return Shape::unranked(shape.dtype);
  std::optional<int64_t> dim = knownInt(op->getOperand(1));
  std::optional<size_t> index =
      dim ? normalizeDim(*dim, shape.sizes.size()) : std::nullopt;
  if (!index)
    return Shape::unranked(shape.dtype);
  int64_t &size = shape.sizes[*index];
  auto bound = [&](Value value, int64_t absent) -> std::optional<int64_t> {
    if (isa<TorchNoneType>(value.getType()))
      return absent;
    std::optional<int64_t> known = knownInt(value);
    if (!known)
      return std::nullopt;
    int64_t position = *known < 0 ? *known + size : *known;
    return std::clamp<int64_t>(position, 0, size);
  };
  std::optional<int64_t> step = knownInt(op->getOperand(4));
  if (size == kUnknown || !step || *step < 1) {
    size = kUnknown;
    return shape;
  }
  std::optional<int64_t> start = bound(op->getOperand(2), 0);
  std::optional<int64_t> end = bound(op->getOperand(3), size);
  size = start && end
             ? std::max<int64_t>(0, (*end - *start + *step - 1) / *step)
             : kUnknown;
  return shape;
}

/// aten::embedding(weight, indices, ...): the indices' shape and a row of
/// the weight's dtype.
static std::optional<Shape> inferEmbedding(GenericOp op) {
  if (!op.isKind(AtenKind::embedding) || op->getNumOperands() < 2)
    return std::nullopt;
  Shape weight = Shape::of(op->getOperand(0));
  Shape indices = Shape::of(op->getOperand(1));
  if (!weight.ranked || weight.sizes.size() != 2 || !indices.ranked)
    return Shape::unranked(weight.dtype);
  indices.sizes.push_back(weight.sizes[1]);
  indices.dtype = weight.dtype;
  return indices;
}

/// aten::arange(end | start, end | start, end, step, dtype, layout, device,
/// pin_memory) over known integers: a 1-D tensor of the dtype given, or
/// int64.
static std::optional<Shape> inferArange(GenericOp op) {
  if (!op.isKind(AtenKind::arange) || op->getNumOperands() < 5 ||
      op->getNumOperands() > 7)
    return std::nullopt;
  unsigned numbers = op->getNumOperands() - 4;
  SmallVector<int64_t, 3> range = {0, 0, 1};
  for (unsigned i = 0; i < numbers; ++i) {
    std::optional<int64_t> known = knownInt(op->getOperand(i));
    if (!known)
      return Shape::unranked(Type());
    range[numbers == 1 ? 1 : i] = *known;
  }
  Shape shape;
  Value dtype = op->getOperand(numbers);
  if (isa<TorchNoneType>(dtype.getType())) {
    shape.dtype = IntegerType::get(op.getContext(), 64);
  } else if (std::optional<int64_t> code = knownInt(dtype)) {
    shape.dtype = getDtypeType(op.getContext(),
                               static_cast<torch_upstream::ScalarType>(*code));
  }
  auto [start, end, step] = std::tuple(range[0], range[1], range[2]);
  if (step == 0)
    return Shape::unranked(shape.dtype);
  shape.ranked = true;
  int64_t length = step > 0 ? (end - start + step - 1) / step
                            : (start - end - step - 1) / -step;
  shape.sizes.push_back(std::max<int64_t>(0, length));
  return shape;
}

/// aten::masked_fill(self, mask, value): the mask broadcasts to self.
static std::optional<Shape> inferMaskedFill(GenericOp op) {
  if (!op.isKind(AtenKind::masked_fill))
    return std::nullopt;
  return Shape::of(op->getOperand(0));
}

TorchTensorType GenericOp::inferResultType(SymbolTableCollection &) {
  if (getNumResults() != 1 || getOperands().empty())
    return nullptr;
  if (std::optional<Shape> shape = inferArange(*this))
    return shape->toType(getContext());
  if (getKind() == "prim::NumToTensor") {
    Type dtype = isa<IntType>(getOperand(0).getType())
                     ? IntegerType::get(getContext(), 64)
                     : Type();
    return TorchTensorType::get(getContext(), true, {}, dtype);
  }
  if (!isa<TorchTensorType>(getOperand(0).getType()))
    return nullptr;
  StringRef kind = getKind().split('.').first;
  for (auto rule : {inferUpsample2d, inferElementwiseBinary, inferDimensionMove,
                    inferSlice, inferEmbedding, inferMaskedFill})
    if (std::optional<Shape> shape = rule(*this))
      return shape->toType(getContext());
  // Out of place, a second tensor (clamp's Tensor bounds) would broadcast.
  bool inPlace = kind.ends_with("_") && !kind.ends_with("__");
  if (!preservesShapeAndDtype(kind) ||
      (!inPlace && llvm::any_of(getOperands().drop_front(), [](Value v) {
        return isa<TorchTensorType>(v.getType());
      })))
    return nullptr;
  return Shape::of(getOperand(0)).toType(getContext());
}

/// prim::ListUnpack of aten::split(self, split_size | sizes, dim) or
/// aten::chunk(self, chunks, dim): each piece's shape along dim.
TorchTensorType GenericOp::inferResultTypeAt(SymbolTableCollection &,
                                             unsigned index) {
  auto pieces = getKind() == "prim::ListUnpack"
                    ? getOperand(0).getDefiningOp<GenericOp>()
                    : GenericOp();
  if (!pieces || pieces->getNumOperands() != 3 ||
      !(pieces.isKind(AtenKind::split) || pieces.isKind(AtenKind::chunk)))
    return nullptr;
  Shape shape = Shape::of(pieces->getOperand(0));
  std::optional<int64_t> dim = knownInt(pieces->getOperand(2));
  std::optional<size_t> axis = shape.ranked && dim
                                   ? normalizeDim(*dim, shape.sizes.size())
                                   : std::nullopt;
  if (!axis)
    return Shape::unranked(shape.dtype).toType(getContext());
  int64_t &size = shape.sizes[*axis];
  int64_t begin = 0, length = kUnknown;
  if (std::optional<SmallVector<int64_t>> sizes =
          knownIntList(pieces->getOperand(1))) {
    if (sizes->size() == getNumResults())
      length = (*sizes)[index];
  } else if (std::optional<int64_t> count = knownInt(pieces->getOperand(1));
             count && *count > 0 && size != kUnknown) {
    int64_t piece =
        pieces.isKind(AtenKind::chunk) ? (size + *count - 1) / *count : *count;
    begin = piece * index;
    length = std::clamp<int64_t>(size - begin, 0, piece);
  }
  size = length;
  return shape.toType(getContext());
}

TorchTensorType ConstantOp::inferResultType(SymbolTableCollection &) {
  auto elements = dyn_cast<DenseElementsAttr>(getValue());
  if (!elements)
    return nullptr;
  Shape shape;
  shape.ranked = true;
  llvm::append_range(shape.sizes, elements.getType().getShape());
  shape.dtype = elements.getElementType();
  return shape.toType(getContext());
}

TorchTensorType GetParamOp::inferResultType(SymbolTableCollection &symbols) {
  return getDeclaredType(symbols);
}

TorchTensorType SoftmaxOp::inferResultType(SymbolTableCollection &) {
  Shape shape = Shape::of(getSelf());
  if (std::optional<torch_upstream::ScalarType> dtype = getDtype())
    shape.dtype = getDtypeType(getContext(), *dtype);
  return shape.toType(getContext());
}

TorchTensorType ToDtypeOp::inferResultType(SymbolTableCollection &) {
  Shape shape = Shape::of(getSelf());
  shape.dtype = getDtypeType(getContext(), getDtype());
  return shape.toType(getContext());
}

TorchTensorType Conv2dOp::inferResultType(SymbolTableCollection &) {
  return inferConvolution(*this).toType(getContext());
}

TorchTensorType ConvolutionOp::inferResultType(SymbolTableCollection &) {
  Shape shape = getTransposed() ? inferTransposedConvolution(*this)
                                : inferConvolution(*this);
  return shape.toType(getContext());
}

TorchTensorType MaxPool2dOp::inferResultType(SymbolTableCollection &) {
  return inferWindowed(getSelf(), getKernelSize(), getStride(), getPadding(),
                       getDilation(), getCeilMode(), kUnknown)
      .toType(getContext());
}

TorchTensorType AvgPool2dOp::inferResultType(SymbolTableCollection &) {
  return inferWindowed(getSelf(), getKernelSize(), getStride(), getPadding(),
                       /*dilation=*/{}, getCeilMode(), kUnknown)
      .toType(getContext());
}

TorchTensorType BlurPool2dOp::inferResultType(SymbolTableCollection &) {
  // A 3x3 blur at padding 1, or on inputs smaller than the filter the
  // input subsampled by the stride: ceil(size / stride) either way.
  return inferWindowed(getInput(), /*kernel=*/{3, 3}, getStride(),
                       /*padding=*/{1, 1}, /*dilation=*/{}, /*ceilMode=*/false,
                       kUnknown)
      .toType(getContext());
}

TorchTensorType AdaptiveAvgPool2dOp::inferResultType(SymbolTableCollection &) {
  Shape in = Shape::of(getSelf());
  ArrayRef<int64_t> outputSize = getOutputSize();
  if (!in.ranked || in.sizes.size() < outputSize.size())
    return Shape::unranked(in.dtype).toType(getContext());
  size_t first = in.sizes.size() - outputSize.size();
  for (auto [i, size] : llvm::enumerate(outputSize))
    in.sizes[first + i] = size;
  return in.toType(getContext());
}

TorchTensorType LinearOp::inferResultType(SymbolTableCollection &) {
  Shape in = Shape::of(getInput()), w = Shape::of(getWeight());
  if (!in.ranked || in.sizes.empty() || !w.ranked || w.sizes.size() != 2)
    return Shape::unranked(in.dtype).toType(getContext());
  in.sizes.back() = w.sizes[0];
  return in.toType(getContext());
}

TorchTensorType MatmulOp::inferResultType(SymbolTableCollection &) {
  Shape a = Shape::of(getSelf()), b = Shape::of(getOther());
  Type dtype = a.dtype == b.dtype ? a.dtype : Type();
  if (!a.ranked || !b.ranked || a.sizes.empty() || b.sizes.empty())
    return Shape::unranked(dtype).toType(getContext());
  Shape out;
  out.ranked = true;
  out.dtype = dtype;
  if (b.sizes.size() == 1) {
    out.sizes.assign(a.sizes.begin(), a.sizes.end() - 1);
  } else if (a.sizes.size() == 1) {
    out.sizes.assign(b.sizes.begin(), b.sizes.end() - 2);
    out.sizes.push_back(b.sizes.back());
  } else {
    // Batch dimensions broadcast; the matrix dimensions multiply.
    out.sizes = broadcastSizes(ArrayRef<int64_t>(a.sizes).drop_back(2),
                               ArrayRef<int64_t>(b.sizes).drop_back(2));
    out.sizes.push_back(a.sizes[a.sizes.size() - 2]);
    out.sizes.push_back(b.sizes.back());
  }
  return out.toType(getContext());
}

/// Concatenation of a `prim::ListConstruct` of tensors along `dim`.
TorchTensorType CatOp::inferResultType(SymbolTableCollection &) {
  MLIRContext *ctx = getContext();
  auto list = getTensors().getDefiningOp<GenericOp>();
  if (!list || list.getKind() != "prim::ListConstruct" ||
      list.getOperands().empty())
    return TorchTensorType::get(ctx);
  Shape out = Shape::of(list.getOperands().front());
  if (!out.ranked || out.sizes.empty())
    return Shape::unranked(out.dtype).toType(ctx);
  int64_t rank = out.sizes.size();
  int64_t dim = getDim(); // I64Attr accessors are unsigned.
  dim = dim < 0 ? dim + rank : dim;
  if (dim < 0 || dim >= rank)
    return Shape::unranked(out.dtype).toType(ctx);
  for (Value tensor : list.getOperands().drop_front()) {
    Shape in = Shape::of(tensor);
    if (in.dtype != out.dtype)
      out.dtype = Type();
    if (!in.ranked || int64_t(in.sizes.size()) != rank) {
      out.ranked = false;
      continue;
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (i == dim)
        out.sizes[i] = out.sizes[i] == kUnknown || in.sizes[i] == kUnknown
                           ? kUnknown
                           : out.sizes[i] + in.sizes[i];
      else if (out.sizes[i] == kUnknown)
        out.sizes[i] = in.sizes[i];
    }
  }
  return out.toType(ctx);
}

TorchTensorType FlattenOp::inferResultType(SymbolTableCollection &) {
  MLIRContext *ctx = getContext();
  Shape in = Shape::of(getSelf());
  if (!in.ranked)
    return in.toType(ctx);
  int64_t rank = in.sizes.size();
  if (rank == 0) { // torch.flatten of a scalar is a 1-element vector.
    in.sizes = {1};
    return in.toType(ctx);
  }
  // I64Attr accessors are unsigned; the dimensions may be negative.
  int64_t start = getStartDim(), end = getEndDim();
  start = start < 0 ? start + rank : start;
  end = end < 0 ? end + rank : end;
  if (start < 0 || end >= rank || start > end)
    return Shape::unranked(in.dtype).toType(ctx);
  Shape out;
  out.ranked = true;
  out.dtype = in.dtype;
  out.sizes.append(in.sizes.begin(), in.sizes.begin() + start);
  out.sizes.push_back(
      product(ArrayRef<int64_t>(in.sizes).slice(start, end - start + 1)));
  out.sizes.append(in.sizes.begin() + end + 1, in.sizes.end());
  return out.toType(ctx);
}

TorchTensorType ViewOp::inferResultType(SymbolTableCollection &) {
  return inferReshape(getSelf(), getSize()).toType(getContext());
}

TorchTensorType ReshapeOp::inferResultType(SymbolTableCollection &) {
  return inferReshape(getSelf(), getShape()).toType(getContext());
}
