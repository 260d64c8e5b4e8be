//===- ModelIO.cpp - reading and writing models ---------------------------===//

#include "composer/API/ModelIO.h"
#include "composer/Passes/Passes.h"
#include "composer/TorchScript/TorchScriptPlugin.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace composer;

bool composer::isTorchScriptPath(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return ext == ".pt" || ext == ".pth" || ext == ".torchscript";
}

static Location fileLoc(StringRef path, MLIRContext *context) {
  return FileLineColLoc::get(context, path, 0, 0);
}

LogicalResult composer::writeFileAtomically(
    StringRef path, MLIRContext *context,
    function_ref<LogicalResult(StringRef, llvm::raw_ostream &)> write) {
  if (path == "-")
    return write(path, llvm::outs());
  auto cannotWrite = [&](llvm::Error error) {
    return emitError(fileLoc(path, context), "cannot write '")
           << path << "': " << llvm::toString(std::move(error));
  };
  llvm::Expected<llvm::sys::fs::TempFile> temp =
      llvm::sys::fs::TempFile::create(path + ".tmp%%%%%%");
  if (!temp)
    return cannotWrite(temp.takeError());
  LogicalResult written = success();
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    written = write(temp->TmpName, os);
    os.flush();
    if (succeeded(written) && os.has_error()) {
      written = cannotWrite(llvm::errorCodeToError(os.error()));
      os.clear_error();
    }
  }
  if (failed(written)) {
    llvm::consumeError(temp->discard());
    return failure();
  }
  if (llvm::Error error = temp->keep(path)) {
    llvm::consumeError(temp->discard());
    return cannotWrite(std::move(error));
  }
  return success();
}

LogicalResult composer::checkOpLimit(Operation *root, uint64_t maxOps) {
  uint64_t numOps = 0;
  root->walk([&](Operation *) { ++numOps; });
  --numOps; // The root.
  if (numOps <= maxOps)
    return success();
  return root->emitError("the model has ")
         << numOps << " operations, more than the limit of " << maxOps
         << " (composer-opt --max-ops)";
}

ModelIO::ModelIO(MLIRContext *context,
                 std::vector<std::string> operatorLibraries, uint64_t maxOps)
    : context(context), operatorLibraries(std::move(operatorLibraries)),
      maxOps(maxOps) {}
ModelIO::ModelIO(ModelIO &&) noexcept = default;
ModelIO &ModelIO::operator=(ModelIO &&) noexcept = default;
ModelIO::~ModelIO() = default;

OwningOpRef<ModuleOp> ModelIO::read(StringRef path) {
  TimingScope untimed;
  return read(path, untimed);
}

OwningOpRef<ModuleOp> ModelIO::read(StringRef path, TimingScope &timing) {
  if (!isTorchScriptPath(path)) {
    ParserConfig config(context);
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, config);
    if (module && failed(checkOpLimit(*module, maxOps)))
      return nullptr;
    return module;
  }
  TimingScope loadTimer = timing.nest("Load TorchScript (torch::jit::load)");
  torchModel = loadTorchScriptModelViaPlugin(path, operatorLibraries, context);
  if (!torchModel)
    return nullptr;
  loadTimer.stop();
  TimingScope importTimer = timing.nest("Import to MLIR");
  return torchModel->importModule(context, maxOps);
}

LogicalResult ModelIO::write(ModuleOp module, StringRef path,
                             ModelFormat format, LowerTo lowering) {
  if (format == ModelFormat::TorchScript)
    return writeTorchScript(module, path, lowering);
  return writeFileAtomically(path, context,
                             [&](StringRef, llvm::raw_ostream &os) {
                               module->print(os);
                               return success();
                             });
}

OwningOpRef<ModuleOp> ModelIO::import(std::unique_ptr<TorchScriptModel> model) {
  torchModel = std::move(model);
  return torchModel->importModule(context, maxOps);
}

LogicalResult ModelIO::prepareExport(ModuleOp module, LowerTo lowering) {
  if (lowering != LowerTo::None) {
    PassManager pm(context);
    pm.addPass(lowering == LowerTo::Aten ? createLowerToAten()
                                         : createLowerToRuntime());
    if (failed(pm.run(module)))
      return failure();
  }
  if (torchModel)
    return success();
  auto source = module->getAttrOfType<StringAttr>(kSourceModelAttrName);
  if (!source)
    return emitError(module.getLoc(), "cannot write TorchScript: the module "
                                      "has no '")
           << kSourceModelAttrName
           << "' attribute naming the .pt it was imported from";
  torchModel = loadTorchScriptModelViaPlugin(source.getValue(),
                                             operatorLibraries, context);
  return success(torchModel != nullptr);
}

LogicalResult ModelIO::writeTorchScript(ModuleOp module, StringRef path,
                                        LowerTo lowering) {
  if (path == "-")
    return emitError(fileLoc(path, context),
                     "cannot write TorchScript to stdout: give a file name");
  if (failed(prepareExport(module, lowering)))
    return failure();
  return writeFileAtomically(
      path, context, [&](StringRef tempPath, llvm::raw_ostream &) {
        return torchModel->exportModule(module, tempPath);
      });
}

LogicalResult ModelIO::writeTorchScriptInMemory(ModuleOp module,
                                                LowerTo lowering) {
  if (failed(prepareExport(module, lowering)))
    return failure();
  return torchModel->exportModuleInMemory(module);
}
