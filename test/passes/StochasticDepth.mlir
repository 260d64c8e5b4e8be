// RUN: composer-opt %s -split-input-file --composer-stochastic-depth 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth="stochastic-method=sample drop-rate=0.1" 2>/dev/null | FileCheck %s --check-prefix=SAMPLE
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth="drop-distribution=uniform drop-rate=0.5" 2>/dev/null | FileCheck %s --check-prefix=UNIFORM
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth="drop-warmup=0.25" 2>/dev/null | FileCheck %s --check-prefix=WARMUP
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth --composer-lower-to-aten 2>/dev/null | FileCheck %s --check-prefix=LOWERED

// Idempotent, in both modes: what the pass rewrote is marked
// composer.stochastic_depth, and a second run finds no new block.
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth="drop-warmup=0.5" 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth="drop-warmup=0.5" --composer-stochastic-depth="drop-warmup=0.5" 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth="stochastic-method=sample" 2>/dev/null > %t.sample-once.mlir
// RUN: composer-opt %s -split-input-file --composer-stochastic-depth="stochastic-method=sample" --composer-stochastic-depth="stochastic-method=sample" 2>/dev/null > %t.sample-twice.mlir
// RUN: diff %t.sample-once.mlir %t.sample-twice.mlir

// Bad options.
// RUN: not composer-opt %s --composer-stochastic-depth="stochastic-method=layer" 2>&1 | FileCheck %s --check-prefix=BADMETHOD
// RUN: not composer-opt %s --composer-stochastic-depth="drop-distribution=cubic" 2>&1 | FileCheck %s --check-prefix=BADDIST
// RUN: not composer-opt %s --composer-stochastic-depth="drop-rate=1.5" 2>&1 | FileCheck %s --check-prefix=BADRATE
// RUN: not composer-opt %s --composer-stochastic-depth="drop-warmup=-0.5" 2>&1 | FileCheck %s --check-prefix=BADWARMUP
// RUN: not composer-opt %s --composer-stochastic-depth="drop-rate=high" 2>&1 | FileCheck %s --check-prefix=BADNUMBER
// BADMETHOD: error: composer-stochastic-depth: stochastic-method must be 'block' or 'sample', got 'layer'
// BADDIST: error: composer-stochastic-depth: drop-distribution must be 'linear' or 'uniform', got 'cubic'
// BADRATE: error: composer-stochastic-depth: drop-rate must be in [0, 1], got 1.500000e+00
// BADWARMUP: error: composer-stochastic-depth: drop-warmup must be in [0, 1], got -5.000000e-01
// BADNUMBER: for the --drop-rate option: 'high' value invalid

// Two residual blocks as a scripted torchvision BasicBlock imports: an
// identity shortcut, then a downsample shortcut; each batch norm reads its
// module's training flag, and bumps its counter in an if.
module @blocks {
  composer.parameter @l0.conv1.weight : !composer.tensor<8x8x3x3xf32>
  composer.parameter @l0.bn1.weight : !composer.tensor<8xf32>
  composer.buffer @l0.bn1.num_batches_tracked : !composer.tensor<i64>
  composer.parameter @l0.conv2.weight : !composer.tensor<8x8x3x3xf32>
  composer.parameter @l1.conv1.weight : !composer.tensor<16x8x3x3xf32>
  composer.parameter @l1.down.weight : !composer.tensor<16x8x1x1xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %one = composer.constant(1) : !composer.int
    %m = composer.constant(1.000000e-01) : !composer.float
    %w1 = composer.get_param @l0.conv1.weight : !composer.tensor
    %c1 = composer.conv2d %x, %w1, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor loc("l0.conv1")
    %t = composer.get_attr "l0.bn1.training" : !composer.bool loc("l0.bn1")
    composer.if %t {
      %n = composer.get_param @l0.bn1.num_batches_tracked : !composer.tensor
      %a = composer.op "aten::add_"(%n, %one, %one) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
      composer.yield
    } else {
      composer.yield
    }
    %bw = composer.get_param @l0.bn1.weight : !composer.tensor loc("l0.bn1")
    %b1 = composer.batch_norm %c1, %bw, %none, %none, %none, %t, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64} : (!composer.tensor, !composer.tensor, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.float) -> !composer.tensor loc("l0.bn1")
    %r1 = composer.relu %b1 inplace : (!composer.tensor) -> !composer.tensor
    %w2 = composer.get_param @l0.conv2.weight : !composer.tensor
    %c2 = composer.conv2d %r1, %w2, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s0 = composer.add %c2, %x inplace {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor loc("l0")
    %o0 = composer.relu %s0 inplace : (!composer.tensor) -> !composer.tensor loc("l0.relu")
    %w3 = composer.get_param @l1.conv1.weight : !composer.tensor
    %c3 = composer.conv2d %o0, %w3, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %r3 = composer.relu %c3 : (!composer.tensor) -> !composer.tensor
    %wd = composer.get_param @l1.down.weight : !composer.tensor
    %d = composer.conv2d %o0, %wd, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s1 = composer.add %d, %r3 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor loc("l1")
    return %s1 : !composer.tensor
  }
}

