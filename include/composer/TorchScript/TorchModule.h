//===- TorchModule.h - TorchScript models in memory -------------*- C++ -*-===//
//
// For clients that already link LibTorch and hold a torch::jit::Module (the
// Python package, with a ScriptModule's): the compiler imports it and hands
// the result back without writing a file. Everyone else reads and writes
// archives through TorchScript.h, which includes no LibTorch.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_TORCHSCRIPT_TORCHMODULE_H
#define COMPOSER_TORCHSCRIPT_TORCHMODULE_H

#include "composer/TorchScript/TorchScript.h"

#include <torch/csrc/jit/api/module.h>

#include <optional>

namespace composer {

/// A TorchScriptModel over `module`, which it keeps (sharing its tensors, as
/// torch::jit::Module copies do). `name` stands for the model in
/// diagnostics and in the imported module's `composer.source`.
std::unique_ptr<TorchScriptModel> wrapTorchModule(torch::jit::Module module,
                                                  std::string name);

/// The module the last successful exportModuleInMemory of `model` produced,
/// moved out of it; none if there is none. `model` must come from this
/// library (loadTorchScriptModel or wrapTorchModule).
std::optional<torch::jit::Module> takeExportedModule(TorchScriptModel &model);

} // namespace composer

#endif // COMPOSER_TORCHSCRIPT_TORCHMODULE_H
