//===- PointwiseFunction.cpp - activations, however written ---------------===//

#include "composer/Analysis/PointwiseFunction.h"
#include "composer/Analysis/Matchers.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace composer {

namespace {

enum class ElementwiseKind { NotElementwise, Activation, Arithmetic, Power };

/// What an aten kind, without its in-place `_`, computes per element.
ElementwiseKind classifyKind(StringRef kind) {
  return llvm::StringSwitch<ElementwiseKind>(kind)
      .Cases("aten::relu", "aten::gelu", "aten::silu", "aten::sigmoid",
             "aten::tanh", "aten::hardswish", ElementwiseKind::Activation)
      .Cases("aten::mish", "aten::elu", "aten::selu", "aten::celu",
             "aten::leaky_relu", "aten::softplus", "aten::relu6",
             "aten::hardtanh", ElementwiseKind::Activation)
      .Cases("aten::hardsigmoid", "aten::erf", "aten::exp", "aten::sqrt",
             "aten::rsqrt", "aten::reciprocal", "aten::abs", "aten::log1p",
             ElementwiseKind::Activation)
      .Cases("aten::square", "aten::pow", ElementwiseKind::Power)
      .Cases("aten::add", "aten::sub", "aten::rsub", "aten::mul", "aten::div",
             "aten::neg", ElementwiseKind::Arithmetic)
      .Default(ElementwiseKind::NotElementwise);
}

/// The kind of `op` and whether it writes its operand 0 in place.
ElementwiseKind classify(Operation *op, bool &inplace) {
  inplace = false;
  if (isa<GeluOp>(op))
    return ElementwiseKind::Activation;
  if (auto unary = dyn_cast<ReluOp>(op))
    return inplace = unary.getInplace(), ElementwiseKind::Activation;
  if (auto unary = dyn_cast<SigmoidOp>(op))
    return inplace = unary.getInplace(), ElementwiseKind::Activation;
  if (auto unary = dyn_cast<SiluOp>(op))
    return inplace = unary.getInplace(), ElementwiseKind::Activation;
  if (auto unary = dyn_cast<HardswishOp>(op))
    return inplace = unary.getInplace(), ElementwiseKind::Activation;
  if (auto add = dyn_cast<AddOp>(op))
    return inplace = add.getInplace(), ElementwiseKind::Arithmetic;
  if (auto mul = dyn_cast<MulOp>(op))
    return inplace = mul.getInplace(), ElementwiseKind::Arithmetic;
  auto generic = dyn_cast<GenericOp>(op);
  if (!generic || op->getNumResults() != 1 || op->getNumOperands() == 0)
    return ElementwiseKind::NotElementwise;
  StringRef kind = generic.getKind();
  inplace = kind.consume_back("_");
  return classifyKind(kind);
}

/// Whether `op` multiplies or divides: of two operands computed from the
/// input, it is nonlinear (x * sigmoid(x)).
bool isProduct(Operation *op) {
  if (isa<MulOp>(op))
    return true;
  auto generic = dyn_cast<GenericOp>(op);
  if (!generic)
    return false;
  StringRef kind = generic.getKind();
  kind.consume_back("_");
  return kind == "aten::mul" || kind == "aten::div";
}

} // namespace

bool isActivationOp(Operation *op) {
  bool inplace;
  if (classify(op, inplace) != ElementwiseKind::Activation)
    return false;
  return llvm::none_of(op->getOperands().drop_front(), [](Value operand) {
    return isa<TorchTensorType>(operand.getType());
  });
}

std::optional<PointwiseFunction>
matchPointwiseFunction(Value input, PointwiseMismatch *mismatch) {
  auto fail = [&](PointwiseMismatch why) -> std::optional<PointwiseFunction> {
    if (mismatch)
      *mismatch = why;
    return std::nullopt;
  };
  Block *block = input.getParentBlock();
  Operation *def = input.getDefiningOp();
  if (def)
    block = def->getBlock();
  llvm::SmallPtrSet<Value, 16> computed = {input};
  PointwiseFunction function;
  function.input = input;
  bool nonlinear = false;
  auto begin = def ? std::next(def->getIterator()) : block->begin();
  for (Operation &op : llvm::make_range(begin, block->end())) {
    bool inplace;
    ElementwiseKind kind = classify(&op, inplace);
    if (kind == ElementwiseKind::NotElementwise)
      continue;
    unsigned fromInput = 0;
    bool onlyConstants = true;
    for (Value operand : op.getOperands()) {
      if (computed.contains(operand))
        ++fromInput;
      else if (isa<TorchTensorType>(operand.getType()) &&
               !isZeroDimConstant(operand))
        onlyConstants = false;
    }
    if (fromInput == 0 || !onlyConstants)
      continue;
    // Unary activations and powers read the tensor as operand 0.
    if (kind != ElementwiseKind::Arithmetic &&
        !computed.contains(op.getOperand(0)))
      continue;
    // Written in place, operand 0 must be read by nothing else.
    if (inplace && !op.getOperand(0).hasOneUse())
      continue;
    bool product = fromInput > 1 && isProduct(&op);
    nonlinear |= kind != ElementwiseKind::Arithmetic || product;
    function.ops.push_back(&op);
    computed.insert(op.getResult(0));
  }
  if (function.ops.empty() || !nonlinear)
    return fail(PointwiseMismatch::None);
  llvm::SmallPtrSet<Operation *, 16> inFunction(function.ops.begin(),
                                                function.ops.end());
  auto readOutside = [&](Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      return !inFunction.contains(user);
    });
  };
  if (readOutside(input))
    return fail(PointwiseMismatch::InputHasOtherUsers);
  for (Operation *op : function.ops) {
    Value value = op->getResult(0);
    if (!readOutside(value) && !value.use_empty())
      continue;
    if (function.output)
      return fail(PointwiseMismatch::IntermediateHasOtherUsers);
    function.output = value;
  }
  if (!function.output)
    return fail(PointwiseMismatch::None);
  return function;
}

} // namespace composer