// Block mode, linear: block 0 of 2 at 0.1, block 1 at 0.2. The draw reads
// the training flag of the add's module; the branch (with the batch norm's
// counter update) moves into the then region, the eval scaling before the
// add; the else region yields the shortcut through a relu that is not in
// place. The downsample shortcut stays outside.
// CHECK-LABEL: module @blocks
// CHECK-NOT: composer.buffer @_composer_stochastic_depth
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK: %[[BNT:.*]] = composer.get_attr "l0.bn1.training"
// CHECK: %[[T0:.*]] = composer.get_attr "l0.training" : !composer.bool
// CHECK: %[[K0:.*]] = composer.stochastic_depth_keep %[[T0]] {drop_rate = 1.000000e-01 : f64} : (!composer.bool) -> !composer.bool
// CHECK: %[[B0:.*]] = composer.if %[[K0]] -> (!composer.tensor) {
// CHECK: %[[C1:.*]] = composer.conv2d %[[X]],
// CHECK: composer.if %[[BNT]] {
// CHECK: composer.op "aten::add_"
// CHECK: %[[BN:.*]] = composer.batch_norm %[[C1]],
// CHECK: %[[R1:.*]] = composer.relu %[[BN]] inplace
// CHECK: %[[C2:.*]] = composer.conv2d %[[R1]],
// CHECK: %[[F0:.*]] = composer.stochastic_depth %[[C2]], %[[T0]] {drop_rate = 1.000000e-01 : f64, method = "block"}
// CHECK: %[[S0:.*]] = composer.add %[[F0]], %[[X]] inplace {alpha = 1 : i64, composer.stochastic_depth}
// CHECK: %[[O0:.*]] = composer.relu %[[S0]] inplace
// CHECK: composer.yield %[[O0]] : !composer.tensor
// CHECK: } else {
// CHECK: %[[D0:.*]] = composer.relu %[[X]] : (!composer.tensor) -> !composer.tensor
// CHECK: composer.yield %[[D0]] : !composer.tensor
// CHECK: }
// CHECK: %[[DOWN:.*]] = composer.conv2d %[[B0]], %{{.*}}stride = array<i64: 2, 2>
// CHECK: %[[T1:.*]] = composer.get_attr "l1.training"
// CHECK: %[[K1:.*]] = composer.stochastic_depth_keep %[[T1]] {drop_rate = 2.000000e-01 : f64}
// CHECK: %[[B1:.*]] = composer.if %[[K1]] -> (!composer.tensor) {
// CHECK: %[[C3:.*]] = composer.conv2d %[[B0]],
// CHECK: %[[R3:.*]] = composer.relu %[[C3]]
// CHECK: %[[F1:.*]] = composer.stochastic_depth %[[R3]], %[[T1]] {drop_rate = 2.000000e-01 : f64, method = "block"}
// CHECK: %[[S1:.*]] = composer.add %[[DOWN]], %[[F1]] {alpha = 1 : i64, composer.stochastic_depth}
// CHECK: composer.yield %[[S1]]
// CHECK: } else {
// CHECK: composer.yield %[[DOWN]]
// CHECK: }
// CHECK: return %[[B1]]

// Sample mode: the branch is scaled in place, nothing moves.
// SAMPLE-LABEL: module @blocks
// SAMPLE: %[[C1:.*]] = composer.conv2d %[[X:[^,]*]],
// SAMPLE: composer.if
// SAMPLE: %[[C2:.*]] = composer.conv2d
// SAMPLE: %[[T0:.*]] = composer.get_attr "l0.training"
// SAMPLE: %[[F0:.*]] = composer.stochastic_depth %[[C2]], %[[T0]] {drop_rate = 5.000000e-02 : f64, method = "sample"}
// SAMPLE: %[[S0:.*]] = composer.add %[[F0]], %[[X]] inplace {alpha = 1 : i64, composer.stochastic_depth}
// SAMPLE: composer.relu %[[S0]] inplace
// SAMPLE: %[[R3:.*]] = composer.relu
// SAMPLE: %[[DOWN:.*]] = composer.conv2d
// SAMPLE: %[[F1:.*]] = composer.stochastic_depth %[[R3]], %{{.*}} {drop_rate = 1.000000e-01 : f64, method = "sample"}
// SAMPLE: composer.add %[[DOWN]], %[[F1]] {alpha = 1 : i64, composer.stochastic_depth}
// SAMPLE-NOT: composer.stochastic_depth_keep

