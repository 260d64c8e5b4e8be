//===- composer-opt.cpp - the composer-opt driver -------------------------===//
//
// mlir-opt for composer: reads `.mlir` or a TorchScript `.pt`, runs a pass
// pipeline with all of MLIR's debugging flags, and writes `.mlir` or `.pt`.
// Models are read and written by the core the C++ API uses (ModelIO.h);
// TorchScript support is a plugin loaded only when a `.pt` is involved, so
// working on `.mlir` does not pay LibTorch's load time.
//
//===----------------------------------------------------------------------===//

#include "composer/API.h"
#include "composer/API/CostReport.h"
#include "composer/API/ModelIO.h"
#include "composer/API/PipelineChoice.h"
#include "composer/Dialect/Composer.h"
#include "composer/Passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace composer;
namespace cl = llvm::cl;

namespace {

enum class Format { Auto, MLIR, TorchScript };

cl::OptionCategory composerCategory("composer-opt options");

cl::opt<Format> emitFormat(
    "emit", cl::desc("Output format (default: from the -o extension)"),
    cl::values(clEnumValN(Format::MLIR, "mlir", "MLIR text"),
               clEnumValN(Format::TorchScript, "pt",
                          "TorchScript archive (torch.jit.load reads it)")),
    cl::init(Format::Auto), cl::cat(composerCategory));

cl::opt<LowerTo> lowerTo(
    "lower-to", cl::desc("How method ops are lowered before writing a .pt"),
    cl::values(clEnumValN(LowerTo::Aten, "aten",
                          "plain aten ops: any PyTorch loads the result"),
               clEnumValN(LowerTo::Runtime, "runtime",
                          "composer:: runtime ops (fused kernels): running "
                          "the result needs libComposerRuntime loaded"),
               clEnumValN(LowerTo::None, "none",
                          "leave them (the export then fails on them)")),
    cl::init(LowerTo::Aten), cl::cat(composerCategory));

cl::list<std::string> loadLibraries(
    "load-library",
    cl::desc("Load a library of TorchScript operators the model calls (e.g. "
             "torchvision's) before the model, as torch.ops.load_library "
             "does; repeatable"),
    cl::value_desc("library.so"), cl::cat(composerCategory));

cl::list<std::string>
    inputSpecs("input-spec",
               cl::desc("Shape and dtype of each tensor input of forward, e.g. "
                        "1x3x224x224xf32; runs composer-refine-types first"),
               cl::CommaSeparated, cl::cat(composerCategory));

cl::opt<std::string> pipelineFile(
    "pass-pipeline-file",
    cl::desc("Read the pass pipeline from a file: the --pass-pipeline text, "
             "over several lines if need be, '#' starting a comment line"),
    cl::value_desc("filename"), cl::cat(composerCategory));

cl::opt<uint64_t> maxOps(
    "max-ops",
    cl::desc("Refuse a model of more operations, with a diagnostic rather "
             "than running out of memory (about 2 KB each)"),
    cl::init(kDefaultMaxOps), cl::cat(composerCategory));

cl::opt<std::string> reportCostsFormat(
    "report-costs", cl::ValueOptional,
    cl::desc("Instead of transforming the model, report what each method "
             "pass alone and each named pipeline costs on it: sites, added "
             "state, FLOPs per training step, and (for a .pt) measured step "
             "time on this machine. Needs --input-spec. =text (default) or "
             "=json"),
    cl::value_desc("text|json"), cl::cat(composerCategory));

cl::opt<unsigned> reportWarmupSteps(
    "report-warmup-steps",
    cl::desc("--report-costs: untimed training steps before timing"),
    cl::init(3), cl::cat(composerCategory));

cl::opt<unsigned> reportTimedSteps(
    "report-timed-steps",
    cl::desc("--report-costs: timed training steps (the median is reported)"),
    cl::init(5), cl::cat(composerCategory));

cl::opt<std::string> peakGflops(
    "peak-gflops",
    cl::desc("--report-costs: the machine's peak GFLOP/s, FP32 or FP32,BF16, "
             "instead of the table's value for this CPU"),
    cl::value_desc("fp32[,bf16]"), cl::cat(composerCategory));

cl::opt<std::string> emitPipelineFile(
    "emit-pipeline",
    cl::desc("--report-costs: also write the pipeline of the method passes "
             "that keep accuracy by design and whose step time beats the "
             "model's beyond the noise, as --pass-pipeline-file reads it"),
    cl::value_desc("filename"), cl::cat(composerCategory));

cl::opt<std::string> costTableFile(
    "cost-table",
    cl::desc("--report-costs: choose the --emit-pipeline passes from this "
             "saved --report-costs=json report instead of measuring"),
    cl::value_desc("report.json"), cl::cat(composerCategory));

/// The --emit-pipeline file: the choice as comment lines, then the pipeline.
std::string formatPipelineFile(const PipelineChoice &choice,
                               StringRef inputFilename) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "# composer-opt --report-costs --emit-pipeline on " << inputFilename;
  if (!inputSpecs.empty())
    os << " --input-spec=" << llvm::join(inputSpecs, ",");
  if (!costTableFile.empty())
    os << " --cost-table=" << costTableFile;
  os << "\n# The method passes that keep accuracy by design, chosen where "
        "their\n# training step beat the model's by more than the noise:\n";
  choice.print(os, "#   ");
  os << choice.pipeline() << "\n";
  return text;
}

