//===- Report.cpp - per-pass site report ----------------------------------===//

#include "Report.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace composer;

void SiteReport::skip(Operation *site, StringRef reason) {
  for (Skips &skips : skipped) {
    if (skips.reason == reason) {
      ++skips.count;
      return;
    }
  }
  skipped.push_back(Skips{reason.str(), 1, site->getLoc()});
}

unsigned SiteReport::getNumSkipped() const {
  unsigned total = 0;
  for (const Skips &skips : skipped)
    total += skips.count;
  return total;
}

void SiteReport::emit(StringRef matchedWhat) const {
  // Emitted at the anchor's location rather than on the op, so that tools
  // printing the op on diagnostics do not dump the whole module.
  Location loc = anchor->getLoc();
  InFlightDiagnostic diag = matched ? emitRemark(loc) : emitWarning(loc);
  diag << passName << ": " << matched << " " << matchedWhat << ", "
       << getNumSkipped() << " skipped";
  for (const Skips &skips : skipped)
    diag.attachNote(skips.firstSite)
        << skips.count << " skipped: " << skips.reason;
}
