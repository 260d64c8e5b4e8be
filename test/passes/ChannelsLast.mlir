// RUN: composer-opt %s -split-input-file --composer-channels-last 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-channels-last 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-channels-last 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-channels-last --composer-channels-last 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// A known 4-D input is converted once at entry; the weight is declared
// channels_last (applied once, at export), the bias is not touched.
module {
  composer.parameter @conv.weight : !composer.tensor<8x3x3x3xf32>
  composer.parameter @conv.bias : !composer.tensor<8xf32>
  func.func @forward(%x: !composer.tensor<2x3x8x8xf32>) -> !composer.tensor {
    %w = composer.get_param @conv.weight : !composer.tensor
    %b = composer.get_param @conv.bias : !composer.tensor
    %r = composer.relu %x : (!composer.tensor<2x3x8x8xf32>) -> !composer.tensor
    %y = composer.conv2d %r, %w, %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK: composer.parameter @conv.weight channels_last : !composer.tensor<8x3x3x3xf32>
// CHECK-NEXT: composer.parameter @conv.bias : !composer.tensor<8xf32>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<2x3x8x8xf32>)
// CHECK-NEXT: %[[CL:.*]] = composer.contiguous %[[X]] {memory_format = #composer.memory_format<channels_last>}
// CHECK-NOT: composer.contiguous
// CHECK: composer.relu %[[CL]]
// REPORT: remark: composer-channels-last: 1 convolution weights made channels_last, 0 skipped

// -----

// An input of unknown rank is converted only when it is 4-D at run time;
// an input that reaches no convolution is left alone.
module {
  composer.parameter @conv.weight : !composer.tensor<8x3x3x3xf32>
  func.func @forward(%x: !composer.tensor, %scale: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @conv.weight : !composer.tensor
    %y = composer.conv2d %x, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %z = composer.mul %y, %scale : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %z : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[S:.*]]: !composer.tensor)
// CHECK: %[[RANK:.*]] = composer.op "aten::dim"(%[[X]])
// CHECK: %[[IS4D:.*]] = composer.op "aten::eq"(%[[RANK]], %{{.*}})
// CHECK: %[[IN:.*]] = composer.if %[[IS4D]] -> (!composer.tensor) {
// CHECK-NEXT: %[[CL:.*]] = composer.contiguous %[[X]] {memory_format = #composer.memory_format<channels_last>}
// CHECK-NEXT: composer.yield %[[CL]]
// CHECK-NEXT: } else {
// CHECK-NEXT: composer.yield %[[X]]
// CHECK: %[[Y:.*]] = composer.conv2d %[[IN]]
// CHECK: composer.mul %[[Y]], %[[S]]

// -----

// Convolutions the importer leaves generic (a scripted ConvTranspose2d) get
// channels_last weights too: the weight is operand 1 of every aten
// convolution schema.
module {
  composer.parameter @up.weight : !composer.tensor<8x4x2x2xf32>
  composer.parameter @up.bias : !composer.tensor<4xf32>
  composer.parameter @conv.weight : !composer.tensor<4x4x3x3xf32>
  func.func @forward(%x: !composer.tensor<2x8x4x4xf32>) -> !composer.tensor {
    %w = composer.get_param @up.weight : !composer.tensor
    %b = composer.get_param @up.bias : !composer.tensor
    %s = composer.constant([2, 2]) : !composer.list<!composer.int>
    %p = composer.constant([0, 0]) : !composer.list<!composer.int>
    %d = composer.constant([1, 1]) : !composer.list<!composer.int>
    %g = composer.constant(1) : !composer.int
    %y = composer.op "aten::conv_transpose2d"(%x, %w, %b, %s, %p, %p, %g, %d) : (!composer.tensor<2x8x4x4xf32>, !composer.tensor, !composer.tensor, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.int, !composer.list<!composer.int>) -> !composer.tensor
    %cw = composer.get_param @conv.weight : !composer.tensor
    %one = composer.constant([1, 1]) : !composer.list<!composer.int>
    %z = composer.op "aten::conv2d"(%y, %cw, %b, %one, %one, %one, %g) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.int) -> !composer.tensor
    return %z : !composer.tensor
  }
}
// CHECK: composer.parameter @up.weight channels_last : !composer.tensor<8x4x2x2xf32>
// CHECK-NEXT: composer.parameter @up.bias : !composer.tensor<4xf32>
// CHECK-NEXT: composer.parameter @conv.weight channels_last : !composer.tensor<4x4x3x3xf32>
// CHECK-LABEL: func.func @forward
// CHECK-NEXT: %[[CL:.*]] = composer.contiguous %{{.*}} {memory_format = #composer.memory_format<channels_last>}
// CHECK: composer.op "aten::conv_transpose2d"(%[[CL]],
// REPORT: remark: composer-channels-last: 2 convolution weights made channels_last, 0 skipped

// -----

// No convolution: a warning.
module {
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    return %x : !composer.tensor
  }
}
// REPORT: warning: composer-channels-last: 0 convolution weights made channels_last, 0 skipped
