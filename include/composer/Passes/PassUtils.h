//===- PassUtils.h - what method passes share -------------------*- C++ -*-===//

#ifndef COMPOSER_PASSES_PASSUTILS_H
#define COMPOSER_PASSES_PASSUTILS_H

#include "composer/Dialect/Composer.h"

#include <optional>
#include <string>

namespace composer {

/// The module's @forward; if it has none, emits "<pass>: no func.func
/// @forward" on the module and returns null.
mlir::func::FuncOp lookupForward(mlir::ModuleOp module,
                                 llvm::StringRef passName);

/// The declared type of a parameter or buffer `value` reads
/// (composer.get_param), or null if `value` is not such a read.
TorchTensorType getDeclaredStateType(mlir::Value value);

/// The module path a parameter read belongs to: "layer1.0.conv1" for a read
/// of @layer1.0.conv1.weight; nullopt if `value` is not a parameter read.
std::optional<std::string> getStateOwnerPath(mlir::Value value);

/// The module an op came from, as the importer named its location
/// ("layer1.0.conv1"); empty if unknown.
std::string getModulePath(mlir::Operation *op);

/// The channel count (dimension 1) of an NCHW `value`, from its type or by
/// following it back through ops that keep channels to a convolution or a
/// normalization with declared parameters; nullopt if unknown.
std::optional<int64_t> inferChannels(mlir::Value value);

/// Declares a buffer `baseName` (made unique with a numeric suffix if taken
/// by something else; reused if an identical buffer has that name)
/// initialized from `init`, and returns a read of it built at `builder`'s
/// insertion point.
mlir::Value createBuffer(mlir::OpBuilder &builder, mlir::ModuleOp module,
                         llvm::StringRef baseName, TorchTensorType type,
                         mlir::Attribute init, mlir::Location loc);

/// Declares a parameter `baseName` (unique as for createBuffer) with
/// initializer `init` and returns a read of it.
mlir::Value createParameter(mlir::OpBuilder &builder, mlir::ModuleOp module,
                            llvm::StringRef baseName, TorchTensorType type,
                            mlir::Attribute init, mlir::Location loc);

/// Joins a module path and a name with a dot, or returns the name alone.
std::string joinStatePath(llvm::StringRef modulePath, llvm::StringRef name);

} // namespace composer

#endif // COMPOSER_PASSES_PASSUTILS_H
