// RUN: composer-opt %s -split-input-file --composer-lower-to-runtime 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-lower-to-runtime 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-lower-to-runtime 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-lower-to-runtime --composer-lower-to-runtime 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// blur_pool2d: composer::blur_pool2d(input, filter, stride), whatever the
// filter's type says (the kernel reads the channel count at run time).
module {
  func.func @blur(%x: !composer.tensor, %f: !composer.tensor) -> !composer.tensor {
    %y = composer.blur_pool2d %x, %f {stride = array<i64: 2, 1>} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @blur
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[F:.*]]: !composer.tensor)
// CHECK: %[[S:.*]] = composer.constant([2, 1]) : !composer.list<!composer.int>
// CHECK: %[[Y:.*]] = composer.op "composer::blur_pool2d"(%[[X]], %[[F]], %[[S]]) : (!composer.tensor, !composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
// CHECK: return %[[Y]]
// CHECK-NOT: blur_pool2d %
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops (0 max pools fused, 0 input casts absorbed), 0 skipped

// -----

// BlurPool's max-pool form (a max pool at stride 1, used only by the blur):
// one composer::blur_max_pool2d with the pool's kernel, padding and dilation
// and the blur's stride. ceil_mode is moot at stride 1.
module {
  composer.buffer @maxpool.blurpool.filter init(dense<6.250000e-02> : tensor<1x1x3x3xf32>) : !composer.tensor<8x1x3x3xf32>
  func.func @fused(%x: !composer.tensor) -> !composer.tensor<?x8x?x?xf32> {
    %p = composer.max_pool2d %x {ceil_mode = true, dilation = array<i64: 1, 2>, kernel_size = array<i64: 3, 2>, padding = array<i64: 1, 0>, stride = array<i64: 1, 1>} : (!composer.tensor) -> !composer.tensor
    %f = composer.get_param @maxpool.blurpool.filter : !composer.tensor
    %y = composer.blur_pool2d %p, %f {stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor) -> !composer.tensor<?x8x?x?xf32>
    return %y : !composer.tensor<?x8x?x?xf32>
  }
}
// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK-NOT: composer.max_pool2d
// CHECK: %[[F:.*]] = composer.get_param @maxpool.blurpool.filter
// CHECK: %[[K:.*]] = composer.constant([3, 2])
// CHECK: %[[P:.*]] = composer.constant([1, 0])
// CHECK: %[[D:.*]] = composer.constant([1, 2])
// CHECK: %[[S:.*]] = composer.constant([2, 2])
// The result keeps the blur's type.
// CHECK: %[[Y:.*]] = composer.op "composer::blur_max_pool2d"(%[[X]], %[[F]], %[[K]], %[[P]], %[[D]], %[[S]]) : ({{.*}}) -> !composer.tensor<?x8x?x?xf32>
// CHECK-NOT: composer.max_pool2d
// CHECK: return %[[Y]]
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops (1 max pools fused, 0 input casts absorbed), 0 skipped

// -----

