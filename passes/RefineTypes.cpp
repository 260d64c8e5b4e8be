//===- RefineTypes.cpp - shapes and dtypes from input specs ---------------===//
//
// Propagates tensor shapes and dtypes forward from @forward's declared input
// specs and the parameter declarations, through the typed ops whose output
// shape follows from their operands and attributes.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/PassUtils.h"
#include "composer/Passes/Passes.h"
#include "composer/Passes/Report.h"

#include "mlir/AsmParser/AsmParser.h"
#include "llvm/ADT/TypeSwitch.h"

namespace composer {
#define GEN_PASS_DEF_REFINETYPES
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

constexpr int64_t kUnknown = TorchTensorType::kUnknownSize;

/// The builtin type of a c10::ScalarType code, or null.
Type dtypeFromScalarTypeCode(MLIRContext *ctx, int64_t code) {
  Builder b(ctx);
  switch (code) {
  case 0:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case 1:
    return b.getIntegerType(8);
  case 2:
    return b.getIntegerType(16);
  case 3:
    return b.getIntegerType(32);
  case 4:
    return b.getIntegerType(64);
  case 5:
    return b.getF16Type();
  case 6:
    return b.getF32Type();
  case 7:
    return b.getF64Type();
  case 11:
    return b.getI1Type();
  case 15:
    return b.getBF16Type();
  default:
    return {};
  }
}

/// What the pass knows of an operand: rank/sizes/dtype, or nothing.
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
  TorchTensorType toType(MLIRContext *ctx) const {
    return TorchTensorType::get(ctx, ranked,
                                ranked ? sizes : ArrayRef<int64_t>{}, dtype);
  }
};

Shape unknownWithDtype(Type dtype) {
  Shape shape;
  shape.dtype = dtype;
  return shape;
}

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

Shape inferWindowed(Value input, ArrayRef<int64_t> kernel,
                    ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                    ArrayRef<int64_t> dilation, bool ceilMode,
                    int64_t channels) {
  Shape shape = Shape::of(input);
  size_t spatial = kernel.size();
  if (!shape.ranked || shape.sizes.size() < spatial + 1)
    return unknownWithDtype(shape.dtype);
  size_t first = shape.sizes.size() - spatial;
  if (channels != kUnknown || first >= 1)
    shape.sizes[first - 1] =
        channels == kUnknown ? shape.sizes[first - 1] : channels;
  for (size_t i = 0; i < spatial; ++i)
    shape.sizes[first + i] =
        windowOutput(shape.sizes[first + i], kernel[i],
                     stride.empty() ? kernel[i] : stride[i], padding[i],
                     dilation.empty() ? 1 : dilation[i], ceilMode);
  return shape;
}

Shape inferConv(Value input, Value weight, ArrayRef<int64_t> stride,
                ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  Shape w = Shape::of(weight);
  if (!w.ranked)
    return unknownWithDtype(Shape::of(input).dtype);
  ArrayRef<int64_t> kernel = ArrayRef<int64_t>(w.sizes).drop_front(2);
  if (llvm::is_contained(kernel, kUnknown))
    return unknownWithDtype(Shape::of(input).dtype);
  return inferWindowed(input, kernel, stride, padding, dilation,
                       /*ceilMode=*/false, w.sizes[0]);
}

