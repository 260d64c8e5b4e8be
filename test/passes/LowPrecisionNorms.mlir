// RUN: composer-opt %s -split-input-file --composer-mixed-precision --composer-low-precision-norms 2>/dev/null | FileCheck %s
// It is what mixed precision's low-precision-norms option does.
// RUN: composer-opt %s -split-input-file --composer-mixed-precision --composer-low-precision-norms 2>/dev/null > %t.pass.mlir
// RUN: composer-opt %s -split-input-file --composer-mixed-precision=low-precision-norms=true 2>/dev/null > %t.option.mlir
// RUN: diff %t.pass.mlir %t.option.mlir
// RUN: composer-opt %s -split-input-file --composer-mixed-precision="dtype=f16" --composer-low-precision-norms="dtype=f16" 2>/dev/null | FileCheck %s --check-prefix=F16
// RUN: composer-opt %s -split-input-file --composer-mixed-precision --composer-low-precision-norms 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// Without mixed precision: nothing to do, each norm skipped with the reason.
// RUN: composer-opt %s -split-input-file --composer-low-precision-norms 2>&1 >/dev/null | FileCheck %s --check-prefix=ALONE
// Idempotent.
// RUN: composer-opt %s -split-input-file --composer-mixed-precision --composer-low-precision-norms --composer-low-precision-norms 2>/dev/null > %t.twice.mlir
// RUN: diff %t.pass.mlir %t.twice.mlir

// linear -> layer_norm -> linear: the norm takes the bf16 linear output
// directly (mixed precision's fp32 cast of it is gone) and its weight and
// bias cast to bf16; the next linear's input is already bf16.
module {
  composer.parameter @fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @ln.weight : !composer.tensor<8xf32>
  composer.parameter @ln.bias : !composer.tensor<8xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @fc.weight : !composer.tensor
    %h = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %g = composer.get_param @ln.weight : !composer.tensor
    %b = composer.get_param @ln.bias : !composer.tensor
    %n = composer.layer_norm %h, %g, %b {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    %y = composer.linear %n, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[H:.*]] = composer.linear
// CHECK: %[[G:.*]] = composer.get_param @ln.weight
// CHECK: %[[B:.*]] = composer.get_param @ln.bias
// CHECK: %[[GL:.*]] = composer.to_dtype %[[G]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: %[[BL:.*]] = composer.to_dtype %[[B]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: %[[N:.*]] = composer.layer_norm %[[H]], %[[GL]], %[[BL]]
// CHECK-NOT: composer.to_dtype %[[N]]
// CHECK: composer.linear %[[N]],

// F16-LABEL: func.func @forward
// F16: %[[H:.*]] = composer.linear
// F16: %[[GL:.*]] = composer.to_dtype %{{.*}} {{.*}}dtype = #composer.dtype<f16>
// F16: composer.layer_norm %[[H]], %[[GL]]

// REPORT: remark: composer-low-precision-norms: 1 norms given the low-precision dtype, 0 skipped
// ALONE: warning: composer-low-precision-norms: 0 norms given the low-precision dtype, 1 skipped
// ALONE: note: 1 skipped: no mixed precision to this dtype in the model (run composer-mixed-precision with the same dtype first)

// -----

// A scripted model's group norm is a generic aten::group_norm: the same.
module {
  composer.parameter @conv.weight : !composer.tensor<4x3x1x1xf32>
  composer.parameter @gn.weight : !composer.tensor<4xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %two = composer.constant(2) : !composer.int
    %eps = composer.constant(1.000000e-05) : !composer.float
    %true = composer.constant(true) : !composer.bool
    %w = composer.get_param @conv.weight : !composer.tensor
    %c = composer.conv2d %x, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %g = composer.get_param @gn.weight : !composer.tensor
    %n = composer.op "aten::group_norm"(%c, %two, %g, %none, %eps, %true) : (!composer.tensor, !composer.int, !composer.tensor, !composer.none, !composer.float, !composer.bool) -> !composer.tensor
    return %n : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[C:.*]] = composer.conv2d
// CHECK: %[[G:.*]] = composer.get_param @gn.weight
// CHECK: %[[GL:.*]] = composer.to_dtype %[[G]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: composer.op "aten::group_norm"(%[[C]], %{{.*}}, %[[GL]], %{{.*}})

// REPORT: remark: composer-low-precision-norms: 1 norms given the low-precision dtype, 0 skipped
// ALONE: warning: composer-low-precision-norms: 0 norms given the low-precision dtype, 1 skipped
