//===- FlopCosts.cpp - FlopCountOpInterface of the ops --------------------===//
//
// Each op's FLOP count from its types, under the conventions of
// composer/Dialect/FlopCost.h: a multiply-add is 2 FLOPs, a contraction's
// backward is its forward twice (input and weight gradients), anything
// else's once. Ops whose cost needs a size the IR does not know say so
// (FlopCost::unknown) rather than count zero.
//
//===----------------------------------------------------------------------===//

#include "composer/Dialect/Composer.h"

using namespace mlir;
using namespace composer;

std::optional<int64_t> composer::getNumElements(Type type) {
  auto tensor = dyn_cast<TorchTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  int64_t count = 1;
  for (int64_t size : tensor.getSizes())
    count *= size;
  return count;
}

std::optional<int64_t> composer::getNumElements(Value value) {
  return getNumElements(value.getType());
}

FlopCost composer::getElementwiseFlopCost(Operation *op) {
  if (!llvm::any_of(op->getResultTypes(), llvm::IsaPred<TorchTensorType>))
    return FlopCost::none();
  // The largest tensor: the result, or the broadcast of the operands when
  // the result's sizes are unknown (an op the type rules do not cover).
  int64_t largest = 0;
  auto allKnown = [&](ValueRange values) {
    bool known = true;
    for (Value value : values) {
      if (!isa<TorchTensorType>(value.getType()))
        continue;
      if (std::optional<int64_t> count = getNumElements(value))
        largest = std::max(largest, *count);
      else
        known = false;
    }
    return known;
  };
  bool operandsKnown = allKnown(op->getOperands());
  bool resultsKnown = allKnown(op->getResults());
  if (!operandsKnown && !resultsKnown)
    return FlopCost::unknown();
  return FlopCost::pointwise(kElementwiseFlops * largest);
}

namespace {

/// The sizes of a tensor value whose shape is fully known.
std::optional<ArrayRef<int64_t>> getStaticSizes(Value value) {
  auto type = dyn_cast<TorchTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getSizes();
}

bool isTensor(Value value) { return isa<TorchTensorType>(value.getType()); }

/// Bias FLOPs: one add per output element when there is a bias.
int64_t biasFlops(Value bias, int64_t outputElements) {
  return bias && isTensor(bias) ? outputElements : 0;
}

/// A convolution: each element of the output (or, transposed, of the
/// input) takes weight[1] * prod(kernel) multiply-adds.
FlopCost convolutionCost(Value input, Value weight, Value bias, Value result,
                         bool transposed) {
  std::optional<ArrayRef<int64_t>> weightSizes = getStaticSizes(weight);
  std::optional<int64_t> outputs = getNumElements(result);
  std::optional<int64_t> perElementOf =
      transposed ? getNumElements(input) : outputs;
  if (!weightSizes || weightSizes->size() < 2 || !outputs || !perElementOf)
    return FlopCost::unknown();
  int64_t macsPerElement = 1;
  for (int64_t size : weightSizes->drop_front())
    macsPerElement *= size;
  // The bias's gradient is the weight's half.
  return FlopCost::contraction(*perElementOf * macsPerElement,
                               biasFlops(bias, *outputs), {1, 2});
}

/// matmul's multiply-adds (torch.matmul's broadcasting rules), with an
/// extra `extra` FLOPs per output element (addmm's add).
FlopCost matmulCost(Value lhs, Value rhs, ArrayRef<unsigned> weightOperands,
                    int64_t extraPerOutput = 0) {
  std::optional<ArrayRef<int64_t>> a = getStaticSizes(lhs);
  std::optional<ArrayRef<int64_t>> b = getStaticSizes(rhs);
  if (!a || !b || a->empty() || b->empty())
    return FlopCost::unknown();
  int64_t k = a->back();
  int64_t rows = a->size() >= 2 ? (*a)[a->size() - 2] : 1;
  int64_t cols = b->size() >= 2 ? b->back() : 1;
  // Batch dimensions broadcast from the right.
  ArrayRef<int64_t> batchA = a->drop_back(std::min<size_t>(a->size(), 2));
  ArrayRef<int64_t> batchB = b->drop_back(std::min<size_t>(b->size(), 2));
  int64_t batch = 1;
  for (size_t i = 0, e = std::max(batchA.size(), batchB.size()); i < e; ++i) {
    int64_t x = i < batchA.size() ? batchA[batchA.size() - 1 - i] : 1;
    int64_t y = i < batchB.size() ? batchB[batchB.size() - 1 - i] : 1;
    batch *= std::max(x, y);
  }
  int64_t outputs = batch * rows * cols;
  return FlopCost::contraction(outputs * k, outputs * extraPerOutput,
                               weightOperands);
}

/// A linear: each output element takes in_features (weight[1]) multiply-adds.
FlopCost linearCost(Value weight, Value bias, Value result) {
  std::optional<ArrayRef<int64_t>> weightSizes = getStaticSizes(weight);
  std::optional<int64_t> outputs = getNumElements(result);
  if (!weightSizes || weightSizes->empty() || !outputs)
    return FlopCost::unknown();
  return FlopCost::contraction(*outputs * weightSizes->back(),
                               biasFlops(bias, *outputs), {1, 2});
}

/// `perElement` FLOPs per element of `value`.
FlopCost perElementCost(Value value, int64_t perElement) {
  std::optional<int64_t> count = getNumElements(value);
  if (!count)
    return FlopCost::unknown();
  return FlopCost::pointwise(*count * perElement);
}

/// A pooling window: one compare or add per window element per output.
FlopCost windowCost(Value result, ArrayRef<int64_t> kernel) {
  int64_t window = 1;
  for (int64_t size : kernel)
    window *= size;
  return perElementCost(result, window);
}

} // namespace

