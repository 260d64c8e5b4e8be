// RUN: composer-opt %s -split-input-file --composer-blurpool 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-blurpool="blur-first=false" 2>/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: composer-opt %s -split-input-file --composer-blurpool="replace-maxpools=false min-channels=1" 2>/dev/null | FileCheck %s --check-prefix=CONVS
// RUN: composer-opt %s -split-input-file --composer-blurpool="replace-convs=false" 2>/dev/null | FileCheck %s --check-prefix=POOLS
// RUN: composer-opt %s -split-input-file --composer-blurpool 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// Idempotent: a second application changes nothing; what the first one
// rewrote is marked composer.blurred.
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
// CHECK: %[[Y:.*]] = composer.conv2d %[[B]], %{{.*}} {composer.blurred, {{.*}}stride = array<i64: 2, 2>
// CHECK: %[[R:.*]] = composer.relu %[[Y]]
// The max pool runs at stride 1, then the blur subsamples.
// CHECK: %[[P:.*]] = composer.max_pool2d %[[R]] {{{.*}}composer.blurred, {{.*}}stride = array<i64: 1, 1>}
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
// TWICE-DAG: note: 1 skipped: in_channels < min-channels
// TWICE-DAG: note: 2 skipped: already blurred

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

// A max pool whose channel count cannot be found is blurred all the same:
// its filter is stored 1 x 1 x 3 x 3 and expanded to the input's channels
// when run. An empty stride is the kernel size.
module {
  func.func @unknown_channels(%x: !composer.tensor) -> !composer.tensor {
    %p = composer.max_pool2d %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>} : (!composer.tensor) -> !composer.tensor
    return %p : !composer.tensor
  }
}
// CHECK: composer.buffer @maxpool.blurpool.filter init({{.*}} : tensor<1x1x3x3xf32>) : !composer.tensor<1x1x3x3xf32>
// CHECK-LABEL: func.func @unknown_channels
// CHECK: %[[P:.*]] = composer.max_pool2d {{.*}}stride = array<i64: 1, 1>}
// CHECK: %[[F:.*]] = composer.get_param @maxpool.blurpool.filter
// CHECK: %[[B:.*]] = composer.blur_pool2d %[[P]], %[[F]] {stride = array<i64: 2, 2>}
// CHECK: return %[[B]]
// REPORT: remark: composer-blurpool: 1 sites blurred, 0 skipped

// -----

// Channels through a concatenation (SqueezeNet's Fire, GoogLeNet's
// Inception): the sum of its operands' channels, found from a convolution
// and a batch norm's statistics. A strided convolution reading the blurred
// pool is blurred again, as module surgery does (ShuffleNetV2's first stage).
module {
  composer.parameter @a.weight : !composer.tensor<8x16x1x1xf32>
  composer.parameter @b.weight : !composer.tensor<24x16x3x3xf32>
  composer.buffer @bn.running_mean : !composer.tensor<24xf32>
  composer.buffer @bn.running_var : !composer.tensor<24xf32>
  composer.parameter @down.weight : !composer.tensor<32x32x3x3xf32>
  func.func @fire(%x: !composer.tensor, %training: !composer.bool) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %m = composer.constant(1.000000e-01) : !composer.float
    %aw = composer.get_param @a.weight : !composer.tensor
    %a = composer.conv2d %x, %aw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %bw = composer.get_param @b.weight : !composer.tensor
    %b = composer.conv2d %x, %bw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %rm = composer.get_param @bn.running_mean : !composer.tensor
    %rv = composer.get_param @bn.running_var : !composer.tensor
    %n = composer.batch_norm %b, %none, %none, %rm, %rv, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64} : (!composer.tensor, !composer.none, !composer.none, !composer.tensor, !composer.tensor, !composer.bool, !composer.float) -> !composer.tensor
    %list = composer.op "prim::ListConstruct"(%a, %n) : (!composer.tensor, !composer.tensor) -> !composer.list<!composer.tensor>
    %c = composer.cat %list {dim = 1 : i64} : (!composer.list<!composer.tensor>) -> !composer.tensor
    %p = composer.max_pool2d %c {ceil_mode = true, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor
    %dw = composer.get_param @down.weight : !composer.tensor
    %d = composer.conv2d %p, %dw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %d : !composer.tensor
  }
}
// CHECK: composer.buffer @maxpool.blurpool.filter {{.*}} : !composer.tensor<32x1x3x3xf32>
// CHECK: composer.buffer @down.blurpool.filter {{.*}} : !composer.tensor<32x1x3x3xf32>
// CHECK-LABEL: func.func @fire
// CHECK: %[[C:.*]] = composer.cat
// CHECK: %[[P:.*]] = composer.max_pool2d %[[C]] {{.*}}stride = array<i64: 1, 1>}
// CHECK: %[[PB:.*]] = composer.blur_pool2d %[[P]], %{{.*}} {stride = array<i64: 2, 2>}
// CHECK: %[[DF:.*]] = composer.get_param @down.blurpool.filter
// CHECK: %[[DB:.*]] = composer.blur_pool2d %[[PB]], %[[DF]] {stride = array<i64: 1, 1>}
// CHECK: composer.conv2d %[[DB]], {{.*}}stride = array<i64: 2, 2>
// REPORT: remark: composer-blurpool: 2 sites blurred, 0 skipped

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
