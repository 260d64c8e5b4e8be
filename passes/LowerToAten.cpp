//===- LowerToAten.cpp - method ops as plain aten ops ---------------------===//
//
// Expands each method op into the aten ops that compute it, so the exported
// model needs no library beyond stock PyTorch: a dialect conversion with the
// aten patterns every method registers (MethodLowering.h).
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "composer/Passes/Passes.h"

namespace composer {
#define GEN_PASS_DEF_LOWERTOATEN
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

struct LowerToAtenPass
    : public composer::impl::LowerToAtenBase<LowerToAtenPass> {
  void runOnOperation() override {
    if (failed(lowerMethodOps(getOperation(), getArgument(),
                              &MethodLowering::populateToAtenPatterns,
                              "method ops lowered to aten")))
      signalPassFailure();
  }
};

} // namespace
