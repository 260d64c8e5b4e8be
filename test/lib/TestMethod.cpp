//===- TestMethod.cpp - composer-test-mark-activations --------------------===//
//
// The pass, its op and both lowerings of a method built only for tests
// (TestMethod.td), as a plugin: `composer-opt
// --load-dialect-plugin=ComposerTestMethod.so
// --load-pass-plugin=ComposerTestMethod.so`. Everything a method needs is in
// this file and the .td beside it.
//
//===----------------------------------------------------------------------===//

#include "MethodLowering.h"
#include "PassUtils.h"
#include "Report.h"
#include "composer/Analysis/PointwiseFunction.h"
#include "composer/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "TestMethodDialect.h.inc"

#define GET_OP_CLASSES
#include "TestMethodOps.h.inc"

namespace composer::test {
#define GEN_PASS_DECL_TESTMARKACTIVATIONS
#define GEN_PASS_DEF_TESTMARKACTIVATIONS
#define GEN_PASS_REGISTRATION
#include "TestMethodPasses.h.inc"
} // namespace composer::test

#include "TestMethodDialect.cpp.inc"

#define GET_OP_CLASSES
#include "TestMethodOps.cpp.inc"

using namespace mlir;
using namespace composer;
using namespace composer::test;

void ComposerTestDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "TestMethodOps.cpp.inc"
      >();
}

FlopCost MarkOp::getFlopCost() { return FlopCost::none(); }

namespace {

/// A mark after an activation.
struct MarkActivation : RewritePattern {
  MarkActivation(MLIRContext *ctx, SiteReport &report)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        report(report) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isActivationOp(op) ||
        !isa<TorchTensorType>(op->getResult(0).getType()))
      return failure();
    Value activation = op->getResult(0);
    if (activation.hasOneUse() && isa<MarkOp>(*activation.user_begin())) {
      report.skip(op, "already marked");
      return failure();
    }
    rewriter.setInsertionPointAfter(op);
    auto mark =
        rewriter.create<MarkOp>(op->getLoc(), activation.getType(), activation);
    rewriter.replaceAllUsesExcept(activation, mark.getResult(), mark);
    report.match(op);
    return success();
  }

  SiteReport &report;
};

struct TestMarkActivationsPass
    : composer::test::impl::TestMarkActivationsBase<TestMarkActivationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SiteReport report(module, getArgument());
    RewritePatternSet patterns(&getContext());
    patterns.add<MarkActivation>(&getContext(), report);
    applyPatternsOnce(module, std::move(patterns));
    report.emit("activations marked");
  }
};

/// Both lowerings: the mark is a copy of its input. (A lowering builds new
/// ops: the drivers relax a method op's refined result type, which its
/// input would not match.)
struct MarkToClone : OpConversionPattern<MarkOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(MarkOp mark, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    AtenBuilder aten(rewriter, mark.getLoc());
    rewriter.replaceOp(mark, aten.node(AtenKind::clone,
                                       {adaptor.getInput(), aten.none()},
                                       TorchTensorType::get(getContext())));
    return success();
  }
};

} // namespace

static void populateMarkPatterns(RewritePatternSet &patterns) {
  patterns.add<MarkToClone>(patterns.getContext());
}

static constexpr MethodPassDeclaration kTestMethodPasses[] = {
#include "TestMethodPassList.h.inc"
};
static MethodPassRegistration testMethodPasses(kTestMethodPasses);

static MethodLoweringRegistration markLowering({"test-mark-activations",
                                                populateMarkPatterns,
                                                populateMarkPatterns});

// The pass plugin registers the pass; the dialect plugin registers its op's
// dialect with composer-opt's registry, which a .pt's export parses into.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "ComposerTestMethod", "1",
          [] { composer::test::registerTestMarkActivations(); }};
}

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "ComposerTestMethod", "1",
          [](DialectRegistry *registry) {
            registry->insert<ComposerTestDialect>();
          }};
}
