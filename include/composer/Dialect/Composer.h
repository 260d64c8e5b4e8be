//===- Composer.h - the composer dialect ------------------------*- C++ -*-===//
//
// Types, attributes, interfaces, traits and ops of the composer dialect.
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

#include "composer/Dialect/AtenKinds.h"
#include "composer/Dialect/FlopCost.h"
#include "composer/Support/TorchUpstream.h"

#include "composer/Dialect/ComposerDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "composer/Dialect/ComposerTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "composer/Dialect/ComposerAttributes.h.inc"

namespace composer {
/// InferTorchTypeOpInterface's default rule: operand 0's tensor type, or
/// for an ElementwiseBinary op the broadcast of operands 0 and 1.
TorchTensorType inferElementwiseResultType(mlir::Operation *op);

/// Whether the operands' known shapes prove that `op` fails at run time: an
/// ElementwiseBinary op whose operands cannot broadcast.
bool failsToBroadcast(mlir::Operation *op);
} // namespace composer

#include "composer/Dialect/ComposerInterfaces.h.inc"

namespace composer::OpTrait {

/// The op's result has operand 0's channel count (dimension 1) and memory
/// format; for add and mul, either operand's. ODS: Composer_PreservesLayout.
template <typename ConcreteType>
class PreservesLayout
    : public mlir::OpTrait::TraitBase<ConcreteType, PreservesLayout> {};

/// Applied to a parameter read, the result is a per-use view of that
/// parameter with its shape and dtype (weight standardization): passes
/// reasoning about the parameter behind a weight look through it.
/// ODS: Composer_WeightView.
template <typename ConcreteType>
class WeightView : public mlir::OpTrait::TraitBase<ConcreteType, WeightView> {};

/// A broadcasting elementwise op of two tensors (add, mul): the result's
/// shape comes from both operands, its layout from either.
/// ODS: Composer_ElementwiseBinary.
template <typename ConcreteType>
class ElementwiseBinary
    : public mlir::OpTrait::TraitBase<ConcreteType, ElementwiseBinary> {};

} // namespace composer::OpTrait

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

/// Whether `operand` is one its PreservesLayout owner takes its result's
/// channels and memory format from: operand 0, or either operand of an
/// ElementwiseBinary op.
bool isLayoutSource(mlir::OpOperand &operand);

/// The tensor dtype (element type) of a scalar type; null for those the
/// dialect has none for (complex, quantized).
mlir::Type getDtypeType(mlir::MLIRContext *ctx,
                        torch_upstream::ScalarType scalarType);

/// The scalar type of a tensor dtype; nullopt if `dtype` is not one.
std::optional<torch_upstream::ScalarType> getScalarType(mlir::Type dtype);

/// The IR name of a memory format ("contiguous", "preserve",
/// "channels_last", "channels_last_3d"), and its inverse.
llvm::StringRef getMemoryFormatName(torch_upstream::MemoryFormat format);
std::optional<torch_upstream::MemoryFormat>
parseMemoryFormatName(llvm::StringRef name);

} // namespace composer

#endif // COMPOSER_DIALECT_COMPOSER_H
