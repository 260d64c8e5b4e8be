//===- Report.h - per-pass site report --------------------------*- C++ -*-===//
//
// The project's replacement for MLIR pass statistics, which Debian's LLVM
// build leaves empty: each pass counts the sites it matched and the ones it
// skipped with a reason, and says so as a remark on the module (a warning
// when nothing matched), so tools print it and lit tests can check it.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_REPORT_H
#define COMPOSER_PASSES_REPORT_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace composer {

class SiteReport {
public:
  SiteReport(mlir::Operation *anchor, llvm::StringRef passName)
      : anchor(anchor), passName(passName.str()),
        firstInBranch(anchor->getLoc()) {}

  void match(mlir::Operation *site) {
    ++matched;
    countBranch(site);
  }
  /// Counts sites matched elsewhere (by a conversion's patterns).
  void addMatches(unsigned count) { matched += count; }
  void skip(mlir::Operation *site, llvm::StringRef reason);

  unsigned getNumMatched() const { return matched; }
  unsigned getNumSkipped() const;

  /// Emits "<pass>: N <matchedWhat>, M skipped (...)" as a remark, or as a
  /// warning when nothing matched. Each skip reason gets a note at its first
  /// site, and sites inside an if's branches one that says why scripted and
  /// traced forms of a model can count differently.
  void emit(llvm::StringRef matchedWhat) const;

private:
  /// Counts `site` if it is inside a branch of one of the model's ifs.
  void countBranch(mlir::Operation *site);

  struct Skips {
    std::string reason;
    unsigned count;
    mlir::Location firstSite;
  };
  mlir::Operation *anchor;
  std::string passName;
  unsigned matched = 0;
  std::vector<Skips> skipped; // In order of first occurrence.
  unsigned inBranches = 0;
  mlir::Location firstInBranch;
};

} // namespace composer

#endif // COMPOSER_PASSES_REPORT_H
