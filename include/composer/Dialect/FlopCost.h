//===- FlopCost.h - an op's cost in floating-point operations ---*- C++ -*-===//
//
// The value FlopCountOpInterface returns (ComposerInterfaces.td): one op's
// forward FLOPs and what its backward costs, from the op's types alone.
// Conventions, shared by every op (docs in README "--report-costs"):
// - a multiply-add (FMA) is 2 FLOPs; an add, a multiply, a compare, an
//   activation or any other elementwise op is kElementwiseFlops per element;
// - a normalization (batch/layer/group norm, ghost batch norm, weight
//   standardization) is kNormalizationFlops per element (mean, variance,
//   normalize, affine), a softmax kSoftmaxFlops per element;
// - data movement (views, casts, copies, concatenation) is free;
// - backward: a contraction (convolution, linear, matmul) costs its forward
//   once for the gradient of its input and once for that of its weight;
//   any other op costs its forward once. FlopCountAnalysis drops the
//   halves whose operands need no gradient.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_DIALECT_FLOPCOST_H
#define COMPOSER_DIALECT_FLOPCOST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir {
class Operation;
class Type;
class Value;
} // namespace mlir

namespace composer {

inline constexpr int64_t kElementwiseFlops = 1;
inline constexpr int64_t kNormalizationFlops = 5;
inline constexpr int64_t kSoftmaxFlops = 5;

struct FlopCost {
  /// Forward FLOPs; nullopt when they depend on a size the IR does not know.
  std::optional<int64_t> forward;
  /// Backward FLOPs spent when an operand other than the weights needs a
  /// gradient.
  int64_t inputGradient = 0;
  /// Backward FLOPs spent when one of `weightOperands` needs a gradient.
  int64_t weightGradient = 0;
  /// The operands whose gradient is `weightGradient` (a contraction's
  /// right-hand side: a filter, a weight matrix, matmul's second operand).
  llvm::SmallVector<unsigned, 2> weightOperands;

  /// Sizes the op's cost depends on are unknown.
  static FlopCost unknown() { return FlopCost(); }
  /// Free: data movement, scalars.
  static FlopCost none() { return pointwise(0); }
  /// `flops` forward, and the same once in backward.
  static FlopCost pointwise(int64_t flops) {
    FlopCost cost;
    cost.forward = flops;
    cost.inputGradient = flops;
    return cost;
  }
  /// A contraction of `macs` multiply-adds plus `extra` FLOPs (a bias), with
  /// its weight (and bias) at `weightOperands`: backward is the forward
  /// twice, once for the input's gradient and once for the weight's.
  static FlopCost contraction(int64_t macs, int64_t extra,
                              llvm::ArrayRef<unsigned> weightOperands) {
    FlopCost cost;
    cost.forward = 2 * macs + extra;
    cost.inputGradient = *cost.forward;
    cost.weightGradient = *cost.forward;
    cost.weightOperands.assign(weightOperands.begin(), weightOperands.end());
    return cost;
  }
};

/// The number of elements of a tensor value; nullopt when its type does not
/// know every size.
std::optional<int64_t> getNumElements(mlir::Value value);
std::optional<int64_t> getNumElements(mlir::Type type);

/// The default cost: kElementwiseFlops per element of the op's largest
/// tensor (result or operand); unknown if any of them has unknown sizes, and
/// free if the op has no tensor result.
FlopCost getElementwiseFlopCost(mlir::Operation *op);

} // namespace composer

#endif // COMPOSER_DIALECT_FLOPCOST_H
