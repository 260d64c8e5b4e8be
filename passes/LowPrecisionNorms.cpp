//===- LowPrecisionNorms.cpp - layer and group norm in bf16/fp16 ----------===//
//
// Composer's low-precision LayerNorm/GroupNorm: under mixed precision, the
// norms run with input, weight and bias in the low dtype (the kernel
// accumulates in fp32) instead of autocast's fp32. It re-runs the autocast
// rewrite with norms in the low dtype, so the casts around them stay
// consistent with what mixed precision decided.
//
//===----------------------------------------------------------------------===//

#include "Autocast.h"
#include "Report.h"
#include "composer/Passes/Passes.h"

namespace composer {
#define GEN_PASS_DEF_LOWPRECISIONNORMS
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

struct LowPrecisionNormsPass
    : public composer::impl::LowPrecisionNormsBase<LowPrecisionNormsPass> {
  using LowPrecisionNormsBase::LowPrecisionNormsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SiteReport report(module, getArgument());
    // Without mixed precision there is no low dtype to run norms in, as in
    // Composer, where the method only acts under autocast.
    bool mixedPrecision = false;
    module.walk(
        [&](ToDtypeOp cast) { mixedPrecision |= cast.getDtype() == dtype; });
    if (!mixedPrecision) {
      module.walk([&](Operation *op) {
        if (isLayerOrGroupNorm(op))
          report.skip(op, "no mixed precision to this dtype in the model "
                          "(run composer-mixed-precision with the same "
                          "dtype first)");
      });
    } else {
      AutocastRewriter(&getContext(), dtype, /*lowNorms=*/true)
          .run(module, report, isLayerOrGroupNorm);
    }
    report.emit("norms given the low-precision dtype");
  }
};

} // namespace
