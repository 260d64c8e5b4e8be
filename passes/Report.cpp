//===- Report.cpp - per-pass site report ----------------------------------===//

#include "Report.h"

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace composer;

void SiteReport::countBranch(Operation *site) {
  // Only the model's own ifs: stochastic depth's (decided by
  // stochastic_depth_keep) exist in both forms alike.
  auto isModelIf = [](Operation *op) {
    auto ifOp = dyn_cast<IfOp>(op);
    return ifOp && !ifOp.getCondition().getDefiningOp<StochasticDepthKeepOp>();
  };
  Operation *parent = site ? site->getParentOp() : nullptr;
  while (parent && !isModelIf(parent))
    parent = parent->getParentOp();
  if (!parent)
    return;
  if (inBranches++ == 0)
    firstInBranch = site->getLoc();
}

void SiteReport::skip(Operation *site, StringRef reason) {
  countBranch(site);
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
  // A script keeps both branches of an if that depends on a module's
  // attributes (nn.MultiheadAttention's fused and op-by-op paths, say); a
  // trace records the branch it ran.
  if (inBranches)
    diag.attachNote(firstInBranch)
        << inBranches << " of these sites are inside an if's branches: a "
        << "scripted model keeps every branch, a traced one only the branch "
           "it ran, so their counts can differ";
}