// A stride-1 max pool with another user stays (its output is needed whole).
module {
  func.func @pool_two_uses(%x: !composer.tensor, %f: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %p = composer.max_pool2d %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor) -> !composer.tensor
    %y = composer.blur_pool2d %p, %f {stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y, %p : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @pool_two_uses
// CHECK: %[[P:.*]] = composer.max_pool2d
// CHECK: %[[Y:.*]] = composer.op "composer::blur_pool2d"(%[[P]], %{{.*}}, %{{.*}})
// CHECK: return %[[Y]], %[[P]]
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops (0 max pools fused, 0 input casts absorbed), 0 skipped

// -----

// A strided max pool (an explicit stride, or none: the kernel size) is not
// BlurPool's form; it stays.
module {
  func.func @strided_pool(%x: !composer.tensor, %f: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %p = composer.max_pool2d %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor
    %y = composer.blur_pool2d %p, %f {stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %q = composer.max_pool2d %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64>} : (!composer.tensor) -> !composer.tensor
    %z = composer.blur_pool2d %q, %f {stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y, %z : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @strided_pool
// CHECK: %[[P:.*]] = composer.max_pool2d {{.*}}stride = array<i64: 2, 2>
// CHECK: %[[Y:.*]] = composer.op "composer::blur_pool2d"(%[[P]], %{{.*}}, %{{.*}})
// CHECK: %[[Q:.*]] = composer.max_pool2d {{.*}}stride = array<i64>
// CHECK: %[[Z:.*]] = composer.op "composer::blur_pool2d"(%[[Q]], %{{.*}}, %{{.*}})
// CHECK: return %[[Y]], %[[Z]]
// REPORT: remark: composer-lower-to-runtime: 2 method ops lowered to runtime ops (0 max pools fused, 0 input casts absorbed), 0 skipped

// -----

// ghost_batch_norm: composer::ghost_batch_norm(input, weight, bias,
// running_mean, running_var, training, momentum, eps, ghost_batch_size,
// dtype), dtype None; cudnn_enabled has no counterpart.
module {
  composer.parameter @bn.weight : !composer.tensor<8xf32>
  composer.parameter @bn.bias : !composer.tensor<8xf32>
  composer.buffer @bn.running_mean : !composer.tensor<8xf32>
  composer.buffer @bn.running_var : !composer.tensor<8xf32>
  func.func @ghost(%x: !composer.tensor, %training: !composer.bool) -> !composer.tensor {
    %m = composer.constant(1.000000e-01) : !composer.float
    %w = composer.get_param @bn.weight : !composer.tensor
    %b = composer.get_param @bn.bias : !composer.tensor
    %rm = composer.get_param @bn.running_mean : !composer.tensor
    %rv = composer.get_param @bn.running_var : !composer.tensor
    %y = composer.ghost_batch_norm %x, %w, %b, %rm, %rv, %training, %m {cudnn_enabled = true, eps = 1.000000e-03 : f64, ghost_batch_size = 4 : i64} : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.bool, !composer.float) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @ghost
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool)
// CHECK: %[[M:.*]] = composer.constant(1.000000e-01) : !composer.float
// CHECK: %[[W:.*]] = composer.get_param @bn.weight
// CHECK: %[[B:.*]] = composer.get_param @bn.bias
// CHECK: %[[RM:.*]] = composer.get_param @bn.running_mean
// CHECK: %[[RV:.*]] = composer.get_param @bn.running_var
// CHECK: %[[EPS:.*]] = composer.constant(1.000000e-03) : !composer.float
// CHECK: %[[G:.*]] = composer.constant(4) : !composer.int
// CHECK: %[[NONE:.*]] = composer.constant(none) : !composer.none
// CHECK: %[[Y:.*]] = composer.op "composer::ghost_batch_norm"(%[[X]], %[[W]], %[[B]], %[[RM]], %[[RV]], %[[T]], %[[M]], %[[EPS]], %[[G]], %[[NONE]]) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.bool, !composer.float, !composer.float, !composer.int, !composer.none) -> !composer.tensor
// CHECK-NOT: ghost_batch_norm %
// CHECK: return %[[Y]]
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops (0 max pools fused, 0 input casts absorbed), 0 skipped

// -----

// Without weight and bias (affine=False): None operands pass through.
module {
  composer.buffer @bn.running_mean : !composer.tensor<8xf32>
  composer.buffer @bn.running_var : !composer.tensor<8xf32>
  func.func @ghost_no_affine(%x: !composer.tensor, %training: !composer.bool) -> !composer.tensor {
    %m = composer.constant(1.000000e-01) : !composer.float
    %none = composer.constant(none) : !composer.none
    %rm = composer.get_param @bn.running_mean : !composer.tensor
    %rv = composer.get_param @bn.running_var : !composer.tensor
    %y = composer.ghost_batch_norm %x, %none, %none, %rm, %rv, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 32 : i64} : (!composer.tensor, !composer.none, !composer.none, !composer.tensor, !composer.tensor, !composer.bool, !composer.float) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @ghost_no_affine
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool)
// CHECK: %[[M:.*]] = composer.constant(1.000000e-01)
// CHECK: %[[N:.*]] = composer.constant(none)
// CHECK: %[[RM:.*]] = composer.get_param @bn.running_mean
// CHECK: %[[RV:.*]] = composer.get_param @bn.running_var
// CHECK: composer.op "composer::ghost_batch_norm"(%[[X]], %[[N]], %[[N]], %[[RM]], %[[RV]], %[[T]], %[[M]], %{{.*}}, %{{.*}}, %{{.*}}) : (!composer.tensor, !composer.none, !composer.none,

// -----

// Mixed precision's fp32 cast of the input is absorbed: the op takes the
// bf16 tensor and dtype float32 (6), and the cast goes.
module {
  composer.buffer @bn.running_mean : !composer.tensor<8xf32>
  composer.buffer @bn.running_var : !composer.tensor<8xf32>
  func.func @ghost_cast(%x: !composer.tensor<4x8x2x2xbf16>, %training: !composer.bool) -> !composer.tensor {
    %m = composer.constant(1.000000e-01) : !composer.float
    %none = composer.constant(none) : !composer.none
    %rm = composer.get_param @bn.running_mean : !composer.tensor
    %rv = composer.get_param @bn.running_var : !composer.tensor
    %c = composer.to_dtype %x {copy = false, dtype = #composer.dtype<f32>, non_blocking = false} : (!composer.tensor<4x8x2x2xbf16>) -> !composer.tensor<4x8x2x2xf32>
    %y = composer.ghost_batch_norm %c, %none, %none, %rm, %rv, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 2 : i64} : (!composer.tensor<4x8x2x2xf32>, !composer.none, !composer.none, !composer.tensor, !composer.tensor, !composer.bool, !composer.float) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @ghost_cast
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<4x8x2x2xbf16>, %[[T:.*]]: !composer.bool)
// CHECK-NOT: composer.to_dtype
// CHECK: %[[F32:.*]] = composer.constant(6) : !composer.int
// CHECK: %[[Y:.*]] = composer.op "composer::ghost_batch_norm"(%[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[T]], %{{.*}}, %{{.*}}, %{{.*}}, %[[F32]]) : (!composer.tensor<4x8x2x2xbf16>,
// CHECK-NOT: composer.to_dtype
// CHECK: return %[[Y]]
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops (0 max pools fused, 1 input casts absorbed), 0 skipped

// -----

// A cast with another user is absorbed but stays for that user; casts that
// do more than convert (copy, a memory format) or are not to float32 stay
// in front of the op, which then gets dtype None.
module {
  func.func @ghost_casts(%x: !composer.tensor, %training: !composer.bool) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) {
    %m = composer.constant(1.000000e-01) : !composer.float
    %none = composer.constant(none) : !composer.none
    %shared = composer.to_dtype %x {copy = false, dtype = #composer.dtype<f32>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
    %a = composer.ghost_batch_norm %shared, %none, %none, %none, %none, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 2 : i64} : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.float) -> !composer.tensor
    %copy = composer.to_dtype %x {copy = true, dtype = #composer.dtype<f32>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
    %b = composer.ghost_batch_norm %copy, %none, %none, %none, %none, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 2 : i64} : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.float) -> !composer.tensor
    %cl = composer.to_dtype %x {copy = false, dtype = #composer.dtype<f32>, memory_format = #composer.memory_format<channels_last>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
    %c = composer.ghost_batch_norm %cl, %none, %none, %none, %none, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 2 : i64} : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.float) -> !composer.tensor
    %half = composer.to_dtype %x {copy = false, dtype = #composer.dtype<f16>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
    %d = composer.ghost_batch_norm %half, %none, %none, %none, %none, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 2 : i64} : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.float) -> !composer.tensor
    return %a, %b, %c, %d, %shared : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @ghost_casts
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool)
// CHECK: %[[SHARED:.*]] = composer.to_dtype %[[X]] {copy = false, dtype = #composer.dtype<f32>, non_blocking = false}
// CHECK: %[[F32:.*]] = composer.constant(6) : !composer.int
// CHECK: %[[A:.*]] = composer.op "composer::ghost_batch_norm"(%[[X]], {{.*}}, %[[F32]])
// CHECK: %[[COPY:.*]] = composer.to_dtype %[[X]] {copy = true
// CHECK: %[[N1:.*]] = composer.constant(none)
// CHECK: %[[B:.*]] = composer.op "composer::ghost_batch_norm"(%[[COPY]], {{.*}}, %[[N1]])
// CHECK: %[[CL:.*]] = composer.to_dtype %[[X]] {{{.*}}memory_format = #composer.memory_format<channels_last>
// CHECK: %[[N2:.*]] = composer.constant(none)
// CHECK: %[[C:.*]] = composer.op "composer::ghost_batch_norm"(%[[CL]], {{.*}}, %[[N2]])
// CHECK: %[[HALF:.*]] = composer.to_dtype %[[X]] {copy = false, dtype = #composer.dtype<f16>
// CHECK: %[[N3:.*]] = composer.constant(none)
// CHECK: %[[D:.*]] = composer.op "composer::ghost_batch_norm"(%[[HALF]], {{.*}}, %[[N3]])
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[SHARED]]
// REPORT: remark: composer-lower-to-runtime: 4 method ops lowered to runtime ops (0 max pools fused, 1 input casts absorbed), 0 skipped

// -----

// squeeze_excite: composer::squeeze_excite(input, fc1, fc2).
module {
  composer.parameter @conv.se.fc1.weight : !composer.tensor<2x8xf32>
  composer.parameter @conv.se.fc2.weight : !composer.tensor<8x2xf32>
  func.func @se(%x: !composer.tensor<1x8x4x4xf32>) -> !composer.tensor<1x8x4x4xf32> {
    %fc1 = composer.get_param @conv.se.fc1.weight : !composer.tensor
    %fc2 = composer.get_param @conv.se.fc2.weight : !composer.tensor
    %y = composer.squeeze_excite %x, %fc1, %fc2 : (!composer.tensor<1x8x4x4xf32>, !composer.tensor, !composer.tensor) -> !composer.tensor<1x8x4x4xf32>
    return %y : !composer.tensor<1x8x4x4xf32>
  }
}
// CHECK-LABEL: func.func @se
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<1x8x4x4xf32>)
// CHECK: %[[FC1:.*]] = composer.get_param @conv.se.fc1.weight
// CHECK: %[[FC2:.*]] = composer.get_param @conv.se.fc2.weight
// CHECK: %[[Y:.*]] = composer.op "composer::squeeze_excite"(%[[X]], %[[FC1]], %[[FC2]]) : (!composer.tensor<1x8x4x4xf32>, !composer.tensor, !composer.tensor) -> !composer.tensor<1x8x4x4xf32>
// CHECK: return %[[Y]]
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops (0 max pools fused, 0 input casts absorbed), 0 skipped

