//===- CostReport.cpp - what each method costs on a model -----------------===//
//
// The variants are found through registration, not a list: every
// registered method pass (MethodPassRegistration) that changes the model is
// a method that applies; every registered `composer-*` pipeline is a named
// recipe. Sites are the passes' site reports as data
// (SiteReportInstrumentation), never parsed out of remarks.
//
//===----------------------------------------------------------------------===//

#include "composer/API/CostReport.h"
#include "composer/API/ModelIO.h"
#include "composer/API/PipelineChoice.h"
#include "composer/Analysis/FlopCount.h"
#include "composer/Dialect/Composer.h"
#include "composer/Passes/Passes.h"
#include "composer/Passes/SiteReports.h"
#include "composer/Support/PeakFlops.h"
#include "composer/TorchScript/TorchScriptPlugin.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <sched.h>

using namespace mlir;
using namespace composer;

namespace {

//===----------------------------------------------------------------------===//
// The machine's peak FLOP rate.
//===----------------------------------------------------------------------===//

struct Peak {
  double fp32 = 0, bf16 = 0; // GFLOP/s
  std::string how;
};

/// The project's peak table (Support/PeakFlops.h).
Peak detectPeak() {
  support::PeakFlops detected = support::detectPeakFlops();
  return {detected.fp32, detected.bf16, detected.how};
}

/// --peak-gflops: FP32 or FP32,BF16 in GFLOP/s.
FailureOr<Peak> parsePeak(StringRef text, Location loc) {
  auto [fp32Text, bf16Text] = text.split(',');
  Peak peak;
  auto parse = [](StringRef field, double &value) {
    return !field.trim().getAsDouble(value) && value > 0 &&
           value < 1e12; // GFLOP/s: below a zettaflop.
  };
  if (!parse(fp32Text, peak.fp32) ||
      (!bf16Text.empty() && !parse(bf16Text, peak.bf16)))
    return emitError(loc, "--peak-gflops: expected FP32 or FP32,BF16 as "
                          "positive numbers of GFLOP/s, got '")
           << text << "'";
  if (bf16Text.empty())
    peak.bf16 = peak.fp32;
  peak.how = "--peak-gflops";
  return peak;
}

//===----------------------------------------------------------------------===//
// Variants.
//===----------------------------------------------------------------------===//

struct Variant {
  std::string name;
  StringRef kind;                // "model", "pass" or "pipeline"
  OwningOpRef<ModuleOp> module;  // After --input-spec, as composer-opt does.
  OwningOpRef<ModuleOp> counted; // FLOPs counted, if not `module`.
  unsigned sites = 0;
  unsigned paramsAdded = 0, buffersAdded = 0;
  int64_t paramElementsAdded = 0, bufferElementsAdded = 0;
  FlopCounts flops; // Without its op lists, which point into `module`.
  /// What the report says of the ops not counted, kept once `module` is
  /// released: how many, and the first one's name and location.
  size_t numUncounted = 0, numUnknownTripCounts = 0;
  std::string firstUncounted;
  bool lowPrecision = false;
  std::vector<double> stepSeconds;
  std::string noTime; // Why there is no time, when there is none.
  /// A pipeline's passes (their arguments), in order.
  std::vector<std::string> parts;
};

/// The sites the method passes of `runs` changed.
unsigned countMethodSites(ArrayRef<PassSiteReport> runs) {
  unsigned sites = 0;
  for (const PassSiteReport &run : runs)
    if (isMethodPass(run.pass))
      sites += run.getNumChanged();
  return sites;
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

/// The q-quantile of `sorted`, interpolated between neighbours.
double quantile(const std::vector<double> &sorted, double q) {
  double at = q * (sorted.size() - 1);
  size_t below = size_t(at);
  if (below + 1 >= sorted.size())
    return sorted.back();
  return sorted[below] + (at - below) * (sorted[below + 1] - sorted[below]);
}

/// Half the interquartile range of a sample, relative to its median: how
/// far a median may move by chance here. The middle half, so that the odd
/// step a busy machine stretches (every run has some) does not hide a real
/// difference as the full range would.
double relativeNoise(std::vector<double> values) {
  if (values.size() < 2)
    return 0;
  std::sort(values.begin(), values.end());
  return (quantile(values, 0.75) - quantile(values, 0.25)) / 2 / median(values);
}

/// Drops the dtype from every tensor type in @forward but its arguments'.
void forgetDtypes(ModuleOp module) {
  auto forget = [](Type type) -> Type {
    auto tensor = dyn_cast<TorchTensorType>(type);
    if (!tensor || !tensor.hasDtype())
      return type;
    return TorchTensorType::get(type.getContext(), tensor.getHasRank(),
                                tensor.getSizes(), Type());
  };
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return;
  forward.walk([&](Operation *op) {
    for (Value result : op->getResults())
      result.setType(forget(result.getType()));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (op != forward)
          for (BlockArgument arg : block.getArguments())
            arg.setType(forget(arg.getType()));
  });
  FunctionType type = forward.getFunctionType();
  SmallVector<Type> results = llvm::map_to_vector(type.getResults(), forget);
  forward.setFunctionType(
      FunctionType::get(module.getContext(), type.getInputs(), results));
}

class CostReporter {
public:
  CostReporter(MLIRContext &context, StringRef inputPath,
               const CostReportOptions &options)
      : context(context), inputPath(inputPath), options(options),
        io(&context, options.operatorLibraries, options.maxOps),
        fileLoc(FileLineColLoc::get(&context, inputPath, 0, 0)) {}

  /// Measures and writes the report; chooses the pipeline into `choice`
  /// if it is not null.
  LogicalResult run(llvm::raw_ostream &os, PipelineChoice *choice);

private:
  /// Runs `addPasses` on a copy of the model and returns it, as
  /// `composer-opt --input-spec=... --pass` writes it; null (with the reason
  /// in `failureReason`) when the pipeline fails. `sites` is what the
  /// method passes changed; `counted` is the result refined again, for the
  /// sizes of the ops the passes built.
  OwningOpRef<ModuleOp>
  transform(function_ref<LogicalResult(OpPassManager &)> addPasses,
            unsigned &sites, std::string &failureReason,
            OwningOpRef<ModuleOp> &counted);
  void measure(Variant &variant);
  void compareState(Variant &variant);
  std::vector<TensorSpec> timingInputs(std::string &why);
  void printText(llvm::raw_ostream &os);
  llvm::json::Object toJson();
  /// Chooses from the variants measured so far, timing each set of passes
  /// the chooser asks to see together (PipelineChoice.h) until it asks for
  /// none.
  LogicalResult choose(PipelineChoice &choice);
  std::string verdict(const Variant &variant);
  /// The measured step-time ratio to the model, if both were timed.
  std::optional<double> timeRatio(const Variant &variant);
  /// Noise allowed when comparing the variant's median with the model's.
  double noise(const Variant &variant);
  /// For a pipeline: the product of its passes' own time ratios (a pass
  /// that changed nothing counts 1), if each was timed.
  std::optional<double> partsTimeRatio(const Variant &pipeline);
  /// How a pipeline's measured ratio compares with its passes' product.
  std::string composition(const Variant &pipeline);

  MLIRContext &context;
  StringRef inputPath;
  const CostReportOptions &options;
  ModelIO io;
  Location fileLoc;
  Peak peak;
  OwningOpRef<ModuleOp> model;   // Refined.
  std::vector<Variant> variants; // The model first.
  std::vector<std::string> notApplicable;
  std::vector<std::pair<std::string, std::string>> failures;
};

OwningOpRef<ModuleOp>
CostReporter::transform(function_ref<LogicalResult(OpPassManager &)> addPasses,
                        unsigned &sites, std::string &failureReason,
                        OwningOpRef<ModuleOp> &counted) {
  OwningOpRef<ModuleOp> module = model->clone();
  std::string firstError;
  // The passes' remarks are not part of the report: only the first error,
  // as the reason of a failure.
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
      firstError = diag.str();
    return success();
  });
  std::vector<PassSiteReport> runs;
  PassManager pm(&context, ModuleOp::getOperationName());
  pm.addInstrumentation(std::make_unique<SiteReportInstrumentation>(runs));
  if (failed(addPasses(pm)) || failed(pm.run(*module))) {
    failureReason = firstError.empty() ? "the pipeline failed" : firstError;
    return nullptr;
  }
  sites = countMethodSites(runs);
  // Give the ops the passes built their sizes. Mixed precision leaves the
  // dtypes refined before it as they were, which a second refinement
  // contradicts; sizes are what FLOPs need, so refine without dtypes.
  OwningOpRef<ModuleOp> refined = module->clone();
  forgetDtypes(*refined);
  PassManager refinePm(&context, ModuleOp::getOperationName());
  RefineTypesOptions refine;
  refine.inputSpecs = options.inputSpecs;
  refinePm.addPass(createRefineTypes(refine));
  if (succeeded(refinePm.run(*refined)))
    counted = std::move(refined);
  return module;
}

