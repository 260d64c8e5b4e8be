//===- Report.h - per-pass site report --------------------------*- C++ -*-===//
//
// The project's replacement for MLIR pass statistics, which Debian's LLVM
// build leaves empty: each pass counts the sites it matched and the ones it
// skipped with a reason, and says so as a remark on the module (a warning
// when nothing matched), so tools print it and lit tests can check it. The
// same numbers go, as data, to any SiteReportInstrumentation of the pass
// manager (composer/Passes/SiteReports.h).
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_REPORT_H
#define COMPOSER_PASSES_REPORT_H

#include "composer/Passes/SiteReports.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace composer {

class SiteReport {
public:
  SiteReport(mlir::Operation *anchor, llvm::StringRef passName)
      : anchor(anchor), passName(passName.str()),
        firstInBranch(anchor->getLoc()) {}

  void match(mlir::Operation *site) {
    ++counts.changed;
    countBranch(site);
  }
  /// Counts sites matched elsewhere (by a conversion's patterns).
  void addMatches(unsigned count) { counts.changed += count; }
  void skip(mlir::Operation *site, llvm::StringRef reason);

  unsigned getNumMatched() const { return counts.changed; }
  unsigned getNumSkipped() const { return counts.getNumSkipped(); }

  /// Emits "<pass>: N <matchedWhat>, M skipped (...)" as a remark, or as a
  /// warning when nothing matched. Each skip reason gets a note at its first
  /// site, and sites inside an if's branches one that says why scripted and
  /// traced forms of a model can count differently. Records the counts,
  /// with `matchedWhat`, in the pass's run (SiteReportInstrumentation).
  void emit(llvm::StringRef matchedWhat) const;

private:
  /// Counts `site` if it is inside a branch of one of the model's ifs.
  void countBranch(mlir::Operation *site);

  mlir::Operation *anchor;
  std::string passName;
  /// All but `what`, which emit gives.
  SiteCounts counts;
  mlir::Location firstInBranch;
};

} // namespace composer

#endif // COMPOSER_PASSES_REPORT_H
