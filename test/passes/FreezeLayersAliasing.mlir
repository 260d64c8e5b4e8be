// RUN: composer-opt %s -split-input-file --composer-freeze-layers="num-layers=1" 2>/dev/null | FileCheck %s

// Scripted DenseNet: every layer reads one list and appends its output to
// it. The list is created from a's output alone (only frozen), but what is
// read from it later holds b's (trainable) output too: no cut there, or b
// gets no gradient. a's output itself is cut where the list takes it.
module {
  composer.parameter @a.weight : !composer.tensor<4x4xf32>
  composer.parameter @b.weight : !composer.tensor<4x4xf32>
  composer.parameter @c.weight : !composer.tensor<4x8xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %wa = composer.get_param @a.weight : !composer.tensor
    %ya = composer.linear %x, %wa, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %list = composer.op "prim::ListConstruct"(%ya) : (!composer.tensor) -> !composer.list<!composer.tensor>
    %in = composer.cat %list {dim = 1 : i64} : (!composer.list<!composer.tensor>) -> !composer.tensor
    %wb = composer.get_param @b.weight : !composer.tensor
    %yb = composer.linear %in, %wb, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %appended = composer.op "aten::append"(%list, %yb) : (!composer.list<!composer.tensor>, !composer.tensor) -> !composer.list<!composer.tensor>
    %all = composer.cat %list {dim = 1 : i64} : (!composer.list<!composer.tensor>) -> !composer.tensor
    %wc = composer.get_param @c.weight : !composer.tensor
    %yc = composer.linear %all, %wc, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %yc : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[YA:.*]] = composer.linear
// CHECK-NEXT: %[[CUT:.*]] = composer.stop_gradient %[[YA]]
// CHECK-NEXT: composer.op "prim::ListConstruct"(%[[CUT]])
// CHECK: %[[ALL:.*]] = composer.cat
// CHECK-NOT: composer.stop_gradient %[[ALL]]
// CHECK: composer.linear %[[ALL]]

// -----

// An in-place write of trainable data into a frozen-only value: its later
// reads are not frozen-only.
module {
  composer.parameter @a.weight : !composer.tensor<4x4xf32>
  composer.parameter @b.weight : !composer.tensor<4x4xf32>
  composer.parameter @c.weight : !composer.tensor<4x4xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %wa = composer.get_param @a.weight : !composer.tensor
    %ya = composer.linear %x, %wa, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %wb = composer.get_param @b.weight : !composer.tensor
    %yb = composer.linear %x, %wb, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %sum = composer.add %ya, %yb inplace {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %wc = composer.get_param @c.weight : !composer.tensor
    %yc = composer.linear %ya, %wc, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %yc : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[YA:.*]] = composer.linear
// CHECK-NOT: composer.stop_gradient
// CHECK: composer.linear %[[YA]]

// -----

// Inside regions too: a's output reaches the trainable b inside a branch
// and is cut there.
module {
  composer.parameter @a.weight : !composer.tensor<4x4xf32>
  composer.parameter @b.weight : !composer.tensor<4x4xf32>
  func.func @forward(%x: !composer.tensor, %c: !composer.bool) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %y = composer.if %c -> (!composer.tensor) {
      %wa = composer.get_param @a.weight : !composer.tensor
      %ya = composer.linear %x, %wa, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      %r = composer.relu %ya : (!composer.tensor) -> !composer.tensor
      %wb = composer.get_param @b.weight : !composer.tensor
      %yb = composer.linear %r, %wb, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      composer.yield %yb : !composer.tensor
    } else {
      composer.yield %x : !composer.tensor
    }
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[R:.*]] = composer.relu
// CHECK-NEXT: %[[CUT:.*]] = composer.stop_gradient %[[R]]
// CHECK: composer.linear %[[CUT]]
