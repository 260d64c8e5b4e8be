// RUN: composer-opt %s -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-features=20" 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-features=20" 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-factorize 2>&1 >/dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: composer-opt %s -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-channels=4 latent-features=0.5" 2>/dev/null | FileCheck %s --check-prefix=LATENT
// RUN: composer-opt %s -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-channels=100000 latent-features=100000 force=true" 2>/dev/null | FileCheck %s --check-prefix=FULL
// RUN: composer-opt %s -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-features=20 factorize-convs=false" 2>&1 | FileCheck %s --check-prefix=NOCONVS
// RUN: composer-opt %s -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-features=20 factorize-linears=false" 2>&1 | FileCheck %s --check-prefix=NOLINEARS
// RUN: not composer-opt %s --composer-factorize="latent-channels=0" 2>&1 | FileCheck %s --check-prefix=BAD-CHANNELS
// RUN: not composer-opt %s --composer-factorize="latent-features=-1" 2>&1 | FileCheck %s --check-prefix=BAD-FEATURES
// Idempotent: a second run finds only the pairs it wrote.
// RUN: composer-opt %s -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-features=20" 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-features=20" --composer-factorize="min-channels=16 min-features=16 latent-features=20" 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: composer-opt %t.once.mlir -split-input-file --composer-factorize="min-channels=16 min-features=16 latent-features=20 force=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN

