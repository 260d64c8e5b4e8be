//===- Model.cpp - loading and saving TorchScript models ------------------===//

#include "Import.h"
#include "composer/TorchScript/TorchScript.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <torch/csrc/jit/serialization/import.h>
#include <torch/script.h>

using namespace mlir;
using namespace composer;

TorchScriptModel::~TorchScriptModel() = default;

namespace {

/// First line of a LibTorch error: the rest is a C++ backtrace.
std::string firstLine(const std::exception &e) {
  std::string message = e.what();
  size_t newline = message.find('\n');
  return newline == std::string::npos ? message : message.substr(0, newline);
}

Location fileLoc(StringRef path, MLIRContext *ctx) {
  return FileLineColLoc::get(ctx, path, 0, 0);
}

class LoadedModel : public TorchScriptModel {
public:
  LoadedModel(std::string path, torch::jit::Module module)
      : path(std::move(path)), module(std::move(module)) {}

  OwningOpRef<ModuleOp> importModule(MLIRContext *ctx) override {
    try {
      return importTorchScriptModule(module, path, ctx);
    } catch (const std::exception &e) {
      emitError(fileLoc(path, ctx), "cannot import: ") << firstLine(e);
      return nullptr;
    }
  }

  LogicalResult exportModule(ModuleOp mlirModule, StringRef outPath) override;

private:
  std::string path;
  torch::jit::Module module;
};

LogicalResult LoadedModel::exportModule(ModuleOp mlirModule,
                                        StringRef outPath) {
  MLIRContext *ctx = mlirModule.getContext();
  // Write next to the destination, then rename: a failure at any point
  // leaves no partial file behind.
  SmallString<256> tempPath;
  SmallString<256> tempPattern(outPath);
  llvm::sys::path::remove_filename(tempPattern);
  if (tempPattern.empty())
    tempPattern = ".";
  llvm::sys::path::append(tempPattern,
                          llvm::sys::path::filename(outPath) + ".tmp%%%%%%");
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(tempPattern, fd, tempPath))
    return emitError(fileLoc(outPath, ctx), "cannot write '")
           << outPath << "': " << ec.message();
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  auto removeTemp =
      llvm::make_scope_exit([&]() { llvm::sys::fs::remove(tempPath); });
  try {
    // Edit a clone with its own class types but the same tensors (a deep
    // copy would untie shared weights): the loaded module keeps its forward.
    torch::jit::Module clone = module.clone(/*inplace=*/true);
    if (failed(exportTorchScriptModule(mlirModule, clone)))
      return failure();
    clone.save(std::string(tempPath));
  } catch (const std::exception &e) {
    return emitError(fileLoc(outPath, ctx), "cannot export: ") << firstLine(e);
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, outPath))
    return emitError(fileLoc(outPath, ctx), "cannot write '")
           << outPath << "': " << ec.message();
  removeTemp.release();
  return success();
}

} // namespace

std::unique_ptr<TorchScriptModel>
composer::loadTorchScriptModel(StringRef path, MLIRContext *ctx) {
  if (!llvm::sys::fs::exists(path)) {
    emitError(fileLoc(path, ctx), "cannot open '") << path << "': no such file";
    return nullptr;
  }
  try {
    torch::jit::Module module = torch::jit::load(path.str());
    return std::make_unique<LoadedModel>(path.str(), std::move(module));
  } catch (const std::exception &e) {
    emitError(fileLoc(path, ctx), "cannot load TorchScript model '")
        << path << "': " << firstLine(e)
        << " (expected an archive written by torch.jit.save)";
    return nullptr;
  }
}

extern "C" __attribute__((visibility("default"))) TorchScriptModel *
composerLoadTorchScriptModel(const char *path, MLIRContext *ctx) {
  return loadTorchScriptModel(path, ctx).release();
}