void CostReporter::compareState(Variant &variant) {
  llvm::StringSet<> before;
  for (Operation &op : model->getBody()->getOperations())
    if (auto symbol = dyn_cast<SymbolOpInterface>(op))
      before.insert(symbol.getName());
  for (Operation &op : variant.module->getBody()->getOperations()) {
    auto decl = dyn_cast<ParameterOp>(op);
    auto buffer = dyn_cast<BufferOp>(op);
    if ((!decl && !buffer) ||
        before.contains(decl ? decl.getSymName() : buffer.getSymName()))
      continue;
    int64_t elements =
        getNumElements(decl ? decl.getTensorType() : buffer.getTensorType())
            .value_or(0);
    if (decl) {
      ++variant.paramsAdded;
      variant.paramElementsAdded += elements;
    } else {
      ++variant.buffersAdded;
      variant.bufferElementsAdded += elements;
    }
  }
}

std::vector<TensorSpec> CostReporter::timingInputs(std::string &why) {
  std::vector<TensorSpec> inputs;
  auto forward = model->lookupSymbol<func::FuncOp>("forward");
  if (!forward) {
    why = "no @forward";
    return inputs;
  }
  for (Type type : forward.getArgumentTypes()) {
    auto tensor = dyn_cast<TorchTensorType>(type);
    std::optional<torch_upstream::ScalarType> dtype;
    if (tensor && tensor.hasStaticShape() && tensor.hasDtype())
      dtype = getScalarType(tensor.getDtype());
    if (!dtype) {
      why = "forward takes an argument whose shape --input-spec does not fix";
      return {};
    }
    inputs.push_back(TensorSpec{std::vector<int64_t>(tensor.getSizes().begin(),
                                                     tensor.getSizes().end()),
                                *dtype});
  }
  return inputs;
}