FlopCost Conv2dOp::getFlopCost() {
  return convolutionCost(getInput(), getWeight(), getBias(), getResult(),
                         /*transposed=*/false);
}

FlopCost ConvolutionOp::getFlopCost() {
  return convolutionCost(getInput(), getWeight(), getBias(), getResult(),
                         getTransposed());
}

FlopCost LinearOp::getFlopCost() {
  return linearCost(getWeight(), getBias(), getResult());
}

FlopCost MatmulOp::getFlopCost() {
  return matmulCost(getSelf(), getOther(), {1});
}

FlopCost BatchNormOp::getFlopCost() {
  return perElementCost(getInput(), kNormalizationFlops);
}
FlopCost LayerNormOp::getFlopCost() {
  return perElementCost(getInput(), kNormalizationFlops);
}
FlopCost GroupNormOp::getFlopCost() {
  return perElementCost(getInput(), kNormalizationFlops);
}
FlopCost SoftmaxOp::getFlopCost() {
  return perElementCost(getSelf(), kSoftmaxFlops);
}

FlopCost MaxPool2dOp::getFlopCost() {
  return windowCost(getResult(), getKernelSize());
}
FlopCost AvgPool2dOp::getFlopCost() {
  return windowCost(getResult(), getKernelSize());
}
FlopCost AdaptiveAvgPool2dOp::getFlopCost() {
  // Every input element is added once.
  return perElementCost(getSelf(), kElementwiseFlops);
}

// Data movement.
FlopCost FlattenOp::getFlopCost() { return FlopCost::none(); }
FlopCost ViewOp::getFlopCost() { return FlopCost::none(); }
FlopCost ReshapeOp::getFlopCost() { return FlopCost::none(); }
FlopCost CatOp::getFlopCost() { return FlopCost::none(); }
FlopCost ToDtypeOp::getFlopCost() { return FlopCost::none(); }
FlopCost StopGradientOp::getFlopCost() { return FlopCost::none(); }
FlopCost ContiguousOp::getFlopCost() { return FlopCost::none(); }

//===----------------------------------------------------------------------===//
// Method ops: each states what it adds.
//===----------------------------------------------------------------------===//

FlopCost BlurPool2dOp::getFlopCost() {
  // A depthwise 3x3 convolution: 9 multiply-adds per output element.
  return perElementCost(getResult(), 2 * 9);
}

FlopCost GhostBatchNormOp::getFlopCost() {
  return perElementCost(getInput(), kNormalizationFlops);
}

FlopCost SqueezeExciteOp::getFlopCost() {
  std::optional<ArrayRef<int64_t>> input = getStaticSizes(getInput());
  std::optional<ArrayRef<int64_t>> fc1 = getStaticSizes(getFc1());
  std::optional<int64_t> elements = getNumElements(getInput());
  if (!input || input->empty() || !fc1 || fc1->size() != 2 || !elements)
    return FlopCost::unknown();
  int64_t batch = (*input)[0];
  int64_t latent = (*fc1)[0], channels = (*fc1)[1];
  int64_t fcFlops = 2 * (2 * batch * latent * channels);
  // Mean over H x W, fc1, relu, fc2, sigmoid, the gate's multiply.
  int64_t forward =
      *elements + fcFlops + batch * latent + batch * channels + *elements;
  FlopCost cost = FlopCost::pointwise(forward);
  cost.weightGradient = fcFlops;
  cost.weightOperands = {1, 2};
  return cost;
}

