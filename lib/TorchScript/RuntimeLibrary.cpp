//===- RuntimeLibrary.cpp - libComposerRuntime loaded on demand -----------===//

#include "RuntimeLibrary.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <dlfcn.h>

std::string composer::runtimeLibraryPath() {
  if (std::optional<std::string> fromEnv =
          llvm::sys::Process::GetEnv("COMPOSER_RUNTIME_LIBRARY"))
    return *fromEnv;
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&runtimeLibraryPath), &info) ||
      !info.dli_fname)
    return "libComposerRuntime.so";
  llvm::SmallString<256> path;
  if (llvm::sys::fs::real_path(info.dli_fname, path))
    path = info.dli_fname;
  llvm::sys::path::remove_filename(path);
  llvm::sys::path::append(path, "libComposerRuntime.so");
  return std::string(path);
}

llvm::sys::DynamicLibrary composer::loadRuntimeLibrary(std::string &error) {
  // getPermanentLibrary opens a path once and hands back the same handle.
  return llvm::sys::DynamicLibrary::getPermanentLibrary(
      runtimeLibraryPath().c_str(), &error);
}
