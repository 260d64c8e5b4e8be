// RUN: composer-opt %s -split-input-file --composer-alibi -verify-diagnostics
// All or nothing, and no output: the refused model is not written.
// RUN: not composer-opt %s -split-input-file --composer-alibi -o %t.out.mlir 2>&1 | FileCheck %s
// RUN: not test -e %t.out.mlir

// CHECK: error: composer-alibi: 1 site(s) cannot take ALiBi, so nothing was changed

// One attention of two cannot be biased (its scores are products of
// unsplit tensors, so the head count is unknown): the position embedding
// and the other attention's bias would leave it without position
// information, so the pass changes nothing and names the site.
// expected-error @+1 {{composer-alibi: 1 site(s) cannot take ALiBi, so nothing was changed}}
module {
  composer.parameter @pos.weight : !composer.tensor<16x8xf32>
  func.func @forward(%q: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor, %x: !composer.tensor, %b: !composer.int, %t: !composer.int) -> (!composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %c-2 = composer.constant(-2) : !composer.int
    %c-1 = composer.constant(-1) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %c2 = composer.constant(2) : !composer.int
    %c4 = composer.constant(4) : !composer.int
    %c8 = composer.constant(8) : !composer.int
    %cpu = composer.constant("cpu") : !composer.device
    %kt = composer.op "aten::transpose"(%k, %c-2, %c-1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %s1 = composer.matmul %q, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    // expected-note @+1 {{the head count is unknown (q and k are not views with a heads dimension)}}
    %p1 = composer.softmax %s1 {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y1 = composer.matmul %p1, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %heads = composer.op "prim::ListConstruct"(%b, %t, %c4, %c8) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %q4 = composer.view %q, %heads : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %q4h = composer.op "aten::transpose"(%q4, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %s2 = composer.matmul %q4h, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %p2 = composer.softmax %s2 {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y2 = composer.matmul %p2, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %w = composer.get_param @pos.weight : !composer.tensor
    %ar = composer.op "aten::arange"(%t, %none, %none, %cpu, %none) : (!composer.int, !composer.none, !composer.none, !composer.device, !composer.none) -> !composer.tensor
    %e = composer.op "aten::embedding"(%w, %ar, %c-1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %x1 = composer.add %x, %e {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y1, %y2, %x1 : !composer.tensor, !composer.tensor, !composer.tensor
  }
}

// -----

// Every reason a site refuses: a softmax over another dimension, scores
// that are no matmul, a position embedding with other users, a fused
// attention; each named at its site.
// expected-error @+1 {{composer-alibi: 4 site(s) cannot take ALiBi, so nothing was changed}}
module {
  composer.parameter @pos.weight : !composer.tensor<16x8xf32>
  func.func @forward(%q: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor, %x: !composer.tensor, %b: !composer.int, %t: !composer.int, %heads: !composer.int) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %c-2 = composer.constant(-2) : !composer.int
    %c-1 = composer.constant(-1) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %c2 = composer.constant(2) : !composer.int
    %c4 = composer.constant(4) : !composer.int
    %c8 = composer.constant(8) : !composer.int
    %cpu = composer.constant("cpu") : !composer.device
    %kt = composer.op "aten::transpose"(%k, %c-2, %c-1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %shape = composer.op "prim::ListConstruct"(%b, %t, %c4, %c8) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %q4 = composer.view %q, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %q4h = composer.op "aten::transpose"(%q4, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %s = composer.matmul %q4h, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %p = composer.softmax %s {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y = composer.matmul %p, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    // expected-note @+1 {{the softmax is not over the last dimension}}
    %p3 = composer.softmax %s {dim = 1 : i64} : (!composer.tensor) -> !composer.tensor
    %y3 = composer.matmul %p3, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    // expected-note @+1 {{the scores are not a matmul of q and k}}
    %p4 = composer.softmax %x {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y4 = composer.matmul %p4, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %w = composer.get_param @pos.weight : !composer.tensor
    %ar = composer.op "aten::arange"(%t, %none, %none, %cpu, %none) : (!composer.int, !composer.none, !composer.none, !composer.device, !composer.none) -> !composer.tensor
    // expected-note @+1 {{the position embedding has other users}}
    %e = composer.op "aten::embedding"(%w, %ar, %c-1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %x1 = composer.add %x, %e {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %x2 = composer.mul %x1, %e : (!composer.tensor, !composer.tensor) -> !composer.tensor
    // expected-note @+1 {{fused attention (aten::_native_multi_head_attention): its scores are not in the graph}}
    %f:2 = composer.op "aten::_native_multi_head_attention"(%x, %x, %x, %c8, %heads, %none, %none, %none, %none, %none, %false, %false, %none) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int, !composer.none, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.bool, !composer.none) -> (!composer.tensor, !composer.tensor)
    return %y, %y3, %y4, %x2, %f#0 : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor
  }
}
