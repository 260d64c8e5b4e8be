//===- TorchScriptPlugin.h - on-demand TorchScript support ------*- C++ -*-===//
//
// composer-opt and the C++ API load libComposerTorchScript only when a `.pt`
// file is involved, so they start without LibTorch's ~0.6 s load, and work
// on `.mlir` never maps LibTorch.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H
#define COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H

#include "composer/Support/TorchUpstream.h"
#include "composer/TorchScript/TorchScript.h"

#include <vector>

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

/// One input of a model's forward, for timing it: sizes and dtype.
struct TensorSpec {
  std::vector<int64_t> sizes;
  torch_upstream::ScalarType dtype = torch_upstream::ScalarType::Float;
};

/// The plugin's second entry point, exported with C linkage under this
/// name: loads the archive at `path` and runs `warmup` then `timed` training
/// steps on random inputs of `inputs` (forward in training mode, the mean
/// of the first output tensor as the loss, backward; gradients reset to
/// none each step), appending each timed step's wall time in seconds to
/// `seconds`. Returns false with `error` set on failure.
using TimeTrainingStepsFn = bool (*)(const char *path,
                                     const std::vector<TensorSpec> *inputs,
                                     unsigned warmup, unsigned timed,
                                     std::vector<double> *seconds,
                                     std::string *error);
inline constexpr const char *kTimeTrainingStepsSymbol =
    "composerTimeTrainingSteps";

/// Loads the plugin (as loadTorchScriptModelViaPlugin does) and times
/// training steps of the archive at `path` with its second entry point;
/// emits an error at `loc` and fails when it cannot.
mlir::FailureOr<std::vector<double>>
timeTrainingStepsViaPlugin(llvm::StringRef path,
                           const std::vector<TensorSpec> &inputs,
                           unsigned warmup, unsigned timed, mlir::Location loc);

} // namespace composer

#endif // COMPOSER_TORCHSCRIPT_TORCHSCRIPTPLUGIN_H
