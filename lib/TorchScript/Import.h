//===- Import.h - TorchScript module -> composer dialect --------*- C++ -*-===//

#ifndef COMPOSER_LIB_TORCHSCRIPT_IMPORT_H
#define COMPOSER_LIB_TORCHSCRIPT_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <torch/csrc/jit/api/module.h>

namespace composer {

/// Imports `model`'s inlined forward; `sourcePath` is recorded on the module
/// and names the file in locations. Errors go to `ctx`'s diagnostics.
mlir::OwningOpRef<mlir::ModuleOp>
importTorchScriptModule(const torch::jit::Module &model,
                        llvm::StringRef sourcePath, mlir::MLIRContext *ctx,
                        uint64_t maxOps);

/// Replaces `model`'s forward with the graph of `module` (an import of it,
/// possibly transformed). Errors go to the module's context.
mlir::LogicalResult exportTorchScriptModule(mlir::ModuleOp module,
                                            torch::jit::Module &model);

} // namespace composer

#endif // COMPOSER_LIB_TORCHSCRIPT_IMPORT_H
