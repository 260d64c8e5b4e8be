//===- composer-mlir-fuzzer.cpp - fuzzes parsing and the passes -----------===//
//
// libFuzzer target: the input is `.mlir` text in the composer and func
// dialects. It is parsed and verified; then every registered composer pass
// runs alone on a copy, and all of them in sequence on another, each
// result verified and printed. Bad input must end in diagnostics, never in
// a crash, a sanitizer report or a verifier failure after a pass.
//
//   composer-mlir-fuzzer CORPUS_DIR [libFuzzer options]
//
//===----------------------------------------------------------------------===//

#include "composer/Dialect/Composer.h"
#include "composer/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace {

/// The names of the registered composer passes and pipelines. A pass's
/// name is a command-line option once a pass pipeline parser exists; no
/// list is kept here, so a new method is fuzzed as soon as it registers.
std::vector<std::string> findComposerPasses() {
  static PassPipelineCLParser parser("", "passes to list");
  std::vector<std::string> names;
  for (const auto &entry : llvm::cl::getRegisteredOptions()) {
    StringRef name = entry.getKey();
    if (name.starts_with("composer-") &&
        (PassInfo::lookup(name) || PassPipelineInfo::lookup(name)))
      names.push_back(name.str());
  }
  llvm::sort(names);
  return names;
}

struct Fuzzer {
  Fuzzer() : passes(findComposerPasses()) {
    registry.insert<composer::ComposerDialect, func::FuncDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    // Threads would hide which input a report belongs to.
    context.disableMultithreading();
  }

  /// Runs `pipeline` on a copy of `module`; the pass manager verifies the
  /// result; printing walks every op and attribute.
  void run(ModuleOp module, StringRef pipeline) {
    OwningOpRef<ModuleOp> copy = module.clone();
    PassManager pm(&context);
    std::string error;
    llvm::raw_string_ostream errors(error);
    if (failed(parsePassPipeline(pipeline, pm, errors)))
      return;
    if (succeeded(pm.run(*copy))) {
      std::string text;
      llvm::raw_string_ostream os(text);
      copy->print(os);
    }
  }

  DialectRegistry registry;
  MLIRContext context{MLIRContext::Threading::DISABLED};
  std::vector<std::string> passes;
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  composer::registerComposerPassesAndPipelines();
  if (findComposerPasses().empty()) {
    llvm::errs() << "composer-mlir-fuzzer: no composer pass registered\n";
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Fuzzer fuzzer;
  // Diagnostics are the expected answer to bad input.
  ScopedDiagnosticHandler quiet(&fuzzer.context,
                                [](Diagnostic &) { return success(); });
  // MLIR's lexer stops at a NUL, as files read by MemoryBuffer end.
  std::string text(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, &fuzzer.context);
  if (!module)
    return 0;
  std::string all = "builtin.module(";
  for (const std::string &pass : fuzzer.passes) {
    fuzzer.run(*module, "builtin.module(" + pass + ")");
    all += pass + ",";
  }
  all.back() = ')';
  fuzzer.run(*module, all);
  return 0;
}
