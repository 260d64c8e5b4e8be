//===- TorchScript.h - TorchScript import and export ------------*- C++ -*-===//
//
// The boundary between LibTorch and MLIR. This header includes no LibTorch:
// a loaded model is opaque, so code that only handles MLIR never pays
// LibTorch's load time. The implementation lives in libComposerTorchScript,
// which tools load on demand (see TorchScriptPlugin.h).
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_TORCHSCRIPT_TORCHSCRIPT_H
#define COMPOSER_TORCHSCRIPT_TORCHSCRIPT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace composer {

/// Name of the module attribute that records the `.pt` a module came from,
/// so that a `.mlir` file can be exported back against its original model.
inline constexpr llvm::StringLiteral kSourceModelAttrName = "composer.source";

/// A TorchScript model loaded from a `.pt` file. It keeps the original
/// `torch::jit::Module`: export clones it and replaces `forward`, so other
/// methods, attributes and untouched tensors survive.
class TorchScriptModel {
public:
  virtual ~TorchScriptModel();

  /// The model as a composer-dialect module; diagnostics go to `context`.
  /// A forward of more than `maxOps` nodes (after inlining) is refused
  /// before any IR is built.
  virtual mlir::OwningOpRef<mlir::ModuleOp>
  importModule(mlir::MLIRContext *context, uint64_t maxOps) = 0;

  /// Writes `module`, a (transformed) import of this model, as a TorchScript
  /// archive at `path`. Callers write to a temporary file and rename it
  /// (writeFileAtomically in composer/API/ModelIO.h).
  virtual mlir::LogicalResult exportModule(mlir::ModuleOp module,
                                           llvm::StringRef path) = 0;

  /// Exports `module` as exportModule does, into a new TorchScript module
  /// kept in memory until takeExportedModule (TorchModule.h) takes it, for
  /// callers that hand the model on without a file (the Python package).
  /// Errors go to the module's context.
  virtual mlir::LogicalResult exportModuleInMemory(mlir::ModuleOp module) = 0;
};

/// Loads a `.pt` file, after the shared libraries `operatorLibraries` that
/// register operators it calls (as `torch.ops.load_library` does); on failure
/// emits an error (at a location naming the file) to `context` and returns
/// null.
std::unique_ptr<TorchScriptModel>
loadTorchScriptModel(llvm::StringRef path,
                     llvm::ArrayRef<std::string> operatorLibraries,
                     mlir::MLIRContext *context);

} // namespace composer

#endif // COMPOSER_TORCHSCRIPT_TORCHSCRIPT_H
