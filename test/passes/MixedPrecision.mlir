// RUN: composer-opt %s -split-input-file --composer-mixed-precision 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-mixed-precision="dtype=f16 low-precision-norms=true" 2>/dev/null | FileCheck %s --check-prefix=F16
// RUN: composer-opt %s -split-input-file --composer-mixed-precision 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: not composer-opt %s --composer-mixed-precision="dtype=f64" 2>&1 | FileCheck %s --check-prefix=BAD
// Idempotent.
// RUN: composer-opt %s -split-input-file --composer-mixed-precision 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-mixed-precision --composer-mixed-precision 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// linear -> layer_norm -> softmax -> matmul: the linear in bf16 (input and
// weight cast on use, the weight stays an fp32 parameter), layer_norm and
// softmax in fp32, the matmul back in bf16 without a cast of a cast.
module {
  composer.parameter @fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @ln.weight : !composer.tensor<8xf32>
  func.func @forward(%x: !composer.tensor, %v: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @fc.weight : !composer.tensor
    %h = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %g = composer.get_param @ln.weight : !composer.tensor
    %n = composer.layer_norm %h, %g, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s = composer.softmax %n {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y = composer.matmul %h, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %z = composer.matmul %s, %y : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %z : !composer.tensor
  }
}
// CHECK: composer.parameter @fc.weight : !composer.tensor<8x8xf32>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[V:.*]]: !composer.tensor)
// CHECK: %[[W:.*]] = composer.get_param @fc.weight
// CHECK: %[[XL:.*]] = composer.to_dtype %[[X]] {copy = false, dtype = #composer.dtype<bf16>, non_blocking = false}
// CHECK: %[[WL:.*]] = composer.to_dtype %[[W]] {copy = false, dtype = #composer.dtype<bf16>, non_blocking = false}
// CHECK: %[[H:.*]] = composer.linear %[[XL]], %[[WL]]
// CHECK: %[[HF:.*]] = composer.to_dtype %[[H]] {copy = false, dtype = #composer.dtype<f32>
// CHECK: %[[N:.*]] = composer.layer_norm %[[HF]]
// CHECK: %[[NF:.*]] = composer.to_dtype %[[N]] {copy = false, dtype = #composer.dtype<f32>
// CHECK: %[[S:.*]] = composer.softmax %[[NF]]
// The linear's bf16 output feeds the matmul as is.
// CHECK: %[[VL:.*]] = composer.to_dtype %[[V]] {copy = false, dtype = #composer.dtype<bf16>
// CHECK: %[[Y:.*]] = composer.matmul %[[H]], %[[VL]]
// CHECK: %[[SL:.*]] = composer.to_dtype %[[S]] {copy = false, dtype = #composer.dtype<bf16>
// CHECK: composer.matmul %[[SL]], %[[Y]]

// f16, and layer_norm in the low dtype too (weight included).
// F16-LABEL: func.func @forward
// F16: %[[H:.*]] = composer.linear
// F16: %[[G:.*]] = composer.get_param @ln.weight
// F16: %[[GL:.*]] = composer.to_dtype %[[G]] {copy = false, dtype = #composer.dtype<f16>
// F16: composer.layer_norm %[[H]], %[[GL]]

// REPORT: remark: composer-mixed-precision: 5 ops given their autocast dtype, 0 skipped
// BAD: for the --dtype option: Cannot find option named 'f64'!

// -----

// Known types: casts carry the dtype they produce; the rewritten op's result
// dtype becomes unknown, and @forward's signature follows.
module {
  composer.parameter @fc.weight : !composer.tensor<8x8xf32>
  func.func @typed(%x: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @fc.weight : !composer.tensor<8x8xf32>
    %h = composer.linear %x, %w, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32>
    return %h : !composer.tensor<2x8xf32>
  }
  func.func @forward(%x: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @fc.weight : !composer.tensor<8x8xf32>
    %h = composer.linear %x, %w, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32>
    return %h : !composer.tensor<2x8xf32>
  }
}
// Every function's signature follows, not only @forward's.
// CHECK-LABEL: func.func @typed
// CHECK-SAME: -> !composer.tensor<2x8xunk>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xunk>
// CHECK: composer.to_dtype %[[X]] {{.*}} : (!composer.tensor<2x8xf32>) -> !composer.tensor<2x8xbf16>
// CHECK: composer.linear {{.*}} -> !composer.tensor<2x8xunk>
