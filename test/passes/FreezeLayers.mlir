// RUN: composer-opt %s -split-input-file --composer-freeze-layers="num-layers=2" 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-freeze-layers="up-to=b" 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-freeze-layers="num-layers=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-freeze-layers="num-layers=9" 2>&1 >/dev/null | FileCheck %s --check-prefix=CLAMP
// RUN: composer-opt %s -split-input-file --composer-freeze-layers 2>&1 >/dev/null | FileCheck %s --check-prefix=NONE
// RUN: not composer-opt %s -split-input-file --composer-freeze-layers="up-to=nope" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// Idempotent.
// RUN: composer-opt %s -split-input-file --composer-freeze-layers="num-layers=2" 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-freeze-layers="num-layers=2" --composer-freeze-layers="num-layers=2" 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Three layers a, b, c in forward order, and a residual edge from a's
// output around b.
module {
  composer.parameter @a.weight : !composer.tensor<4x4xf32>
  composer.parameter @b.weight : !composer.tensor<4x4xf32>
  composer.parameter @c.weight : !composer.tensor<4x4xf32>
  composer.buffer @c.stat : !composer.tensor<4xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %wa = composer.get_param @a.weight : !composer.tensor
    %ya = composer.linear %x, %wa, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %wb = composer.get_param @b.weight : !composer.tensor
    %yb = composer.linear %ya, %wb, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %r = composer.relu %yb : (!composer.tensor) -> !composer.tensor
    %wc = composer.get_param @c.weight : !composer.tensor
    %yc = composer.linear %r, %wc, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %sum = composer.add %yc, %ya {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %sum : !composer.tensor
  }
}
// CHECK: module attributes {composer.frozen_layers = 2 : i64, composer.layers = ["a", "b", "c"]}
// CHECK-NEXT: composer.parameter @a.weight frozen
// CHECK-NEXT: composer.parameter @b.weight frozen
// CHECK-NEXT: composer.parameter @c.weight :
// CHECK-LABEL: func.func @forward
// a's output is frozen-only: b (frozen) reads it as is, the residual add
// (trainable side) through a stop_gradient.
// CHECK: %[[YA:.*]] = composer.linear
// CHECK-NEXT: %[[CUT_A:.*]] = composer.stop_gradient %[[YA]]
// CHECK: %[[YB:.*]] = composer.linear %[[YA]]
// relu of b's output is still frozen-only; its use by c is cut.
// CHECK: %[[R:.*]] = composer.relu %[[YB]]
// CHECK-NEXT: %[[CUT_R:.*]] = composer.stop_gradient %[[R]]
// CHECK: %[[YC:.*]] = composer.linear %[[CUT_R]]
// CHECK: composer.add %[[YC]], %[[CUT_A]]

// REPORT: remark: composer-freeze-layers: 2 parameters frozen, 0 skipped
// REPORT: remark: composer-freeze-layers: 2 of 3 layers frozen, 2 frontier value(s) cut from autograd
// CLAMP: warning: composer-freeze-layers: freezing 2 of 3 layers, not 9: the last layer always trains
// NONE: warning: composer-freeze-layers: 0 parameters frozen, 0 skipped
// UNKNOWN: error: composer-freeze-layers: no layer 'nope' (layers are modules with parameters, e.g. 'a')
