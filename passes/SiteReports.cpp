//===- SiteReports.cpp - site reports as data -----------------------------===//
//
// A pass runs on one thread from its runBeforePass to its runAfterPass (or
// runAfterPassFailed), and emits its reports on that thread: so a
// thread-local stack of the runs in progress tells a report's run, nested
// pass managers included, without passes knowing of the instrumentation.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/SiteReports.h"

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cassert>

using namespace mlir;
using namespace composer;

unsigned SiteCounts::getNumSkipped() const {
  unsigned total = 0;
  for (const SkippedSites &skips : skipped)
    total += skips.sites.size();
  return total;
}

unsigned PassSiteReport::getNumChanged() const {
  unsigned total = 0;
  for (const SiteCounts &counts : reports)
    total += counts.changed;
  return total;
}

unsigned PassSiteReport::getNumSkipped() const {
  unsigned total = 0;
  for (const SiteCounts &counts : reports)
    total += counts.getNumSkipped();
  return total;
}

namespace {

/// A run in progress: its entry `index` in `sink`'s runs.
struct ActiveRun {
  SiteReportInstrumentation *sink;
  Pass *pass;
  size_t index;
};

/// The runs in progress on this thread, innermost last.
thread_local llvm::SmallVector<ActiveRun, 4> activeRuns;

/// Whether runs of `pass` are recorded: adaptors (nested pass managers)
/// have no argument and report nothing.
bool isRecorded(Pass *pass) { return !pass->getArgument().empty(); }

} // namespace

void SiteReportInstrumentation::runBeforePass(Pass *pass, Operation *) {
  if (!isRecorded(pass))
    return;
  size_t index;
  {
    std::lock_guard<std::mutex> lock(mutex);
    index = runs.size();
    runs.push_back(PassSiteReport{pass->getArgument().str(), false, {}});
  }
  activeRuns.push_back(ActiveRun{this, pass, index});
}

void SiteReportInstrumentation::runAfterPass(Pass *pass, Operation *) {
  if (!isRecorded(pass))
    return;
  assert(!activeRuns.empty() && activeRuns.back().sink == this &&
         activeRuns.back().pass == pass && "runs end in the reverse order");
  activeRuns.pop_back();
}

void SiteReportInstrumentation::runAfterPassFailed(Pass *pass, Operation *op) {
  if (!isRecorded(pass))
    return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    runs[activeRuns.back().index].failed = true;
  }
  runAfterPass(pass, op);
}

void SiteReportInstrumentation::record(StringRef passName,
                                       const SiteCounts &counts) {
  if (activeRuns.empty() || activeRuns.back().pass->getArgument() != passName)
    return;
  // Each instrumentation of the pass manager pushed its own entry for the
  // innermost run.
  Pass *innermost = activeRuns.back().pass;
  for (ActiveRun &run : llvm::reverse(activeRuns)) {
    if (run.pass != innermost)
      break;
    std::lock_guard<std::mutex> lock(run.sink->mutex);
    run.sink->runs[run.index].reports.push_back(counts);
  }
}
