//===- FlopCountTest.cpp - FlopCountAnalysis ------------------------------===//
//
// What the lit tests of --report-costs do not reach: expectations over
// stochastic depth's branches, generic matmuls by schema name, and ops of
// unknown size, which are listed rather than counted as 0.
//
//===----------------------------------------------------------------------===//

#include "composer/Analysis/FlopCount.h"
#include "composer/Dialect/Composer.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace composer;

namespace {

class FlopCountTest : public ::testing::Test {
protected:
  FlopCountTest() { ctx.loadDialect<ComposerDialect, func::FuncDialect>(); }

  FlopCounts count(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &ctx);
    EXPECT_TRUE(module);
    return module ? countFlops(*module) : FlopCounts();
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

TEST_F(FlopCountTest, BlockStochasticDepthCountsItsExpectation) {
  // The branch, a linear 8->8 with no bias on 2x8 (2 * 16 * 8 = 256 FLOPs
  // forward; backward: its input needs no gradient, its weight does: 256),
  // runs with probability 1 - 0.25.
  FlopCounts counts = count(R"mlir(
    composer.parameter @w : !composer.tensor<8x8xf32>
    func.func @forward(%x: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> {
      %t = composer.get_attr "training" : !composer.bool
      %keep = composer.stochastic_depth_keep %t {drop_rate = 2.5e-01 : f64} : (!composer.bool) -> !composer.bool
      %r = composer.if %keep -> (!composer.tensor<2x8xf32>) {
        %none = composer.constant(none) : !composer.none
        %w = composer.get_param @w : !composer.tensor<8x8xf32>
        %y = composer.linear %x, %w, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32>
        composer.yield %y : !composer.tensor<2x8xf32>
      } else {
        composer.yield %x : !composer.tensor<2x8xf32>
      }
      return %r : !composer.tensor<2x8xf32>
    }
  )mlir");
  EXPECT_TRUE(counts.complete());
  EXPECT_DOUBLE_EQ(counts.forward, 0.75 * 256);
  EXPECT_DOUBLE_EQ(counts.backward, 0.75 * 256);
}

TEST_F(FlopCountTest, GenericMatmulByItsSchema) {
  // aten::mm of the data 4x6 and a trainable 6x5: 2 * 4 * 5 * 6 = 240
  // forward; backward, no gradient for the data, 240 for the weight.
  FlopCounts counts = count(R"mlir(
    composer.parameter @w : !composer.tensor<6x5xf32>
    func.func @forward(%x: !composer.tensor<4x6xf32>) -> !composer.tensor<4x5xf32> {
      %w = composer.get_param @w : !composer.tensor<6x5xf32>
      %y = composer.op "aten::mm"(%x, %w) : (!composer.tensor<4x6xf32>, !composer.tensor<6x5xf32>) -> !composer.tensor<4x5xf32>
      return %y : !composer.tensor<4x5xf32>
    }
  )mlir");
  EXPECT_TRUE(counts.complete());
  EXPECT_DOUBLE_EQ(counts.forward, 240);
  EXPECT_DOUBLE_EQ(counts.backward, 240);
}

TEST_F(FlopCountTest, UnknownSizesAreListedNotCountedAsZero) {
  FlopCounts counts = count(R"mlir(
    composer.parameter @w : !composer.tensor<8x8xf32>
    func.func @forward(%x: !composer.tensor) -> !composer.tensor {
      %none = composer.constant(none) : !composer.none
      %w = composer.get_param @w : !composer.tensor<8x8xf32>
      %y = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor
      %r = composer.relu %y : (!composer.tensor) -> !composer.tensor
      return %r : !composer.tensor
    }
  )mlir");
  EXPECT_FALSE(counts.complete());
  EXPECT_EQ(counts.uncounted.size(), 2u);
  EXPECT_DOUBLE_EQ(counts.forward, 0);
}

} // namespace