FlopCost StandardizeWeightOp::getFlopCost() {
  return perElementCost(getWeight(), kNormalizationFlops);
}

FlopCost StochasticDepthOp::getFlopCost() {
  // Block mode's branch runs or not (the composer.if around it, weighted by
  // FlopCountAnalysis); sample mode multiplies by a per-sample mask.
  if (getMethod() == "block")
    return FlopCost::none();
  return perElementCost(getResult(), kElementwiseFlops);
}

FlopCost GyroDropoutOp::getFlopCost() {
  return perElementCost(getResult(), kElementwiseFlops);
}

//===----------------------------------------------------------------------===//
// The generic op: by its schema name.
//===----------------------------------------------------------------------===//

FlopCost GenericOp::getFlopCost() {
  // prim:: nodes build lists and tuples, unpack them, read attributes.
  if (getKind().starts_with("prim::"))
    return FlopCost::none();
  const AtenKindInfo *info = getKindInfo();
  if (!info)
    return getElementwiseFlopCost(getOperation());
  OperandRange operands = getOperands();
  Value result = getNumResults() == 1 ? getResult(0) : Value();
  auto operand = [&](unsigned i) {
    return i < operands.size() ? operands[i] : Value();
  };
  auto tensorOperands = [&](unsigned count) {
    for (unsigned i = 0; i < count; ++i)
      if (!operand(i) || !isTensor(operand(i)))
        return false;
    return true;
  };
  switch (info->flopRule) {
  case FlopRule::Pointwise:
    return getElementwiseFlopCost(getOperation());
  case FlopRule::Free:
    return FlopCost::none();
  case FlopRule::Unknown:
    return FlopCost::unknown();
  case FlopRule::Matmul:
    if (!tensorOperands(2))
      return FlopCost::unknown();
    return matmulCost(operand(0), operand(1), {1});
  case FlopRule::Addmm:
    if (!tensorOperands(3))
      return FlopCost::unknown();
    // The product, then beta * input + alpha * product: 1 FLOP each.
    // addmm's input is a linear's bias (traced nn.Linear).
    return matmulCost(operand(1), operand(2),
                      info->kind == AtenKind::addmm ? ArrayRef<unsigned>{0, 2}
                                                    : ArrayRef<unsigned>{2},
                      /*extraPerOutput=*/1);
  case FlopRule::Linear:
    if (!tensorOperands(2) || !result)
      return FlopCost::unknown();
    return linearCost(operand(1), operand(2), result);
  case FlopRule::Convolution: {
    if (!tensorOperands(2) || !result)
      return FlopCost::unknown();
    bool transposed = false;
    if (info->kind == AtenKind::_convolution ||
        info->kind == AtenKind::convolution) {
      // `transposed` is argument 6; only a constant says which it is.
      auto flag =
          operand(6) ? operand(6).getDefiningOp<ConstantOp>() : ConstantOp();
      auto value = flag ? dyn_cast<BoolAttr>(flag.getValue()) : BoolAttr();
      if (!value)
        return FlopCost::unknown();
      transposed = value.getValue();
    }
    return convolutionCost(operand(0), operand(1), operand(2), result,
                           transposed);
  }
  case FlopRule::TransposedConvolution:
    if (!tensorOperands(2) || !result)
      return FlopCost::unknown();
    return convolutionCost(operand(0), operand(1), operand(2), result, true);
  case FlopRule::Attention: {
    // softmax(q k^T) v: two products and a softmax over [..., L, S].
    std::optional<ArrayRef<int64_t>> q = getStaticSizes(operand(0));
    std::optional<ArrayRef<int64_t>> k = getStaticSizes(operand(1));
    std::optional<ArrayRef<int64_t>> v = getStaticSizes(operand(2));
    if (!q || !k || !v || q->size() < 2 || k->size() < 2 || v->empty())
      return FlopCost::unknown();
    int64_t batch = 1;
    for (int64_t size : q->drop_back(2))
      batch *= size;
    int64_t queries = (*q)[q->size() - 2], keys = (*k)[k->size() - 2];
    int64_t scores = batch * queries * keys;
    int64_t macs = scores * q->back() + scores * v->back();
    return FlopCost::contraction(macs, kSoftmaxFlops * scores, {1});
  }
  case FlopRule::Normalization:
    return operand(0) ? perElementCost(operand(0), kNormalizationFlops)
                      : FlopCost::unknown();
  case FlopRule::Softmax:
    return operand(0) ? perElementCost(operand(0), kSoftmaxFlops)
                      : FlopCost::unknown();
  }
  llvm_unreachable("every FlopRule is handled");
}
