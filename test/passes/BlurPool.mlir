// RUN: composer-opt %s -split-input-file --composer-blurpool 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-blurpool="blur-first=false" 2>/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: composer-opt %s -split-input-file --composer-blurpool="replace-maxpools=false min-channels=1" 2>/dev/null | FileCheck %s --check-prefix=CONVS
// RUN: composer-opt %s -split-input-file --composer-blurpool="replace-convs=false" 2>/dev/null | FileCheck %s --check-prefix=POOLS
// RUN: composer-opt %s -split-input-file --composer-blurpool 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// Idempotent: a second application changes nothing.
// RUN: composer-opt %s -split-input-file --composer-blurpool 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-blurpool --composer-blurpool 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: composer-opt %s -split-input-file --composer-blurpool --composer-blurpool 2>&1 >/dev/null | FileCheck %s --check-prefix=TWICE

// A bad option value is an error.
// RUN: not composer-opt %s --composer-blurpool="min-channels=many" 2>&1 | FileCheck %s --check-prefix=BADOPT
// BADOPT: for the --min-channels option: 'many' value invalid

// A stem (3 channels, skipped), a strided conv, a max pool and a stride-1
// conv (not a site).
module {
  composer.parameter @stem.weight : !composer.tensor<16x3x3x3xf32>
  composer.parameter @conv.weight : !composer.tensor<32x16x3x3xf32>
  composer.parameter @tail.weight : !composer.tensor<32x32x3x3xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %sw = composer.get_param @stem.weight : !composer.tensor
    %s = composer.conv2d %x, %sw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %w = composer.get_param @conv.weight : !composer.tensor
    %y = composer.conv2d %s, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %r = composer.relu %y : (!composer.tensor) -> !composer.tensor
    %p = composer.max_pool2d %r {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor
    %tw = composer.get_param @tail.weight : !composer.tensor
    %z = composer.conv2d %p, %tw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %z : !composer.tensor
  }
}

// The filters are new buffers named after the site, broadcast from one
// binomial 3x3 to the channel count.
// CHECK: composer.buffer @conv.blurpool.filter init(dense<{{\[\[\[\[}}6.250000e-02, 1.250000e-01, 6.250000e-02], [1.250000e-01, 2.500000e-01, 1.250000e-01], [6.250000e-02, 1.250000e-01, 6.250000e-02]]]]> : tensor<1x1x3x3xf32>) : !composer.tensor<16x1x3x3xf32>
// CHECK: composer.buffer @maxpool.blurpool.filter init({{.*}}) : !composer.tensor<32x1x3x3xf32>
// CHECK-LABEL: func.func @forward
// CHECK: %[[STEM:.*]] = composer.conv2d %{{.*}} stride = array<i64: 2, 2>
// Blur first: a stride-1 blur on the input, the conv keeps its stride.
// CHECK: %[[F:.*]] = composer.get_param @conv.blurpool.filter
// CHECK: %[[B:.*]] = composer.blur_pool2d %[[STEM]], %[[F]] {stride = array<i64: 1, 1>}
// CHECK: %[[Y:.*]] = composer.conv2d %[[B]], %{{.*}} stride = array<i64: 2, 2>
// CHECK: %[[R:.*]] = composer.relu %[[Y]]
// The max pool runs at stride 1, then the blur subsamples.
// CHECK: %[[P:.*]] = composer.max_pool2d %[[R]] {{{.*}}stride = array<i64: 1, 1>}
// CHECK: %[[PF:.*]] = composer.get_param @maxpool.blurpool.filter
// CHECK: %[[PB:.*]] = composer.blur_pool2d %[[P]], %[[PF]] {stride = array<i64: 2, 2>}
// CHECK: composer.conv2d %[[PB]], %{{.*}} stride = array<i64: 1, 1>
// CHECK-NOT: blur_pool2d
// CHECK: return

