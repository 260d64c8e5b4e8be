//===- RuntimeLibrary.h - libComposerRuntime loaded on demand ---*- C++ -*-===//
//
// The compiler does not link the training runtime: only models lowered to
// its composer:: ops, and training steps timed as composer-train runs them,
// pay for loading it.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_TORCHSCRIPT_RUNTIMELIBRARY_H
#define COMPOSER_TORCHSCRIPT_RUNTIMELIBRARY_H

#include "llvm/Support/DynamicLibrary.h"

#include <string>

namespace composer {

/// libComposerRuntime beside this library, or $COMPOSER_RUNTIME_LIBRARY.
std::string runtimeLibraryPath();

/// Loads the runtime library (once; later calls return the same handle),
/// which registers its composer:: operators. Invalid, with `error` set, if it
/// cannot be loaded.
llvm::sys::DynamicLibrary loadRuntimeLibrary(std::string &error);

} // namespace composer

#endif // COMPOSER_TORCHSCRIPT_RUNTIMELIBRARY_H