// -----

// Method ops in regions are lowered where they are.
module {
  func.func @in_region(%x: !composer.tensor, %f: !composer.tensor, %c: !composer.bool) -> !composer.tensor {
    %y = composer.if %c -> (!composer.tensor) {
      %b = composer.blur_pool2d %x, %f {stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor) -> !composer.tensor
      composer.yield %b : !composer.tensor
    } else {
      composer.yield %x : !composer.tensor
    }
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @in_region
// CHECK: composer.if
// CHECK: %[[B:.*]] = composer.op "composer::blur_pool2d"
// CHECK: composer.yield %[[B]]
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops

// -----

// A cast every user of which absorbs it goes once they are all lowered.
module {
  func.func @ghost_shared_cast(%x: !composer.tensor, %training: !composer.bool) -> (!composer.tensor, !composer.tensor) {
    %m = composer.constant(1.000000e-01) : !composer.float
    %none = composer.constant(none) : !composer.none
    %c = composer.to_dtype %x {copy = false, dtype = #composer.dtype<f32>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
    %a = composer.ghost_batch_norm %c, %none, %none, %none, %none, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 2 : i64} : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.float) -> !composer.tensor
    %b = composer.ghost_batch_norm %c, %none, %none, %none, %none, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 2 : i64} : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.float) -> !composer.tensor
    return %a, %b : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @ghost_shared_cast
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool)
// CHECK-NOT: composer.to_dtype
// CHECK: %[[A:.*]] = composer.op "composer::ghost_batch_norm"(%[[X]],
// CHECK: %[[B:.*]] = composer.op "composer::ghost_batch_norm"(%[[X]],
// CHECK-NOT: composer.to_dtype
// CHECK: return %[[A]], %[[B]]
// REPORT: remark: composer-lower-to-runtime: 2 method ops lowered to runtime ops (0 max pools fused, 2 input casts absorbed), 0 skipped

