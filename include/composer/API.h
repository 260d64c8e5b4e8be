//===- API.h - the composer-opt C++ API -------------------------*- C++ -*-===//
//
// Load a TorchScript model, transform it with a pass pipeline, save it:
//
//   auto model = composer::Model::load("resnet50.pt");
//   if (!model) { llvm::errs() << llvm::toString(model.takeError()); ... }
//   if (auto err = model->runPipeline("builtin.module(composer-blurpool)")) ...
//   for (const composer::PassSiteReport &run : model->getSiteReports()) ...
//   if (auto err = model->save("fast.pt")) ...   // method ops lowered to aten
//
// Errors come back as llvm::Error: a DiagnosticError (API/Diagnostics.h)
// whose text is the diagnostics' as composer-opt prints them, with
// locations and notes. No LibTorch header is needed to use this API, and
// LibTorch is only loaded (through the TorchScript plugin) when a `.pt` is
// involved. Reading and writing is composer-opt's own code
// (composer/API/ModelIO.h).
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_API_H
#define COMPOSER_API_H

#include "composer/API/Diagnostics.h"
#include "composer/API/ModelIO.h"
#include "composer/Passes/SiteReports.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace composer {

/// Registers composer's passes and pipelines and MLIR's transforms, once
/// per process. Model does it; callers that parse pipelines or report costs
/// without one call it first.
void registerPasses();

struct LoadOptions {
  /// Shared libraries that register TorchScript operators the model calls
  /// (torchvision's for `torchvision::nms`, say), loaded before the model as
  /// `torch.ops.load_library` does: composer-opt's --load-library.
  std::vector<std::string> operatorLibraries;
  /// Models of more operations are refused with an error (--max-ops).
  uint64_t maxOps = kDefaultMaxOps;
};

struct SaveOptions {
  /// How method ops are lowered before writing TorchScript (composer-opt's
  /// --lower-to); the model itself stays unlowered. Unused for `.mlir`.
  LowerTo lowerTo = LowerTo::Aten;
};

class Model {
public:
  /// Loads a TorchScript archive (`.pt`, `.pth`, `.torchscript`) or a
  /// composer `.mlir` file.
  static llvm::Expected<Model> load(llvm::StringRef path,
                                    const LoadOptions &options = {});

  /// Imports a TorchScript model already in memory (wrapTorchModule in
  /// TorchScript/TorchModule.h, for callers that link LibTorch).
  static llvm::Expected<Model> import(std::unique_ptr<TorchScriptModel> model,
                                      const LoadOptions &options = {});

  Model(Model &&) noexcept;
  Model &operator=(Model &&) noexcept;
  ~Model();

  /// Runs a textual pass pipeline on the model, e.g.
  /// "builtin.module(composer-refine-types{input-specs=1x3x224x224xf32})".
  llvm::Error runPipeline(llvm::StringRef pipeline);

  /// What each pass of the last runPipeline reported, one entry per pass
  /// run in the order they ran, up to and including a pass that failed;
  /// empty before any runPipeline and when the pipeline does not parse.
  /// Locations belong to this model's context.
  llvm::ArrayRef<PassSiteReport> getSiteReports() const;

  /// Writes the model, atomically: TorchScript for the extensions `load`
  /// reads as TorchScript (after lowering method ops as `options` says), MLIR
  /// text otherwise.
  llvm::Error save(llvm::StringRef path, const SaveOptions &options = {});

  /// Exports the model as save does for TorchScript, into a module kept in
  /// memory: takeExportedModule(*getTorchScriptModel()) (TorchModule.h)
  /// takes it. The model itself stays unlowered.
  llvm::Error exportTorchScript(const SaveOptions &options = {});

  /// The TorchScript model this one was read from or exports against; null
  /// for a `.mlir` model not yet saved as TorchScript.
  TorchScriptModel *getTorchScriptModel() const;

  /// The warnings emitted since the last call (by load, runPipeline, save
  /// or exportTorchScript): a pass that changed nothing, for one.
  std::vector<DiagnosticInfo> takeWarnings();

  /// The model as MLIR; owned by this object.
  mlir::ModuleOp getModule() const;

private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace composer

#endif // COMPOSER_API_H
