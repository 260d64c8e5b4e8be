//===- API.h - the composer-opt C++ API -------------------------*- C++ -*-===//
//
// Load a TorchScript model, transform it with a pass pipeline, save it:
//
//   auto model = composer::Model::load("resnet50.pt");
//   if (!model) { llvm::errs() << llvm::toString(model.takeError()); ... }
//   if (auto err = model->runPipeline("builtin.module(canonicalize)")) ...
//   if (auto err = model->save("fast.pt")) ...
//
// Errors come back as llvm::Error carrying the diagnostics' text (with
// locations). No LibTorch header is needed to use this API.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_API_H
#define COMPOSER_API_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace composer {

class Model {
public:
  /// Loads a TorchScript `.pt` or a composer `.mlir` file.
  static llvm::Expected<Model> load(llvm::StringRef path);

  Model(Model &&) noexcept;
  Model &operator=(Model &&) noexcept;
  ~Model();

  /// Runs a textual pass pipeline on the model, e.g.
  /// "builtin.module(composer-refine-types{input-specs=1x3x224x224xf32})".
  llvm::Error runPipeline(llvm::StringRef pipeline);

  /// Writes the model: TorchScript for `.pt` (atomically), MLIR otherwise.
  llvm::Error save(llvm::StringRef path);

  /// The model as MLIR; owned by this object.
  mlir::ModuleOp getModule() const;

private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace composer

#endif // COMPOSER_API_H
