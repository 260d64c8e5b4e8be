//===- GraphFormsTest.cpp - Projection, PointwiseFunction, Attention ------===//
//
// The forms of linears, activations and attention that the method passes
// recognise through lib/Analysis, and the near misses they must not take
// for one.
//
//===----------------------------------------------------------------------===//

#include "composer/Analysis/Attention.h"
#include "composer/Analysis/PointwiseFunction.h"
#include "composer/Analysis/Projection.h"
#include "composer/Dialect/Composer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace composer;

namespace {

class GraphFormsTest : public ::testing::Test {
protected:
  GraphFormsTest() { ctx.loadDialect<ComposerDialect, func::FuncDialect>(); }

  void parse(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &ctx);
    ASSERT_TRUE(module);
  }

  /// The result of the `index`th op of `kind` (an op name, or a generic
  /// op's aten kind) in walk order.
  Value result(StringRef kind, unsigned index = 0) {
    Value found;
    module->walk([&](Operation *op) {
      auto generic = dyn_cast<GenericOp>(op);
      StringRef name =
          generic ? generic.getKind() : op->getName().getStringRef();
      if (name == kind && op->getNumResults() == 1 && index-- == 0)
        found = op->getResult(0);
    });
    return found;
  }

  BlockArgument argument(unsigned index) {
    auto forward = module->lookupSymbol<func::FuncOp>("forward");
    return forward.getArgument(index);
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

// GPT-2's Conv1D as a script computes its sizes.
constexpr StringRef kConv1D = R"mlir(
  composer.parameter @w : !composer.tensor<8x16xf32>
  composer.parameter @b : !composer.tensor<16xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %one = composer.constant(1) : !composer.int
    %last = composer.constant(-1) : !composer.int
    %nf = composer.constant(16) : !composer.int
    %sizes = composer.op "aten::size"(%x) : (!composer.tensor) -> !composer.list<!composer.int>
    %leading = composer.op "aten::slice"(%sizes, %none, %last, %one) : (!composer.list<!composer.int>, !composer.none, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %tail = composer.op "prim::ListConstruct"(%nf) : (!composer.int) -> !composer.list<!composer.int>
    %out = composer.op "aten::add"(%leading, %tail) : (!composer.list<!composer.int>, !composer.list<!composer.int>) -> !composer.list<!composer.int>
    %in = composer.op "aten::size"(%x, %last) : (!composer.tensor, !composer.int) -> !composer.int
    %flat = composer.op "prim::ListConstruct"(%last, %in) : (!composer.int, !composer.int) -> !composer.list<!composer.int>
    %x2 = composer.view %x, %flat : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %b = composer.get_param @b : !composer.tensor
    %w = composer.get_param @w : !composer.tensor
    %y2 = composer.op "aten::addmm"(%b, %x2, %w, %one, %one) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %y = composer.view %y2, %out : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    return %y : !composer.tensor
  }
)mlir";

TEST_F(GraphFormsTest, Conv1DIsAProjectionOfItsUnflattenedInput) {
  parse(kConv1D);
  Value y = result("composer.view", 1);
  std::optional<Projection> projection = matchProjection(y);
  ASSERT_TRUE(projection);
  EXPECT_EQ(projection->input, argument(0));
  EXPECT_EQ(projection->result, y);
  EXPECT_EQ(projection->layout, WeightLayout::InOut);
  EXPECT_EQ(projection->getOutFeaturesDim(), 1u);
  // Views, addmm, and the six size reads and lists only they use.
  EXPECT_EQ(projection->ops.size(), 9u);
  EXPECT_TRUE(projection->readsAllOfInput());
  // The addmm alone is the same projection; its raw product is not one.
  EXPECT_EQ(matchProjectionAt(result("aten::addmm").getDefiningOp())->result,
            y);
  EXPECT_FALSE(matchProjection(result("aten::addmm")));
  EXPECT_EQ(findProjectionsOf(argument(0)).size(), 1u);
}

TEST_F(GraphFormsTest, AConv1DOwnsNoneOfWhatComputesItsInput) {
  // x computed by a generic node that only the projection reads: it stays
  // out of the ops a rewrite erases with the projection.
  std::string text = kConv1D.str();
  text.replace(text.find("func.func @forward(%x: !composer.tensor)"),
               sizeof("func.func @forward(%x: !composer.tensor)") - 1,
               "func.func @forward(%arg: !composer.tensor)");
  text.replace(text.find("    %none = composer.constant(none)"), 0,
               "    %x = composer.op \"aten::tanh\"(%arg) : "
               "(!composer.tensor) -> !composer.tensor\n");
  parse(text);
  std::optional<Projection> projection =
      matchProjection(result("composer.view", 1));
  ASSERT_TRUE(projection);
  EXPECT_EQ(projection->input, result("aten::tanh"));
  EXPECT_EQ(projection->ops.size(), 9u);
  EXPECT_FALSE(llvm::is_contained(projection->ops,
                                  result("aten::tanh").getDefiningOp()));
}

TEST_F(GraphFormsTest, AViewToOtherSizesLeavesAProjectionOfTheFlatInput) {
  // Viewed back to [-1, 16], not x's leading sizes: the map is of x2.
  std::string text = kConv1D.str();
  text.replace(text.find("composer.view %y2, %out"),
               sizeof("composer.view %y2, %out") - 1,
               "composer.view %y2, %flat");
  parse(text);
  std::optional<Projection> projection =
      matchProjectionAt(result("aten::addmm").getDefiningOp());
  ASSERT_TRUE(projection);
  EXPECT_EQ(projection->input, result("composer.view", 0));
  EXPECT_EQ(projection->result, result("aten::addmm"));
}

TEST_F(GraphFormsTest, ScaledAddmmIsNoProjection) {
  std::string text = kConv1D.str();
  text.replace(text.find("%x2, %w, %one, %one"),
               sizeof("%x2, %w, %one, %one") - 1, "%x2, %w, %one, %last");
  parse(text);
  EXPECT_FALSE(matchProjectionAt(result("aten::addmm").getDefiningOp()));
}

// GPT-2's tanh GELU written out, as a script records it, on %h = x + 0.
constexpr StringRef kTanhGelu = R"mlir(
  func.func @forward(%x: !composer.tensor, %other: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %one = composer.constant(1) : !composer.int
    %half = composer.constant(5.000000e-01) : !composer.float
    %cube = composer.constant(3.000000e+00) : !composer.float
    %coef = composer.constant(4.471500e-02) : !composer.float
    %root = composer.constant(0.79788456080286541) : !composer.float
    %onef = composer.constant(1.000000e+00) : !composer.float
    %h = composer.relu %x : (!composer.tensor) -> !composer.tensor
    %g1 = composer.op "aten::mul"(%h, %half) : (!composer.tensor, !composer.float) -> !composer.tensor
    %g2 = composer.op "aten::pow"(%h, %cube) : (!composer.tensor, !composer.float) -> !composer.tensor
    %g3 = composer.op "aten::mul"(%g2, %coef) : (!composer.tensor, !composer.float) -> !composer.tensor
    %g4 = composer.add %h, %g3 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %g5 = composer.op "aten::mul"(%g4, %root) : (!composer.tensor, !composer.float) -> !composer.tensor
    %g6 = composer.op "aten::tanh"(%g5) : (!composer.tensor) -> !composer.tensor
    %g7 = composer.op "aten::add"(%g6, %onef, %one) : (!composer.tensor, !composer.float, !composer.int) -> !composer.tensor
    %a = composer.mul %g1, %g7 : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %gated = composer.mul %a, %other : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %gated, %other : !composer.tensor, !composer.tensor
  }
)mlir";

