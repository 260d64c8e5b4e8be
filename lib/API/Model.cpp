//===- Model.cpp - the composer-opt C++ API -------------------------------===//

#include "composer/API.h"
#include "composer/Dialect/Composer.h"
#include "composer/Passes/Passes.h"
#include "composer/TorchScript/TorchScript.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace composer;

void composer::registerPasses() {
  static bool registered = [] {
    registerComposerPassesAndPipelines();
    registerTransformsPasses();
    return true;
  }();
  (void)registered;
}

struct Model::Impl {
  explicit Impl(const LoadOptions &options = {})
      : context(makeRegistry()), diagnostics(context),
        io(&context, options.operatorLibraries, options.maxOps) {
    // An error in a 10k-op import should not print the op with its regions.
    context.printOpOnDiagnostic(false);
    context.loadDialect<ComposerDialect, func::FuncDialect>();
  }

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registry.insert<ComposerDialect, func::FuncDialect>();
    return registry;
  }

  MLIRContext context;
  DiagnosticCollector diagnostics;
  ModelIO io;
  OwningOpRef<ModuleOp> module;
  /// The last runPipeline's.
  std::vector<PassSiteReport> siteReports;
};

Model::Model(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Model::Model(Model &&) noexcept = default;
Model &Model::operator=(Model &&) noexcept = default;
Model::~Model() = default;

llvm::Expected<Model> Model::load(llvm::StringRef path,
                                  const LoadOptions &options) {
  registerPasses();
  auto impl = std::make_unique<Impl>(options);
  impl->module = impl->io.read(path);
  if (!impl->module)
    return impl->diagnostics.takeError("cannot load '" + path.str() + "'");
  return Model(std::move(impl));
}

llvm::Expected<Model> Model::import(std::unique_ptr<TorchScriptModel> model,
                                    const LoadOptions &options) {
  registerPasses();
  auto impl = std::make_unique<Impl>(options);
  impl->module = impl->io.import(std::move(model));
  if (!impl->module)
    return impl->diagnostics.takeError("cannot import the model");
  return Model(std::move(impl));
}

llvm::Error Model::runPipeline(llvm::StringRef pipeline) {
  impl->siteReports.clear();
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  // The pipeline names its anchor ("builtin.module(...)"), as mlir-opt's
  // --pass-pipeline does.
  FailureOr<OpPassManager> parsed = parsePassPipeline(pipeline, errorStream);
  if (failed(parsed))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid pass pipeline '" + pipeline.str() +
                                       "': " + parseErrors);
  if (parsed->getOpAnchorName() != ModuleOp::getOperationName() &&
      parsed->getOpAnchorName() != OpPassManager::getAnyOpAnchorName())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "pass pipeline '" + pipeline.str() +
                                       "' must be anchored on builtin.module");
  PassManager pm(&impl->context, parsed->getOpAnchorName());
  static_cast<OpPassManager &>(pm) = std::move(*parsed);
  pm.addInstrumentation(
      std::make_unique<SiteReportInstrumentation>(impl->siteReports));
  if (failed(pm.run(*impl->module)))
    return impl->diagnostics.takeError("pass pipeline failed");
  return llvm::Error::success();
}

llvm::Error Model::save(llvm::StringRef path, const SaveOptions &options) {
  ModelFormat format = getFormatForPath(path);
  ModuleOp module = *impl->module;
  // Lowering rewrites the module: lower a copy, so that the model stays as
  // the passes left it.
  OwningOpRef<ModuleOp> lowered;
  if (format == ModelFormat::TorchScript && options.lowerTo != LowerTo::None) {
    lowered = module.clone();
    module = *lowered;
  }
  if (failed(impl->io.write(module, path, format, options.lowerTo)))
    return impl->diagnostics.takeError("cannot write '" + path.str() + "'");
  return llvm::Error::success();
}

llvm::Error Model::exportTorchScript(const SaveOptions &options) {
  OwningOpRef<ModuleOp> lowered = impl->module->clone();
  if (failed(impl->io.writeTorchScriptInMemory(*lowered, options.lowerTo)))
    return impl->diagnostics.takeError("cannot export the model");
  return llvm::Error::success();
}

TorchScriptModel *Model::getTorchScriptModel() const {
  return impl->io.getTorchScriptModel();
}

std::vector<DiagnosticInfo> Model::takeWarnings() {
  return impl->diagnostics.takeWarnings();
}

ModuleOp Model::getModule() const { return *impl->module; }

llvm::ArrayRef<PassSiteReport> Model::getSiteReports() const {
  return impl->siteReports;
}
