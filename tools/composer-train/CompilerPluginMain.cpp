//===- CompilerPluginMain.cpp - libComposerTrainCompiler.so ---------------===//
//
// The compiler as composer-train loads it (CompilerPlugin.h): the C++ API
// on a module in memory.
//
//===----------------------------------------------------------------------===//

#include "CompilerPlugin.h"

#include "composer/API.h"
#include "composer/TorchScript/TorchModule.h"

#include "llvm/Support/raw_ostream.h"

extern "C" bool composerTrainCompileModule(torch::jit::Module *module,
                                           const char *pipeline,
                                           std::string *report,
                                           std::string *error) {
  auto fail = [&](llvm::Error err) {
    *error = llvm::toString(std::move(err));
    return false;
  };
  llvm::Expected<composer::Model> model =
      composer::Model::import(composer::wrapTorchModule(*module, "model"));
  if (!model)
    return fail(model.takeError());
  if (llvm::Error err = model->runPipeline(pipeline))
    return fail(std::move(err));
  llvm::raw_string_ostream os(*report);
  for (const composer::PassSiteReport &run : model->getSiteReports())
    for (const composer::SiteCounts &counts : run.reports)
      os << run.pass << ": " << counts.changed << " " << counts.what << ", "
         << counts.getNumSkipped() << " skipped\n";
  composer::SaveOptions options;
  options.lowerTo = composer::LowerTo::Runtime;
  if (llvm::Error err = model->exportTorchScript(options))
    return fail(std::move(err));
  std::optional<torch::jit::Module> exported =
      composer::takeExportedModule(*model->getTorchScriptModel());
  if (!exported) {
    *error = "the compiler exported no module";
    return false;
  }
  *module = std::move(*exported);
  return true;
}