void CostReporter::measure(Variant &variant) {
  variant.flops =
      countFlops(variant.counted ? *variant.counted : *variant.module);
  variant.numUncounted = variant.flops.uncounted.size();
  variant.numUnknownTripCounts = variant.flops.unknownTripCounts.size();
  if (!variant.flops.uncounted.empty()) {
    Operation *first = variant.flops.uncounted.front();
    llvm::raw_string_ostream os(variant.firstUncounted);
    os << "'" << first->getName() << "' at " << first->getLoc();
  }
  variant.flops.uncounted.clear();
  variant.flops.unknownTripCounts.clear();
  variant.module->walk([&](ToDtypeOp cast) {
    if (cast.getDtype() == torch_upstream::ScalarType::BFloat16 ||
        cast.getDtype() == torch_upstream::ScalarType::Half)
      variant.lowPrecision = true;
  });
  if (!isTorchScriptPath(inputPath)) {
    variant.noTime = "no weights in .mlir input; time a .pt";
    return;
  }
  std::vector<TensorSpec> inputs = timingInputs(variant.noTime);
  if (!variant.noTime.empty())
    return;
  SmallString<128> tempPath;
  if (std::error_code error = llvm::sys::fs::createTemporaryFile(
          "composer-report-costs", "pt", tempPath)) {
    variant.noTime = "cannot create a temporary file: " + error.message();
    return;
  }
  llvm::FileRemover removeTemp(tempPath);
  // Export lowers method ops in place: export a copy.
  OwningOpRef<ModuleOp> exported = variant.module->clone();
  std::string firstError;
  {
    ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
        firstError = diag.str();
      return success();
    });
    if (failed(io.write(*exported, tempPath, ModelFormat::TorchScript,
                        options.lowerTo))) {
      variant.noTime = "export failed: " + firstError;
      return;
    }
    FailureOr<std::vector<double>> seconds = timeTrainingStepsViaPlugin(
        tempPath, inputs, options.warmupSteps, options.timedSteps, fileLoc);
    if (failed(seconds)) {
      variant.noTime = firstError;
      return;
    }
    variant.stepSeconds = std::move(*seconds);
  }
}

