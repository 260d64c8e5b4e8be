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
      : anchor(anchor), passName(passName.str()) {}

  void match(mlir::Operation *) { ++matched; }
  /// Counts sites matched elsewhere (by a conversion's patterns).
  void addMatches(unsigned count) { matched += count; }
  void skip(mlir::Operation *site, llvm::StringRef reason);

  unsigned getNumMatched() const { return matched; }
  unsigned getNumSkipped() const;

  /// Emits "<pass>: N <matchedWhat>, M skipped (...)" as a remark, or as a
  /// warning when nothing matched. Each skip reason gets a note at its first
  /// site.
  void emit(llvm::StringRef matchedWhat) const;

private:
  struct Skips {
    std::string reason;
    unsigned count;
    mlir::Location firstSite;
  };
  mlir::Operation *anchor;
  std::string passName;
  unsigned matched = 0;
  std::vector<Skips> skipped; // In order of first occurrence.
};

} // namespace composer

#endif // COMPOSER_PASSES_REPORT_H
