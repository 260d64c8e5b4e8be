//===- Report.cpp - per-pass site report ----------------------------------===//

#include "Report.h"

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace composer;

void SiteReport::countBranch(Operation *site) {
  // Only the model's own ifs: a method's random condition's ifs exist in
  // every form of the model alike.
  auto isModelIf = [](Operation *op) {
    auto ifOp = dyn_cast<IfOp>(op);
    return ifOp && !ifOp.getCondition().getDefiningOp<RandomConditionOp>();
  };
  Operation *parent = site ? site->getParentOp() : nullptr;
  while (parent && !isModelIf(parent))
    parent = parent->getParentOp();
  if (!parent)
    return;
  if (counts.inBranches++ == 0)
    firstInBranch = site->getLoc();
}

void SiteReport::skip(Operation *site, StringRef reason) {
  countBranch(site);
  for (SkippedSites &skips : counts.skipped) {
    if (skips.reason == reason) {
      skips.sites.push_back(site->getLoc());
      return;
    }
  }
  counts.skipped.push_back(SkippedSites{reason.str(), {site->getLoc()}});
}

void SiteReport::emit(StringRef matchedWhat) const {
  // Emitted at the anchor's location rather than on the op, so that tools
  // printing the op on diagnostics do not dump the whole module.
  Location loc = anchor->getLoc();
  InFlightDiagnostic diag = counts.changed ? emitRemark(loc) : emitWarning(loc);
  diag << passName << ": " << counts.changed << " " << matchedWhat << ", "
       << getNumSkipped() << " skipped";
  for (const SkippedSites &skips : counts.skipped)
    diag.attachNote(skips.sites.front())
        << skips.sites.size() << " skipped: " << skips.reason;
  // A script keeps both branches of an if that depends on a module's
  // attributes (nn.MultiheadAttention's fused and op-by-op paths, say); a
  // trace records the branch it ran.
  if (counts.inBranches)
    diag.attachNote(firstInBranch)
        << counts.inBranches << " of these sites are inside an if's branches: "
        << "a scripted model keeps every branch, a traced one only the branch "
           "it ran, so their counts can differ";
  SiteCounts reported = counts;
  reported.what = matchedWhat.str();
  SiteReportInstrumentation::record(passName, reported);
}
