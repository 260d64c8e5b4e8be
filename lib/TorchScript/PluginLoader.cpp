//===- PluginLoader.cpp - load libComposerTorchScript on demand -----------===//

#include "composer/TorchScript/TorchScriptPlugin.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <dlfcn.h>

using namespace mlir;
using namespace composer;

static constexpr llvm::StringLiteral kPluginName = "libComposerTorchScript.so";

/// The plugin beside the library this code is in: found the same way from
/// composer-opt and from any program linking the C++ API, in the build tree
/// and installed.
static std::string defaultPluginPath() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&defaultPluginPath), &info) ||
      !info.dli_fname)
    return kPluginName.str(); // The dynamic loader's search path.
  SmallString<256> path(llvm::sys::path::parent_path(info.dli_fname));
  llvm::sys::path::append(path, kPluginName);
  return std::string(path);
}

/// The plugin's entry point `symbol`, or null after an error at `loc`.
static void *getPluginSymbol(const char *symbol, Location loc, StringRef what) {
  std::string pluginPath = defaultPluginPath();
  if (std::optional<std::string> fromEnv =
          llvm::sys::Process::GetEnv("COMPOSER_TORCHSCRIPT_PLUGIN"))
    pluginPath = *fromEnv;
  std::string error;
  auto library = llvm::sys::DynamicLibrary::getPermanentLibrary(
      pluginPath.c_str(), &error);
  if (!library.isValid()) {
    emitError(loc, what) << ": loading '" << pluginPath
                         << "' failed: " << error;
    return nullptr;
  }
  void *address = library.getAddressOfSymbol(symbol);
  if (!address)
    emitError(loc, "'") << pluginPath << "' has no " << symbol;
  return address;
}

std::unique_ptr<TorchScriptModel>
composer::loadTorchScriptModelViaPlugin(StringRef path,
                                        ArrayRef<std::string> operatorLibraries,
                                        MLIRContext *context) {
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  auto load = reinterpret_cast<LoadTorchScriptModelFn>(getPluginSymbol(
      kLoadTorchScriptModelSymbol, loc, "cannot read TorchScript"));
  if (!load)
    return nullptr;
  return std::unique_ptr<TorchScriptModel>(
      load(path.str().c_str(), operatorLibraries, context));
}

FailureOr<std::vector<double>> composer::timeTrainingStepsViaPlugin(
    StringRef path, const std::vector<TensorSpec> &inputs, unsigned warmup,
    unsigned timed, Location loc) {
  auto time = reinterpret_cast<TimeTrainingStepsFn>(getPluginSymbol(
      kTimeTrainingStepsSymbol, loc, "cannot time training steps"));
  if (!time)
    return failure();
  std::vector<double> seconds;
  std::string error;
  if (!time(path.str().c_str(), &inputs, warmup, timed, &seconds, &error))
    return emitError(loc, "cannot time training steps: ") << error;
  return seconds;
}