/// Checks --max-ops on `.mlir` input, which MlirOptMain parses (a `.pt` is
/// checked before it is imported), before any other pass runs.
struct OpLimitPass : public PassWrapper<OpLimitPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OpLimitPass)
  StringRef getArgument() const final { return "composer-op-limit"; }
  void runOnOperation() override {
    if (failed(checkOpLimit(getOperation(), maxOps)))
      signalPassFailure();
  }
};

/// The pipeline a --pass-pipeline-file holds, without its comment lines and
/// its `builtin.module(...)` wrapper (the pass manager is anchored there).
FailureOr<std::string> readPipelineFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    llvm::errs() << "composer-opt: error: cannot read pipeline file '" << path
                 << "': " << buffer.getError().message() << "\n";
    return failure();
  }
  std::string text;
  SmallVector<StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (StringRef line : lines) {
    line = line.trim();
    if (!line.empty() && !line.starts_with("#"))
      text += line.str();
  }
  StringRef pipeline(text);
  if (pipeline.consume_front("builtin.module(") &&
      !pipeline.consume_back(")")) {
    llvm::errs() << "composer-opt: error: unbalanced 'builtin.module(' in "
                 << path << "\n";
    return failure();
  }
  return pipeline.str();
}

/// Diagnostics outside MlirOptMain (loading, exporting) print like its own.
struct ToolDiagnostics {
  explicit ToolDiagnostics(MLIRContext &ctx) : handler(sourceMgr, &ctx) {}
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler;
};

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // Options registered so far are composer-opt's own and those of LLVM's
  // libraries (backends, ...); MLIR's are registered below. Keep --help to
  // composer's and MLIR's.
  cl::HideUnrelatedOptions(composerCategory);
  DialectRegistry registry;
  registry.insert<ComposerDialect, func::FuncDialect>();
  registerPasses();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "composer-opt: training-speedup passes on TorchScript models",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  std::string filePipeline;
  if (!pipelineFile.empty()) {
    FailureOr<std::string> read = readPipelineFile(pipelineFile);
    if (failed(read))
      return 1;
    filePipeline = *read;
  }
  {
    MlirOptMainConfig cliConfig = config;
    config.setPassPipelineSetupFn([cliConfig, filePipeline](
                                      PassManager &pm) -> LogicalResult {
      pm.addPass(std::make_unique<OpLimitPass>());
      if (!inputSpecs.empty()) {
        RefineTypesOptions refineOptions;
        refineOptions.inputSpecs = inputSpecs; // A global: outlives the pass.
        pm.addPass(createRefineTypes(refineOptions));
      }
      if (failed(cliConfig.setupPassPipeline(pm)))
        return failure();
      if (!pipelineFile.empty() &&
          failed(parsePassPipeline(filePipeline, pm, llvm::errs())))
        return emitError(UnknownLoc::get(pm.getContext()),
                         "invalid pipeline in '")
               << pipelineFile.getValue() << "'";
      return success();
    });
  }

  ModelFormat outputFormat = getFormatForPath(outputFilename);
  if (emitFormat != Format::Auto)
    outputFormat = emitFormat == Format::TorchScript ? ModelFormat::TorchScript
                                                     : ModelFormat::MLIR;
  if (outputFormat == ModelFormat::TorchScript && outputFilename == "-") {
    llvm::errs()
        << "composer-opt: error: --emit=pt needs an output file (-o)\n";
    return 1;
  }
  if (outputFormat == ModelFormat::TorchScript &&
      !config.inputSplitMarker().empty()) {
    llvm::errs() << "composer-opt: error: --emit=pt cannot write split input\n";
    return 1;
  }

  if (!reportCostsFormat.getNumOccurrences() &&
      (!emitPipelineFile.empty() || !costTableFile.empty())) {
    llvm::errs() << "composer-opt: error: --"
                 << (emitPipelineFile.empty() ? "cost-table" : "emit-pipeline")
                 << " needs --report-costs\n";
    return 1;
  }
  if (!costTableFile.empty() && emitPipelineFile.empty()) {
    llvm::errs() << "composer-opt: error: --cost-table is read only to "
                    "choose an --emit-pipeline\n";
    return 1;
  }
  if (reportCostsFormat.getNumOccurrences()) {
    MLIRContext context(registry);
    context.printOpOnDiagnostic(false);
    ToolDiagnostics diagnostics(context);
    StringRef format = reportCostsFormat.getValue();
    if (!format.empty() && format != "text" && format != "json") {
      llvm::errs() << "composer-opt: error: --report-costs=" << format
                   << ": expected text or json\n";
      return 1;
    }
    CostReportOptions options;
    options.json = format == "json";
    options.inputSpecs.assign(inputSpecs.begin(), inputSpecs.end());
    options.operatorLibraries.assign(loadLibraries.begin(),
                                     loadLibraries.end());
    options.maxOps = maxOps;
    options.warmupSteps = reportWarmupSteps;
    options.timedSteps = reportTimedSteps;
    options.lowerTo =
        lowerTo == LowerTo::Runtime ? LowerTo::Runtime : LowerTo::Aten;
    options.peakGflops = peakGflops;
    options.costTablePath = costTableFile;
    // The report is written only once every variant is measured.
    std::string report;
    llvm::raw_string_ostream reportStream(report);
    PipelineChoice choice;
    if (failed(reportCosts(context, inputFilename, reportStream, options,
                           emitPipelineFile.empty() ? nullptr : &choice)))
      return 1;
    if (!emitPipelineFile.empty() &&
        failed(writeFileAtomically(
            emitPipelineFile, &context, [&](StringRef, llvm::raw_ostream &os) {
              os << formatPipelineFile(choice, inputFilename);
              return success();
            })))
      return 1;
    return failed(writeFileAtomically(outputFilename, &context,
                                      [&](StringRef, llvm::raw_ostream &os) {
                                        os << report;
                                        return success();
                                      }))
               ? 1
               : 0;
  }

  // --mlir-timing also times the TorchScript phases MlirOptMain does not
  // see; this report prints after the pass pipeline's.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope rootTimer = timing.getRootScope();

  // Hand the result over as bytecode: it keeps locations (for diagnostics of
  // the lowering and export) and parses faster than text.
  if (outputFormat == ModelFormat::TorchScript)
    config.emitBytecode(true);

  MLIRContext context(registry);
  // An error in a 10k-op import should not print the op with its regions.
  context.printOpOnDiagnostic(false);
  ToolDiagnostics diagnostics(context);
  ModelIO io(&context, loadLibraries, maxOps);

  // Read the input: MLIR as is (MlirOptMain splits and verifies it),
  // TorchScript through the importer.
  std::unique_ptr<llvm::MemoryBuffer> input;
  if (isTorchScriptPath(inputFilename)) {
    OwningOpRef<ModuleOp> imported = io.read(inputFilename, rootTimer);
    if (!imported)
      return 1;
    std::string text;
    llvm::raw_string_ostream os(text);
    // Locations must survive the trip through text into MlirOptMain.
    imported->print(os, OpPrintingFlags().enableDebugInfo());
    input = llvm::MemoryBuffer::getMemBufferCopy(text, inputFilename);
  } else {
    std::string error;
    input = openInputFile(inputFilename, &error);
    if (!input) {
      llvm::errs() << "composer-opt: error: " << error << "\n";
      return 1;
    }
  }

  std::string result;
  llvm::raw_string_ostream resultStream(result);
  if (failed(MlirOptMain(resultStream, std::move(input), registry, config)))
    return 1;

  if (outputFormat == ModelFormat::MLIR)
    return failed(writeFileAtomically(outputFilename, &context,
                                      [&](StringRef, llvm::raw_ostream &os) {
                                        os << result;
                                        return success();
                                      }))
               ? 1
               : 0;

  TimingScope exportTimer = rootTimer.nest("Export and save TorchScript");
  ParserConfig parserConfig(&context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(result, parserConfig, inputFilename);
  if (!module)
    return 1;
  return failed(io.write(*module, outputFilename, ModelFormat::TorchScript,
                         lowerTo))
             ? 1
             : 0;
}