std::string CostReporter::verdict(const Variant &variant) {
  const Variant &base = variants.front();
  if (&variant == &base)
    return "reference";
  if (variant.stepSeconds.empty() || base.stepSeconds.empty())
    return "not measurable here (" +
           (variant.noTime.empty() ? base.noTime : variant.noTime) + ")";
  double ratio = *timeRatio(variant);
  std::string text;
  llvm::raw_string_ostream os(text);
  StepRatio change = classifyStepRatio(ratio, noise(variant));
  if (change == StepRatio::WithinNoise)
    os << "not measurable here (" << llvm::format("%+.0f%%", (ratio - 1) * 100)
       << ", within the +-" << llvm::format("%.0f%%", noise(variant) * 100)
       << " noise)";
  else if (change == StepRatio::Cheaper)
    os << "cheaper: saves " << llvm::format("%.0f%%", (1 - ratio) * 100)
       << " per step";
  else
    os << "costs " << llvm::format("%.0f%%", (ratio - 1) * 100) << " per step";
  return text;
}

std::optional<double> CostReporter::timeRatio(const Variant &variant) {
  const Variant &base = variants.front();
  if (variant.stepSeconds.empty() || base.stepSeconds.empty())
    return std::nullopt;
  return median(variant.stepSeconds) / median(base.stepSeconds);
}

double CostReporter::noise(const Variant &variant) {
  // Two medians each within their own spread; at least 2%.
  return std::max({relativeNoise(variants.front().stepSeconds),
                   relativeNoise(variant.stepSeconds), 0.02});
}

std::optional<double> CostReporter::partsTimeRatio(const Variant &pipeline) {
  if (pipeline.parts.empty())
    return std::nullopt;
  double product = 1;
  for (const std::string &part : pipeline.parts) {
    const Variant *alone = nullptr;
    for (const Variant &variant : variants)
      if (variant.kind == "pass" && variant.name == part)
        alone = &variant;
    if (!alone)
      continue; // Not applicable alone: it changed nothing.
    std::optional<double> ratio = timeRatio(*alone);
    if (!ratio)
      return std::nullopt;
    product *= *ratio;
  }
  return product;
}

std::string CostReporter::composition(const Variant &pipeline) {
  std::optional<double> measured = timeRatio(pipeline);
  std::optional<double> product = partsTimeRatio(pipeline);
  if (!measured || !product)
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << pipeline.name << " steps at " << llvm::format("%.2fx", *measured)
     << "; its passes alone multiply to " << llvm::format("%.2fx", *product)
     << ": ";
  double excess = *measured / *product - 1;
  StepRatio change = classifyStepRatio(*measured / *product, noise(pipeline));
  if (change == StepRatio::WithinNoise)
    os << "they compose here";
  else if (change == StepRatio::Costlier)
    os << "together they lose " << llvm::format("%.0f%%", excess * 100)
       << " of a step to each other here";
  else
    os << "together they gain " << llvm::format("%.0f%%", -excess * 100)
       << " more here";
  return text;
}

