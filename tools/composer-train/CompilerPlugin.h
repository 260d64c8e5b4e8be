//===- CompilerPlugin.h - the compiler, loaded on demand --------*- C++ -*-===//
//
// composer-train links the runtime only. What needs the compiler (putting a
// model through composer-shard-params for full_shard) loads
// libComposerTrainCompiler.so, built beside the runtime's libraries, when
// it is first needed, as composer-opt loads its LibTorch plugin. A
// composer-train without it refuses such work and says what to run instead.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_TRAIN_COMPILERPLUGIN_H
#define COMPOSER_TRAIN_COMPILERPLUGIN_H

#include <torch/script.h>

#include <string>

namespace composer::train {

/// The plugin's entry point: puts `module` through `pipeline` (a pass
/// pipeline, as composer-opt's --pass-pipeline) and replaces it with the
/// result lowered to the runtime. On failure, false with the diagnostics in
/// `error`; otherwise `report` holds the passes' site reports, one line
/// each.
using CompileModuleFn = bool (*)(torch::jit::Module *module,
                                 const char *pipeline, std::string *report,
                                 std::string *error);
inline constexpr const char *kCompileModuleSymbol =
    "composerTrainCompileModule";
inline constexpr const char *kCompilerPluginName =
    "libComposerTrainCompiler.so";

/// Puts `module` through `pipeline` with the plugin (COMPOSER_TRAIN_COMPILER
/// names another file). False with the reason in `error` when the plugin
/// cannot be loaded or the pipeline fails.
bool compileModule(torch::jit::Module &module, const std::string &pipeline,
                   std::string &report, std::string &error);

} // namespace composer::train

#endif // COMPOSER_TRAIN_COMPILERPLUGIN_H