/// out = (in - 1) * stride - 2 * pad + dilation * (k - 1) + output_pad + 1,
/// channels = weight[1] * groups.
Shape inferTransposedConv(ConvolutionOp op) {
  Shape in = Shape::of(op.getInput()), w = Shape::of(op.getWeight());
  size_t spatial = op.getStride().size();
  if (!in.ranked || !w.ranked || in.sizes.size() < spatial + 1 ||
      w.sizes.size() != spatial + 2)
    return unknownWithDtype(in.dtype);
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

Shape broadcast(Value lhs, Value rhs) {
  Shape a = Shape::of(lhs), b = Shape::of(rhs);
  Type dtype = a.dtype == b.dtype ? a.dtype : Type();
  if (!a.ranked || !b.ranked)
    return unknownWithDtype(dtype);
  Shape out;
  out.ranked = true;
  out.dtype = dtype;
  size_t rank = std::max(a.sizes.size(), b.sizes.size());
  for (size_t i = 0; i < rank; ++i) {
    int64_t x =
        i < rank - a.sizes.size() ? 1 : a.sizes[i - (rank - a.sizes.size())];
    int64_t y =
        i < rank - b.sizes.size() ? 1 : b.sizes[i - (rank - b.sizes.size())];
    if (x == 1)
      out.sizes.push_back(y);
    else if (y == 1 || x == y)
      out.sizes.push_back(x);
    else
      out.sizes.push_back(kUnknown);
  }
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

Shape inferReshape(Value input, Value sizeList) {
  Shape in = Shape::of(input);
  std::optional<SmallVector<int64_t>> sizes = constantIntList(sizeList);
  if (!sizes)
    return unknownWithDtype(in.dtype);
  Shape out;
  out.ranked = true;
  out.dtype = in.dtype;
  int64_t known = 1, inferred = -1;
  for (auto [i, size] : llvm::enumerate(*sizes)) {
    if (size < -1)
      return unknownWithDtype(in.dtype);
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

Shape inferFlatten(Value input, int64_t start, int64_t end) {
  Shape in = Shape::of(input);
  if (!in.ranked)
    return in;
  int64_t rank = in.sizes.size();
  if (rank == 0) { // torch.flatten of a scalar is a 1-element vector.
    in.sizes = {1};
    return in;
  }
  start = start < 0 ? start + rank : start;
  end = end < 0 ? end + rank : end;
  if (start < 0 || end >= rank || start > end)
    return unknownWithDtype(in.dtype);
  Shape out;
  out.ranked = true;
  out.dtype = in.dtype;
  out.sizes.append(in.sizes.begin(), in.sizes.begin() + start);
  out.sizes.push_back(
      product(ArrayRef<int64_t>(in.sizes).slice(start, end - start + 1)));
  out.sizes.append(in.sizes.begin() + end + 1, in.sizes.end());
  return out;
}

Shape inferLinear(Value input, Value weight) {
  Shape in = Shape::of(input), w = Shape::of(weight);
  if (!in.ranked || in.sizes.empty() || !w.ranked || w.sizes.size() != 2)
    return unknownWithDtype(in.dtype);
  in.sizes.back() = w.sizes[0];
  return in;
}

Shape inferMatmul(Value lhs, Value rhs) {
  Shape a = Shape::of(lhs), b = Shape::of(rhs);
  Type dtype = a.dtype == b.dtype ? a.dtype : Type();
  if (!a.ranked || !b.ranked || a.sizes.empty() || b.sizes.empty())
    return unknownWithDtype(dtype);
  Shape out;
  out.ranked = true;
  out.dtype = dtype;
  if (b.sizes.size() == 1) {
    out.sizes.assign(a.sizes.begin(), a.sizes.end() - 1);
    return out;
  }
  if (a.sizes.size() == 1) {
    out.sizes.assign(b.sizes.begin(), b.sizes.end() - 2);
    out.sizes.push_back(b.sizes.back());
    return out;
  }
  // Batch dimensions broadcast; the matrix dimensions multiply.
  size_t batchA = a.sizes.size() - 2, batchB = b.sizes.size() - 2;
  size_t batch = std::max(batchA, batchB);
  for (size_t i = 0; i < batch; ++i) {
    int64_t x = i < batch - batchA ? 1 : a.sizes[i - (batch - batchA)];
    int64_t y = i < batch - batchB ? 1 : b.sizes[i - (batch - batchB)];
    out.sizes.push_back(x == 1 ? y : (y == 1 || x == y ? x : kUnknown));
  }
  out.sizes.push_back(a.sizes[a.sizes.size() - 2]);
  out.sizes.push_back(b.sizes.back());
  return out;
}

/// Concatenation of a `prim::ListConstruct` of tensors along `dim`.
Shape inferCat(CatOp op) {
  auto list = op.getTensors().getDefiningOp<GenericOp>();
  if (!list || list.getKind() != "prim::ListConstruct" ||
      list.getOperands().empty())
    return Shape();
  Shape out = Shape::of(list.getOperands().front());
  if (!out.ranked || out.sizes.empty())
    return unknownWithDtype(out.dtype);
  int64_t rank = out.sizes.size();
  int64_t dim = op.getDim() < 0 ? op.getDim() + rank : op.getDim();
  if (dim < 0 || dim >= rank)
    return unknownWithDtype(out.dtype);
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
  if (!out.ranked)
    return unknownWithDtype(out.dtype);
  return out;
}

Shape inferAdaptivePool(Value input, ArrayRef<int64_t> outputSize) {
  Shape in = Shape::of(input);
  if (!in.ranked || in.sizes.size() < outputSize.size())
    return unknownWithDtype(in.dtype);
  size_t first = in.sizes.size() - outputSize.size();
  for (auto [i, size] : llvm::enumerate(outputSize))
    in.sizes[first + i] = size;
  return in;
}

/// The result shape of `op`, or nullopt if the pass has no rule for it.
std::optional<Shape> inferResult(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<Shape>>(op)
      .Case<ReluOp, SigmoidOp, SiluOp, HardswishOp, GeluOp, BatchNormOp,
            LayerNormOp, GroupNormOp, ContiguousOp>(
          [](auto op) { return Shape::of(op->getOperand(0)); })
      .Case<DropoutOp>([](DropoutOp op) { return Shape::of(op.getInput()); })
      .Case<SoftmaxOp>([](SoftmaxOp op) {
        Shape shape = Shape::of(op.getSelf());
        if (op.getDtype())
          shape.dtype =
              dtypeFromScalarTypeCode(op.getContext(), *op.getDtype());
        return shape;
      })
      .Case<ToDtypeOp>([](ToDtypeOp op) {
        Shape shape = Shape::of(op.getSelf());
        shape.dtype = dtypeFromScalarTypeCode(op.getContext(), op.getDtype());
        return shape;
      })
      .Case<AddOp, MulOp>(
          [](auto op) { return broadcast(op.getSelf(), op.getOther()); })
      .Case<Conv2dOp>([](Conv2dOp op) {
        return inferConv(op.getInput(), op.getWeight(), op.getStride(),
                         op.getPadding(), op.getDilation());
      })
      .Case<ConvolutionOp>([](ConvolutionOp op) -> std::optional<Shape> {
        if (op.getTransposed())
          return inferTransposedConv(op);
        return inferConv(op.getInput(), op.getWeight(), op.getStride(),
                         op.getPadding(), op.getDilation());
      })
      .Case<MaxPool2dOp>([](MaxPool2dOp op) {
        return inferWindowed(op.getSelf(), op.getKernelSize(), op.getStride(),
                             op.getPadding(), op.getDilation(),
                             op.getCeilMode(), kUnknown);
      })
      .Case<AvgPool2dOp>([](AvgPool2dOp op) {
        return inferWindowed(op.getSelf(), op.getKernelSize(), op.getStride(),
                             op.getPadding(), {}, op.getCeilMode(), kUnknown);
      })
      .Case<AdaptiveAvgPool2dOp>([](AdaptiveAvgPool2dOp op) {
        return inferAdaptivePool(op.getSelf(), op.getOutputSize());
      })
      .Case<LinearOp>([](LinearOp op) {
        return inferLinear(op.getInput(), op.getWeight());
      })
      .Case<CatOp>([](CatOp op) { return inferCat(op); })
      .Case<MatmulOp>(
          [](MatmulOp op) { return inferMatmul(op.getSelf(), op.getOther()); })
      .Case<FlattenOp>([](FlattenOp op) {
        return inferFlatten(op.getSelf(), op.getStartDim(), op.getEndDim());
      })
      .Case<ViewOp>(
          [](ViewOp op) { return inferReshape(op.getSelf(), op.getSize()); })
      .Case<ReshapeOp>([](ReshapeOp op) {
        return inferReshape(op.getSelf(), op.getShape());
      })
      .Default([](Operation *) { return std::nullopt; });
}

struct RefineTypesPass
    : public composer::impl::RefineTypesBase<RefineTypesPass> {
  using RefineTypesBase::RefineTypesBase;

  void runOnOperation() override;

private:
  LogicalResult refineArguments(func::FuncOp forward);
};

LogicalResult RefineTypesPass::refineArguments(func::FuncOp forward) {
  MLIRContext *ctx = &getContext();
  SmallVector<BlockArgument> tensorArgs;
  for (BlockArgument arg : forward.getArguments())
    if (isa<TorchTensorType>(arg.getType()))
      tensorArgs.push_back(arg);
  if (inputSpecs.size() != tensorArgs.size())
    return forward.emitError("input-specs gives ")
           << inputSpecs.size() << " spec(s) but @forward takes "
           << tensorArgs.size() << " tensor argument(s)";
  // Check every spec before changing any argument.
  SmallVector<TorchTensorType> refinedTypes;
  for (auto [spec, arg] : llvm::zip_equal(inputSpecs, tensorArgs)) {
    std::string text = "!composer.tensor<" + spec + ">";
    std::string parseError;
    TorchTensorType specType;
    size_t consumed = 0;
    {
      // The parser's message refers to the synthesized text; fold it into
      // this pass's error instead.
      ScopedDiagnosticHandler capture(ctx, [&](Diagnostic &diag) {
        parseError = diag.str();
        return success();
      });
      specType = dyn_cast_or_null<TorchTensorType>(
          parseType(text, ctx, &consumed, /*isKnownNullTerminated=*/false));
    }
    if (!specType || consumed != text.size() || !specType.getHasRank())
      return forward.emitError("invalid input spec '")
             << spec << "': expected dimensions and a dtype such as "
             << "1x3x224x224xf32"
             << (parseError.empty() ? "" : " (" + parseError + ")");
    TorchTensorType refined =
        specType.meet(cast<TorchTensorType>(arg.getType()));
    if (!refined)
      return forward.emitError("input spec '")
             << spec << "' contradicts argument #" << arg.getArgNumber()
             << " of type " << arg.getType();
    refinedTypes.push_back(refined);
  }
  for (auto [arg, type] : llvm::zip_equal(tensorArgs, refinedTypes))
    arg.setType(type);
  return success();
}

void RefineTypesPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  SiteReport report(module, getArgument());
  func::FuncOp forward = lookupForward(module, getArgument());
  if (!forward)
    return signalPassFailure();
  if (failed(refineArguments(forward)))
    return signalPassFailure();

  SymbolTable symbols(module);
  auto refine = [&](Value value, TorchTensorType inferred) -> LogicalResult {
    auto current = cast<TorchTensorType>(value.getType());
    TorchTensorType met = current.meet(inferred);
    if (!met)
      return value.getDefiningOp()->emitError("inferred type ")
             << inferred << " contradicts the declared " << current;
    value.setType(met);
    return success();
  };

  WalkResult walked = forward.walk([&](Operation *op) -> WalkResult {
    if (op->getNumResults() != 1 ||
        !isa<TorchTensorType>(op->getResult(0).getType()))
      return WalkResult::advance();
    TorchTensorType inferred;
    if (auto read = dyn_cast<GetParamOp>(op)) {
      Operation *decl = symbols.lookup(read.getName());
      if (auto param = dyn_cast_or_null<ParameterOp>(decl))
        inferred = param.getTensorType();
      else if (auto buffer = dyn_cast_or_null<BufferOp>(decl))
        inferred = buffer.getTensorType();
    } else if (std::optional<Shape> shape = inferResult(op)) {
      inferred = shape->toType(ctx);
    }
    if (!inferred) {
      report.skip(op,
                  "no shape rule for " + op->getName().getStringRef().str() +
                      (isa<GenericOp>(op)
                           ? " \"" + cast<GenericOp>(op).getKind().str() + "\""
                           : std::string()));
      return WalkResult::advance();
    }
    if (failed(refine(op->getResult(0), inferred)))
      return WalkResult::interrupt();
    if (cast<TorchTensorType>(op->getResult(0).getType()).hasStaticShape())
      report.match(op);
    else
      report.skip(op, "shape partly unknown after inference");
    return WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return signalPassFailure();

  // The signature follows the refined arguments and returned values.
  auto ret = cast<func::ReturnOp>(forward.getBody().back().getTerminator());
  forward.setFunctionType(FunctionType::get(
      ctx, forward.front().getArgumentTypes(), ret.getOperandTypes()));
  report.emit("tensor results fully refined");
}

} // namespace
