//===- CostReport.h - what each method costs on a model ---------*- C++ -*-===//
//
// What each method costs on a model and this machine: for the model as
// given, each method pass alone that changes it, and each named pipeline,
// the sites changed, the parameters and buffers added, forward+backward
// FLOPs per step (FlopCountAnalysis), the measured training-step time (the
// exported model run through LibTorch) as a ratio to the model as given, a
// verdict in words, and the achieved FLOP rate against the machine's peak.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_API_COSTREPORT_H
#define COMPOSER_API_COSTREPORT_H

#include "composer/API/ModelIO.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace composer {

struct CostReportOptions {
  bool json = false;
  std::vector<std::string> inputSpecs;
  std::vector<std::string> operatorLibraries;
  uint64_t maxOps = 0;
  unsigned warmupSteps = 3;
  unsigned timedSteps = 5;
  /// How the timed models lower method ops: aten (the default, also for
  /// None) or the fused composer:: runtime ops.
  LowerTo lowerTo = LowerTo::Aten;
  /// The --peak-gflops text, empty for the table's value.
  std::string peakGflops;
  /// A saved --report-costs=json report to choose the pipeline from,
  /// instead of measuring the model (--cost-table).
  std::string costTablePath;
};

struct PipelineChoice;

/// How a step-time ratio (a variant's median over the model's) compares
/// with 1, given the noise allowed between the two medians: the one rule of
/// the report's verdicts, its composition lines and --emit-pipeline.
enum class StepRatio { Cheaper, WithinNoise, Costlier };
StepRatio classifyStepRatio(double ratio, double noise);

/// Measures the model at `inputPath` and writes the report (composer-opt
/// --report-costs) to `os`, as JSON or text as `options` says. With
/// `choice`, also chooses the method passes that pay (PipelineChoice.h)
/// into it and adds the choice to the report; with a cost table, chooses
/// from the table instead of measuring. Errors are diagnostics in
/// `context`.
mlir::LogicalResult reportCosts(mlir::MLIRContext &context,
                                llvm::StringRef inputPath,
                                llvm::raw_ostream &os,
                                const CostReportOptions &options,
                                PipelineChoice *choice = nullptr);

} // namespace composer

#endif // COMPOSER_API_COSTREPORT_H