/// "1.23G", "456M", "7.8K" or the number.
std::string human(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (value >= 1e9)
    os << llvm::format("%.2fG", value / 1e9);
  else if (value >= 1e6)
    os << llvm::format("%.2fM", value / 1e6);
  else if (value >= 1e3)
    os << llvm::format("%.1fK", value / 1e3);
  else
    os << llvm::format("%.0f", value);
  return text;
}

void CostReporter::printText(llvm::raw_ostream &os) {
  const Variant &base = variants.front();
  os << "composer-opt --report-costs " << inputPath
     << " --input-spec=" << llvm::join(options.inputSpecs, ",") << "\n";
  os << "training step: forward, mean of the output, backward; "
     << options.warmupSteps << " warm-up + " << options.timedSteps
     << " timed steps, median; method ops lowered to "
     << (options.lowerTo == LowerTo::Runtime ? "composer:: runtime ops"
                                             : "aten")
     << "\n";
  os << "peak: " << llvm::format("%.1f", peak.fp32) << " GFLOP/s fp32, "
     << llvm::format("%.1f", peak.bf16) << " bf16: " << peak.how << "\n\n";
  const char *kRow = "%-34s %5s %16s %16s %11s %6s %9s %6s %6s  %s\n";
  // llvm::format copies its arguments: pointers, not arrays.
  using Text = const char *;
  os << llvm::format(kRow, Text("variant"), Text("sites"),
                     Text("+params (elems)"), Text("+buffers (elems)"),
                     Text("FLOPs/step"), Text("x"), Text("step ms"), Text("x"),
                     Text("MFU"), Text("verdict"));
  double baseFlops = base.flops.total();
  for (const Variant &variant : variants) {
    std::string name =
        variant.kind == "model" ? "(model as given)" : variant.name;
    std::string params = std::to_string(variant.paramsAdded) + " (" +
                         human(double(variant.paramElementsAdded)) + ")";
    std::string buffers = std::to_string(variant.buffersAdded) + " (" +
                          human(double(variant.bufferElementsAdded)) + ")";
    std::string flops = human(variant.flops.total());
    if (variant.numUncounted || variant.numUnknownTripCounts)
      flops += "+";
    std::string flopRatio =
        baseFlops > 0
            ? llvm::formatv("{0:F2}", variant.flops.total() / baseFlops).str()
            : "-";
    std::string time = "-", timeX = "-", mfu = "-";
    if (!variant.stepSeconds.empty()) {
      double seconds = median(variant.stepSeconds);
      time = llvm::formatv("{0:F1}", seconds * 1e3).str();
      if (std::optional<double> ratio = timeRatio(variant))
        timeX = llvm::formatv("{0:F2}", *ratio).str();
      double rate = variant.flops.total() / seconds / 1e9;
      mfu = llvm::formatv("{0:F1}%",
                          100 * rate /
                              (variant.lowPrecision ? peak.bf16 : peak.fp32))
                .str();
    }
    os << llvm::format(
        kRow, name.c_str(),
        variant.kind == "model" ? "-" : std::to_string(variant.sites).c_str(),
        params.c_str(), buffers.c_str(), flops.c_str(), flopRatio.c_str(),
        time.c_str(), timeX.c_str(), mfu.c_str(), verdict(variant).c_str());
  }
  for (const Variant &variant : variants) {
    if (variant.numUncounted)
      os << "note: " << variant.name << ": " << variant.numUncounted
         << " ops of unknown size or without a cost model not counted "
            "(their FLOPs/step has a '+'), first "
         << variant.firstUncounted << "\n";
    if (variant.numUnknownTripCounts)
      os << "note: " << variant.name << ": " << variant.numUnknownTripCounts
         << " loops of unknown trip count counted once\n";
  }
  for (const Variant &variant : variants)
    if (std::string text = composition(variant); !text.empty())
      os << "composition: " << text << "\n";
  if (!notApplicable.empty())
    os << "not applicable (no site changed): "
       << llvm::join(notApplicable, ", ") << "\n";
  for (auto &[name, reason] : failures)
    os << "failed: " << name << ": " << reason << "\n";
}

