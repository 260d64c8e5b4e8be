// RUN: composer-opt %s -split-input-file --composer-glu 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-glu 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-glu="gated-layer-bias=true" 2>/dev/null | FileCheck %s --check-prefix=GATED-BIAS
// RUN: composer-opt %s -split-input-file --composer-glu="non-gated-layer-bias=true" 2>/dev/null | FileCheck %s --check-prefix=NON-GATED-BIAS
// RUN: not composer-opt %s --composer-glu="gated-layer-bias=maybe" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: composer-opt %s -split-input-file --composer-glu 2>/dev/null | FileCheck %s --check-prefix=ROUNDING
// Idempotent, biases included.
// RUN: composer-opt %s -split-input-file --composer-glu="gated-layer-bias=true non-gated-layer-bias=true" 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-glu="gated-layer-bias=true non-gated-layer-bias=true" --composer-glu="gated-layer-bias=true non-gated-layer-bias=true" 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// A second run only finds gated units.
// RUN: composer-opt %t.once.mlir -split-input-file --composer-glu 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN

// GPT-2's feed-forward (no dropout between): W1 is replaced by the gated
// and non-gated projections, its parameters stay, frozen; W2 is untouched.
module {
  composer.parameter @mlp.0.weight : !composer.tensor<128x32xf32>
  composer.parameter @mlp.0.bias : !composer.tensor<128xf32>
  composer.parameter @mlp.2.weight : !composer.tensor<32x128xf32>
  composer.parameter @mlp.2.bias : !composer.tensor<32xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %w1 = composer.get_param @mlp.0.weight : !composer.tensor
    %b1 = composer.get_param @mlp.0.bias : !composer.tensor
    %h = composer.linear %x, %w1, %b1 : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    %a = composer.gelu %h {approximate = "tanh"} : (!composer.tensor) -> !composer.tensor
    %w2 = composer.get_param @mlp.2.weight : !composer.tensor
    %b2 = composer.get_param @mlp.2.bias : !composer.tensor
    %y = composer.linear %a, %w2, %b2 : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: module
// CHECK-DAG: composer.parameter @mlp.0.weight frozen : !composer.tensor<128x32xf32>
// CHECK-DAG: composer.parameter @mlp.0.bias frozen : !composer.tensor<128xf32>
// CHECK-DAG: composer.parameter @mlp.2.weight : !composer.tensor<32x128xf32>
// CHECK-DAG: composer.parameter @mlp.2.bias : !composer.tensor<32xf32>
// CHECK-DAG: composer.parameter @mlp.0.gated_layer.weight init("linear_default") : !composer.tensor<128x32xf32>
// CHECK-DAG: composer.parameter @mlp.0.non_gated_layer.weight init("linear_default") : !composer.tensor<128x32xf32>
// CHECK-NOT: composer.parameter
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK-NOT: @mlp.0.weight
// CHECK-NOT: @mlp.0.bias
// CHECK: %[[NONE:.*]] = composer.constant(none)
// CHECK: %[[WG:.*]] = composer.get_param @mlp.0.gated_layer.weight : <128x32xf32>
// CHECK: %[[G:.*]] = composer.linear %[[X]], %[[WG]], %[[NONE]]
// CHECK: %[[A:.*]] = composer.gelu %[[G]] {approximate = "tanh"}
// CHECK: %[[WV:.*]] = composer.get_param @mlp.0.non_gated_layer.weight
// CHECK: %[[V:.*]] = composer.linear %[[X]], %[[WV]], %[[NONE]]
// CHECK: %[[P:.*]] = composer.mul %[[A]], %[[V]]
// CHECK: %[[W2:.*]] = composer.get_param @mlp.2.weight
// CHECK: %[[B2:.*]] = composer.get_param @mlp.2.bias
// CHECK: %[[Y:.*]] = composer.linear %[[P]], %[[W2]], %[[B2]]
// CHECK: return %[[Y]]

// With the options, new biases of W1's output size, initialized as
// nn.Linear's bias (bound 1/sqrt(in features)).
// GATED-BIAS-LABEL: module
// GATED-BIAS: composer.parameter @mlp.0.gated_layer.bias init("linear_default:32") : !composer.tensor<128xf32>
// GATED-BIAS-NOT: non_gated_layer.bias
// GATED-BIAS-LABEL: func.func @forward
// GATED-BIAS-SAME: (%[[X:.*]]: !composer.tensor)
// GATED-BIAS: %[[WG:.*]] = composer.get_param @mlp.0.gated_layer.weight
// GATED-BIAS: %[[BG:.*]] = composer.get_param @mlp.0.gated_layer.bias : <128xf32>
// GATED-BIAS: composer.linear %[[X]], %[[WG]], %[[BG]]
// GATED-BIAS: %[[NONE:.*]] = composer.constant(none)
// GATED-BIAS: %[[WV:.*]] = composer.get_param @mlp.0.non_gated_layer.weight
// GATED-BIAS: composer.linear %[[X]], %[[WV]], %[[NONE]]

// NON-GATED-BIAS-LABEL: module
// NON-GATED-BIAS-NOT: @mlp.0.gated_layer.bias
// NON-GATED-BIAS: composer.parameter @mlp.0.non_gated_layer.bias init("linear_default:32") : !composer.tensor<128xf32>
// NON-GATED-BIAS-LABEL: func.func @forward
// NON-GATED-BIAS-SAME: (%[[X:.*]]: !composer.tensor)
// NON-GATED-BIAS: %[[NONE:.*]] = composer.constant(none)
// NON-GATED-BIAS: %[[WG:.*]] = composer.get_param @mlp.0.gated_layer.weight
// NON-GATED-BIAS: composer.linear %[[X]], %[[WG]], %[[NONE]]
// NON-GATED-BIAS: %[[WV:.*]] = composer.get_param @mlp.0.non_gated_layer.weight
// NON-GATED-BIAS: %[[BV:.*]] = composer.get_param @mlp.0.non_gated_layer.bias
// NON-GATED-BIAS: composer.linear %[[X]], %[[WV]], %[[BV]]

// REPORT: remark: composer-glu: 1 feed-forwards gated, 0 skipped
// AGAIN: warning: composer-glu: 0 feed-forwards gated, 1 skipped
// AGAIN: note: 1 skipped: already gated

// -----

// ViT's feed-forward: the dropout stays between the gated product and W2;
// W1 without bias. A generic aten activation keeps its scalar operands.
module {
  composer.parameter @vit.mlp.0.weight : !composer.tensor<16x8xf32>
  composer.parameter @vit.mlp.3.weight : !composer.tensor<8x16xf32>
  composer.parameter @leaky.fc1.weight : !composer.tensor<16x8xf32>
  composer.parameter @leaky.fc2.weight : !composer.tensor<8x16xf32>
  func.func @forward(%x: !composer.tensor<2x8xf32>, %train: !composer.bool) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w1 = composer.get_param @vit.mlp.0.weight : !composer.tensor
    %h = composer.linear %x, %w1, %none : (!composer.tensor<2x8xf32>, !composer.tensor, !composer.none) -> !composer.tensor<2x16xf32>
    %a = composer.relu %h inplace : (!composer.tensor<2x16xf32>) -> !composer.tensor<2x16xf32>
    %d = composer.dropout %a, %train {p = 1.000000e-01 : f64} : (!composer.tensor<2x16xf32>, !composer.bool) -> !composer.tensor<2x16xf32>
    %w2 = composer.get_param @vit.mlp.3.weight : !composer.tensor
    %y = composer.linear %d, %w2, %none : (!composer.tensor<2x16xf32>, !composer.tensor, !composer.none) -> !composer.tensor<2x8xf32>
    %lw1 = composer.get_param @leaky.fc1.weight : !composer.tensor
    %lh = composer.linear %y, %lw1, %none : (!composer.tensor<2x8xf32>, !composer.tensor, !composer.none) -> !composer.tensor
    %slope = composer.constant(2.000000e-01) : !composer.float
    %la = composer.op "aten::leaky_relu"(%lh, %slope) : (!composer.tensor, !composer.float) -> !composer.tensor
    %lw2 = composer.get_param @leaky.fc2.weight : !composer.tensor
    %ly = composer.linear %la, %lw2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %ly : !composer.tensor
  }
}
// CHECK-LABEL: module
// CHECK-DAG: composer.parameter @vit.mlp.0.weight frozen : !composer.tensor<16x8xf32>
// CHECK-DAG: composer.parameter @vit.mlp.0.gated_layer.weight init("linear_default") : !composer.tensor<16x8xf32>
// CHECK-DAG: composer.parameter @vit.mlp.0.non_gated_layer.weight init("linear_default") : !composer.tensor<16x8xf32>
// CHECK-DAG: composer.parameter @leaky.fc1.weight frozen
// CHECK-DAG: composer.parameter @leaky.fc1.gated_layer.weight
// CHECK-DAG: composer.parameter @leaky.fc1.non_gated_layer.weight
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<2x8xf32>, %[[TRAIN:.*]]: !composer.bool)
// CHECK: %[[NONE:.*]] = composer.constant(none)
// CHECK: %[[WG:.*]] = composer.get_param @vit.mlp.0.gated_layer.weight
// CHECK: %[[G:.*]] = composer.linear %[[X]], %[[WG]], %[[NONE]] : ({{.*}}) -> !composer.tensor<2x16xf32>
// CHECK: %[[A:.*]] = composer.relu %[[G]] inplace
// CHECK: %[[WV:.*]] = composer.get_param @vit.mlp.0.non_gated_layer.weight
// CHECK: %[[V:.*]] = composer.linear %[[X]], %[[WV]], %[[NONE]] : ({{.*}}) -> !composer.tensor<2x16xf32>
// CHECK: %[[P:.*]] = composer.mul %[[A]], %[[V]] : (!composer.tensor<2x16xf32>, !composer.tensor<2x16xf32>) -> !composer.tensor<2x16xf32>
// CHECK: %[[D:.*]] = composer.dropout %[[P]], %[[TRAIN]] {p = 1.000000e-01 : f64}
// CHECK: %[[Y:.*]] = composer.linear %[[D]], %{{.*}}, %[[NONE]]
// CHECK: %[[SLOPE:.*]] = composer.constant(2.000000e-01)
// CHECK: %[[LG:.*]] = composer.linear %[[Y]], %{{.*}}, %[[NONE]]
// CHECK: %[[LA:.*]] = composer.op "aten::leaky_relu"(%[[LG]], %[[SLOPE]])
// CHECK: %[[LV:.*]] = composer.linear %[[Y]], %{{.*}}, %[[NONE]]
// CHECK: %[[LP:.*]] = composer.mul %[[LA]], %[[LV]]
// CHECK: %[[LY:.*]] = composer.linear %[[LP]]
// CHECK: return %[[LY]]

