//===- TorchScriptPlugin.h - on-demand TorchScript support ------*- C++ -*-===//
//
// Tools that mostly work on `.mlir` load libComposerTorchScript only when a
// `.pt` file is involved, so they start without LibTorch's ~0.6 s load.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H
#define COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H

#include "composer/TorchScript/TorchScript.h"

namespace composer {

/// The plugin's entry point, exported with C linkage under this name.
using LoadTorchScriptModelFn =
    TorchScriptModel *(*)(const char *path, mlir::MLIRContext *context);
inline constexpr const char *kLoadTorchScriptModelSymbol =
    "composerLoadTorchScriptModel";

/// Loads libComposerTorchScript (from $COMPOSER_TORCHSCRIPT_PLUGIN, else next
/// to the running executable's lib/ directory) and calls its entry point.
/// Emits an error to `context` when the plugin or the model cannot be loaded.
std::unique_ptr<TorchScriptModel>
loadTorchScriptModelViaPlugin(llvm::StringRef path, mlir::MLIRContext *context,
                              const char *argv0);

} // namespace composer

#endif // COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H
