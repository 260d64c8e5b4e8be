//===- CompilerPlugin.cpp - load the compiler on demand -------------------===//

#include "CompilerPlugin.h"

#include "composer/Runtime/Sharding.h"

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>

namespace composer::train {

namespace {

/// The plugin beside the runtime's libraries, in the build tree and
/// installed alike.
std::string defaultPluginPath() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&runtime::findGatheredUnits), &info) ||
      !info.dli_fname)
    return kCompilerPluginName; // The dynamic loader's search path.
  return (std::filesystem::path(info.dli_fname).parent_path() /
          kCompilerPluginName)
      .string();
}

} // namespace

bool compileModule(torch::jit::Module &module, const std::string &pipeline,
                   std::string &report, std::string &error) {
  const char *fromEnv = std::getenv("COMPOSER_TRAIN_COMPILER");
  std::string path = fromEnv ? fromEnv : defaultPluginPath();
  // Never closed: the model's code may come from it.
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
  if (!library) {
    const char *reason = dlerror();
    error = "this composer-train cannot load the compiler ('" + path +
            "': " + (reason ? reason : "unknown error") + ")";
    return false;
  }
  auto compile =
      reinterpret_cast<CompileModuleFn>(dlsym(library, kCompileModuleSymbol));
  if (!compile) {
    error = "'" + path + "' has no " + kCompileModuleSymbol;
    return false;
  }
  return compile(&module, pipeline.c_str(), &report, &error);
}

} // namespace composer::train