// Convolutions (script form): a strided, dilated 3x3 conv with a bias is
// factorized (rank 0.25 * 32 = 8); a narrow one, a grouped one and a
// transposed one are not.
module {
  composer.parameter @layer.conv.weight : !composer.tensor<64x32x3x3xf32>
  composer.parameter @layer.conv.bias : !composer.tensor<64xf32>
  composer.parameter @small.weight : !composer.tensor<8x3x3x3xf32>
  composer.parameter @grouped.weight : !composer.tensor<32x16x3x3xf32>
  composer.parameter @up.weight : !composer.tensor<64x32x2x2xf32>
  func.func @convs(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %sw = composer.get_param @small.weight : !composer.tensor
    %s = composer.conv2d %x, %sw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %gw = composer.get_param @grouped.weight : !composer.tensor
    %g = composer.conv2d %s, %gw, %none {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %w = composer.get_param @layer.conv.weight : !composer.tensor
    %b = composer.get_param @layer.conv.bias : !composer.tensor
    %y = composer.conv2d %g, %w, %b {dilation = array<i64: 2, 2>, groups = 1 : i64, padding = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    %uw = composer.get_param @up.weight : !composer.tensor
    %u = composer.convolution %y, %uw, %none {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>, groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %r = composer.relu %u : (!composer.tensor) -> !composer.tensor
    return %r : !composer.tensor
  }
}
// The original weight stays, frozen; the factors are new, next to it.
// CHECK: composer.parameter @layer.conv.weight frozen : !composer.tensor<64x32x3x3xf32>
// CHECK: composer.parameter @layer.conv.bias : !composer.tensor<64xf32>
// CHECK: composer.parameter @small.weight : !composer.tensor<8x3x3x3xf32>
// CHECK: composer.parameter @grouped.weight : !composer.tensor<32x16x3x3xf32>
// CHECK: composer.parameter @up.weight : !composer.tensor<64x32x2x2xf32>
// CHECK: composer.parameter @layer.conv.factor0.weight init("svd_first:layer.conv.weight") : !composer.tensor<8x32x3x3xf32>
// CHECK: composer.parameter @layer.conv.factor1.weight init("svd_second:layer.conv.weight") : !composer.tensor<64x8x1x1xf32>
// CHECK-LABEL: func.func @convs
// CHECK: %[[NONE:.*]] = composer.constant(none)
// CHECK: %[[S:.*]] = composer.conv2d %{{.*}}, %{{.*}}, %[[NONE]] {dilation = array<i64: 1, 1>, groups = 1
// CHECK: %[[G:.*]] = composer.conv2d %[[S]], %{{.*}}, %[[NONE]] {dilation = array<i64: 1, 1>, groups = 2
// CHECK-NOT: get_param @layer.conv.weight
// CHECK: %[[B:.*]] = composer.get_param @layer.conv.bias
// CHECK: %[[F0:.*]] = composer.get_param @layer.conv.factor0.weight
// CHECK: %[[F1:.*]] = composer.get_param @layer.conv.factor1.weight
// CHECK: %[[NO_BIAS:.*]] = composer.constant(none)
// CHECK: %[[Y0:.*]] = composer.conv2d %[[G]], %[[F0]], %[[NO_BIAS]] {composer.factorized, dilation = array<i64: 2, 2>, groups = 1 : i64, padding = array<i64: 2, 2>, stride = array<i64: 2, 2>}
// CHECK: %[[Y:.*]] = composer.conv2d %[[Y0]], %[[F1]], %[[B]] {composer.factorized, dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>}
// CHECK: %[[U:.*]] = composer.convolution %[[Y]], %{{.*}}, %[[NONE]] {{.*}}transposed = true
// CHECK: composer.relu %[[U]]

// REPORT: remark: composer-factorize: 1 layers factorized, 3 skipped
// REPORT: note: 1 skipped: channels < min-channels
// REPORT: note: 1 skipped: groups > 1
// REPORT: note: 1 skipped: not a 2-D convolution

// The default min-channels (256) matches nothing here.
// DEFAULT: warning: composer-factorize: 0 layers factorized, 4 skipped
// DEFAULT: note: 2 skipped: channels < min-channels
// DEFAULT: note: 1 skipped: groups > 1
// DEFAULT: note: 1 skipped: not a 2-D convolution

// An integer latent size is the rank.
// LATENT: composer.parameter @layer.conv.factor0.weight {{.*}} : !composer.tensor<4x32x3x3xf32>
// LATENT: composer.parameter @layer.conv.factor1.weight {{.*}} : !composer.tensor<64x4x1x1xf32>

// Full rank is min(out, in * k * k) = 64 here, not min(in, out) = 32.
// FULL: composer.parameter @layer.conv.factor0.weight {{.*}} : !composer.tensor<64x32x3x3xf32>
// FULL: composer.parameter @layer.conv.factor1.weight {{.*}} : !composer.tensor<64x64x1x1xf32>

// NOCONVS: warning: composer-factorize: 0 layers factorized, 0 skipped
// NOCONVS-NOT: factor0

// NOLINEARS: remark: composer-factorize: 1 layers factorized, 3 skipped

// BAD-CHANNELS: error: composer-factorize: latent-channels=0 must be > 0 and below 2^63
// BAD-FEATURES: error: composer-factorize: latent-features=-1 must be > 0 and below 2^63

// Again with force: the pair is not factorized again.
// AGAIN: warning: composer-factorize: 0 layers factorized, 5 skipped
// AGAIN: note: 2 skipped: already factorized

// -----

// Linears: in -> r (no bias) then r -> out (the bias), shapes refined
// where known; one too narrow, one where rank 20 does not cut MACs
// (20 * (32 + 32) >= 32 * 32), one whose rank is capped at min(out, in).
module {
  composer.parameter @proj.weight : !composer.tensor<64x128xf32>
  composer.parameter @proj.bias : !composer.tensor<64xf32>
  composer.parameter @narrow.weight : !composer.tensor<8x64xf32>
  composer.parameter @square.weight : !composer.tensor<32x32xf32>
  func.func @linears(%x: !composer.tensor<4x128xf32>) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @proj.weight : !composer.tensor<64x128xf32>
    %b = composer.get_param @proj.bias : !composer.tensor<64xf32>
    %y = composer.linear %x, %w, %b : (!composer.tensor<4x128xf32>, !composer.tensor<64x128xf32>, !composer.tensor<64xf32>) -> !composer.tensor<4x64xf32>
    %nw = composer.get_param @narrow.weight : !composer.tensor
    %n = composer.linear %y, %nw, %none : (!composer.tensor<4x64xf32>, !composer.tensor, !composer.none) -> !composer.tensor
    %sw = composer.get_param @square.weight : !composer.tensor
    %s = composer.linear %n, %sw, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %s : !composer.tensor
  }
}
// CHECK: composer.parameter @proj.weight frozen : !composer.tensor<64x128xf32>
// CHECK: composer.parameter @narrow.weight : !composer.tensor<8x64xf32>
// CHECK: composer.parameter @square.weight : !composer.tensor<32x32xf32>
// CHECK: composer.parameter @proj.factor0.weight init("svd_first:proj.weight") : !composer.tensor<20x128xf32>
// CHECK: composer.parameter @proj.factor1.weight init("svd_second:proj.weight") : !composer.tensor<64x20xf32>
// CHECK-LABEL: func.func @linears
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<4x128xf32>)
// CHECK: %[[B:.*]] = composer.get_param @proj.bias
// CHECK: %[[F0:.*]] = composer.get_param @proj.factor0.weight
// CHECK: %[[F1:.*]] = composer.get_param @proj.factor1.weight
// CHECK: %[[NO_BIAS:.*]] = composer.constant(none)
// CHECK: %[[Y0:.*]] = composer.linear %[[X]], %[[F0]], %[[NO_BIAS]] {composer.factorized} : {{.*}} -> !composer.tensor<4x20xf32>
// CHECK: %[[Y:.*]] = composer.linear %[[Y0]], %[[F1]], %[[B]] {composer.factorized} : {{.*}} -> !composer.tensor<4x64xf32>
// CHECK: %[[N:.*]] = composer.linear %[[Y]], %{{.*}}, %{{.*}} :
// CHECK: composer.linear %[[N]], %{{.*}}, %{{.*}} :

// REPORT: remark: composer-factorize: 1 layers factorized, 2 skipped
// REPORT: note: 1 skipped: features < min-features
// REPORT: note: 1 skipped: does not cut MACs at rank r

// DEFAULT: warning: composer-factorize: 0 layers factorized, 3 skipped
// DEFAULT: note: 3 skipped: features < min-features

// A fraction of min(in, out).
// LATENT: composer.parameter @proj.factor0.weight {{.*}} : !composer.tensor<32x128xf32>

// With force, the square one too, each at the full rank.
// FULL: composer.parameter @proj.factor0.weight {{.*}} : !composer.tensor<64x128xf32>
// FULL: composer.parameter @proj.factor1.weight {{.*}} : !composer.tensor<64x64xf32>
// FULL: composer.parameter @square.factor0.weight {{.*}} : !composer.tensor<32x32xf32>
// FULL: composer.parameter @square.factor1.weight {{.*}} : !composer.tensor<32x32xf32>

// NOCONVS: remark: composer-factorize: 1 layers factorized, 2 skipped
// NOLINEARS: warning: composer-factorize: 0 layers factorized, 0 skipped

// With force, only the square linear, which was not factorized.
// AGAIN: remark: composer-factorize: 1 layers factorized, 3 skipped
// AGAIN: note: 2 skipped: already factorized

// -----

// A traced convolution (aten::_convolution) becomes two; a layer called
// twice shares one pair; a weight also read by another op (a tied
// embedding, say) is not factorized, since freezing it would change that op.
module {
  composer.parameter @block.conv.weight : !composer.tensor<32x32x3x3xf32>
  composer.parameter @tied.weight : !composer.tensor<32x32x3x3xf32>
  func.func @traced(%x: !composer.tensor<2x32x8x8xf32>) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @block.conv.weight : !composer.tensor<32x32x3x3xf32>
    %y = composer.convolution %x, %w, %none {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true} : (!composer.tensor<2x32x8x8xf32>, !composer.tensor<32x32x3x3xf32>, !composer.none) -> !composer.tensor<2x32x8x8xf32>
    %z = composer.convolution %y, %w, %none {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>, groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true} : (!composer.tensor<2x32x8x8xf32>, !composer.tensor<32x32x3x3xf32>, !composer.none) -> !composer.tensor<2x32x8x8xf32>
    %tw = composer.get_param @tied.weight : !composer.tensor
    %t = composer.conv2d %z, %tw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor<2x32x8x8xf32>, !composer.tensor, !composer.none) -> !composer.tensor
    %o = composer.mul %t, %tw : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %o : !composer.tensor
  }
}
// CHECK: composer.parameter @block.conv.weight frozen
// CHECK: composer.parameter @tied.weight :
// CHECK: composer.parameter @block.conv.factor0.weight init("svd_first:block.conv.weight") : !composer.tensor<8x32x3x3xf32>
// CHECK: composer.parameter @block.conv.factor1.weight init("svd_second:block.conv.weight") : !composer.tensor<32x8x1x1xf32>
// CHECK-NOT: composer.parameter
// CHECK-LABEL: func.func @traced
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<2x32x8x8xf32>)
// CHECK: %[[F0:.*]] = composer.get_param @block.conv.factor0.weight
// CHECK: %[[F1:.*]] = composer.get_param @block.conv.factor1.weight
// CHECK: %[[Y0:.*]] = composer.convolution %[[X]], %[[F0]], %{{.*}} {allow_tf32 = true, benchmark = false, composer.factorized, cudnn_enabled = true, deterministic = false, dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, transposed = false} : {{.*}} -> !composer.tensor<2x8x8x8xf32>
// CHECK: %[[Y:.*]] = composer.convolution %[[Y0]], %[[F1]], %{{.*}} {{{.*}}padding = array<i64: 0, 0>, stride = array<i64: 1, 1>, transposed = false} : {{.*}} -> !composer.tensor<2x32x8x8xf32>
// CHECK: %[[G0:.*]] = composer.get_param @block.conv.factor0.weight
// CHECK: %[[G1:.*]] = composer.get_param @block.conv.factor1.weight
// CHECK: %[[Z0:.*]] = composer.convolution %[[Y]], %[[G0]]
// CHECK: %[[Z:.*]] = composer.convolution %[[Z0]], %[[G1]]
// CHECK: %[[TW:.*]] = composer.get_param @tied.weight
// CHECK: %[[T:.*]] = composer.conv2d %[[Z]], %[[TW]]
// CHECK: composer.mul %[[T]], %[[TW]]

