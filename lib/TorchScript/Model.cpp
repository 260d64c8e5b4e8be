//===- Model.cpp - loading and saving TorchScript models ------------------===//

#include "Archive.h"
#include "CheckingFileReader.h"
#include "Import.h"
#include "composer/TorchScript/TorchModule.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include <torch/csrc/jit/serialization/import.h>
#include <torch/script.h>

#include <dlfcn.h>
#include <optional>
#include <utility>

using namespace mlir;
using namespace composer;

TorchScriptModel::~TorchScriptModel() = default;

namespace {

/// LibTorch's own message without what follows its first line (a C++
/// backtrace, or TorchScript source context). TorchScript's errors start
/// with a newline, so the first line is the first non-blank one.
std::string firstLine(const std::exception &e) {
  StringRef message = StringRef(e.what()).ltrim();
  return message.take_until([](char c) { return c == '\n'; }).rtrim().str();
}

Location fileLoc(StringRef path, MLIRContext *ctx) {
  return FileLineColLoc::get(ctx, path, 0, 0);
}

/// Whether `name` holds a tensor's bytes ("archive/data/0"): LibTorch only
/// copies them, so their CRC-32 can wait until it has read them.
bool isTensorRecord(StringRef name) {
  StringRef key = name.split('/').second;
  return key.consume_front("data/") && !key.empty() &&
         llvm::all_of(key, llvm::isDigit);
}

void emitArchiveError(StringRef path, MLIRContext *ctx, llvm::Error error) {
  emitError(fileLoc(path, ctx), "cannot load TorchScript model '")
      << path << "': " << llvm::toString(std::move(error))
      << " (expected an archive written by torch.jit.save)";
}

class LoadedModel : public TorchScriptModel {
public:
  LoadedModel(std::string path, torch::jit::Module module)
      : path(std::move(path)), module(std::move(module)) {}

  OwningOpRef<ModuleOp> importModule(MLIRContext *ctx,
                                     uint64_t maxOps) override {
    try {
      return importTorchScriptModule(module, path, ctx, maxOps);
    } catch (const std::exception &e) {
      emitError(fileLoc(path, ctx), "cannot import: ") << firstLine(e);
      return nullptr;
    }
  }

  LogicalResult exportModule(ModuleOp mlirModule, StringRef outPath) override {
    std::optional<torch::jit::Module> exportedModule =
        exportToModule(mlirModule, outPath);
    if (!exportedModule)
      return failure();
    try {
      exportedModule->save(outPath.str());
    } catch (const std::exception &e) {
      return emitError(fileLoc(outPath, mlirModule.getContext()),
                       "cannot export: ")
             << firstLine(e);
    }
    return success();
  }

  LogicalResult exportModuleInMemory(ModuleOp mlirModule) override {
    exported = exportToModule(mlirModule, path);
    return success(exported.has_value());
  }

  std::optional<torch::jit::Module> takeExported() {
    return std::exchange(exported, std::nullopt);
  }

private:
  /// A clone of the loaded module with its forward replaced by
  /// `mlirModule`'s; none after an error at `destination`.
  std::optional<torch::jit::Module> exportToModule(ModuleOp mlirModule,
                                                   StringRef destination) {
    try {
      // Edit a clone with its own class types but the same tensors (a deep
      // copy would untie shared weights): the loaded module keeps its
      // forward.
      torch::jit::Module clone = module.clone(/*inplace=*/true);
      if (failed(exportTorchScriptModule(mlirModule, clone)))
        return std::nullopt;
      return clone;
    } catch (const std::exception &e) {
      emitError(fileLoc(destination, mlirModule.getContext()),
                "cannot export: ")
          << firstLine(e);
      return std::nullopt;
    }
  }

  std::string path;
  torch::jit::Module module;
  std::optional<torch::jit::Module> exported;
};

/// Loads a library of operators as torch.ops.load_library does. It stays
/// loaded: its operators are registered for the whole process, and loading
/// it again is a no-op.
LogicalResult loadOperatorLibrary(StringRef library, MLIRContext *ctx) {
  if (dlopen(library.str().c_str(), RTLD_NOW | RTLD_GLOBAL))
    return success();
  return emitError(fileLoc(library, ctx), "cannot load operator library: ")
         << dlerror();
}

} // namespace

std::unique_ptr<TorchScriptModel> composer::loadTorchScriptModel(
    StringRef path, ArrayRef<std::string> operatorLibraries, MLIRContext *ctx) {
  for (const std::string &library : operatorLibraries)
    if (failed(loadOperatorLibrary(library, ctx)))
      return nullptr;
  if (!llvm::sys::fs::exists(path)) {
    emitError(fileLoc(path, ctx), "cannot open '") << path << "': no such file";
    return nullptr;
  }
  // Every other record is checked before LibTorch parses it.
  llvm::Expected<std::vector<DeferredRecord>> tensorRecords =
      checkZipArchive(path, isTensorRecord);
  if (!tensorRecords) {
    emitArchiveError(path, ctx, tensorRecords.takeError());
    return nullptr;
  }
  llvm::Expected<std::shared_ptr<CheckingFileReader>> reader =
      CheckingFileReader::open(path, std::move(*tensorRecords));
  if (!reader) {
    emitArchiveError(path, ctx, reader.takeError());
    return nullptr;
  }
  try {
    torch::jit::Module module = torch::jit::load(*reader);
    if (llvm::Error error = (*reader)->checkRecords()) {
      emitArchiveError(path, ctx, std::move(error));
      return nullptr;
    }
    return std::make_unique<LoadedModel>(path.str(), std::move(module));
  } catch (const std::exception &e) {
    std::string reason = firstLine(e);
    InFlightDiagnostic diag =
        emitError(fileLoc(path, ctx), "cannot load TorchScript model '")
        << path << "': " << reason;
    if (StringRef(reason).starts_with("PytorchStreamReader"))
      diag << " (expected an archive written by torch.jit.save)";
    else if (StringRef(reason).starts_with("Unknown builtin op"))
      diag.attachNote() << "an operator outside aten and prim comes from a "
                           "library that must be loaded first (composer-opt "
                           "--load-library=LIB.so)";
    return nullptr;
  }
}

std::unique_ptr<TorchScriptModel>
composer::wrapTorchModule(torch::jit::Module module, std::string name) {
  return std::make_unique<LoadedModel>(std::move(name), std::move(module));
}

std::optional<torch::jit::Module>
composer::takeExportedModule(TorchScriptModel &model) {
  // Every TorchScriptModel is a LoadedModel of this library.
  return static_cast<LoadedModel &>(model).takeExported();
}

extern "C" __attribute__((visibility("default"))) TorchScriptModel *
composerLoadTorchScriptModel(const char *path,
                             ArrayRef<std::string> operatorLibraries,
                             MLIRContext *ctx) {
  return loadTorchScriptModel(path, operatorLibraries, ctx).release();
}