llvm::json::Object CostReporter::toJson() {
  const Variant &base = variants.front();
  llvm::json::Array rows;
  for (const Variant &variant : variants) {
    llvm::json::Object row{
        {"name", variant.name},
        {"kind", variant.kind},
        {"sites", variant.sites},
        {"params_added", variant.paramsAdded},
        {"param_elements_added", variant.paramElementsAdded},
        {"buffers_added", variant.buffersAdded},
        {"buffer_elements_added", variant.bufferElementsAdded},
        {"forward_flops", variant.flops.forward},
        // Of forward_flops + backward_flops: attention's products and
        // softmax (lib/Analysis/Attention.h).
        {"attention_flops", variant.flops.attention},
        {"backward_flops", variant.flops.backward},
        {"flops", variant.flops.total()},
        {"flops_ratio",
         base.flops.total() > 0
             ? llvm::json::Value(variant.flops.total() / base.flops.total())
             : llvm::json::Value(nullptr)},
        {"uncounted_ops", int64_t(variant.numUncounted)},
        {"unknown_trip_count_loops", int64_t(variant.numUnknownTripCounts)},
        {"precision", variant.lowPrecision ? "bf16" : "fp32"},
        {"verdict", verdict(variant)},
    };
    if (variant.kind == "pipeline") {
      row["passes"] = llvm::json::Array(variant.parts);
      std::optional<double> product = partsTimeRatio(variant);
      row["passes_time_ratio_product"] =
          product ? llvm::json::Value(*product) : llvm::json::Value(nullptr);
    }
    if (variant.stepSeconds.empty()) {
      row["step_seconds"] = nullptr;
      row["time_ratio"] = nullptr;
      row["mfu"] = nullptr;
      row["no_time_reason"] = variant.noTime;
    } else {
      double seconds = median(variant.stepSeconds);
      row["step_seconds"] = seconds;
      row["step_samples"] = llvm::json::Array(variant.stepSeconds);
      row["noise"] = noise(variant);
      row["time_ratio"] =
          base.stepSeconds.empty()
              ? llvm::json::Value(nullptr)
              : llvm::json::Value(seconds / median(base.stepSeconds));
      row["mfu"] = variant.flops.total() / seconds / 1e9 /
                   (variant.lowPrecision ? peak.bf16 : peak.fp32);
    }
    rows.push_back(std::move(row));
  }
  llvm::json::Object report{
      {"model", inputPath},
      {"input_specs", llvm::json::Array(options.inputSpecs)},
      {"warmup_steps", options.warmupSteps},
      {"timed_steps", options.timedSteps},
      {"lower_to", options.lowerTo == LowerTo::Runtime ? "runtime" : "aten"},
      {"peak_gflops", llvm::json::Object{{"fp32", peak.fp32},
                                         {"bf16", peak.bf16},
                                         {"how", peak.how}}},
      {"variants", std::move(rows)},
      {"not_applicable", llvm::json::Array(notApplicable)},
  };
  llvm::json::Array failed;
  for (auto &[name, reason] : failures)
    failed.push_back(llvm::json::Object{{"name", name}, {"reason", reason}});
  report["failed"] = std::move(failed);
  return report;
}

