//===- Core.cpp - composer_opt._core, the Python package's native part ----===//
//
// Binds the compiler's C++ API (composer::Model) to Python on in-memory
// TorchScript modules: a torch.jit.ScriptModule's torch::jit::Module goes in
// and a new one comes out, with no file between. Everything Python-facing
// (argument checking, Composer's names, docstrings) is in the package's
// Python modules; this file converts data and errors.
//
//===----------------------------------------------------------------------===//

#include "composer/API.h"
#include "composer/API/CostReport.h"
#include "composer/Passes/PassCatalog.h"
#include "composer/Passes/Passes.h"
#include "composer/TorchScript/TorchModule.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/jit/python/module_python.h>

#include <dlfcn.h>

namespace py = pybind11;
using composer::DiagnosticInfo;

namespace {

py::dict toPython(const DiagnosticInfo &diagnostic) {
  py::dict record;
  record["severity"] = composer::getSeverityName(diagnostic.severity).str();
  record["location"] = diagnostic.location;
  record["file"] = diagnostic.file;
  record["line"] = diagnostic.line;
  record["column"] = diagnostic.column;
  record["message"] = diagnostic.message;
  py::list notes;
  for (const DiagnosticInfo &note : diagnostic.notes)
    notes.append(toPython(note));
  record["notes"] = notes;
  return record;
}

py::list toPython(llvm::ArrayRef<composer::PassSiteReport> runs) {
  py::list result;
  for (const composer::PassSiteReport &run : runs) {
    py::list reports;
    for (const composer::SiteCounts &counts : run.reports) {
      py::list skipped;
      for (const composer::SkippedSites &sites : counts.skipped) {
        py::list locations;
        for (mlir::Location loc : sites.sites)
          locations.append(composer::printLocation(loc));
        skipped.append(py::dict(py::arg("reason") = sites.reason,
                                py::arg("sites") = locations));
      }
      reports.append(py::dict(py::arg("what") = counts.what,
                              py::arg("changed") = counts.changed,
                              py::arg("skipped") = skipped,
                              py::arg("in_branches") = counts.inBranches));
    }
    result.append(py::dict(py::arg("pass") = run.pass,
                           py::arg("failed") = run.failed,
                           py::arg("reports") = reports));
  }
  return result;
}

/// Raises composer_opt.CompilerError for `error`, with its diagnostics when
/// it has them.
[[noreturn]] void raise(llvm::Error error) {
  std::string message;
  py::list diagnostics;
  llvm::handleAllErrors(
      std::move(error),
      [&](const composer::DiagnosticError &diagnosticError) {
        message = diagnosticError.message();
        for (const DiagnosticInfo &diagnostic :
             diagnosticError.getDiagnostics())
          diagnostics.append(toPython(diagnostic));
      },
      [&](const llvm::ErrorInfoBase &other) { message = other.message(); });
  py::object errorType =
      py::module_::import("composer_opt._errors").attr("CompilerError");
  py::object exception =
      errorType(llvm::StringRef(message).rtrim().str(), diagnostics);
  PyErr_SetObject(errorType.ptr(), exception.ptr());
  throw py::error_already_set();
}

composer::LowerTo parseLowerTo(const std::string &lowerTo) {
  if (lowerTo == "aten")
    return composer::LowerTo::Aten;
  if (lowerTo == "runtime")
    return composer::LowerTo::Runtime;
  if (lowerTo == "none")
    return composer::LowerTo::None;
  throw py::value_error("lower_to='" + lowerTo +
                        "': expected 'aten', 'runtime' or 'none'");
}

composer::LoadOptions
makeLoadOptions(const std::vector<std::string> &operatorLibraries,
                uint64_t maxOps) {
  composer::LoadOptions options;
  options.operatorLibraries = operatorLibraries;
  options.maxOps = maxOps;
  return options;
}

/// Runs `pipeline` (when not empty) on `model`, exports it lowered as
/// `lowerTo` says, and returns (torch._C.ScriptModule, site reports,
/// warnings).
py::tuple optimize(llvm::Expected<composer::Model> model,
                   const std::string &pipeline, composer::LowerTo lowerTo) {
  if (!model)
    raise(model.takeError());
  py::list warnings;
  auto takeWarnings = [&] {
    for (const DiagnosticInfo &warning : model->takeWarnings())
      warnings.append(toPython(warning));
  };
  takeWarnings();
  if (!pipeline.empty()) {
    llvm::Error error = llvm::Error::success();
    {
      py::gil_scoped_release released;
      error = model->runPipeline(pipeline);
    }
    if (error)
      raise(std::move(error));
  }
  py::list reports = toPython(model->getSiteReports());
  takeWarnings();
  std::optional<torch::jit::Module> exported;
  {
    llvm::Error error = llvm::Error::success();
    {
      py::gil_scoped_release released;
      composer::SaveOptions options;
      options.lowerTo = lowerTo;
      error = model->exportTorchScript(options);
      if (!error)
        exported = composer::takeExportedModule(*model->getTorchScriptModel());
    }
    if (error)
      raise(std::move(error));
  }
  takeWarnings();
  return py::make_tuple(py::cast(*exported), reports, warnings);
}

py::tuple optimizeModule(py::object scriptModule, const std::string &name,
                         const std::string &pipeline,
                         const std::string &lowerTo,
                         const std::vector<std::string> &operatorLibraries,
                         uint64_t maxOps) {
  c10::optional<torch::jit::Module> module =
      torch::jit::as_module(scriptModule);
  if (!module)
    throw py::type_error("expected a torch.jit.ScriptModule");
  composer::LowerTo lowering = parseLowerTo(lowerTo);
  std::unique_ptr<composer::TorchScriptModel> wrapped =
      composer::wrapTorchModule(*module, name);
  llvm::Expected<composer::Model> model = [&] {
    py::gil_scoped_release released;
    return composer::Model::import(std::move(wrapped),
                                   makeLoadOptions(operatorLibraries, maxOps));
  }();
  return optimize(std::move(model), pipeline, lowering);
}

py::tuple optimizeFile(const std::string &path, const std::string &pipeline,
                       const std::string &lowerTo,
                       const std::vector<std::string> &operatorLibraries,
                       uint64_t maxOps) {
  composer::LowerTo lowering = parseLowerTo(lowerTo);
  llvm::Expected<composer::Model> model = [&] {
    py::gil_scoped_release released;
    return composer::Model::load(path,
                                 makeLoadOptions(operatorLibraries, maxOps));
  }();
  return optimize(std::move(model), pipeline, lowering);
}

py::list describePasses() {
  py::list passes;
  for (const composer::PassDescription &pass :
       composer::getComposerPassCatalog()) {
    py::list options;
    for (const composer::PassOptionDescription &option : pass.options) {
      py::list choices;
      for (llvm::StringRef choice : option.choices)
        choices.append(choice.str());
      options.append(
          py::dict(py::arg("name") = option.argument.str(),
                   py::arg("type") = option.type.str(),
                   py::arg("is_list") = option.isList,
                   py::arg("default") = option.defaultValue.str(),
                   py::arg("choices") = choices,
                   py::arg("description") = option.description.str()));
    }
    passes.append(
        py::dict(py::arg("name") = pass.argument.str(),
                 py::arg("summary") = pass.summary.str(),
                 py::arg("description") = pass.description.str(),
                 py::arg("is_method") = composer::isMethodPass(pass.argument),
                 py::arg("keeps_accuracy") =
                     composer::methodKeepsAccuracy(pass.argument),
                 py::arg("options") = options));
  }
  return passes;
}

py::list describePipelines() {
  py::list pipelines;
  for (const composer::PipelineDescription &pipeline :
       composer::getComposerPipelines()) {
    mlir::OpPassManager pm("builtin.module");
    pipeline.addPasses(pm);
    std::string text;
    llvm::raw_string_ostream os(text);
    pm.printAsTextualPipeline(os);
    pipelines.append(py::dict(py::arg("name") = pipeline.name.str(),
                              py::arg("summary") = pipeline.summary.str(),
                              py::arg("pipeline") = os.str()));
  }
  return pipelines;
}

std::string reportCosts(const std::string &path,
                        const std::vector<std::string> &inputSpecs,
                        const std::vector<std::string> &operatorLibraries,
                        unsigned warmupSteps, unsigned timedSteps,
                        const std::string &lowerTo,
                        const std::string &peakGflops) {
  composer::CostReportOptions options;
  options.json = true;
  options.inputSpecs = inputSpecs;
  options.operatorLibraries = operatorLibraries;
  options.maxOps = composer::kDefaultMaxOps;
  options.warmupSteps = warmupSteps;
  options.timedSteps = timedSteps;
  options.lowerTo = parseLowerTo(lowerTo);
  options.peakGflops = peakGflops;
  std::string report;
  llvm::Error error = llvm::Error::success();
  {
    py::gil_scoped_release released;
    // The report's variants are the registered method passes and pipelines.
    composer::registerPasses();
    mlir::MLIRContext context;
    composer::DiagnosticCollector diagnostics(context);
    llvm::raw_string_ostream os(report);
    if (mlir::failed(composer::reportCosts(context, path, os, options)))
      error = diagnostics.takeError("cannot report costs of '" + path + "'");
  }
  if (error)
    raise(std::move(error));
  return report;
}

/// The directory of the compiler's libraries, where the build and the
/// install also put libComposerRuntime (and, beside it, `../bin` holds the
/// tools).
std::string libraryDirectory() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&composer::getComposerPassCatalog),
              &info) ||
      !info.dli_fname)
    throw std::runtime_error("cannot locate the composer libraries");
  return llvm::sys::path::parent_path(info.dli_fname).str();
}

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "composer_opt's native part; use the composer_opt package.";
  m.def("optimize_module", &optimizeModule, py::arg("module"), py::arg("name"),
        py::arg("pipeline"), py::arg("lower_to"), py::arg("operator_libraries"),
        py::arg("max_ops"));
  m.def("optimize_file", &optimizeFile, py::arg("path"), py::arg("pipeline"),
        py::arg("lower_to"), py::arg("operator_libraries"), py::arg("max_ops"));
  m.def("passes", &describePasses);
  m.def("pipelines", &describePipelines);
  m.def("report_costs", &reportCosts, py::arg("path"), py::arg("input_specs"),
        py::arg("operator_libraries"), py::arg("warmup_steps"),
        py::arg("timed_steps"), py::arg("lower_to"), py::arg("peak_gflops"));
  m.def("library_directory", &libraryDirectory);
  m.attr("default_max_ops") = composer::kDefaultMaxOps;
}
