//===- State.h - parameters and buffers on export ---------------*- C++ -*-===//

#ifndef COMPOSER_LIB_TORCHSCRIPT_STATE_H
#define COMPOSER_LIB_TORCHSCRIPT_STATE_H

#include "mlir/IR/BuiltinOps.h"

#include <torch/csrc/jit/api/module.h>

namespace composer {

/// Makes `model`'s tensor state match the module's declarations: creates
/// parameters and buffers a pass added (from their `init`), under their
/// state_dict key, creating submodules on the way and giving each module on
/// the way its own class type first (torchvision's blocks share one type
/// across instances, and adding an attribute to a shared type would break
/// the siblings); and sets requires_grad from `frozen`. Errors go to the
/// module's context.
mlir::LogicalResult syncModelState(mlir::ModuleOp module,
                                   torch::jit::Module &model);

} // namespace composer

#endif // COMPOSER_LIB_TORCHSCRIPT_STATE_H