TEST_F(GraphFormsTest, WrittenOutTanhGeluIsOnePointwiseFunction) {
  parse(kTanhGelu);
  Value h = result("composer.relu");
  std::optional<PointwiseFunction> function = matchPointwiseFunction(h);
  ASSERT_TRUE(function);
  EXPECT_EQ(function->ops.size(), 8u);
  // The product with another tensor is not part of it.
  EXPECT_EQ(function->output, result("composer.mul", 0));
  // Of x, the function is relu followed by the GELU: one function.
  EXPECT_EQ(matchPointwiseFunction(argument(0))->ops.size(), 9u);
}

TEST_F(GraphFormsTest, AnIntermediateReadElsewhereIsNoFunction) {
  std::string text = kTanhGelu.str();
  text.replace(text.find("return %gated, %other"),
               sizeof("return %gated, %other") - 1, "return %gated, %g6");
  parse(text);
  PointwiseMismatch mismatch;
  EXPECT_FALSE(matchPointwiseFunction(result("composer.relu"), &mismatch));
  EXPECT_EQ(mismatch, PointwiseMismatch::IntermediateHasOtherUsers);
}

TEST_F(GraphFormsTest, AScaleIsNoActivationAndOtherReadersAreReported) {
  parse(R"mlir(
    func.func @forward(%x: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
      %half = composer.constant(5.000000e-01) : !composer.float
      %h = composer.relu %x : (!composer.tensor) -> !composer.tensor
      %s = composer.op "aten::mul"(%h, %half) : (!composer.tensor, !composer.float) -> !composer.tensor
      %t = composer.op "aten::sigmoid"(%x) : (!composer.tensor) -> !composer.tensor
      return %s, %t : !composer.tensor, !composer.tensor
    }
  )mlir");
  PointwiseMismatch mismatch;
  EXPECT_FALSE(matchPointwiseFunction(result("composer.relu"), &mismatch));
  EXPECT_EQ(mismatch, PointwiseMismatch::None);
  // x feeds relu (part of a function) and sigmoid, which is another.
  std::optional<PointwiseFunction> ofX = matchPointwiseFunction(argument(0));
  EXPECT_FALSE(ofX);
}

