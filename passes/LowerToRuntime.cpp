//===- LowerToRuntime.cpp - method ops as composer:: runtime ops ----------===//
//
// Rewrites each method op into one call of its operator in the runtime
// library (docs/runtime-ops.md): a dialect conversion with the runtime
// patterns every method registers (MethodLowering.h). Patterns that fold a
// neighbour into the call (a fusion) carry, as debug label, what the report
// counts them as ("max pools fused").
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "composer/Passes/Passes.h"

namespace composer {
#define GEN_PASS_DEF_LOWERTORUNTIME
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

struct LowerToRuntimePass
    : public composer::impl::LowerToRuntimeBase<LowerToRuntimePass> {
  void runOnOperation() override {
    if (failed(lowerMethodOps(getOperation(), getArgument(),
                              &MethodLowering::populateToRuntimePatterns,
                              "method ops lowered to runtime ops")))
      signalPassFailure();
  }
};

} // namespace
