//===- Conversion.h - shared by import and export ---------------*- C++ -*-===//
//
// Internal to libComposerTorchScript: converting types, constants and
// locations between TorchScript and the composer dialect.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_LIB_TORCHSCRIPT_CONVERSION_H
#define COMPOSER_LIB_TORCHSCRIPT_CONVERSION_H

#include "composer/Dialect/Composer.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/ir.h>

#include <optional>
#include <string>

namespace composer {

/// The composer type of a TorchScript type; for a type the dialect does not
/// model (a NamedTuple, an enum, a Union, ...), an `!composer.opaque` that
/// keeps its annotation as the model's saved code spells it.
mlir::Type importType(const c10::TypePtr &type, mlir::MLIRContext *ctx);

/// The TorchScript type of a composer type, resolving class names in `cu`
/// (opaque types by parsing their annotation as torch.jit.load does); nullptr
/// (and `error` set) if it has none.
c10::TypePtr exportType(mlir::Type type, torch::jit::CompilationUnit &cu,
                        std::string &error);

/// The builtin element type of a tensor dtype, or null.
mlir::Type importDtype(c10::ScalarType dtype, mlir::MLIRContext *ctx);
std::optional<c10::ScalarType> exportDtype(mlir::Type dtype);

/// The ScalarTypeAttr or MemoryFormatAttr for an int `value` passed where a
/// schema declares `type` as (an optional) ScalarType or MemoryFormat; null
/// otherwise, or if the int names no value the dialect has.
mlir::Attribute importEnumAttribute(const c10::IValue &value,
                                    const c10::TypePtr &type,
                                    mlir::MLIRContext *ctx);

/// A constant's attribute, or null (and `error` set) if it cannot be one.
mlir::Attribute importConstant(const c10::IValue &value, mlir::MLIRContext *ctx,
                               std::string &error);

/// The constant an attribute holds, typed as `type` says.
std::optional<c10::IValue> exportConstant(mlir::Attribute value,
                                          const c10::TypePtr &type,
                                          std::string &error);

/// A TorchScript source range as a location ("file":line:col), or unknown.
mlir::Location importLocation(const torch::jit::SourceRange &range,
                              mlir::MLIRContext *ctx);

/// The tensor-state and attribute path of a model: a state_dict key such as
/// "layer1.0.conv1.weight" split at its last dot.
std::pair<llvm::StringRef, llvm::StringRef> splitAttrPath(llvm::StringRef path);

} // namespace composer

#endif // COMPOSER_LIB_TORCHSCRIPT_CONVERSION_H