// UNIFORM-LABEL: module @blocks
// UNIFORM: composer.stochastic_depth_keep %{{.*}} {drop_rate = 5.000000e-01 : f64}
// UNIFORM: composer.stochastic_depth_keep %{{.*}} {drop_rate = 5.000000e-01 : f64}

// The warm-up scales every rate by one new buffer, 1 until composer-train
// ramps it.
// WARMUP-LABEL: module @blocks
// WARMUP: composer.buffer @_composer_stochastic_depth.scale init(dense<1.000000e+00> : tensor<f32>) : !composer.tensor<f32>
// WARMUP-NOT: composer.buffer
// WARMUP: %[[S:.*]] = composer.get_param @_composer_stochastic_depth.scale
// WARMUP: composer.stochastic_depth_keep %{{.*}} scale %[[S]] {drop_rate = 1.000000e-01 : f64}
// WARMUP: composer.stochastic_depth %{{.*}}, %{{.*}} scale %[[S]] {drop_rate = 1.000000e-01 : f64, method = "block"}
// WARMUP: %[[S1:.*]] = composer.get_param @_composer_stochastic_depth.scale
// WARMUP: composer.stochastic_depth_keep %{{.*}} scale %[[S1]] {drop_rate = 2.000000e-01 : f64}

// REPORT: remark: composer-stochastic-depth: 2 residual blocks made stochastic, 0 skipped

// LOWERED-LABEL: module @blocks
// LOWERED: %[[T0:.*]] = composer.get_attr "l0.training"
// LOWERED: %[[K0:.*]] = composer.if %[[T0]] -> (!composer.bool) {
// LOWERED: composer.op "aten::rand"
// LOWERED: composer.op "aten::ge"
// LOWERED: composer.op "aten::Bool"
// LOWERED: composer.if %[[K0]] -> (!composer.tensor) {
// LOWERED-NOT: composer.stochastic_depth{{ }}
// LOWERED-NOT: composer.stochastic_depth_keep

// -----

// A transformer's pre-norm feed-forward is a residual block too.
module @ffn {
  composer.parameter @fc1.weight : !composer.tensor<32x8xf32>
  composer.parameter @fc2.weight : !composer.tensor<8x32xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %n = composer.layer_norm %x, %none, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor, !composer.none, !composer.none) -> !composer.tensor
    %w1 = composer.get_param @fc1.weight : !composer.tensor
    %h = composer.linear %n, %w1, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %g = composer.gelu %h {approximate = "none"} : (!composer.tensor) -> !composer.tensor
    %w2 = composer.get_param @fc2.weight : !composer.tensor
    %f = composer.linear %g, %w2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %y = composer.add %x, %f {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}

// Any model: a transformer's pre-norm feed-forward, its only block (rate
// 0.2 of 0.2), the add's shortcut its first operand.
// CHECK-LABEL: module @ffn
// CHECK: %[[T:.*]] = composer.get_attr "training"
// CHECK: %[[K:.*]] = composer.stochastic_depth_keep %[[T]] {drop_rate = 2.000000e-01 : f64}
// CHECK: composer.if %[[K]] -> (!composer.tensor) {
// CHECK: composer.layer_norm
// CHECK: composer.linear
// CHECK: composer.gelu
// CHECK: %[[F:.*]] = composer.linear
// CHECK: %[[D:.*]] = composer.stochastic_depth %[[F]], %[[T]]
// CHECK: composer.add %{{.*}}, %[[D]] {alpha = 1 : i64, composer.stochastic_depth}
// CHECK: } else {
// CHECK-NEXT: composer.yield %{{.*}} : !composer.tensor
// CHECK-NEXT: }

// SAMPLE-LABEL: module @ffn
// SAMPLE: composer.stochastic_depth %{{.*}} {drop_rate = 1.000000e-01 : f64, method = "sample"}

// REPORT: remark: composer-stochastic-depth: 1 residual blocks made stochastic, 0 skipped

// -----

