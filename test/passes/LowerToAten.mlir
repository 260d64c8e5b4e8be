// RUN: composer-opt %s -split-input-file --composer-lower-to-aten 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-lower-to-aten 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// blur_pool2d: a depthwise conv at padding 1, or, for inputs smaller than
// the filter, the input subsampled by the stride.
module {
  composer.buffer @b.filter init(dense<1.0> : tensor<1x1x3x3xf32>) : !composer.tensor<8x1x3x3xf32>
  func.func @blur(%x: !composer.tensor) -> !composer.tensor {
    %f = composer.get_param @b.filter : !composer.tensor
    %y = composer.blur_pool2d %x, %f {stride = array<i64: 2, 1>} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @blur
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK: %[[F:.*]] = composer.get_param @b.filter
// CHECK: %[[H:.*]] = composer.op "aten::size"(%[[X]], %{{.*}})
// CHECK: %[[W:.*]] = composer.op "aten::size"(%[[X]], %{{.*}})
// CHECK: %[[MIN:.*]] = composer.op "prim::min"(%[[H]], %[[W]])
// CHECK: %[[SMALL:.*]] = composer.op "aten::lt"(%[[MIN]], %{{.*}})
// CHECK: %[[Y:.*]] = composer.if %[[SMALL]] -> (!composer.tensor) {
// Only the strided dimension (2) is subsampled.
// CHECK: %[[S:.*]] = composer.op "aten::slice"(%[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: aten::slice
// CHECK: composer.yield %[[S]]
// CHECK: } else {
// The filter takes the input's dtype (bf16 after mixed precision).
// CHECK: %[[FT:.*]] = composer.op "aten::type_as"(%[[F]], %[[X]])
// CHECK: %[[C:.*]] = composer.conv2d %[[X]], %[[FT]], %{{.*}} {dilation = array<i64: 1, 1>, groups = 8 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 1>}
// CHECK: composer.yield %[[C]]
// CHECK: return %[[Y]]
// CHECK-NOT: blur_pool2d
// REPORT: remark: composer-lower-to-aten: 1 method ops lowered to aten

// -----

// Nothing to lower: no report (the usual case for an unchanged model).
module {
  func.func @plain(%x: !composer.tensor) -> !composer.tensor {
    return %x : !composer.tensor
  }
}
// CHECK-LABEL: func.func @plain
// REPORT-NOT: composer-lower-to-aten


// -----

// standardize_weight: Composer's var_mean over every dimension but the
// first, (W - mean) / sqrt(var + eps); where the weight's rank is unknown,
// the same on W.flatten(1), reshaped back like W.
module {
  func.func @standardize_weight(%w: !composer.tensor<8x4x3x3xf32>, %u: !composer.tensor) -> (!composer.tensor<8x4x3x3xf32>, !composer.tensor) {
    %0 = composer.standardize_weight %w {eps = 1.000000e-10 : f64} : (!composer.tensor<8x4x3x3xf32>) -> !composer.tensor<8x4x3x3xf32>
    %1 = composer.standardize_weight %u {eps = 1.000000e-05 : f64} : (!composer.tensor) -> !composer.tensor
    return %0, %1 : !composer.tensor<8x4x3x3xf32>, !composer.tensor
  }
}
// CHECK-LABEL: func.func @standardize_weight
// CHECK-SAME: (%[[W:.*]]: !composer.tensor<8x4x3x3xf32>, %[[U:.*]]: !composer.tensor)
// CHECK: %[[DIMS:.*]] = composer.constant([1, 2, 3]) : !composer.list<!composer.int>
// CHECK: %[[VM:.*]]:2 = composer.op "aten::var_mean"(%[[W]], %[[DIMS]], %{{.*}}, %{{.*}})
// CHECK: %[[C:.*]] = composer.op "aten::sub"(%[[W]], %[[VM]]#1, %{{.*}})
// CHECK: %[[EPS:.*]] = composer.constant(1.000000e-10) : !composer.float
// CHECK: %[[V:.*]] = composer.op "aten::add"(%[[VM]]#0, %[[EPS]], %{{.*}})
// CHECK: %[[STD:.*]] = composer.op "aten::sqrt"(%[[V]])
// CHECK: %[[S:.*]] = composer.op "aten::div"(%[[C]], %[[STD]]) : (!composer.tensor, !composer.tensor) -> !composer.tensor<8x4x3x3xf32>
// CHECK: %[[F:.*]] = composer.flatten %[[U]] {end_dim = -1 : i64, start_dim = 1 : i64}
// CHECK: %[[FDIMS:.*]] = composer.constant([1]) : !composer.list<!composer.int>
// CHECK: %[[FVM:.*]]:2 = composer.op "aten::var_mean"(%[[F]], %[[FDIMS]], %{{.*}}, %{{.*}})
// CHECK: %[[FC:.*]] = composer.op "aten::sub"(%[[F]], %[[FVM]]#1, %{{.*}})
// CHECK: %[[FEPS:.*]] = composer.constant(1.000000e-05) : !composer.float
// CHECK: %[[FV:.*]] = composer.op "aten::add"(%[[FVM]]#0, %[[FEPS]], %{{.*}})
// CHECK: %[[FSTD:.*]] = composer.op "aten::sqrt"(%[[FV]])
// CHECK: %[[FS:.*]] = composer.op "aten::div"(%[[FC]], %[[FSTD]])
// CHECK: %[[R:.*]] = composer.op "aten::reshape_as"(%[[FS]], %[[U]])
// CHECK: return %[[S]], %[[R]]
// CHECK-NOT: standardize_weight
// REPORT: remark: composer-lower-to-aten: 2 method ops lowered to aten

// -----

// stochastic_depth, sample: when training, the branch times a per-sample
// mask rand([B, 1, ...]) < keep, over keep (keep = 1 - rate, or 1 - rate *
// scale, clamped away from 0); otherwise the branch. block: the branch
// when training, else its expectation. stochastic_depth_keep: when
// training, bool(rand(()) >= rate), else true.
module {
  func.func @stochastic_depth(%f: !composer.tensor, %t: !composer.bool, %s: !composer.tensor<f32>) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.bool, !composer.bool) {
    %0 = composer.stochastic_depth %f, %t {drop_rate = 2.500000e-01 : f64, method = "sample"} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %1 = composer.stochastic_depth %f, %t {drop_rate = 2.500000e-01 : f64, method = "block"} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %2 = composer.stochastic_depth %f, %t scale %s {drop_rate = 2.500000e-01 : f64, method = "sample"} : (!composer.tensor, !composer.bool, !composer.tensor<f32>) -> !composer.tensor
    %3 = composer.stochastic_depth_keep %t {drop_rate = 2.500000e-01 : f64} : (!composer.bool) -> !composer.bool
    %4 = composer.stochastic_depth_keep %t scale %s {drop_rate = 2.500000e-01 : f64} : (!composer.bool, !composer.tensor<f32>) -> !composer.bool
    return %0, %1, %2, %3, %4 : !composer.tensor, !composer.tensor, !composer.tensor, !composer.bool, !composer.bool
  }
}
// CHECK-LABEL: func.func @stochastic_depth
// CHECK-SAME: (%[[F:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool, %[[S:.*]]: !composer.tensor<f32>)
// CHECK: %[[SAMPLE:.*]] = composer.if %[[T]] -> (!composer.tensor) {
// CHECK: %[[B:.*]] = composer.op "aten::size"(%[[F]], %{{.*}}) : (!composer.tensor, !composer.int) -> !composer.int
// CHECK: %[[RANK:.*]] = composer.op "aten::dim"(%[[F]])
// CHECK: %[[N:.*]] = composer.op "aten::sub"(%[[RANK]], %{{.*}})
// CHECK: %[[ONE:.*]] = composer.op "prim::ListConstruct"(%{{.*}}) : (!composer.int) -> !composer.list<!composer.int>
// CHECK: %[[ONES:.*]] = composer.op "aten::mul"(%[[ONE]], %[[N]])
// CHECK: %[[HEAD:.*]] = composer.op "prim::ListConstruct"(%[[B]])
// CHECK: %[[SHAPE:.*]] = composer.op "aten::add"(%[[HEAD]], %[[ONES]])
// CHECK: %[[DT:.*]] = composer.op "prim::dtype"(%[[F]])
// CHECK: %[[DEV:.*]] = composer.op "prim::device"(%[[F]])
// CHECK: %[[U:.*]] = composer.op "aten::rand"(%[[SHAPE]], %[[DT]], %{{.*}}, %[[DEV]], %{{.*}})
// CHECK: %[[KEEP:.*]] = composer.constant(7.500000e-01) : !composer.float
// CHECK: %[[LT:.*]] = composer.op "aten::lt"(%[[U]], %[[KEEP]])
// CHECK: %[[MASK:.*]] = composer.op "aten::type_as"(%[[LT]], %[[F]])
// CHECK: %[[DIV:.*]] = composer.constant(7.500000e-01) : !composer.float
// CHECK: %[[SCALED:.*]] = composer.op "aten::div"(%[[MASK]], %[[DIV]])
// CHECK: %[[DROPPED:.*]] = composer.op "aten::mul"(%[[F]], %[[SCALED]])
// CHECK: composer.yield %[[DROPPED]]
// CHECK: } else {
// CHECK-NEXT: composer.yield %[[F]]
// CHECK: %[[BLOCK:.*]] = composer.if %[[T]] -> (!composer.tensor) {
// CHECK-NEXT: composer.yield %[[F]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[E:.*]] = composer.constant(7.500000e-01) : !composer.float
// CHECK-NEXT: %[[EXP:.*]] = composer.op "aten::mul"(%[[F]], %[[E]])
// CHECK-NEXT: composer.yield %[[EXP]]
// CHECK: %[[WARM:.*]] = composer.if %[[T]] -> (!composer.tensor) {
// CHECK: %[[WU:.*]] = composer.op "aten::rand"
// CHECK: %[[RATE:.*]] = composer.op "aten::mul"(%[[S]], %{{.*}}) : (!composer.tensor<f32>, !composer.float) -> !composer.tensor
// CHECK: %[[WKEEP:.*]] = composer.op "aten::rsub"(%[[RATE]], %{{.*}}, %{{.*}})
// CHECK: %[[WLT:.*]] = composer.op "aten::lt"(%[[WU]], %[[WKEEP]])
// CHECK: %[[WMASK:.*]] = composer.op "aten::type_as"(%[[WLT]], %[[F]])
// CHECK: %[[WDIV:.*]] = composer.op "aten::clamp_min"(%[[WKEEP]], %{{.*}})
// CHECK: composer.op "aten::div"(%[[WMASK]], %[[WDIV]])
// CHECK: %[[K:.*]] = composer.if %[[T]] -> (!composer.bool) {
// CHECK: %[[EMPTY:.*]] = composer.constant([]) : !composer.list<!composer.int>
// CHECK: %[[KU:.*]] = composer.op "aten::rand"(%[[EMPTY]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!composer.list<!composer.int>, !composer.none, !composer.none, !composer.none, !composer.none) -> !composer.tensor
// CHECK: %[[P:.*]] = composer.constant(2.500000e-01) : !composer.float
// CHECK: %[[GE:.*]] = composer.op "aten::ge"(%[[KU]], %[[P]])
// CHECK: %[[KB:.*]] = composer.op "aten::Bool"(%[[GE]]) : (!composer.tensor) -> !composer.bool
// CHECK: composer.yield %[[KB]] : !composer.bool
// CHECK: } else {
// CHECK-NEXT: %[[TRUE:.*]] = composer.constant(true) : !composer.bool
// CHECK-NEXT: composer.yield %[[TRUE]]
// CHECK: %[[WK:.*]] = composer.if %[[T]] -> (!composer.bool) {
// CHECK: %[[WKU:.*]] = composer.op "aten::rand"
// CHECK: %[[WP:.*]] = composer.op "aten::mul"(%[[S]], %{{.*}})
// CHECK: composer.op "aten::ge"(%[[WKU]], %[[WP]]) : (!composer.tensor, !composer.tensor) -> !composer.tensor
// CHECK: return %[[SAMPLE]], %[[BLOCK]], %[[WARM]], %[[K]], %[[WK]]
// CHECK-NOT: stochastic_depth
// REPORT: remark: composer-lower-to-aten: 5 method ops lowered to aten

// -----

// gyro_dropout: when training, the indices re-drawn when step % max(period,
// 1) == 0, step advanced, sample s masked by masks[selected[s * min(tau, B)
// // B]] viewed over the last dimension (feature_dim -1) or the channels
// (1), scaled by 1 / (1 - p); otherwise the input.
module {
  func.func @gyro_dropout(%x: !composer.tensor, %t: !composer.bool, %m: !composer.tensor<8x4xf32>, %s: !composer.tensor<2xi64>, %n: !composer.tensor<i64>, %p: !composer.tensor<i64>) -> (!composer.tensor, !composer.tensor) {
    %0 = composer.gyro_dropout %x, %t masks %m selected %s step %n period %p {feature_dim = -1 : i64, p = 2.500000e-01 : f64, sigma = 8 : i64, tau = 2 : i64} : (!composer.tensor, !composer.bool, !composer.tensor<8x4xf32>, !composer.tensor<2xi64>, !composer.tensor<i64>, !composer.tensor<i64>) -> !composer.tensor
    %1 = composer.gyro_dropout %x, %t masks %m selected %s step %n period %p {feature_dim = 1 : i64, p = 2.500000e-01 : f64, sigma = 8 : i64, tau = 2 : i64} : (!composer.tensor, !composer.bool, !composer.tensor<8x4xf32>, !composer.tensor<2xi64>, !composer.tensor<i64>, !composer.tensor<i64>) -> !composer.tensor
    return %0, %1 : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @gyro_dropout
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool, %[[M:.*]]: !composer.tensor<8x4xf32>, %[[S:.*]]: !composer.tensor<2xi64>, %[[N:.*]]: !composer.tensor<i64>, %[[P:.*]]: !composer.tensor<i64>)
// CHECK: %[[LAST:.*]] = composer.if %[[T]] -> (!composer.tensor) {
// CHECK: %[[PER:.*]] = composer.op "aten::clamp_min"(%[[P]], %{{.*}})
// CHECK: %[[PHASE:.*]] = composer.op "aten::remainder"(%[[N]], %[[PER]])
// CHECK: %[[EQ:.*]] = composer.op "aten::eq"(%[[PHASE]], %{{.*}})
// CHECK: %[[DUE:.*]] = composer.op "aten::Bool"(%[[EQ]])
// CHECK: composer.if %[[DUE]] {
// CHECK: %[[SIGMA:.*]] = composer.constant(8) : !composer.int
// CHECK: %[[TAU:.*]] = composer.constant([2]) : !composer.list<!composer.int>
// CHECK: %[[LONG:.*]] = composer.constant(4) : !composer.int
// CHECK: %[[DEV:.*]] = composer.op "prim::device"(%[[S]])
// CHECK: %[[DRAWN:.*]] = composer.op "aten::randint"(%[[SIGMA]], %[[TAU]], %[[LONG]], %{{.*}}, %[[DEV]], %{{.*}})
// CHECK: composer.op "aten::copy_"(%[[S]], %[[DRAWN]], %{{.*}})
// CHECK-NEXT: composer.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: composer.yield
// CHECK-NEXT: }
// CHECK: composer.op "aten::add_"(%[[N]], %{{.*}}, %{{.*}})
// CHECK: %[[B:.*]] = composer.op "aten::size"(%[[X]], %{{.*}})
// CHECK: %[[ACTIVE:.*]] = composer.op "prim::min"(%{{.*}}, %[[B]])
// CHECK: %[[AR:.*]] = composer.op "aten::arange"(%[[B]],
// CHECK: %[[SCALED:.*]] = composer.op "aten::mul"(%[[AR]], %[[ACTIVE]])
// CHECK: %[[ROWS:.*]] = composer.op "aten::floor_divide"(%[[SCALED]], %[[B]])
// CHECK: %[[IDS:.*]] = composer.op "aten::index_select"(%[[S]], %{{.*}}, %[[ROWS]])
// CHECK: %[[ROWMASKS:.*]] = composer.op "aten::index_select"(%[[M]], %{{.*}}, %[[IDS]])
// CHECK: %[[RANK:.*]] = composer.op "aten::dim"(%[[X]])
// CHECK: %[[HEAD:.*]] = composer.op "prim::ListConstruct"(%[[B]])
// CHECK: %[[TAIL:.*]] = composer.op "prim::ListConstruct"(%{{.*}})
// CHECK: %[[REST:.*]] = composer.op "aten::add"(%{{.*}}, %[[TAIL]])
// CHECK: %[[SHAPE:.*]] = composer.op "aten::add"(%[[HEAD]], %[[REST]])
// CHECK: %[[VIEW:.*]] = composer.op "aten::view"(%[[ROWMASKS]], %[[SHAPE]])
// CHECK: %[[TYPED:.*]] = composer.op "aten::type_as"(%[[VIEW]], %[[X]])
// CHECK: %[[MASK:.*]] = composer.op "aten::expand_as"(%[[TYPED]], %[[X]])
// CHECK: %[[DROPPED:.*]] = composer.op "aten::mul"(%[[X]], %[[MASK]])
// CHECK: %[[SCALE:.*]] = composer.constant(1.3333333333333333) : !composer.float
// CHECK: %[[OUT:.*]] = composer.op "aten::mul"(%[[DROPPED]], %[[SCALE]])
// CHECK: composer.yield %[[OUT]]
// CHECK: } else {
// CHECK-NEXT: composer.yield %[[X]]
// CHECK: %[[CHANNELS:.*]] = composer.if %[[T]] -> (!composer.tensor) {
// CHECK: composer.op "aten::randint"
// CHECK: %[[CB:.*]] = composer.op "aten::size"(%[[X]], %{{.*}})
// CHECK: %[[MINUS1:.*]] = composer.constant(-1) : !composer.int
// CHECK: %[[CHEAD:.*]] = composer.op "prim::ListConstruct"(%[[CB]], %[[MINUS1]])
// CHECK: %[[CSHAPE:.*]] = composer.op "aten::add"(%[[CHEAD]], %{{.*}})
// CHECK: composer.op "aten::view"(%{{.*}}, %[[CSHAPE]])
// CHECK: return %[[LAST]], %[[CHANNELS]]
// CHECK-NOT: gyro_dropout
// REPORT: remark: composer-lower-to-aten: 2 method ops lowered to aten

// -----

// A method op whose result --input-spec refined: the lowered value that
// replaces it keeps the refined type (restored after the conversion, which
// has no materialization between the refined and the untyped type).
module {
  composer.parameter @se.fc1 : !composer.tensor<2x8xf32>
  composer.parameter @se.fc2 : !composer.tensor<8x2xf32>
  func.func @forward(%x: !composer.tensor<1x8x4x4xf32>) -> !composer.tensor<1x8x4x4xf32> {
    %w1 = composer.get_param @se.fc1 : !composer.tensor<2x8xf32>
    %w2 = composer.get_param @se.fc2 : !composer.tensor<8x2xf32>
    %y = composer.squeeze_excite %x, %w1, %w2 : (!composer.tensor<1x8x4x4xf32>, !composer.tensor<2x8xf32>, !composer.tensor<8x2xf32>) -> !composer.tensor<1x8x4x4xf32>
    %r = composer.relu %y : (!composer.tensor<1x8x4x4xf32>) -> !composer.tensor<1x8x4x4xf32>
    return %r : !composer.tensor<1x8x4x4xf32>
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[Y:.*]] = composer.mul {{.*}} -> !composer.tensor<1x8x4x4xf32>
// CHECK: composer.relu %[[Y]] : (!composer.tensor<1x8x4x4xf32>) -> !composer.tensor<1x8x4x4xf32>
// CHECK-NOT: squeeze_excite

// REPORT: remark: composer-lower-to-aten: 1 method ops lowered to aten, 0 skipped

// -----

// Refined method results that an if yields and @forward returns keep their
// types through the lowering (MobileNetV2's residual blocks under ghost
// batch norm failed to lower: "failed to materialize conversion").
module {
  composer.parameter @se.fc1 : !composer.tensor<2x8xf32>
  composer.parameter @se.fc2 : !composer.tensor<8x2xf32>
  func.func @forward(%x: !composer.tensor<1x8x4x4xf32>, %c: !composer.bool) -> (!composer.tensor<1x8x4x4xf32>, !composer.tensor<1x8x4x4xf32>) {
    %w1 = composer.get_param @se.fc1 : !composer.tensor<2x8xf32>
    %w2 = composer.get_param @se.fc2 : !composer.tensor<8x2xf32>
    %r = composer.if %c -> (!composer.tensor<1x8x4x4xf32>) {
      %y = composer.squeeze_excite %x, %w1, %w2 : (!composer.tensor<1x8x4x4xf32>, !composer.tensor<2x8xf32>, !composer.tensor<8x2xf32>) -> !composer.tensor<1x8x4x4xf32>
      composer.yield %y : !composer.tensor<1x8x4x4xf32>
    } else {
      composer.yield %x : !composer.tensor<1x8x4x4xf32>
    }
    %z = composer.squeeze_excite %x, %w1, %w2 : (!composer.tensor<1x8x4x4xf32>, !composer.tensor<2x8xf32>, !composer.tensor<8x2xf32>) -> !composer.tensor<1x8x4x4xf32>
    return %r, %z : !composer.tensor<1x8x4x4xf32>, !composer.tensor<1x8x4x4xf32>
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: -> (!composer.tensor<1x8x4x4xf32>, !composer.tensor<1x8x4x4xf32>)
// CHECK: %[[R:.*]] = composer.if %{{.*}} -> (!composer.tensor<1x8x4x4xf32>) {
// CHECK: %[[Y:.*]] = composer.mul {{.*}} -> !composer.tensor<1x8x4x4xf32>
// CHECK: composer.yield %[[Y]] : !composer.tensor<1x8x4x4xf32>
// CHECK: %[[Z:.*]] = composer.mul {{.*}} -> !composer.tensor<1x8x4x4xf32>
// CHECK: return %[[R]], %[[Z]] : !composer.tensor<1x8x4x4xf32>, !composer.tensor<1x8x4x4xf32>
// CHECK-NOT: squeeze_excite

// REPORT: remark: composer-lower-to-aten: 2 method ops lowered to aten, 0 skipped