LogicalResult CostReporter::choose(PipelineChoice &choice) {
  std::string error;
  std::optional<PipelineChoice> chosen = choosePipeline(toJson(), error);
  // Each round times one more set together; the chooser asks for at most
  // one per candidate.
  while (chosen && !chosen->untimed.empty()) {
    std::vector<std::string> passes = chosen->untimed;
    Variant together;
    together.name = getCombinationName(passes);
    together.kind = "pipeline";
    together.parts = passes;
    std::string reason;
    together.module = transform(
        [&](OpPassManager &pm) {
          return parsePassPipeline(llvm::join(passes, ","), pm);
        },
        together.sites, reason, together.counted);
    if (together.module) {
      compareState(together);
      measure(together);
      together.module = nullptr;
      together.counted = nullptr;
    } else {
      // Untimed, so that the chooser does not ask for it again.
      failures.emplace_back(together.name, reason);
      together.noTime = reason;
    }
    variants.push_back(std::move(together));
    chosen = choosePipeline(toJson(), error);
  }
  if (!chosen)
    return emitError(fileLoc, error);
  choice = std::move(*chosen);
  return success();
}

LogicalResult CostReporter::run(llvm::raw_ostream &os, PipelineChoice *choice) {
  if (options.inputSpecs.empty())
    return emitError(fileLoc,
                     "--report-costs needs --input-spec: FLOPs and step "
                     "times depend on the input shapes (e.g. "
                     "--input-spec=8x3x224x224xf32)");
  if (options.timedSteps == 0)
    return emitError(fileLoc, "--report-timed-steps must be at least 1");
  if (!options.peakGflops.empty()) {
    FailureOr<Peak> parsed = parsePeak(options.peakGflops, fileLoc);
    if (failed(parsed))
      return failure();
    peak = *parsed;
  } else {
    peak = detectPeak();
  }

  OwningOpRef<ModuleOp> read = io.read(inputPath);
  if (!read)
    return failure();
  {
    // Errors go on to the tool's handler; refine-types' remark does not.
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &diag) {
      return success(diag.getSeverity() != DiagnosticSeverity::Error);
    });
    PassManager pm(&context, ModuleOp::getOperationName());
    RefineTypesOptions refine;
    refine.inputSpecs = options.inputSpecs;
    pm.addPass(createRefineTypes(refine));
    if (failed(pm.run(*read)))
      return failure();
  }
  model = std::move(read);

  Variant base;
  base.name = "model";
  base.kind = "model";
  base.module = model->clone();
  measure(base);
  variants.push_back(std::move(base));

  // Registered composer pipelines: MLIR lists them nowhere but on the
  // command line, which knows every registered name.
  std::vector<std::string> pipelines;
  for (auto &entry : llvm::cl::getRegisteredOptions())
    if (entry.getKey().starts_with("composer-") &&
        PassPipelineInfo::lookup(entry.getKey()))
      pipelines.push_back(entry.getKey().str());
  llvm::sort(pipelines);
  auto addVariant = [&](StringRef name, StringRef kind, unsigned sites,
                        OwningOpRef<ModuleOp> module,
                        OwningOpRef<ModuleOp> counted) {
    Variant variant;
    variant.name = name.str();
    variant.kind = kind;
    variant.sites = sites;
    variant.module = std::move(module);
    variant.counted = std::move(counted);
    variants.push_back(std::move(variant));
  };
  for (StringRef name : getMethodPassArguments()) {
    const PassInfo *info = PassInfo::lookup(name);
    if (!info)
      continue; // Not registered in this tool.
    unsigned sites = 0;
    std::string reason;
    OwningOpRef<ModuleOp> counted;
    OwningOpRef<ModuleOp> module = transform(
        [&](OpPassManager &pm) {
          return info->addToPipeline(pm, "",
                                     [](const Twine &) { return failure(); });
        },
        sites, reason, counted);
    if (!module) {
      failures.emplace_back(name.str(), reason);
      continue;
    }
    if (sites == 0) {
      notApplicable.push_back(name.str());
      continue;
    }
    addVariant(name, "pass", sites, std::move(module), std::move(counted));
  }
  for (const std::string &name : pipelines) {
    unsigned sites = 0;
    std::string reason;
    OwningOpRef<ModuleOp> counted;
    std::vector<std::string> parts;
    OwningOpRef<ModuleOp> module = transform(
        [&](OpPassManager &pm) {
          if (failed(PassPipelineInfo::lookup(name)->addToPipeline(
                  pm, "", [](const Twine &) { return failure(); })))
            return failure();
          for (Pass &pass : pm.getPasses())
            parts.push_back(pass.getArgument().str());
          return success();
        },
        sites, reason, counted);
    if (!module) {
      failures.emplace_back(name, reason);
      continue;
    }
    addVariant(name, "pipeline", sites, std::move(module), std::move(counted));
    variants.back().parts = std::move(parts);
  }
  for (Variant &variant : llvm::drop_begin(variants)) {
    compareState(variant);
    measure(variant);
    // Keep memory for one model at a time.
    variant.module = nullptr;
    variant.counted = nullptr;
  }
  // The model is timed first and again last: with both sets of samples,
  // its spread (the noise the verdicts allow for) includes any drift of
  // the machine over the run.
  if (!variants.front().stepSeconds.empty()) {
    Variant again;
    again.module = model->clone();
    measure(again);
    llvm::append_range(variants.front().stepSeconds, again.stepSeconds);
  }
  if (choice && failed(this->choose(*choice)))
    return failure();
  variants.front().module = nullptr;

  if (options.json) {
    llvm::json::Object report = toJson();
    if (choice)
      report["pipeline_choice"] = choice->toJson();
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
    return success();
  }
  printText(os);
  if (choice) {
    os << "emitted pipeline (method passes that keep accuracy and pay "
          "here): "
       << choice->pipeline() << "\n";
    choice->print(os, "  ");
  }
  return success();
}