// AFTER: composer.buffer @conv.blurpool.filter {{.*}} : !composer.tensor<32x1x3x3xf32>
// AFTER-LABEL: func.func @forward
// AFTER: %[[Y:.*]] = composer.conv2d {{.*}} stride = array<i64: 1, 1>
// AFTER: %[[B:.*]] = composer.blur_pool2d %[[Y]], %{{.*}} {stride = array<i64: 2, 2>}
// AFTER: composer.relu %[[B]]

// With min-channels=1 the stem is blurred too; pools are left alone.
// CONVS: composer.buffer @stem.blurpool.filter {{.*}} : !composer.tensor<3x1x3x3xf32>
// CONVS: composer.buffer @conv.blurpool.filter
// CONVS-NOT: maxpool.blurpool
// CONVS: composer.max_pool2d {{.*}}stride = array<i64: 2, 2>

// POOLS-NOT: @conv.blurpool
// POOLS: composer.buffer @maxpool.blurpool.filter
// POOLS-NOT: @conv.blurpool

// REPORT: remark: composer-blurpool: 2 sites blurred, 1 skipped
// REPORT: note: 1 skipped: in_channels < min-channels

// TWICE: remark: composer-blurpool: 2 sites blurred, 1 skipped
// TWICE: warning: composer-blurpool: 0 sites blurred, 3 skipped
// TWICE-DAG: note: 1 skipped: input already blurred
// TWICE-DAG: note: 1 skipped: already followed by a blur

// -----

// Nothing to blur: a warning, and the IR is unchanged.
module {
  func.func @no_sites(%x: !composer.tensor) -> !composer.tensor {
    %r = composer.relu %x : (!composer.tensor) -> !composer.tensor
    return %r : !composer.tensor
  }
}
// CHECK-LABEL: func.func @no_sites
// CHECK-NEXT: composer.relu
// CHECK-NEXT: return
// REPORT: warning: composer-blurpool: 0 sites blurred, 0 skipped

// -----

// A max pool whose channel count cannot be found is skipped, with a reason.
module {
  func.func @unknown_channels(%x: !composer.tensor) -> !composer.tensor {
    %p = composer.max_pool2d %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>} : (!composer.tensor) -> !composer.tensor
    return %p : !composer.tensor
  }
}
// CHECK-LABEL: func.func @unknown_channels
// CHECK-NOT: blur_pool2d
// REPORT: warning: composer-blurpool: 0 sites blurred, 1 skipped
// REPORT: note: 1 skipped: channel count unknown (give --input-spec)

// -----

// Channels are found through a ghost batch norm (Ghost BatchNorm applied
// first) as through a batch norm: from its running statistics.
module {
  composer.buffer @bn.running_mean : !composer.tensor<8xf32>
  composer.buffer @bn.running_var : !composer.tensor<8xf32>
  func.func @after_ghost(%x: !composer.tensor, %training: !composer.bool) -> !composer.tensor {
    %m = composer.constant(1.000000e-01) : !composer.float
    %none = composer.constant(none) : !composer.none
    %rm = composer.get_param @bn.running_mean : !composer.tensor
    %rv = composer.get_param @bn.running_var : !composer.tensor
    %g = composer.ghost_batch_norm %x, %none, %none, %rm, %rv, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 32 : i64} : (!composer.tensor, !composer.none, !composer.none, !composer.tensor, !composer.tensor, !composer.bool, !composer.float) -> !composer.tensor
    %p = composer.max_pool2d %g {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor
    return %p : !composer.tensor
  }
}
// CHECK: composer.buffer @maxpool.blurpool.filter {{.*}} : !composer.tensor<8x1x3x3xf32>
// CHECK-LABEL: func.func @after_ghost
// CHECK: %[[P:.*]] = composer.max_pool2d {{.*}}stride = array<i64: 1, 1>}
// CHECK: composer.blur_pool2d %[[P]], %{{.*}} {stride = array<i64: 2, 2>}
// REPORT: remark: composer-blurpool: 1 sites blurred, 0 skipped
