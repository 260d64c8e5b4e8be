//===- MixedPrecision.cpp - autocast as a graph rewrite -------------------===//
//
// Casts inserted on use, as torch.autocast does at run time (Autocast.h):
// matmul-like ops in the low dtype, numerically sensitive ops in fp32, the
// rest following their inputs.
//
//===----------------------------------------------------------------------===//

#include "Autocast.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

namespace composer {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

struct MixedPrecisionPass
    : public composer::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SiteReport report(module, getArgument());
    // low-precision-norms is composer-low-precision-norms folded in.
    AutocastRewriter(&getContext(), dtype, lowPrecisionNorms, device)
        .run(module, report, [](Operation *) { return true; });
    report.emit("ops given their autocast dtype");
  }
};

} // namespace
