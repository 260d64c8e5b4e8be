//===- PipelineChoice.h - the method passes that pay on a model -*- C++ -*-===//
//
// composer-opt --report-costs --emit-pipeline: from a cost report, the
// method passes worth running on this model and machine without asking the
// user. A candidate is a method pass declared to keep accuracy
// (MethodPass's `keepsAccuracy`); it is chosen when its measured step time
// beats the model's by more than the noise the report measured. The choice
// reads the report's JSON object only, so a saved report (--cost-table)
// gives the same choice on any machine.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_API_PIPELINECHOICE_H
#define COMPOSER_API_PIPELINECHOICE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace composer {

struct PipelineCandidate {
  std::string pass;
  /// The step time against the model's, and the noise allowed in comparing
  /// them, where the report timed the pass.
  std::optional<double> timeRatio;
  double noise = 0;
  bool chosen = false;
  /// Why it is or is not chosen, in words.
  std::string reason;
};

struct PipelineChoice {
  /// Every method pass that keeps accuracy, in the report's order.
  std::vector<PipelineCandidate> candidates;
  /// The chosen passes, in pipeline order.
  std::vector<std::string> passes;
  /// Of the chosen passes together, where the report timed them so.
  std::optional<double> combinedRatio;
  /// How the set was settled, when the passes that pay alone were timed
  /// together.
  std::string combination;

  /// `builtin.module(...)`, what --pass-pipeline and --pass-pipeline-file
  /// read.
  std::string pipeline() const;
  /// The candidates, one line each, and the combination.
  void print(llvm::raw_ostream &os, llvm::StringRef linePrefix) const;
  /// For the JSON report.
  llvm::json::Object toJson() const;
};

/// Chooses from `report`, a --report-costs=json object. Fails with the
/// reason in `error` when the report is not one.
std::optional<PipelineChoice> choosePipeline(const llvm::json::Object &report,
                                             std::string &error);

/// The variant name under which a report times a chosen set together.
inline constexpr llvm::StringLiteral kChosenPipelineName = "chosen";

} // namespace composer

#endif // COMPOSER_API_PIPELINECHOICE_H
