//===- FlopCountTest.cpp - FlopCountAnalysis ------------------------------===//
//
// What the lit tests of --report-costs do not reach: expectations over
// stochastic depth's branches, generic matmuls by schema name, and ops of
// unknown size, which are listed rather than counted as 0, and attention's
// share of the count.
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

TEST_F(FlopCountTest, AttentionIsCountedApart) {
  // 2 batches of 4 heads, 6 tokens of 8 features: q k^T and p v take
  // 2 * (2 * 4 * 6 * 6 * 8) = 4608 FLOPs each, the softmax 5 per score
  // (2 * 4 * 6 * 6 = 288 scores); the scaling and the projection after
  // (2 * (2 * 4 * 6 * 8 * 8) = 6144) are not attention. Only the
  // projection's weight needs a gradient.
  FlopCounts counts = count(R"mlir(
    composer.parameter @w : !composer.tensor<8x8xf32>
    func.func @forward(%q: !composer.tensor<2x4x6x8xf32>, %kt: !composer.tensor<2x4x8x6xf32>, %v: !composer.tensor<2x4x6x8xf32>) -> !composer.tensor<2x4x6x8xf32> {
      %s = composer.matmul %q, %kt : (!composer.tensor<2x4x6x8xf32>, !composer.tensor<2x4x8x6xf32>) -> !composer.tensor<2x4x6x6xf32>
      %scale = composer.constant(dense<0.353553385> : tensor<f32>) : !composer.tensor<f32>
      %scaled = composer.mul %s, %scale : (!composer.tensor<2x4x6x6xf32>, !composer.tensor<f32>) -> !composer.tensor<2x4x6x6xf32>
      %p = composer.softmax %scaled {dim = -1 : i64} : (!composer.tensor<2x4x6x6xf32>) -> !composer.tensor<2x4x6x6xf32>
      %y = composer.matmul %p, %v : (!composer.tensor<2x4x6x6xf32>, !composer.tensor<2x4x6x8xf32>) -> !composer.tensor<2x4x6x8xf32>
      %w = composer.get_param @w : !composer.tensor<8x8xf32>
      %o = composer.matmul %y, %w : (!composer.tensor<2x4x6x8xf32>, !composer.tensor<8x8xf32>) -> !composer.tensor<2x4x6x8xf32>
      return %o : !composer.tensor<2x4x6x8xf32>
    }
  )mlir");
  EXPECT_TRUE(counts.complete());
  EXPECT_DOUBLE_EQ(counts.attention, 2 * 4608 + 5 * 288);
  EXPECT_DOUBLE_EQ(counts.forward, counts.attention + 288 + 6144);
  EXPECT_DOUBLE_EQ(counts.backward, 6144);
}

} // namespace
