//===- SiteReports.h - site reports as data ---------------------*- C++ -*-===//
//
// Every composer pass counts the sites it changed and the ones it skipped,
// with a reason, and says so in a remark ("composer-blurpool: 2 sites
// blurred, 1 skipped", a warning when nothing changed). The same numbers
// as data, for tools and bindings that must not parse remarks: add a
// SiteReportInstrumentation to the PassManager, run it, read the runs.
//
//   std::vector<composer::PassSiteReport> runs;
//   pm.addInstrumentation(
//       std::make_unique<composer::SiteReportInstrumentation>(runs));
//   if (failed(pm.run(module))) ...
//   for (const composer::PassSiteReport &run : runs) ...
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_SITEREPORTS_H
#define COMPOSER_PASSES_SITEREPORTS_H

#include "mlir/IR/Location.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/StringRef.h"

#include <mutex>
#include <string>
#include <vector>

namespace composer {

class SiteReport;

/// The sites a pass left unchanged for one reason.
struct SkippedSites {
  std::string reason;
  /// In the order the pass met them; never empty.
  std::vector<mlir::Location> sites;
};

/// One report of a pass: exactly the numbers of one remark (or warning) it
/// emitted, "<pass>: <changed> <what>, <getNumSkipped()> skipped". A pass
/// that changes sites of several kinds (ALiBi: attentions, position
/// embeddings, masks) emits one report per kind.
struct SiteCounts {
  /// What `changed` counts: "sites blurred".
  std::string what;
  unsigned changed = 0;
  /// One entry per reason, in the order of each reason's first site.
  std::vector<SkippedSites> skipped;
  /// How many of the sites (changed or skipped) are inside a branch of one
  /// of the model's own ifs: a traced model keeps only the branch it ran,
  /// so its counts can differ from the scripted model's by these.
  unsigned inBranches = 0;

  unsigned getNumSkipped() const;
};

/// What one run of a pass reported.
struct PassSiteReport {
  /// The pass's argument: "composer-blurpool".
  std::string pass;
  /// Whether the run failed; its reports are those emitted before it did
  /// (all-or-nothing passes emit none when they refuse).
  bool failed = false;
  /// In the order the pass emitted them; empty for a pass that reports
  /// nothing (a pass from outside composer).
  std::vector<SiteCounts> reports;

  /// Sites changed and skipped, over all the reports.
  unsigned getNumChanged() const;
  unsigned getNumSkipped() const;
};

/// Appends a PassSiteReport to `runs` for every run of a pass with an
/// argument (pass managers' adaptors have none) in the pass manager it is
/// added to, in the order the runs start, and gives it the reports the pass
/// emits during that run. Passes still emit their remarks: this only
/// records them. `runs` must outlive the pass manager's runs; runs on
/// several threads (nested pass managers) append under a lock.
class SiteReportInstrumentation : public mlir::PassInstrumentation {
public:
  explicit SiteReportInstrumentation(std::vector<PassSiteReport> &runs)
      : runs(runs) {}

  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override;

private:
  friend class SiteReport;

  /// Adds `counts`, a report of the pass named `passName`, to the run of
  /// that pass in progress on this thread in each instrumentation that
  /// records it; does nothing when the innermost run on this thread is not
  /// of that pass (a pass manager without the instrumentation runs it).
  static void record(llvm::StringRef passName, const SiteCounts &counts);

  std::vector<PassSiteReport> &runs;
  std::mutex mutex; // Guards `runs`.
};

} // namespace composer

#endif // COMPOSER_PASSES_SITEREPORTS_H