// Split heads as a script computes them: q and k viewed to
// `list(x.size()[:-1]) + [heads, 8]`, heads a module attribute; the scores
// scaled, masked by a causal buffer sliced to T and by an additive mask from
// the input, the probabilities dropped out before they weigh v.
constexpr StringRef kSplitAttention = R"mlir(
  composer.buffer @mask : !composer.tensor<1x1x16x16xi1>
  func.func @forward(%q: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor, %pad: !composer.tensor, %train: !composer.bool) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %c-2 = composer.constant(-2) : !composer.int
    %c-1 = composer.constant(-1) : !composer.int
    %c0 = composer.constant(0) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %c2 = composer.constant(2) : !composer.int
    %c3 = composer.constant(3) : !composer.int
    %c8 = composer.constant(8) : !composer.int
    %ninf = composer.constant(0xFFF0000000000000 : f64) : !composer.float
    %heads = composer.get_attr "attn.heads" : !composer.int
    %t = composer.op "aten::size"(%q, %c1) : (!composer.tensor, !composer.int) -> !composer.int
    %sizes = composer.op "aten::size"(%q) : (!composer.tensor) -> !composer.list<!composer.int>
    %leading = composer.op "aten::slice"(%sizes, %none, %c-1, %c1) : (!composer.list<!composer.int>, !composer.none, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %tail = composer.op "prim::ListConstruct"(%heads, %c8) : (!composer.int, !composer.int) -> !composer.list<!composer.int>
    %shape = composer.op "aten::add"(%leading, %tail) : (!composer.list<!composer.int>, !composer.list<!composer.int>) -> !composer.list<!composer.int>
    %qv = composer.view %q, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %qh = composer.op "aten::transpose"(%qv, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %kv = composer.view %k, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %perm = composer.op "prim::ListConstruct"(%c0, %c2, %c3, %c1) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %kh = composer.op "aten::permute"(%kv, %perm) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %scores = composer.matmul %qh, %kh : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %scale = composer.constant(dense<0.353553385> : tensor<f32>) : !composer.tensor
    %scaled = composer.mul %scores, %scale : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %buf = composer.get_param @mask : !composer.tensor
    %s2 = composer.op "aten::slice"(%buf, %c2, %c0, %t, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %s3 = composer.op "aten::slice"(%s2, %c3, %c0, %t, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %notmask = composer.op "aten::bitwise_not"(%s3) : (!composer.tensor) -> !composer.tensor
    %masked = composer.op "aten::masked_fill"(%scaled, %notmask, %ninf) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %padded = composer.add %masked, %pad {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %p = composer.softmax %padded {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %pd = composer.dropout %p, %train {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %y = composer.matmul %pd, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
)mlir";

TEST_F(GraphFormsTest, SplitHeadsAttentionHasItsHeadsScaleAndMasks) {
  parse(kSplitAttention);
  auto softmax = result("composer.softmax").getDefiningOp<SoftmaxOp>();
  std::string reason;
  FailureOr<AttentionSite> site = matchAttention(softmax, reason);
  ASSERT_TRUE(succeeded(site)) << reason;
  EXPECT_EQ(site->getQuery(), result("aten::transpose"));
  EXPECT_EQ(site->getKeyTransposed(), result("aten::permute"));
  EXPECT_EQ(site->getValue(), argument(2));
  EXPECT_EQ(site->getOutput(), result("composer.matmul", 1));
  ASSERT_EQ(site->scalings.size(), 1u);
  EXPECT_EQ(site->scalings.front()->getResult(0), result("composer.mul"));
  EXPECT_FALSE(site->hasRotaryEmbedding);
  EXPECT_TRUE(site->fusedFastPaths.empty());
  // The head count is the attribute, at dimension 1 after the transpose.
  ASSERT_TRUE(site->heads);
  EXPECT_EQ(site->heads->layout, HeadLayout::Split);
  EXPECT_EQ(site->heads->count.value, result("composer.get_attr"));
  EXPECT_FALSE(site->heads->count.fromScores);
  // The causal buffer is read through two slices and a negation; the
  // padding mask reads no state.
  ASSERT_EQ(site->masks.size(), 2u);
  EXPECT_EQ(site->masks[0].kind, AttentionMaskKind::Select);
  EXPECT_EQ(site->masks[1].kind, AttentionMaskKind::Additive);
  EXPECT_EQ(site->masks[1].operand->get(), argument(3));
  std::optional<StateMask> causal = traceStateMask(site->masks[0]);
  ASSERT_TRUE(causal);
  EXPECT_EQ(causal->read.getResult(), result("composer.get_param"));
  EXPECT_EQ(causal->slices.size(), 2u);
  EXPECT_EQ(causal->transforms.size(), 1u);
  EXPECT_EQ(causal->sliced, result("aten::slice", 2));
  EXPECT_FALSE(traceStateMask(site->masks[1]));
  EXPECT_EQ(findAttentionSites(*module).size(), 1u);
}

TEST_F(GraphFormsTest, MergedHeadsAreAFactorOfTheBatch) {
  // nn.MultiheadAttention's bmm over [B*H, T, D], B*H = size(1) * 4.
  parse(R"mlir(
    func.func @forward(%x: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor) -> !composer.tensor {
      %c0 = composer.constant(0) : !composer.int
      %c1 = composer.constant(1) : !composer.int
      %c4 = composer.constant(4) : !composer.int
      %c8 = composer.constant(8) : !composer.int
      %b = composer.op "aten::size"(%x, %c1) : (!composer.tensor, !composer.int) -> !composer.int
      %t = composer.op "aten::size"(%x, %c0) : (!composer.tensor, !composer.int) -> !composer.int
      %bh = composer.op "aten::mul"(%b, %c4) : (!composer.int, !composer.int) -> !composer.int
      %shape = composer.op "prim::ListConstruct"(%t, %bh, %c8) : (!composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
      %qv = composer.view %x, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
      %qb = composer.op "aten::transpose"(%qv, %c0, %c1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
      %scores = composer.op "aten::bmm"(%qb, %k) : (!composer.tensor, !composer.tensor) -> !composer.tensor
      %p = composer.softmax %scores {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
      %y = composer.op "aten::bmm"(%p, %v) : (!composer.tensor, !composer.tensor) -> !composer.tensor
      return %y : !composer.tensor
    }
  )mlir");
  std::string reason;
  FailureOr<AttentionSite> site = matchAttention(
      result("composer.softmax").getDefiningOp<SoftmaxOp>(), reason);
  ASSERT_TRUE(succeeded(site)) << reason;
  EXPECT_TRUE(site->masks.empty());
  EXPECT_TRUE(site->scalings.empty());
  ASSERT_TRUE(site->heads);
  EXPECT_EQ(site->heads->layout, HeadLayout::Merged);
  EXPECT_EQ(site->heads->count.constant, 4);
}

TEST_F(GraphFormsTest, ASoftmaxThatWeighsNoValuesIsNoCandidate) {
  parse(R"mlir(
    func.func @forward(%x: !composer.tensor<2x4x6x6xf32>, %v: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
      %logits = composer.matmul %x, %x : (!composer.tensor<2x4x6x6xf32>, !composer.tensor<2x4x6x6xf32>) -> !composer.tensor<2x4x6x6xf32>
      %classes = composer.softmax %logits {dim = -1 : i64} : (!composer.tensor<2x4x6x6xf32>) -> !composer.tensor
      %p = composer.softmax %logits {dim = 1 : i64} : (!composer.tensor<2x4x6x6xf32>) -> !composer.tensor
      %y = composer.matmul %p, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
      return %classes, %y : !composer.tensor, !composer.tensor
    }
  )mlir");
  std::string reason;
  EXPECT_TRUE(failed(matchAttention(
      result("composer.softmax", 0).getDefiningOp<SoftmaxOp>(), reason)));
  EXPECT_TRUE(reason.empty());
  // Over the heads, not the keys: a candidate, refused.
  EXPECT_TRUE(failed(matchAttention(
      result("composer.softmax", 1).getDefiningOp<SoftmaxOp>(), reason)));
  EXPECT_EQ(reason, "the softmax is not over the last dimension");
  EXPECT_TRUE(findAttentionSites(*module).empty());
}

} // namespace