// -----

// Nothing to lower: no report (the usual case for an unchanged model).
module {
  func.func @plain(%x: !composer.tensor) -> !composer.tensor {
    return %x : !composer.tensor
  }
}
// CHECK-LABEL: func.func @plain
// REPORT-NOT: composer-lower-to-runtime

// -----

// standardize_weight has no runtime operator: its aten composition.
module {
  func.func @standardize_weight(%w: !composer.tensor<8x4x3x3xf32>) -> !composer.tensor<8x4x3x3xf32> {
    %0 = composer.standardize_weight %w {eps = 1.000000e-10 : f64} : (!composer.tensor<8x4x3x3xf32>) -> !composer.tensor<8x4x3x3xf32>
    return %0 : !composer.tensor<8x4x3x3xf32>
  }
}
// CHECK-LABEL: func.func @standardize_weight
// CHECK-SAME: (%[[W:.*]]: !composer.tensor<8x4x3x3xf32>)
// CHECK: %[[VM:.*]]:2 = composer.op "aten::var_mean"(%[[W]],
// CHECK: %[[C:.*]] = composer.op "aten::sub"(%[[W]], %[[VM]]#1,
// CHECK: %[[V:.*]] = composer.op "aten::add"(%[[VM]]#0,
// CHECK: %[[STD:.*]] = composer.op "aten::sqrt"(%[[V]])
// CHECK: %[[S:.*]] = composer.op "aten::div"(%[[C]], %[[STD]])
// CHECK: return %[[S]]
// CHECK-NOT: standardize_weight
// CHECK-NOT: composer::
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops (0 max pools fused, 0 input casts absorbed), 0 skipped