// Attention is a branch but not a chain: q and k both come from the norm,
// sizes are read from it, and a mask from elsewhere (an input of the
// block, which stays outside the composer.if).
module @attention {
  composer.parameter @q.weight : !composer.tensor<8x8xf32>
  composer.parameter @k.weight : !composer.tensor<8x8xf32>
  composer.parameter @proj.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor, %mask: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %m = composer.op "aten::logical_not"(%mask) : (!composer.tensor) -> !composer.tensor
    %n = composer.layer_norm %x, %none, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor, !composer.none, !composer.none) -> !composer.tensor
    %sizes = composer.op "aten::size"(%n) : (!composer.tensor) -> !composer.list<!composer.int>
    %wq = composer.get_param @q.weight : !composer.tensor
    %q = composer.linear %n, %wq, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %wk = composer.get_param @k.weight : !composer.tensor
    %k = composer.linear %n, %wk, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s = composer.op "aten::matmul"(%q, %k) : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %inf = composer.constant(0xFFF0000000000000 : f64) : !composer.float
    %masked = composer.op "aten::masked_fill"(%s, %m, %inf) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %v = composer.op "aten::view"(%masked, %sizes) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %wp = composer.get_param @proj.weight : !composer.tensor
    %o = composer.linear %v, %wp, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %y = composer.add %x, %o {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}

// CHECK-LABEL: module @attention
// CHECK: func.func @forward(%[[X:.*]]: !composer.tensor, %[[MASK:.*]]: !composer.tensor)
// CHECK: %[[M:.*]] = composer.op "aten::logical_not"(%[[MASK]])
// CHECK: %[[K:.*]] = composer.stochastic_depth_keep
// CHECK: composer.if %[[K]] -> (!composer.tensor) {
// CHECK: %[[N:.*]] = composer.layer_norm %[[X]]
// CHECK: composer.op "aten::size"(%[[N]])
// CHECK: composer.op "aten::matmul"
// CHECK: composer.op "aten::masked_fill"(%{{.*}}, %[[M]], %{{.*}})
// CHECK: %[[O:.*]] = composer.linear
// CHECK: %[[D:.*]] = composer.stochastic_depth %[[O]]
// CHECK: composer.add %[[X]], %[[D]] {alpha = 1 : i64, composer.stochastic_depth}
// CHECK: } else {
// CHECK-NEXT: composer.yield %[[X]] : !composer.tensor
// CHECK-NEXT: }

// REPORT: remark: composer-stochastic-depth: 1 residual blocks made stochastic, 0 skipped

// -----

