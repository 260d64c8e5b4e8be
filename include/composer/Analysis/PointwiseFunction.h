//===- PointwiseFunction.h - activations, however written -------*- C++ -*-===//
//
// A nonlinear function applied to each element of one tensor: an activation
// op (relu, gelu, aten::mish, ..) or elementwise arithmetic that writes one
// out, as GPT-2's tanh GELU does:
//   0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
// Its ops read only x, each other, scalars and constant 0-d tensors.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ANALYSIS_POINTWISEFUNCTION_H
#define COMPOSER_ANALYSIS_POINTWISEFUNCTION_H

#include "composer/Dialect/Composer.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace composer {

struct PointwiseFunction {
  mlir::Value input;
  mlir::Value output;
  /// In block order; cloning them with `input` mapped to another value
  /// applies the function to that value.
  llvm::SmallVector<mlir::Operation *> ops;
};

/// Why a value's uses are no pointwise function.
enum class PointwiseMismatch {
  /// Nothing elementwise and nonlinear reads it: no activation at all.
  None,
  /// Something other than the function reads the input.
  InputHasOtherUsers,
  /// Something outside reads a value the function computes on the way.
  IntermediateHasOtherUsers,
};

/// The pointwise function that the uses of `input` compute; `mismatch` says
/// why there is none.
std::optional<PointwiseFunction>
matchPointwiseFunction(mlir::Value input,
                       PointwiseMismatch *mismatch = nullptr);

/// Whether `op` is a single-op activation of its operand 0: a kind with the
/// Activation trait, typed or generic, whose other operands are no tensors.
bool isActivationOp(mlir::Operation *op);

} // namespace composer

#endif // COMPOSER_ANALYSIS_POINTWISEFUNCTION_H
