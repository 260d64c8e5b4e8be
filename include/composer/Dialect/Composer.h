//===- Composer.h - the composer dialect ------------------------*- C++ -*-===//
//
// Types, interfaces and ops of the composer dialect.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_DIALECT_COMPOSER_H
#define COMPOSER_DIALECT_COMPOSER_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "composer/Dialect/ComposerDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "composer/Dialect/ComposerTypes.h.inc"

#include "composer/Dialect/ComposerInterfaces.h.inc"

#define GET_OP_CLASSES
#include "composer/Dialect/ComposerOps.h.inc"

namespace composer {

/// Whether `type` is a dtype a composer tensor can carry: f16/bf16/f32/f64,
/// signless i1/i8/i16/i32/i64, or ui8.
bool isValidDtype(mlir::Type type);

/// Whether a value of type `lhs` may flow where `rhs` is expected: equal
/// types, tensor types that do not contradict each other, T and None into
/// Optional[T], and tuples of such element-wise (TorchScript's subtyping).
bool areCompatibleTypes(mlir::Type lhs, mlir::Type rhs);

} // namespace composer

#endif // COMPOSER_DIALECT_COMPOSER_H
