//===- GhostBatchNorm.cpp - batch norm over ghost batches -----------------===//
//
// Ghost BatchNorm (Hoffer et al. 2017) as METHODS.md states it: every
// batch_norm in the graph normalizes training batches chunk by chunk.
//
//===----------------------------------------------------------------------===//

#include "composer/Passes/Passes.h"
#include "composer/Passes/Report.h"

#include "mlir/IR/Builders.h"

namespace composer {
#define GEN_PASS_DEF_GHOSTBATCHNORM
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

struct GhostBatchNormPass
    : public composer::impl::GhostBatchNormBase<GhostBatchNormPass> {
  using GhostBatchNormBase::GhostBatchNormBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ghostBatchSize < 1) {
      module.emitError("composer-ghost-batchnorm: ghost-batch-size must be "
                       ">= 1, got ")
          << static_cast<int64_t>(ghostBatchSize);
      return signalPassFailure();
    }
    SiteReport report(module, getArgument());
    SmallVector<BatchNormOp> sites;
    module.walk([&](BatchNormOp bn) { sites.push_back(bn); });
    for (BatchNormOp bn : sites) {
      OpBuilder builder(bn);
      auto ghost = builder.create<GhostBatchNormOp>(
          bn.getLoc(), bn.getType(), bn.getInput(), bn.getWeight(),
          bn.getBias(), bn.getRunningMean(), bn.getRunningVar(),
          bn.getTraining(), bn.getMomentum(), bn.getEpsAttr(),
          bn.getCudnnEnabledAttr(), builder.getI64IntegerAttr(ghostBatchSize));
      bn.replaceAllUsesWith(ghost.getResult());
      report.match(bn);
      bn.erase();
    }
    report.emit("batch norms made ghost");
  }
};

} // namespace