// REPORT: remark: composer-glu: 2 feed-forwards gated, 0 skipped
// AGAIN: warning: composer-glu: 0 feed-forwards gated, 2 skipped
// AGAIN: note: 2 skipped: already gated

// -----

// Sites skipped, with their reasons; linears not followed by an activation
// (the down projections) are not feed-forwards and go unreported.
module {
  composer.parameter @shared.weight : !composer.tensor<16x8xf32>
  composer.parameter @users.weight : !composer.tensor<16x8xf32>
  composer.parameter @notlinear.weight : !composer.tensor<16x8xf32>
  composer.parameter @asweight.weight : !composer.tensor<16x8xf32>
  composer.parameter @dropusers.weight : !composer.tensor<16x8xf32>
  composer.parameter @down.weight : !composer.tensor<8x16xf32>
  func.func @forward(%x: !composer.tensor, %train: !composer.bool) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %wd = composer.get_param @down.weight : !composer.tensor
    // The linear's result is also returned.
    %w0 = composer.get_param @shared.weight : !composer.tensor
    %h0 = composer.linear %x, %w0, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %a0 = composer.silu %h0 : (!composer.tensor) -> !composer.tensor
    %y0 = composer.linear %a0, %wd, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    // The activation's result is also added to the output.
    %w1 = composer.get_param @users.weight : !composer.tensor
    %h1 = composer.linear %x, %w1, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %a1 = composer.gelu %h1 {approximate = "none"} : (!composer.tensor) -> !composer.tensor
    %y1 = composer.linear %a1, %wd, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s1 = composer.add %y1, %a1 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    // The dropout's result is also returned.
    %w4 = composer.get_param @dropusers.weight : !composer.tensor
    %h4 = composer.linear %x, %w4, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %a4 = composer.hardswish %h4 : (!composer.tensor) -> !composer.tensor
    %d4 = composer.dropout %a4, %train {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %y4 = composer.linear %d4, %wd, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    // Not followed by a linear: a dropout, then the function's result.
    %w2 = composer.get_param @notlinear.weight : !composer.tensor
    %h2 = composer.linear %x, %w2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %a2 = composer.sigmoid %h2 : (!composer.tensor) -> !composer.tensor
    %d2 = composer.dropout %a2, %train {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
    // The activation is another linear's weight, not its input.
    %w3 = composer.get_param @asweight.weight : !composer.tensor
    %h3 = composer.linear %x, %w3, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %a3 = composer.op "aten::tanh"(%h3) : (!composer.tensor) -> !composer.tensor
    %y3 = composer.linear %x, %a3, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %h0, %s1, %d2, %y3, %d4, %y4 : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// Nothing changes.
// CHECK-LABEL: module
// CHECK-NOT: frozen
// CHECK-NOT: gated_layer
// CHECK-LABEL: func.func @forward
// CHECK-NOT: composer.mul
// CHECK: return

// REPORT: warning: composer-glu: 0 feed-forwards gated, 5 skipped
// REPORT: note: 1 skipped: the linear's result has other users
// REPORT: note: 1 skipped: the activation's result has other users
// REPORT: note: 1 skipped: the dropout's result has other users
// REPORT: note: 2 skipped: not followed by a linear
// AGAIN: warning: composer-glu: 0 feed-forwards gated, 5 skipped

// -----

// A chain linear -> relu -> linear -> relu -> linear gates the first unit
// only: the middle linear is its W2, which keeps its weight. A model's own
// gated unit (SwiGLU) is left alone. W1's weight, tied to another layer,
// stays trainable; its bias, read by W1 only, is frozen. A weight computed
// in the graph is not a parameter W1 could leave.
module {
  composer.parameter @chain.0.weight : !composer.tensor<16x8xf32>
  composer.parameter @chain.2.weight : !composer.tensor<16x16xf32>
  composer.parameter @chain.4.weight : !composer.tensor<8x16xf32>
  composer.parameter @swiglu.w1.weight : !composer.tensor<16x8xf32>
  composer.parameter @swiglu.w3.weight : !composer.tensor<16x8xf32>
  composer.parameter @swiglu.w2.weight : !composer.tensor<8x16xf32>
  composer.parameter @tied.weight : !composer.tensor<16x8xf32>
  composer.parameter @tied.bias : !composer.tensor<16xf32>
  composer.parameter @computed.weight : !composer.tensor<16x8xf64>
  func.func @forward(%x: !composer.tensor) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %c0 = composer.get_param @chain.0.weight : !composer.tensor
    %c1 = composer.linear %x, %c0, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %c2 = composer.relu %c1 : (!composer.tensor) -> !composer.tensor
    %c3 = composer.get_param @chain.2.weight : !composer.tensor
    %c4 = composer.linear %c2, %c3, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %c5 = composer.relu %c4 : (!composer.tensor) -> !composer.tensor
    %c6 = composer.get_param @chain.4.weight : !composer.tensor
    %c7 = composer.linear %c5, %c6, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s1 = composer.get_param @swiglu.w1.weight : !composer.tensor
    %s2 = composer.linear %x, %s1, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s3 = composer.silu %s2 : (!composer.tensor) -> !composer.tensor
    %s4 = composer.get_param @swiglu.w3.weight : !composer.tensor
    %s5 = composer.linear %x, %s4, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s6 = composer.mul %s3, %s5 : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %s7 = composer.get_param @swiglu.w2.weight : !composer.tensor
    %s8 = composer.linear %s6, %s7, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %t0 = composer.get_param @tied.weight : !composer.tensor
    %tb = composer.get_param @tied.bias : !composer.tensor
    %t1 = composer.linear %x, %t0, %tb : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    %t2 = composer.gelu %t1 {approximate = "none"} : (!composer.tensor) -> !composer.tensor
    %t3 = composer.linear %t2, %c6, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %t4 = composer.get_param @tied.weight : !composer.tensor
    %t5 = composer.linear %x, %t4, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %p0 = composer.get_param @computed.weight : !composer.tensor
    %p1 = composer.to_dtype %p0 {copy = false, dtype = #composer.dtype<f32>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
    %p2 = composer.linear %x, %p1, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %p3 = composer.relu %p2 : (!composer.tensor) -> !composer.tensor
    %p4 = composer.linear %p3, %c6, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %c7, %s8, %t3, %t5, %p4 : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: module
// CHECK-DAG: composer.parameter @chain.0.weight frozen
// CHECK-DAG: composer.parameter @chain.2.weight :
// CHECK-DAG: composer.parameter @chain.0.gated_layer.weight
// CHECK-DAG: composer.parameter @swiglu.w1.weight :
// CHECK-DAG: composer.parameter @tied.weight :
// CHECK-DAG: composer.parameter @tied.bias frozen
// CHECK-DAG: composer.parameter @tied.gated_layer.weight
// CHECK-DAG: composer.parameter @computed.weight :
// CHECK-NOT: chain.2.gated_layer
// CHECK-NOT: swiglu.w1.gated_layer
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK: %[[CG:.*]] = composer.linear %[[X]]
// CHECK: %[[CA:.*]] = composer.relu %[[CG]]
// CHECK: %[[CV:.*]] = composer.linear %[[X]]
// CHECK: %[[CP:.*]] = composer.mul %[[CA]], %[[CV]]
// CHECK: %[[C2:.*]] = composer.get_param @chain.2.weight
// CHECK: %[[C4:.*]] = composer.linear %[[CP]], %[[C2]]
// CHECK: %[[C5:.*]] = composer.relu %[[C4]]
// CHECK: %[[C7:.*]] = composer.linear %[[C5]]
// CHECK: %[[S3:.*]] = composer.silu
// CHECK: %[[S6:.*]] = composer.mul %[[S3]]
// CHECK: %[[S8:.*]] = composer.linear %[[S6]]
// CHECK: composer.get_param @tied.gated_layer.weight
// CHECK: %[[T2:.*]] = composer.gelu
// CHECK: composer.get_param @tied.non_gated_layer.weight
// CHECK: composer.mul %[[T2]]
// CHECK: %[[T4:.*]] = composer.get_param @tied.weight
// CHECK: composer.linear %[[X]], %[[T4]]
// CHECK: %[[P1:.*]] = composer.to_dtype
// CHECK: composer.linear %[[X]], %[[P1]]

// REPORT: remark: composer-glu: 2 feed-forwards gated, 3 skipped
// REPORT: note: 1 skipped: reads a gated unit's output
// REPORT: note: 1 skipped: already gated
// REPORT: note: 1 skipped: the weight is not a 2-D parameter
// AGAIN: warning: composer-glu: 0 feed-forwards gated, 5 skipped

// -----

// Inside a branch, a feed-forward is gated there; one whose activation is
// in a branch while W1 is outside is skipped.
module {
  composer.parameter @inner.0.weight : !composer.tensor<16x8xf32>
  composer.parameter @inner.2.weight : !composer.tensor<8x16xf32>
  composer.parameter @outer.0.weight : !composer.tensor<16x8xf32>
  func.func @forward(%x: !composer.tensor, %c: !composer.bool) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %y = composer.if %c -> (!composer.tensor) {
      %w1 = composer.get_param @inner.0.weight : !composer.tensor
      %h = composer.linear %x, %w1, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      %a = composer.relu %h : (!composer.tensor) -> !composer.tensor
      %w2 = composer.get_param @inner.2.weight : !composer.tensor
      %o = composer.linear %a, %w2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      composer.yield %o : !composer.tensor
    } else {
      composer.yield %x : !composer.tensor
    }
    %wo = composer.get_param @outer.0.weight : !composer.tensor
    %ho = composer.linear %x, %wo, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %z = composer.if %c -> (!composer.tensor) {
      %ao = composer.relu %ho : (!composer.tensor) -> !composer.tensor
      %w2 = composer.get_param @inner.2.weight : !composer.tensor
      %oo = composer.linear %ao, %w2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      composer.yield %oo : !composer.tensor
    } else {
      composer.yield %x : !composer.tensor
    }
    return %y, %z : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: module
// CHECK-DAG: composer.parameter @inner.0.weight frozen
// CHECK-DAG: composer.parameter @outer.0.weight :
// CHECK-LABEL: func.func @forward
// CHECK: composer.if
// CHECK-NEXT: composer.get_param @inner.0.gated_layer.weight
// CHECK-NEXT: %[[G:.*]] = composer.linear
// CHECK-NEXT: %[[A:.*]] = composer.relu %[[G]]
// CHECK-NEXT: composer.get_param @inner.0.non_gated_layer.weight
// CHECK-NEXT: %[[V:.*]] = composer.linear
// CHECK-NEXT: %[[P:.*]] = composer.mul %[[A]], %[[V]]
// CHECK: composer.linear %[[P]]
// CHECK: composer.get_param @outer.0.weight

// REPORT: remark: composer-glu: 1 feed-forwards gated, 1 skipped
// REPORT: note: 1 skipped: the activation is in another region
// AGAIN: warning: composer-glu: 0 feed-forwards gated, 2 skipped

// -----

// GPT-2's feed-forward as Hugging Face writes it: Conv1D projections
// (addmm on x flattened to 2-D, weight [in, out], viewed back; c_fc's sizes
// as a script computes them, c_proj's as a trace records them) and the tanh
// GELU written out. The gated projections are nn.Linear's ([out, in]) on
// x itself, the activation's ops are applied to the gate, and W1's addmm,
// views and size reads go.
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
    %g7 = composer.op "aten::add"(%g6, %onef, %one) : (!composer.tensor, !composer.float, !composer.int) -> !composer.tensor
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
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: module
// CHECK-DAG: composer.parameter @mlp.c_fc.weight frozen : !composer.tensor<8x16xf32>
// CHECK-DAG: composer.parameter @mlp.c_fc.bias frozen : !composer.tensor<16xf32>
// CHECK-DAG: composer.parameter @mlp.c_fc.gated_layer.weight init("linear_default") : !composer.tensor<16x8xf32>
// CHECK-DAG: composer.parameter @mlp.c_fc.non_gated_layer.weight init("linear_default") : !composer.tensor<16x8xf32>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK-NOT: aten::size"(%[[X]]
// CHECK: %[[WG:.*]] = composer.get_param @mlp.c_fc.gated_layer.weight
// CHECK-NEXT: %[[G:.*]] = composer.linear %[[X]], %[[WG]]
// CHECK-NEXT: %[[HALF:.*]] = composer.op "aten::mul"(%[[G]],
// CHECK-NEXT: %[[CUBE:.*]] = composer.op "aten::pow"(%[[G]],
// CHECK-NEXT: %[[T1:.*]] = composer.op "aten::mul"(%[[CUBE]],
// CHECK-NEXT: %[[T2:.*]] = composer.add %[[G]], %[[T1]]
// CHECK-NEXT: %[[T3:.*]] = composer.op "aten::mul"(%[[T2]],
// CHECK-NEXT: %[[T4:.*]] = composer.op "aten::tanh"(%[[T3]])
// CHECK-NEXT: %[[T5:.*]] = composer.op "aten::add"(%[[T4]],
// CHECK-NEXT: %[[A:.*]] = composer.mul %[[HALF]], %[[T5]]
// CHECK-NEXT: %[[WV:.*]] = composer.get_param @mlp.c_fc.non_gated_layer.weight
// CHECK-NEXT: %[[V:.*]] = composer.linear %[[X]], %[[WV]]
// CHECK-NEXT: %[[P:.*]] = composer.mul %[[A]], %[[V]]
// CHECK-NOT: @mlp.c_fc.weight
// CHECK: composer.view %[[P]]
// CHECK: composer.get_param @mlp.c_proj.weight
// CHECK: composer.op "aten::addmm"

// REPORT: remark: composer-glu: 1 feed-forwards gated, 0 skipped
// AGAIN: warning: composer-glu: 0 feed-forwards gated, 1 skipped

// BAD: for the --gated-layer-bias option: 'maybe' is invalid value for boolean argument

// -----

// floor between two linears is no activation (it has no gradient): the
// feed-forward is left as it is.
module {
  composer.parameter @rounded.fc1.weight : !composer.tensor<16x8xf32>
  composer.parameter @rounded.fc2.weight : !composer.tensor<8x16xf32>
  func.func @forward(%x: !composer.tensor<2x8xf32>) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w1 = composer.get_param @rounded.fc1.weight : !composer.tensor
    %h = composer.linear %x, %w1, %none : (!composer.tensor<2x8xf32>, !composer.tensor, !composer.none) -> !composer.tensor
    %f = composer.op "aten::floor"(%h) : (!composer.tensor) -> !composer.tensor
    %w2 = composer.get_param @rounded.fc2.weight : !composer.tensor
    %y = composer.linear %f, %w2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// ROUNDING: composer.parameter @rounded.fc1.weight : !composer.tensor<16x8xf32>
// ROUNDING-NOT: @rounded.fc1.gated_layer
// ROUNDING: composer.op "aten::floor"