/// The report of a --cost-table: the saved report with the choice (JSON),
/// or the choice alone (text).
LogicalResult reportChoiceFromTable(MLIRContext &context,
                                    const CostReportOptions &options,
                                    llvm::raw_ostream &os,
                                    PipelineChoice &choice) {
  Location loc = FileLineColLoc::get(&context, options.costTablePath, 0, 0);
  auto buffer = llvm::MemoryBuffer::getFile(options.costTablePath);
  if (!buffer)
    return emitError(loc, "cannot read the cost table: ")
           << buffer.getError().message();
  llvm::Expected<llvm::json::Value> table =
      llvm::json::parse((*buffer)->getBuffer());
  if (!table)
    return emitError(loc, "the cost table is not JSON: ")
           << llvm::toString(table.takeError());
  llvm::json::Object *report = table->getAsObject();
  if (!report)
    return emitError(loc, "the cost table is not a --report-costs=json "
                          "report: expected an object");
  std::string error;
  std::optional<PipelineChoice> chosen = choosePipeline(*report, error);
  if (!chosen)
    return emitError(loc, "the cost table is ") << error;
  choice = std::move(*chosen);
  if (options.json) {
    (*report)["pipeline_choice"] = choice.toJson();
    os << llvm::formatv("{0:2}", *table) << "\n";
    return success();
  }
  os << "emitted pipeline (from the cost table " << options.costTablePath
     << "): " << choice.pipeline() << "\n";
  choice.print(os, "  ");
  return success();
}

} // namespace

StepRatio composer::classifyStepRatio(double ratio, double noise) {
  if (std::abs(ratio - 1) <= noise)
    return StepRatio::WithinNoise;
  return ratio < 1 ? StepRatio::Cheaper : StepRatio::Costlier;
}

LogicalResult composer::reportCosts(MLIRContext &context, StringRef inputPath,
                                    llvm::raw_ostream &os,
                                    const CostReportOptions &options,
                                    PipelineChoice *choice) {
  if (!options.costTablePath.empty()) {
    PipelineChoice fromTable;
    return reportChoiceFromTable(context, options, os,
                                 choice ? *choice : fromTable);
  }
  return CostReporter(context, inputPath, options).run(os, choice);
}
