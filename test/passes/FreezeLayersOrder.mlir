// RUN: composer-opt %s -split-input-file --composer-freeze-layers="num-layers=3" 2>/dev/null | FileCheck %s

// Layer order is the order modules are first called, layers on different
// branches in definition order (ShuffleNetV2's blocks: the branch taken for
// stride 1 calls only branch2, the other branch1 and then branch2).
module {
  composer.parameter @stem.weight : !composer.tensor<4x4xf32>
  composer.parameter @branch1.weight : !composer.tensor<4x4xf32>
  composer.parameter @branch2.weight : !composer.tensor<4x4xf32>
  composer.parameter @head.weight : !composer.tensor<4x4xf32>
  func.func @forward(%x: !composer.tensor, %c: !composer.bool) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %ws = composer.get_param @stem.weight : !composer.tensor
    %s = composer.linear %x, %ws, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %y = composer.if %c -> (!composer.tensor) {
      %w2 = composer.get_param @branch2.weight : !composer.tensor
      %y2 = composer.linear %s, %w2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      composer.yield %y2 : !composer.tensor
    } else {
      %w1 = composer.get_param @branch1.weight : !composer.tensor
      %y1 = composer.linear %s, %w1, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      %w2 = composer.get_param @branch2.weight : !composer.tensor
      %y2 = composer.linear %y1, %w2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      composer.yield %y2 : !composer.tensor
    }
    %wh = composer.get_param @head.weight : !composer.tensor
    %out = composer.linear %y, %wh, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %out : !composer.tensor
  }
}
// CHECK: module attributes {composer.frozen_layers = 3 : i64, composer.layers = ["stem", "branch1", "branch2", "head"]}

// -----

// Branches that disagree (a then b, b then a) order the two by definition.
module {
  composer.parameter @a.weight : !composer.tensor<4x4xf32>
  composer.parameter @b.weight : !composer.tensor<4x4xf32>
  composer.parameter @c.weight : !composer.tensor<4x4xf32>
  composer.parameter @d.weight : !composer.tensor<4x4xf32>
  func.func @forward(%x: !composer.tensor, %cond: !composer.bool) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %y = composer.if %cond -> (!composer.tensor) {
      %wb = composer.get_param @b.weight : !composer.tensor
      %yb = composer.linear %x, %wb, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      %wa = composer.get_param @a.weight : !composer.tensor
      %ya = composer.linear %yb, %wa, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      composer.yield %ya : !composer.tensor
    } else {
      %wa = composer.get_param @a.weight : !composer.tensor
      %ya = composer.linear %x, %wa, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      %wb = composer.get_param @b.weight : !composer.tensor
      %yb = composer.linear %ya, %wb, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      composer.yield %yb : !composer.tensor
    }
    %wd = composer.get_param @d.weight : !composer.tensor
    %yd = composer.linear %y, %wd, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %wc = composer.get_param @c.weight : !composer.tensor
    %yc = composer.linear %yd, %wc, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    return %yc : !composer.tensor
  }
}
// Called order wins over definition order outside the branches (d before c).
// CHECK: module attributes {composer.frozen_layers = 3 : i64, composer.layers = ["a", "b", "d", "c"]}