// Adds that are not residual blocks.
module @skips {
  composer.parameter @conv.weight : !composer.tensor<8x8x3x3xf32>
  func.func @forward(%x: !composer.tensor, %z: !composer.tensor) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @conv.weight : !composer.tensor
    %c = composer.conv2d %x, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %unrelated = composer.add %c, %z {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %scaled = composer.add %c, %x {alpha = 2 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %r = composer.relu %x : (!composer.tensor) -> !composer.tensor
    %noconv = composer.add %r, %x {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %shared = composer.add %c, %x {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %unrelated, %scaled, %noconv, %shared, %c : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor
  }
}

// CHECK-LABEL: module @skips
// CHECK-NOT: composer.stochastic_depth
// CHECK-NOT: composer.if

// REPORT: warning: composer-stochastic-depth: 0 residual blocks made stochastic, 4 skipped
// REPORT-DAG: note: 1 skipped: add operands do not share an input
// REPORT-DAG: note: 1 skipped: alpha is not 1
// REPORT-DAG: note: 1 skipped: branch has no convolution or linear
// REPORT-DAG: note: 1 skipped: branch has other users

// -----

// A transformer's feed-forward residual with GPT-2's Conv1D projections
// (addmm on a flattened view) and its tanh GELU written out, as a trace
// records it: `1 + tanh(..)` adds a constant 0-d tensor, which is no block
// and no site (a script adds a scalar: no composer.add at all), and the
// add `x + 0.044715 x^3` has no linear in its branch.
module {
  composer.parameter @mlp.c_fc.weight : !composer.tensor<8x16xf32>
  composer.parameter @mlp.c_fc.bias : !composer.tensor<16xf32>
  composer.parameter @mlp.c_proj.weight : !composer.tensor<16x8xf32>
  composer.parameter @mlp.c_proj.bias : !composer.tensor<8xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %zero = composer.constant(0) : !composer.int
    %one = composer.constant(1) : !composer.int
    %two = composer.constant(2) : !composer.int
    %last = composer.constant(-1) : !composer.int
    %hidden = composer.constant(16) : !composer.int
    %width = composer.constant(8) : !composer.int
    %half = composer.constant(5.000000e-01) : !composer.float
    %cube = composer.constant(3.000000e+00) : !composer.float
    %coef = composer.constant(4.471500e-02) : !composer.float
    %root = composer.constant(0.79788456080286541) : !composer.float
    %onef = composer.constant(1.000000e+00) : !composer.float
    %sizes = composer.op "aten::size"(%x) : (!composer.tensor) -> !composer.list<!composer.int>
    %leading = composer.op "aten::slice"(%sizes, %none, %last, %one) : (!composer.list<!composer.int>, !composer.none, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %copy = composer.op "aten::list"(%leading) : (!composer.list<!composer.int>) -> !composer.list<!composer.int>
    %nf = composer.op "prim::ListConstruct"(%hidden) : (!composer.int) -> !composer.list<!composer.int>
    %hsizes = composer.op "aten::add"(%copy, %nf) : (!composer.list<!composer.int>, !composer.list<!composer.int>) -> !composer.list<!composer.int>
    %b1 = composer.get_param @mlp.c_fc.bias : !composer.tensor
    %in = composer.op "aten::size"(%x, %last) : (!composer.tensor, !composer.int) -> !composer.int
    %flat = composer.op "prim::ListConstruct"(%last, %in) : (!composer.int, !composer.int) -> !composer.list<!composer.int>
    %x2 = composer.view %x, %flat : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %w1 = composer.get_param @mlp.c_fc.weight : !composer.tensor
    %h2 = composer.op "aten::addmm"(%b1, %x2, %w1, %one, %one) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %h = composer.view %h2, %hsizes : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %g1 = composer.op "aten::mul"(%h, %half) : (!composer.tensor, !composer.float) -> !composer.tensor
    %g2 = composer.op "aten::pow"(%h, %cube) : (!composer.tensor, !composer.float) -> !composer.tensor
    %g3 = composer.op "aten::mul"(%g2, %coef) : (!composer.tensor, !composer.float) -> !composer.tensor
    %g4 = composer.add %h, %g3 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %g5 = composer.op "aten::mul"(%g4, %root) : (!composer.tensor, !composer.float) -> !composer.tensor
    %g6 = composer.op "aten::tanh"(%g5) : (!composer.tensor) -> !composer.tensor
    %unit = composer.constant(dense<1.000000e+00> : tensor<f64>) : !composer.tensor
    %g7 = composer.add %g6, %unit {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %a = composer.mul %g1, %g7 : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %d0 = composer.op "aten::size"(%a, %zero) : (!composer.tensor, !composer.int) -> !composer.int
    %d1 = composer.op "aten::size"(%a, %one) : (!composer.tensor, !composer.int) -> !composer.int
    %d2 = composer.op "aten::size"(%a, %two) : (!composer.tensor, !composer.int) -> !composer.int
    %flat2 = composer.op "prim::ListConstruct"(%last, %d2) : (!composer.int, !composer.int) -> !composer.list<!composer.int>
    %a2 = composer.view %a, %flat2 : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %w2 = composer.get_param @mlp.c_proj.weight : !composer.tensor
    %b2 = composer.get_param @mlp.c_proj.bias : !composer.tensor
    %y2 = composer.op "aten::addmm"(%b2, %a2, %w2, %one, %one) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %ysizes = composer.op "prim::ListConstruct"(%d0, %d1, %width) : (!composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %y = composer.view %y2, %ysizes : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %r = composer.add %x, %y {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %r : !composer.tensor
  }
}
// CHECK-LABEL: composer.parameter @mlp.c_fc.weight
// CHECK: func.func @forward(%[[X:[a-z0-9]+]]: !composer.tensor)
// CHECK: %[[KEEP:.*]] = composer.stochastic_depth_keep
// CHECK: composer.if %[[KEEP]]
// CHECK: composer.op "aten::addmm"
// CHECK: composer.op "aten::tanh"
// CHECK: composer.op "aten::addmm"
// CHECK: %[[DROP:.*]] = composer.stochastic_depth
// CHECK: composer.add %[[X]], %[[DROP]] {alpha = 1 : i64, composer.stochastic_depth}
// CHECK: } else {
// CHECK-NEXT: composer.yield %[[X]]

// REPORT: remark: composer-stochastic-depth: 1 residual blocks made stochastic, 1 skipped
// REPORT-NEXT: {{^}}module
// REPORT: note: 1 skipped: branch has no convolution or linear
