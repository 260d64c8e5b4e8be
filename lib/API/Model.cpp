//===- Model.cpp - the composer-opt C++ API -------------------------------===//

#include "composer/API.h"
#include "composer/Dialect/Composer.h"
#include "composer/Passes/Passes.h"
#include "composer/TorchScript/TorchScript.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace composer;

namespace {

/// Collects error diagnostics as text for an llvm::Error.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &ctx)
      : handler(&ctx, [this](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return success();
          llvm::raw_string_ostream os(text);
          os << diag.getLocation() << ": error: " << diag << "\n";
          for (const Diagnostic &note : diag.getNotes())
            os << note.getLocation() << ": note: " << note << "\n";
          return success();
        }) {}

  llvm::Error takeError(llvm::StringRef fallback) {
    std::string message = text.empty() ? fallback.str() : text;
    text.clear();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  }

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

bool isTorchScriptPath(llvm::StringRef path) {
  return llvm::sys::path::extension(path) == ".pt";
}

void registerOnce() {
  static bool registered = [] {
    registerComposerPassesAndPipelines();
    registerTransformsPasses();
    return true;
  }();
  (void)registered;
}

} // namespace

struct Model::Impl {
  Impl() : context(makeRegistry()), diagnostics(context) {}

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registry.insert<ComposerDialect, func::FuncDialect>();
    return registry;
  }

  MLIRContext context;
  DiagnosticCollector diagnostics;
  std::unique_ptr<TorchScriptModel> torchModel;
  OwningOpRef<ModuleOp> module;
};

Model::Model(std::unique_ptr<Impl> impl) : impl(std::move(impl)) {}
Model::Model(Model &&) noexcept = default;
Model &Model::operator=(Model &&) noexcept = default;
Model::~Model() = default;

llvm::Expected<Model> Model::load(llvm::StringRef path) {
  registerOnce();
  auto impl = std::make_unique<Impl>();
  MLIRContext &ctx = impl->context;
  ctx.printOpOnDiagnostic(false);
  ctx.loadDialect<ComposerDialect, func::FuncDialect>();
  if (isTorchScriptPath(path)) {
    impl->torchModel = loadTorchScriptModel(path, &ctx);
    if (impl->torchModel)
      impl->module = impl->torchModel->importModule(&ctx);
  } else {
    ParserConfig config(&ctx);
    impl->module = parseSourceFile<ModuleOp>(path, config);
  }
  if (!impl->module)
    return impl->diagnostics.takeError("cannot load '" + path.str() + "'");
  return Model(std::move(impl));
}

llvm::Error Model::runPipeline(llvm::StringRef pipeline) {
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
  if (failed(pm.run(*impl->module)))
    return impl->diagnostics.takeError("pass pipeline failed");
  return llvm::Error::success();
}

llvm::Error Model::save(llvm::StringRef path) {
  if (!isTorchScriptPath(path))
    return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
      impl->module->print(os);
      return llvm::Error::success();
    });
  if (!impl->torchModel) {
    auto source =
        (*impl->module)->getAttrOfType<StringAttr>(kSourceModelAttrName);
    if (!source)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "cannot write TorchScript: the module does not name the .pt it "
          "came from");
    impl->torchModel = loadTorchScriptModel(source.getValue(), &impl->context);
    if (!impl->torchModel)
      return impl->diagnostics.takeError("cannot load " + source.str());
  }
  if (failed(impl->torchModel->exportModule(*impl->module, path)))
    return impl->diagnostics.takeError("cannot write '" + path.str() + "'");
  return llvm::Error::success();
}

ModuleOp Model::getModule() const { return *impl->module; }
