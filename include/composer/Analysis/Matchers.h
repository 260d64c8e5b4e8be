//===- Matchers.h - reading constants and generic nodes ---------*- C++ -*-===//
//
// Small matchers the graph analyses and passes share: constant ints as the
// importer writes them, and generic aten/prim nodes by kind.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ANALYSIS_MATCHERS_H
#define COMPOSER_ANALYSIS_MATCHERS_H

#include "composer/Dialect/Composer.h"

#include <initializer_list>
#include <optional>

namespace composer {

/// The generic node of kind `kind` that defines `value`, or null.
GenericOp getGeneric(mlir::Value value, AtenKind kind);
GenericOp getGeneric(mlir::Value value, llvm::StringRef kind);

/// Whether `op` is a generic node of one of `kinds`.
bool isGenericOf(mlir::Operation *op, std::initializer_list<AtenKind> kinds);
bool isGenericOf(mlir::Operation *op,
                 std::initializer_list<llvm::StringRef> kinds);

/// The int `value` holds if it is a constant: an int, a 0-d integer tensor
/// (as traces record sizes) or aten::Int / prim::NumToTensor of one.
std::optional<int64_t> getConstantInt(mlir::Value value);

/// Whether `value` is a constant 0-d tensor: a number as a trace records it
/// (a script passes a scalar).
bool isZeroDimConstant(mlir::Value value);

/// Whether `value` is `aten::size(tensor, d)` with a constant d that names
/// dimension `dim`; negative dimensions count from the end, and match
/// non-negative ones when `rank` is known.
bool isSizeOf(mlir::Value value, mlir::Value tensor, int64_t dim,
              std::optional<int64_t> rank = std::nullopt);

/// Whether `value` is a size of some tensor: aten::size, an element of its
/// list, or the same as a 0-d tensor (as traces record sizes).
bool isSizeDerived(mlir::Value value);

} // namespace composer

#endif // COMPOSER_ANALYSIS_MATCHERS_H
