//===- PipelineChoice.h - the method passes that pay on a model -*- C++ -*-===//
//
// composer-opt --report-costs --emit-pipeline: from a cost report, the
// method passes worth running on this model and machine without asking the
// user. A candidate is a method pass declared to keep accuracy
// (MethodPass's `keepsAccuracy`); it pays alone when its measured step time
// beats the model's by more than the noise the report measured. Passes that
// pay alone need not pay together (a layout that one kernel library prefers
// in fp32 may not suit its bf16 kernels), so they are added greedily: the
// best alone first, then each next best only if the set with it, timed
// together, beats the set without it beyond the noise. The choice reads the
// report's JSON object only, so a saved report (--cost-table) gives the
// same choice on any machine; a set the report did not time together is
// named in `untimed`, for a reporter to time and choose again.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_API_PIPELINECHOICE_H
#define COMPOSER_API_PIPELINECHOICE_H

#include "llvm/ADT/ArrayRef.h"
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
  /// Of the chosen passes together, when there are several.
  std::optional<double> combinedRatio;
  /// How the set grew, one line per pass tried with it.
  std::vector<std::string> combination;
  /// The next set to try, which the report has not timed together.
  std::vector<std::string> untimed;

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

/// The name of the report's row that times `passes` together:
/// "channels-last+mixed-precision". A row of kind "pipeline" with these
/// `passes` is found by them, whatever its name.
std::string getCombinationName(llvm::ArrayRef<std::string> passes);

} // namespace composer

#endif // COMPOSER_API_PIPELINECHOICE_H
