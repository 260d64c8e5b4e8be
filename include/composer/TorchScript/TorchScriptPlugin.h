//===- TorchScriptPlugin.h - on-demand TorchScript support ------*- C++ -*-===//
//
// composer-opt and the C++ API load libComposerTorchScript only when a `.pt`
// file is involved, so they start without LibTorch's ~0.6 s load, and work
// on `.mlir` never maps LibTorch.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H
#define COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H

#include "composer/TorchScript/TorchScript.h"

namespace composer {

/// The plugin's entry point, exported with C linkage under this name: the
/// plugin is built with the loader, so C++ types may cross.
using LoadTorchScriptModelFn =
    TorchScriptModel *(*)(const char *path,
                          llvm::ArrayRef<std::string> operatorLibraries,
                          mlir::MLIRContext *context);
inline constexpr const char *kLoadTorchScriptModelSymbol =
    "composerLoadTorchScriptModel";

/// Loads libComposerTorchScript (from $COMPOSER_TORCHSCRIPT_PLUGIN, else from
/// the directory of the library holding this loader, where the build and the
/// install put both) and calls its entry point. Emits an error to `context`
/// when the plugin or the model cannot be loaded.
std::unique_ptr<TorchScriptModel>
loadTorchScriptModelViaPlugin(llvm::StringRef path,
                              llvm::ArrayRef<std::string> operatorLibraries,
                              mlir::MLIRContext *context);

} // namespace composer

#endif // COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H