// -----

// stochastic_depth and stochastic_depth_keep have no runtime operator:
// their aten composition.
module {
  func.func @stochastic_depth(%f: !composer.tensor, %t: !composer.bool) -> (!composer.tensor, !composer.bool) {
    %0 = composer.stochastic_depth %f, %t {drop_rate = 2.500000e-01 : f64, method = "block"} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %1 = composer.stochastic_depth_keep %t {drop_rate = 2.500000e-01 : f64} : (!composer.bool) -> !composer.bool
    return %0, %1 : !composer.tensor, !composer.bool
  }
}
// CHECK-LABEL: func.func @stochastic_depth
// CHECK-SAME: (%[[F:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool)
// CHECK: %[[D:.*]] = composer.if %[[T]] -> (!composer.tensor) {
// CHECK-NEXT: composer.yield %[[F]]
// CHECK-NEXT: } else {
// CHECK: composer.op "aten::mul"(%[[F]],
// CHECK: %[[K:.*]] = composer.if %[[T]] -> (!composer.bool) {
// CHECK: composer.op "aten::rand"
// CHECK: composer.op "aten::Bool"
// CHECK: return %[[D]], %[[K]]
// CHECK-NOT: stochastic_depth
// CHECK-NOT: composer::
// REPORT: remark: composer-lower-to-runtime: 2 method ops lowered to runtime ops (0 max pools fused, 0 input casts absorbed), 0 skipped

// -----

// gyro_dropout has no runtime operator: its aten composition.
module {
  func.func @gyro_dropout(%x: !composer.tensor, %t: !composer.bool, %m: !composer.tensor<8x4xf32>, %s: !composer.tensor<2xi64>, %n: !composer.tensor<i64>, %p: !composer.tensor<i64>) -> !composer.tensor {
    %0 = composer.gyro_dropout %x, %t masks %m selected %s step %n period %p {feature_dim = -1 : i64, p = 2.500000e-01 : f64, sigma = 8 : i64, tau = 2 : i64} : (!composer.tensor, !composer.bool, !composer.tensor<8x4xf32>, !composer.tensor<2xi64>, !composer.tensor<i64>, !composer.tensor<i64>) -> !composer.tensor
    return %0 : !composer.tensor
  }
}
// CHECK-LABEL: func.func @gyro_dropout
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool
// CHECK: %[[D:.*]] = composer.if %[[T]] -> (!composer.tensor) {
// CHECK: composer.op "aten::randint"
// CHECK: composer.op "aten::index_select"
// CHECK: composer.op "aten::mul"(%[[X]],
// CHECK: } else {
// CHECK-NEXT: composer.yield %[[X]]
// CHECK: return %[[D]]
// CHECK-NOT: gyro_dropout
// CHECK-NOT: composer::
// REPORT: remark: composer-lower-to-runtime: 1 method ops lowered to runtime ops (0 max pools fused, 0 input casts absorbed), 0 skipped
