// RUN: composer-opt %s -split-input-file --composer-weight-standardization 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-weight-standardization 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-weight-standardization="n-last-layers-ignore=1" 2>/dev/null | FileCheck %s --check-prefix=IGNORE1
// RUN: composer-opt %s -split-input-file --composer-weight-standardization="n-last-layers-ignore=2" 2>/dev/null | FileCheck %s --check-prefix=IGNORE2
// RUN: composer-opt %s -split-input-file --composer-weight-standardization="n-last-layers-ignore=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT2
// RUN: composer-opt %s -split-input-file --composer-weight-standardization="n-last-layers-ignore=9" 2>&1 >/dev/null | FileCheck %s --check-prefix=ALL
// Idempotent, with and without layers ignored.
// RUN: composer-opt %s -split-input-file --composer-weight-standardization 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-weight-standardization --composer-weight-standardization 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: composer-opt %s -split-input-file --composer-weight-standardization="n-last-layers-ignore=1" 2>/dev/null > %t.once1.mlir
// RUN: composer-opt %s -split-input-file --composer-weight-standardization="n-last-layers-ignore=1" --composer-weight-standardization="n-last-layers-ignore=1" 2>/dev/null > %t.twice1.mlir
// RUN: diff %t.once1.mlir %t.twice1.mlir
// RUN: composer-opt %s -split-input-file --composer-weight-standardization --composer-weight-standardization 2>&1 >/dev/null | FileCheck %s --check-prefix=TWICE
// Bad options.
// RUN: not composer-opt %s --composer-weight-standardization="n-last-layers-ignore=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not composer-opt %s --composer-weight-standardization="n-last-layers-ignore=many" 2>&1 | FileCheck %s --check-prefix=BADOPT
// Passes that reason about a weight's parameter look through the
// standardization (a WeightView): channels-last after it finds the weights
// it finds without it (not those behind mixed precision's casts, in either).
// RUN: composer-opt %s -split-input-file --composer-channels-last 2>&1 >/dev/null | FileCheck %s --check-prefix=THEN-CL
// RUN: composer-opt %s -split-input-file --composer-weight-standardization --composer-channels-last 2>&1 >/dev/null | FileCheck %s --check-prefix=THEN-CL
// THEN-CL: composer-channels-last: 3 convolution weights made channels_last, 2 skipped
// THEN-CL: composer-channels-last: 3 convolution weights made channels_last, 0 skipped
// THEN-CL: composer-channels-last: 0 convolution weights made channels_last, 3 skipped
// Lowered to aten.
// RUN: composer-opt %s -split-input-file --composer-weight-standardization --composer-lower-to-aten 2>/dev/null | FileCheck %s --check-prefix=LOWERED

