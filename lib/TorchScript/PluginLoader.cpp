//===- PluginLoader.cpp - load libComposerTorchScript on demand -----------===//

#include "composer/TorchScript/TorchScriptPlugin.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

using namespace mlir;
using namespace composer;

static std::string defaultPluginPath(const char *argv0) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  SmallString<256> path(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(path, "..", "lib", "libComposerTorchScript.so");
  return std::string(path);
}

std::unique_ptr<TorchScriptModel>
composer::loadTorchScriptModelViaPlugin(StringRef path, MLIRContext *context,
                                        const char *argv0) {
  std::string pluginPath = defaultPluginPath(argv0);
  if (std::optional<std::string> fromEnv =
          llvm::sys::Process::GetEnv("COMPOSER_TORCHSCRIPT_PLUGIN"))
    pluginPath = *fromEnv;
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  std::string error;
  auto library = llvm::sys::DynamicLibrary::getPermanentLibrary(
      pluginPath.c_str(), &error);
  if (!library.isValid()) {
    emitError(loc, "cannot read TorchScript: loading '")
        << pluginPath << "' failed: " << error;
    return nullptr;
  }
  auto load = reinterpret_cast<LoadTorchScriptModelFn>(
      library.getAddressOfSymbol(kLoadTorchScriptModelSymbol));
  if (!load) {
    emitError(loc, "'") << pluginPath << "' has no "
                        << kLoadTorchScriptModelSymbol;
    return nullptr;
  }
  return std::unique_ptr<TorchScriptModel>(load(path.str().c_str(), context));
}
