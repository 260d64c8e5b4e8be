//===- ModelIO.h - reading and writing models -------------------*- C++ -*-===//
//
// The one core that composer-opt and composer::Model share for reading and
// writing models: `.mlir` text, or TorchScript archives imported and exported
// through the on-demand TorchScript plugin (TorchScriptPlugin.h). Nothing
// here includes or links LibTorch, so work on `.mlir` never maps it.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_API_MODELIO_H
#define COMPOSER_API_MODELIO_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class TimingScope;
} // namespace mlir

namespace composer {

class TorchScriptModel;

/// How method ops are lowered before a model is written as TorchScript.
enum class LowerTo {
  /// Plain aten ops: any PyTorch loads the result.
  Aten,
  /// composer:: runtime ops (fused kernels): running the result needs
  /// libComposerRuntime loaded.
  Runtime,
  /// Left as they are: exporting then fails on them.
  None,
};

enum class ModelFormat { MLIR, TorchScript };

/// Whether `path` names a TorchScript archive: `.pt`, `.pth` or
/// `.torchscript`.
bool isTorchScriptPath(llvm::StringRef path);

/// The format a model is written in when only its path is known.
inline ModelFormat getFormatForPath(llvm::StringRef path) {
  return isTorchScriptPath(path) ? ModelFormat::TorchScript : ModelFormat::MLIR;
}

/// The most operations a model may have. The pipeline needs about 2 KB of
/// memory per operation (1.8 GB for 10^6 through every method pass), so the
/// default keeps a model within ~10 GB; a larger one is refused with a
/// diagnostic rather than killed for memory.
inline constexpr uint64_t kDefaultMaxOps = 5'000'000;

/// Fails with a diagnostic at `root` if it holds more than `maxOps`
/// operations (itself excluded).
mlir::LogicalResult checkOpLimit(mlir::Operation *root, uint64_t maxOps);

/// Reads and writes one model; errors are diagnostics in the context. A
/// TorchScript model read stays loaded: writing clones it and replaces its
/// methods, so what the IR does not model (other methods, attributes,
/// untouched tensors) survives.
class ModelIO {
public:
  /// `operatorLibraries` are shared libraries that register TorchScript
  /// operators a model calls (torchvision's `torchvision::nms`, say). They are
  /// loaded, as `torch.ops.load_library` does, before any TorchScript model.
  /// Models of more than `maxOps` operations are refused (checkOpLimit).
  explicit ModelIO(mlir::MLIRContext *context,
                   std::vector<std::string> operatorLibraries = {},
                   uint64_t maxOps = kDefaultMaxOps);
  ModelIO(ModelIO &&) noexcept;
  ModelIO &operator=(ModelIO &&) noexcept;
  ~ModelIO();

  /// Reads `.mlir` (text or bytecode) or imports a TorchScript archive;
  /// returns null after an error. `timing` gets a timer per phase.
  mlir::OwningOpRef<mlir::ModuleOp> read(llvm::StringRef path);
  mlir::OwningOpRef<mlir::ModuleOp> read(llvm::StringRef path,
                                         mlir::TimingScope &timing);

  /// Imports `model`, a TorchScript model already loaded (TorchModule.h),
  /// which this object keeps for writing; returns null after an error.
  mlir::OwningOpRef<mlir::ModuleOp>
  import(std::unique_ptr<TorchScriptModel> model);

  /// Writes `module` to `path` atomically ("-" is stdout, for MLIR). For
  /// TorchScript, method ops are first lowered in place as `lowering` says,
  /// then the module is exported against the archive it was read from, or
  /// else the one its `composer.source` attribute names.
  mlir::LogicalResult write(mlir::ModuleOp module, llvm::StringRef path,
                            ModelFormat format, LowerTo lowering);

  /// Exports `module` as write does for TorchScript, but into a new module
  /// that getTorchScriptModel() keeps (takeExportedModule, TorchModule.h).
  mlir::LogicalResult writeTorchScriptInMemory(mlir::ModuleOp module,
                                               LowerTo lowering);

  /// The TorchScript model read or imported last, or the one the last write
  /// exported against; null if there is none.
  TorchScriptModel *getTorchScriptModel() const { return torchModel.get(); }

private:
  mlir::LogicalResult writeTorchScript(mlir::ModuleOp module,
                                       llvm::StringRef path, LowerTo lowering);
  /// Lowers `module` in place as `lowering` says and makes sure a TorchScript
  /// model is there to export it against.
  mlir::LogicalResult prepareExport(mlir::ModuleOp module, LowerTo lowering);

  mlir::MLIRContext *context;
  std::vector<std::string> operatorLibraries;
  uint64_t maxOps;
  std::unique_ptr<TorchScriptModel> torchModel;
};

/// Writes `path` through a temporary file beside it (llvm::sys::fs::TempFile)
/// that replaces `path` only once `write` succeeded: a failure at any point,
/// or a signal, leaves no file behind. `write` gets the temporary file's
/// path, for writers that open files by name, and a stream on it. "-" writes
/// to stdout. Errors are emitted at a location naming `path`.
mlir::LogicalResult writeFileAtomically(
    llvm::StringRef path, mlir::MLIRContext *context,
    llvm::function_ref<mlir::LogicalResult(llvm::StringRef tempPath,
                                           llvm::raw_ostream &os)>
        write);

} // namespace composer

#endif // COMPOSER_API_MODELIO_H
