//===- PointwiseFunction.cpp - activations, however written ---------------===//

#include "composer/Analysis/PointwiseFunction.h"
#include "composer/Analysis/Matchers.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace composer {

namespace {

enum class ElementwiseKind { NotElementwise, Activation, Arithmetic, Power };

/// What `op` computes per element, and whether it writes its operand 0 in
/// place. Only ops of one result and tensor arithmetic count.
ElementwiseKind classify(Operation *op, bool &inplace) {
  inplace = false;
  const AtenKindInfo *info = lookupAtenKind(op);
  if (!info || op->getNumResults() != 1 || op->getNumOperands() == 0 ||
      !isa<TorchTensorType>(op->getResult(0).getType()))
    return ElementwiseKind::NotElementwise;
  inplace = info->has(AtenTrait::InPlace);
  // The kind without its in-place `_`.
  StringRef kind = info->getName();
  if (inplace)
    kind = kind.drop_back();
  auto is = [&](AtenKind base) { return kind == getAtenKindName(base); };
  if (is(AtenKind::square) || is(AtenKind::pow))
    return ElementwiseKind::Power;
  if (is(AtenKind::add) || is(AtenKind::sub) || is(AtenKind::rsub) ||
      is(AtenKind::mul) || is(AtenKind::div) || is(AtenKind::neg))
    return ElementwiseKind::Arithmetic;
  // A nonlinear function of one tensor with a gradient (an activation,
  // erf, exp); not rounding, sign or bitwise functions.
  if (info->has(AtenTrait::ElementwiseUnary | AtenTrait::HasGradient))
    return ElementwiseKind::Activation;
  return ElementwiseKind::NotElementwise;
}

/// Whether `op` multiplies or divides: of two operands computed from the
/// input, it is nonlinear (x * sigmoid(x)).
bool isProduct(Operation *op) {
  const AtenKindInfo *info = lookupAtenKind(op);
  if (!info)
    return false;
  AtenKind kind = info->kind;
  return llvm::is_contained(
      {AtenKind::mul, AtenKind::mul_, AtenKind::div, AtenKind::div_}, kind);
}

} // namespace

bool isActivationOp(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumOperands() == 0 ||
      !hasAtenTrait(op, AtenTrait::Activation))
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
