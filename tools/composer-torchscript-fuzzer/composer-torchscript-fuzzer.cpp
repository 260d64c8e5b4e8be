//===- composer-torchscript-fuzzer.cpp - fuzzes import and export ---------===//
//
// libFuzzer target: the input is the bytes of a TorchScript archive. It is
// loaded, imported, verified and exported again, as `composer-opt in.pt -o
// out.pt` does. Bad input must end in a diagnostic. Crashes inside
// LibTorch's own loader are listed in docs/fuzzing.md.
//
//   composer-torchscript-fuzzer CORPUS_DIR [libFuzzer options]
//
//===----------------------------------------------------------------------===//

#include "composer/Dialect/Composer.h"
#include "composer/TorchScript/TorchScript.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;

namespace {

/// Archives are small; a bigger graph means a (fuzzed) loop of nodes.
constexpr uint64_t kMaxOps = 100'000;

/// A file that lives as long as the fuzzer: LibTorch reads archives by path.
struct ScratchFile {
  explicit ScratchFile(StringRef suffix) {
    if (llvm::sys::fs::createTemporaryFile("composer-fuzz", suffix, path)) {
      llvm::errs() << "composer-torchscript-fuzzer: no temporary file\n";
      std::abort();
    }
  }
  ~ScratchFile() { llvm::sys::fs::remove(path); }
  llvm::SmallString<128> path;
};

struct Fuzzer {
  Fuzzer() : input("pt"), output("pt") {
    registry.insert<composer::ComposerDialect, func::FuncDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  DialectRegistry registry;
  MLIRContext context{MLIRContext::Threading::DISABLED};
  ScratchFile input;
  ScratchFile output;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Fuzzer fuzzer;
  ScopedDiagnosticHandler quiet(&fuzzer.context,
                                [](Diagnostic &) { return success(); });
  {
    std::error_code error;
    llvm::raw_fd_ostream os(fuzzer.input.path, error);
    if (error)
      std::abort();
    os.write(reinterpret_cast<const char *>(data), size);
  }
  std::unique_ptr<composer::TorchScriptModel> model =
      composer::loadTorchScriptModel(fuzzer.input.path, {}, &fuzzer.context);
  if (!model)
    return 0;
  OwningOpRef<ModuleOp> module = model->importModule(&fuzzer.context, kMaxOps);
  if (!module || failed(verify(*module)))
    return 0;
  (void)model->exportModule(*module, fuzzer.output.path);
  return 0;
}