// REPORT: remark: composer-factorize: 2 layers factorized, 1 skipped
// REPORT: note: 1 skipped: weight shared with other ops

// AGAIN: warning: composer-factorize: 0 layers factorized, 5 skipped
// AGAIN: note: 4 skipped: already factorized

// -----

// One weight read by a convolution and by a transposed one (left alone):
// the convolution is factorized, and the weight stays trainable for the
// transposed one.
module {
  composer.parameter @shared.weight : !composer.tensor<32x32x2x2xf32>
  func.func @shared_with_transposed(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @shared.weight : !composer.tensor
    %y = composer.conv2d %x, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %u = composer.convolution %y, %w, %none {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>, groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %u : !composer.tensor
  }
}
// CHECK: composer.parameter @shared.weight : !composer.tensor<32x32x2x2xf32>
// CHECK: composer.parameter @shared.factor0.weight init("svd_first:shared.weight")
// CHECK-LABEL: func.func @shared_with_transposed
// CHECK: %[[W:.*]] = composer.get_param @shared.weight
// CHECK: %[[Y0:.*]] = composer.conv2d %{{.*}}, %{{.*}}, %{{.*}} {composer.factorized
// CHECK: %[[Y:.*]] = composer.conv2d %[[Y0]], %{{.*}}, %{{.*}} {composer.factorized
// CHECK: composer.convolution %[[Y]], %[[W]], {{.*}}transposed = true

// -----

// GPT-2's Conv1D (addmm on x flattened to 2-D, weight [in, out], sizes as a
// trace records them) becomes a pair of linears in nn.Linear's layout,
// initialized from the SVD of the weight's transpose; the LM head that
// shares the embedding's weight is skipped, as freezing the weight would
// stop the embedding's training.
module {
  composer.parameter @wte.weight : !composer.tensor<64x96xf32>
  composer.parameter @h.c_fc.weight : !composer.tensor<48x96xf32>
  composer.parameter @h.c_fc.bias : !composer.tensor<96xf32>
  func.func @conv1d(%x: !composer.tensor, %ids: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %zero = composer.constant(0) : !composer.int
    %one = composer.constant(1) : !composer.int
    %two = composer.constant(2) : !composer.int
    %last = composer.constant(-1) : !composer.int
    %out = composer.constant(96) : !composer.int
    %d0 = composer.op "aten::size"(%x, %zero) : (!composer.tensor, !composer.int) -> !composer.int
    %d1 = composer.op "aten::size"(%x, %one) : (!composer.tensor, !composer.int) -> !composer.int
    %d2 = composer.op "aten::size"(%x, %two) : (!composer.tensor, !composer.int) -> !composer.int
    %flat = composer.op "prim::ListConstruct"(%last, %d2) : (!composer.int, !composer.int) -> !composer.list<!composer.int>
    %x2 = composer.view %x, %flat : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %w = composer.get_param @h.c_fc.weight : !composer.tensor
    %b = composer.get_param @h.c_fc.bias : !composer.tensor
    %h2 = composer.op "aten::addmm"(%b, %x2, %w, %one, %one) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %sizes = composer.op "prim::ListConstruct"(%d0, %d1, %out) : (!composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %h = composer.view %h2, %sizes : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %wte = composer.get_param @wte.weight : !composer.tensor
    %logits = composer.linear %h, %wte, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %e = composer.op "aten::embedding"(%wte, %ids, %last, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    return %logits, %e : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: composer.parameter @wte.weight : !composer.tensor<64x96xf32>
// CHECK: composer.parameter @h.c_fc.weight frozen : !composer.tensor<48x96xf32>
// CHECK: composer.parameter @h.c_fc.bias : !composer.tensor<96xf32>
// CHECK: composer.parameter @h.c_fc.factor0.weight init("svd_first_t:h.c_fc.weight") : !composer.tensor<20x48xf32>
// CHECK: composer.parameter @h.c_fc.factor1.weight init("svd_second_t:h.c_fc.weight") : !composer.tensor<96x20xf32>
// CHECK-LABEL: func.func @conv1d
// CHECK-SAME: (%[[X:[a-z0-9]+]]: !composer.tensor, %[[IDS:[a-z0-9]+]]: !composer.tensor)
// CHECK-NOT: aten::size
// CHECK: %[[B:.*]] = composer.get_param @h.c_fc.bias
// CHECK: %[[F0:.*]] = composer.get_param @h.c_fc.factor0.weight
// CHECK: %[[F1:.*]] = composer.get_param @h.c_fc.factor1.weight
// CHECK-NOT: aten::addmm
// CHECK: %[[H0:.*]] = composer.linear %[[X]], %[[F0]], %{{.*}} {composer.factorized}
// CHECK: %[[H:.*]] = composer.linear %[[H0]], %[[F1]], %[[B]] {composer.factorized}
// CHECK: %[[WTE:.*]] = composer.get_param @wte.weight
// CHECK: composer.linear %[[H]], %[[WTE]]
// CHECK: composer.op "aten::embedding"(%[[WTE]], %[[IDS]]

// FULL-LABEL: composer.parameter @h.c_fc.factor0.weight init("svd_first_t:h.c_fc.weight") : !composer.tensor<48x48xf32>
// FULL: composer.parameter @h.c_fc.factor1.weight init("svd_second_t:h.c_fc.weight") : !composer.tensor<96x48xf32>

// REPORT: remark: composer-factorize: 1 layers factorized, 1 skipped
// REPORT: note: 1 skipped: weight shared with other ops
// DEFAULT: warning: composer-factorize: 0 layers factorized, 2 skipped
// DEFAULT: note: 1 skipped: features < min-features
// DEFAULT: note: 1 skipped: weight shared with other ops
// NOCONVS: remark: composer-factorize: 1 layers factorized, 1 skipped
// NOLINEARS: warning: composer-factorize: 0 layers factorized, 0 skipped
// AGAIN: warning: composer-factorize: 0 layers factorized, 3 skipped
// AGAIN: note: 2 skipped: already factorized
// AGAIN: note: 1 skipped: weight shared with other ops