// Every convolution kind: typed conv2d, traced _convolution, a scripted
// Conv1d's generic aten::conv1d. Transposed convolutions (Composer matches
// Conv1d/2d/3d only) and weights that are no parameter are skipped.
module @kinds {
  composer.parameter @stem.weight : !composer.tensor<8x3x3x3xf32>
  composer.parameter @up.weight : !composer.tensor<8x8x2x2xf32>
  composer.parameter @down.weight : !composer.tensor<8x8x3x3xf32>
  composer.parameter @seq.weight : !composer.tensor<8x8x3xf32>
  func.func @forward(%x: !composer.tensor, %s: !composer.tensor, %free: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %ones = composer.constant([1]) : !composer.list<!composer.int>
    %zeros = composer.constant([0]) : !composer.list<!composer.int>
    %one = composer.constant(1) : !composer.int
    %w0 = composer.get_param @stem.weight : !composer.tensor
    %0 = composer.conv2d %x, %w0, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %up = composer.get_param @up.weight : !composer.tensor
    %1 = composer.convolution %0, %up, %none {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>,
        dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 0, 0>,
        groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true,
        allow_tf32 = true} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %down = composer.get_param @down.weight : !composer.tensor
    %2 = composer.convolution %1, %down, %none {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>,
        dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>,
        groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true,
        allow_tf32 = true} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %3 = composer.conv2d %2, %free, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %sw = composer.get_param @seq.weight : !composer.tensor
    %4 = composer.op "aten::conv1d"(%s, %sw, %none, %ones, %zeros, %ones, %one) : (!composer.tensor, !composer.tensor, !composer.none, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.int) -> !composer.tensor
    return %3, %4 : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: module @kinds
// CHECK: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[S:.*]]: !composer.tensor, %[[FREE:.*]]: !composer.tensor)
// CHECK: %[[W0:.*]] = composer.get_param @stem.weight
// CHECK-NEXT: %[[S0:.*]] = composer.standardize_weight %[[W0]] {eps = 1.000000e-10 : f64} : (!composer.tensor) -> !composer.tensor
// CHECK-NEXT: %[[Y0:.*]] = composer.conv2d %[[X]], %[[S0]],
// CHECK-NEXT: %[[UP:.*]] = composer.get_param @up.weight
// CHECK-NEXT: %[[Y1:.*]] = composer.convolution %[[Y0]], %[[UP]],
// CHECK: %[[DOWN:.*]] = composer.get_param @down.weight
// CHECK-NEXT: %[[S2:.*]] = composer.standardize_weight %[[DOWN]]
// CHECK-NEXT: %[[Y2:.*]] = composer.convolution %[[Y1]], %[[S2]],
// CHECK: %[[Y3:.*]] = composer.conv2d %[[Y2]], %[[FREE]],
// CHECK-NEXT: %[[SW:.*]] = composer.get_param @seq.weight
// CHECK-NEXT: %[[S4:.*]] = composer.standardize_weight %[[SW]]
// CHECK-NEXT: %[[Y4:.*]] = composer.op "aten::conv1d"(%[[S]], %[[S4]],
// CHECK-NEXT: return %[[Y3]], %[[Y4]]
// REPORT: remark: composer-weight-standardization: 3 convolution weights standardized, 2 skipped
// REPORT: note: 1 skipped: transposed convolution
// REPORT: note: 1 skipped: weight is not a parameter

// The last convolution (the 1-D one) is left alone.
// IGNORE1-LABEL: module @kinds
// IGNORE1-COUNT-2: composer.standardize_weight
// IGNORE1-NOT: composer.standardize_weight
// IGNORE1: composer.op "aten::conv1d"

// A second run finds them standardized.
// TWICE: remark: composer-weight-standardization: 3 convolution weights standardized, 2 skipped
// TWICE: warning: composer-weight-standardization: 0 convolution weights standardized, 5 skipped
// TWICE-DAG: note: 1 skipped: transposed convolution
// TWICE-DAG: note: 3 skipped: already standardized
// TWICE-DAG: note: 1 skipped: weight is not a parameter

// BAD: error: composer-weight-standardization: n-last-layers-ignore must be >= 0, got -1
// BADOPT: for the --n-last-layers-ignore option: 'many' value invalid

// LOWERED-LABEL: module @kinds
// LOWERED: %[[W0:.*]] = composer.get_param @stem.weight
// LOWERED: %[[DIMS:.*]] = composer.constant([1, 2, 3]) : !composer.list<!composer.int>
// LOWERED: %[[VM:.*]]:2 = composer.op "aten::var_mean"(%[[W0]], %[[DIMS]], %{{.*}}, %{{.*}}) : (!composer.tensor, !composer.list<!composer.int>, !composer.bool, !composer.bool) -> (!composer.tensor, !composer.tensor)
// LOWERED: %[[C:.*]] = composer.op "aten::sub"(%[[W0]], %[[VM]]#1, %{{.*}})
// LOWERED: %[[EPS:.*]] = composer.constant(1.000000e-10) : !composer.float
// LOWERED: %[[V:.*]] = composer.op "aten::add"(%[[VM]]#0, %[[EPS]], %{{.*}})
// LOWERED: %[[STD:.*]] = composer.op "aten::sqrt"(%[[V]])
// LOWERED: %[[WS:.*]] = composer.op "aten::div"(%[[C]], %[[STD]])
// LOWERED: composer.conv2d %{{.*}}, %[[WS]],
// The 1-D convolution's weight reduces over dimensions 1 and 2.
// LOWERED: %[[SW:.*]] = composer.get_param @seq.weight
// LOWERED: composer.constant([1, 2]) : !composer.list<!composer.int>
// LOWERED: composer.op "aten::var_mean"(%[[SW]],
// LOWERED-NOT: composer.standardize_weight

// -----

// Layers are counted per weight in the order @forward first runs them: a
// block run twice is one layer, and counted where it first runs (not where
// its parameter is declared).
module @layers {
  composer.parameter @head.weight : !composer.tensor<10x8x1x1xf32>
  composer.parameter @stem.weight : !composer.tensor<8x3x3x3xf32>
  composer.parameter @block.weight : !composer.tensor<8x8x3x3xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %ws = composer.get_param @stem.weight : !composer.tensor
    %0 = composer.conv2d %x, %ws, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %wb = composer.get_param @block.weight : !composer.tensor
    %1 = composer.conv2d %0, %wb, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %wb2 = composer.get_param @block.weight : !composer.tensor
    %2 = composer.conv2d %1, %wb2, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %wh = composer.get_param @head.weight : !composer.tensor
    %3 = composer.conv2d %2, %wh, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %3 : !composer.tensor
  }
}
// CHECK-LABEL: module @layers
// CHECK-COUNT-4: composer.standardize_weight
// REPORT: remark: composer-weight-standardization: 4 convolution weights standardized, 0 skipped

// IGNORE1-LABEL: module @layers
// IGNORE1: %[[WS:.*]] = composer.get_param @stem.weight
// IGNORE1-NEXT: %[[SS:.*]] = composer.standardize_weight %[[WS]]
// IGNORE1-NEXT: composer.conv2d %{{.*}}, %[[SS]],
// IGNORE1-NEXT: %[[WB:.*]] = composer.get_param @block.weight
// IGNORE1-NEXT: %[[SB:.*]] = composer.standardize_weight %[[WB]]
// IGNORE1-NEXT: composer.conv2d %{{.*}}, %[[SB]],
// IGNORE1-NEXT: %[[WB2:.*]] = composer.get_param @block.weight
// IGNORE1-NEXT: %[[SB2:.*]] = composer.standardize_weight %[[WB2]]
// IGNORE1-NEXT: composer.conv2d %{{.*}}, %[[SB2]],
// IGNORE1-NEXT: %[[WH:.*]] = composer.get_param @head.weight
// IGNORE1-NEXT: composer.conv2d %{{.*}}, %[[WH]],

// Two layers ignored: the head and both runs of the block.
// IGNORE2-LABEL: module @layers
// IGNORE2: %[[WS:.*]] = composer.get_param @stem.weight
// IGNORE2-NEXT: %[[SS:.*]] = composer.standardize_weight %[[WS]]
// IGNORE2-NEXT: composer.conv2d %{{.*}}, %[[SS]],
// IGNORE2-NOT: composer.standardize_weight
// REPORT2: remark: composer-weight-standardization: 1 convolution weights standardized, 3 skipped
// REPORT2: note: 3 skipped: in the last n-last-layers-ignore convolutions

// More layers ignored than there are: nothing standardized.
// ALL: warning: composer-weight-standardization: 0 convolution weights standardized, 4 skipped
// ALL: note: 4 skipped: in the last n-last-layers-ignore convolutions

// TWICE: warning: composer-weight-standardization: 0 convolution weights standardized, 4 skipped
// TWICE: note: 4 skipped: already standardized

// LOWERED-LABEL: module @layers
// LOWERED-COUNT-4: composer.op "aten::var_mean"
// LOWERED-NOT: composer.standardize_weight

// -----

// After mixed precision, a weight is cast on use: the fp32 master weight is
// standardized before its cast, as autocast runs Composer's parametrization.
// A cast shared by two convolutions is no weight of either.
module @cast {
  composer.parameter @conv.weight : !composer.tensor<8x8x3x3xf32>
  composer.parameter @shared.weight : !composer.tensor<8x8x3x3xf32>
  func.func @forward(%x: !composer.tensor<*xbf16>) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @conv.weight : !composer.tensor
    %c = composer.to_dtype %w {copy = false, dtype = #composer.dtype<bf16>, non_blocking = false} : (!composer.tensor) -> !composer.tensor<*xbf16>
    %0 = composer.conv2d %x, %c, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor<*xbf16>, !composer.tensor<*xbf16>, !composer.none) -> !composer.tensor<*xbf16>
    %ws = composer.get_param @shared.weight : !composer.tensor
    %cs = composer.to_dtype %ws {copy = false, dtype = #composer.dtype<bf16>, non_blocking = false} : (!composer.tensor) -> !composer.tensor<*xbf16>
    %1 = composer.conv2d %0, %cs, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor<*xbf16>, !composer.tensor<*xbf16>, !composer.none) -> !composer.tensor<*xbf16>
    %2 = composer.conv2d %1, %cs, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor<*xbf16>, !composer.tensor<*xbf16>, !composer.none) -> !composer.tensor
    return %2 : !composer.tensor
  }
}
// CHECK-LABEL: module @cast
// CHECK: %[[W:.*]] = composer.get_param @conv.weight
// CHECK-NEXT: %[[S:.*]] = composer.standardize_weight %[[W]] {eps = 1.000000e-10 : f64} : (!composer.tensor) -> !composer.tensor
// CHECK-NEXT: %[[C:.*]] = composer.to_dtype %[[S]]
// CHECK-NEXT: composer.conv2d %{{.*}}, %[[C]],
// CHECK-NOT: composer.standardize_weight
// REPORT: remark: composer-weight-standardization: 1 convolution weights standardized, 2 skipped
// REPORT: note: 2 skipped: weight is not a parameter

// -----

// No convolution: a warning.
module @none {
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    return %x : !composer.tensor
  }
}
// CHECK-LABEL: module @none
// REPORT: warning: composer-weight-standardization: 0 convolution weights standardized, 0 skipped
