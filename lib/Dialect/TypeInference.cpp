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

Shape broadcast(Value lhs, Value rhs) {
  Shape a = Shape::of(lhs), b = Shape::of(rhs);
  Type dtype = a.dtype == b.dtype ? a.dtype : Type();
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

/// view and reshape: the constant size list, with one -1 inferred from the
/// element count.
Shape inferReshape(Value input, Value sizeList) {
  Shape in = Shape::of(input);
  std::optional<SmallVector<int64_t>> sizes = constantIntList(sizeList);
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

TorchTensorType GenericOp::inferResultType(SymbolTableCollection &) {
  if (getNumResults() != 1 || getOperands().empty() ||
      !isa<TorchTensorType>(getOperand(0).getType()))
    return nullptr;
  StringRef kind = getKind().split('.').first;
  if (std::optional<Shape> upsampled = inferUpsample2d(*this))
    return upsampled->toType(getContext());
  // Out of place, a second tensor (clamp's Tensor bounds) would broadcast.
  bool inPlace = kind.ends_with("_") && !kind.ends_with("__");
  if (!preservesShapeAndDtype(kind) ||
      (!inPlace && llvm::any_of(getOperands().drop_front(), [](Value v) {
        return isa<TorchTensorType>(v.getType());
      })))
    return nullptr;
  return Shape::of(getOperand(0)).toType(getContext());
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
