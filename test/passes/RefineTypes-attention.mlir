// RUN: composer-opt %s -split-input-file -verify-diagnostics \
// RUN:   --composer-refine-types="input-specs=2x8xi64" | FileCheck %s

// A GPT block's attention as torch.jit.script writes it (the example
// decoder's): the integers come from aten::size, its list unpacked, floor
// division and the head count, a module attribute; the pieces of a split,
// the views and transposes, the causal mask sliced to the sequence and
// inverted, the scores scaled by a number and masked. Every size is known.

// CHECK-LABEL: module @scripted
// CHECK: composer.op "aten::arange"{{.*}} -> !composer.tensor<8xi64>
// CHECK: composer.op "aten::embedding"{{.*}} -> !composer.tensor<2x8x6xf32>
// CHECK: composer.op "aten::embedding"{{.*}} -> !composer.tensor<8x6xf32>
// CHECK: composer.op "aten::unsqueeze"{{.*}} -> !composer.tensor<1x8x6xf32>
// CHECK: composer.op "prim::ListUnpack"{{.*}} -> (!composer.tensor<2x8x6xf32>, !composer.tensor<2x8x6xf32>, !composer.tensor<2x8x6xf32>)
// CHECK: composer.view {{.*}} -> !composer.tensor<2x8x2x3xf32>
// CHECK: composer.op "aten::transpose"{{.*}} -> !composer.tensor<2x2x8x3xf32>
// CHECK: composer.op "aten::transpose"{{.*}} -> !composer.tensor<2x2x8x3xf32>
// CHECK: composer.op "aten::transpose"{{.*}} -> !composer.tensor<2x2x3x8xf32>
// CHECK: composer.matmul {{.*}} -> !composer.tensor<2x2x8x8xf32>
// CHECK: composer.op "aten::mul"{{.*}} -> !composer.tensor<2x2x8x8xf32>
// CHECK: composer.op "aten::slice"{{.*}} -> !composer.tensor<1x1x8x16xi1>
// CHECK: composer.op "aten::slice"{{.*}} -> !composer.tensor<1x1x8x8xi1>
// CHECK: composer.op "aten::bitwise_not"{{.*}} -> !composer.tensor<1x1x8x8xi1>
// CHECK: composer.op "aten::masked_fill"{{.*}} -> !composer.tensor<2x2x8x8xf32>
// CHECK: composer.op "aten::gt"{{.*}} -> !composer.tensor<2x2x8x8xi1>
// CHECK: composer.op "aten::slice"{{.*}} -> !composer.tensor<2x2x8x2xf32>

// expected-remark@+1 {{composer-refine-types: 24 tensor results fully refined, 0 skipped}}
module @scripted {
  composer.parameter @tok.weight : !composer.tensor<16x6xf32>
  composer.parameter @pos.weight : !composer.tensor<8x6xf32>
  composer.parameter @qkv.weight : !composer.tensor<18x6xf32>
  composer.buffer @mask : !composer.tensor<1x1x16x16xi1>
  func.func @forward(%idx: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %c0 = composer.constant(0) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %c2 = composer.constant(2) : !composer.int
    %c3 = composer.constant(3) : !composer.int
    %cm1 = composer.constant(-1) : !composer.int
    %cm2 = composer.constant(-2) : !composer.int
    %cm3 = composer.constant(-3) : !composer.int
    %c7 = composer.constant(7) : !composer.int
    %long = composer.constant(4) : !composer.int
    %scale = composer.constant(5.000000e-01) : !composer.float
    %ninf = composer.constant(0xFFF0000000000000 : f64) : !composer.float
    %t = composer.op "aten::size"(%idx, %c1) : (!composer.tensor, !composer.int) -> !composer.int
    %device = composer.op "prim::device"(%idx) : (!composer.tensor) -> !composer.device
    %pos = composer.op "aten::arange"(%c0, %t, %long, %none, %device, %none) : (!composer.int, !composer.int, !composer.int, !composer.none, !composer.device, !composer.none) -> !composer.tensor
    %wte = composer.get_param @tok.weight : !composer.tensor
    %tok = composer.op "aten::embedding"(%wte, %idx, %cm1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %wpe = composer.get_param @pos.weight : !composer.tensor
    %rows = composer.op "aten::embedding"(%wpe, %pos, %cm1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %rows1 = composer.op "aten::unsqueeze"(%rows, %c0) : (!composer.tensor, !composer.int) -> !composer.tensor
    %x = composer.add %tok, %rows1 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %sizes = composer.op "aten::size"(%x) : (!composer.tensor) -> !composer.list<!composer.int>
    %bt:3 = composer.op "prim::ListUnpack"(%sizes) : (!composer.list<!composer.int>) -> (!composer.int, !composer.int, !composer.int)
    %w = composer.get_param @qkv.weight : !composer.tensor
    %qkv = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %parts = composer.op "aten::split"(%qkv, %bt#2, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.list<!composer.tensor>
    %qkv3:3 = composer.op "prim::ListUnpack"(%parts) : (!composer.list<!composer.tensor>) -> (!composer.tensor, !composer.tensor, !composer.tensor)
    %heads = composer.get_attr "heads" {imported = 2 : i64} : !composer.int
    %width = composer.op "aten::floordiv"(%bt#2, %heads) : (!composer.int, !composer.int) -> !composer.int
    %shape = composer.op "prim::ListConstruct"(%bt#0, %bt#1, %heads, %width) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %q4 = composer.view %qkv3#0, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %q = composer.op "aten::transpose"(%q4, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %k4 = composer.view %qkv3#1, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %k = composer.op "aten::transpose"(%k4, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %kt = composer.op "aten::transpose"(%k, %cm2, %cm1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %scores = composer.matmul %q, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %scaled = composer.op "aten::mul"(%scores, %scale) : (!composer.tensor, !composer.float) -> !composer.tensor
    %mask = composer.get_param @mask : !composer.tensor
    %rows_t = composer.op "aten::slice"(%mask, %c2, %none, %bt#1, %c1) : (!composer.tensor, !composer.int, !composer.none, !composer.int, !composer.int) -> !composer.tensor
    %square = composer.op "aten::slice"(%rows_t, %c3, %none, %bt#1, %c1) : (!composer.tensor, !composer.int, !composer.none, !composer.int, !composer.int) -> !composer.tensor
    %hidden = composer.op "aten::bitwise_not"(%square) : (!composer.tensor) -> !composer.tensor
    %masked = composer.op "aten::masked_fill"(%scaled, %hidden, %ninf) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %positive = composer.op "aten::gt"(%masked, %scale) : (!composer.tensor, !composer.float) -> !composer.tensor
    // Python's slice clamps: [-3:7:2] of 3 elements is [0:3:2].
    %strided = composer.op "aten::slice"(%q, %cm1, %cm3, %c7, %c2) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    return %positive, %strided : !composer.tensor, !composer.tensor
  }
}

// -----

// The same integers as torch.jit.trace records them: sizes become 0-d
// tensors (prim::NumToTensor), are divided by a constant tensor, and come
// back through aten::Int or aten::ScalarImplicit.

// CHECK-LABEL: module @traced
// CHECK: composer.op "prim::NumToTensor"{{.*}} -> !composer.tensor<i64>
// CHECK: composer.op "aten::arange"{{.*}} -> !composer.tensor<8xf32>
// CHECK: composer.constant(dense<2> : tensor<i64>) : !composer.tensor<i64>
// CHECK: composer.op "aten::floor_divide"{{.*}} -> !composer.tensor<i64>
// CHECK: composer.view {{.*}} -> !composer.tensor<2x4x2xi64>
// CHECK: composer.op "aten::chunk"
// CHECK: composer.op "prim::ListUnpack"{{.*}} -> (!composer.tensor<2x3xi64>, !composer.tensor<2x3xi64>, !composer.tensor<2x2xi64>)

// expected-remark@+1 {{composer-refine-types: 6 tensor results fully refined, 0 skipped}}
module @traced {
  func.func @forward(%idx: !composer.tensor) -> (!composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %c1 = composer.constant(1) : !composer.int
    %c2 = composer.constant(2) : !composer.int
    %c3 = composer.constant(3) : !composer.int
    %float = composer.constant(6) : !composer.int
    %t = composer.op "aten::size"(%idx, %c1) : (!composer.tensor, !composer.int) -> !composer.int
    %t0 = composer.op "prim::NumToTensor"(%t) : (!composer.int) -> !composer.tensor
    %end = composer.op "aten::ScalarImplicit"(%t0) : (!composer.tensor) -> !composer.number
    %device = composer.op "prim::device"(%idx) : (!composer.tensor) -> !composer.device
    %range = composer.op "aten::arange"(%end, %float, %none, %device, %none) : (!composer.number, !composer.int, !composer.none, !composer.device, !composer.none) -> !composer.tensor
    %two = composer.constant(dense<2> : tensor<i64>) : !composer.tensor
    %half0 = composer.op "aten::floor_divide"(%t0, %two) : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %half = composer.op "aten::Int"(%half0) : (!composer.tensor) -> !composer.int
    %shape = composer.op "prim::ListConstruct"(%c2, %half, %c2) : (!composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %view = composer.view %idx, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %pieces = composer.op "aten::chunk"(%idx, %c3, %c1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.list<!composer.tensor>
    %chunks:3 = composer.op "prim::ListUnpack"(%pieces) : (!composer.list<!composer.tensor>) -> (!composer.tensor, !composer.tensor, !composer.tensor)
    return %range, %view, %chunks#2 : !composer.tensor, !composer.tensor, !composer.tensor
  }
}

// -----

// A head count the model assigns is not read as imported: the view it
// shapes stays unknown.

// CHECK-LABEL: module @assigned
// CHECK: composer.view {{.*}} -> !composer.tensor<*xi64>

// expected-warning@+1 {{composer-refine-types: 0 tensor results fully refined, 1 skipped}}
module @assigned {
  func.func @forward(%idx: !composer.tensor) -> !composer.tensor {
    %c4 = composer.constant(4) : !composer.int
    %heads = composer.get_attr "heads" {imported = 2 : i64} : !composer.int
    composer.set_attr "heads", %c4 : !composer.int
    %shape = composer.op "prim::ListConstruct"(%heads, %c4, %heads) : (!composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    // expected-note@+1 {{1 skipped: shape partly unknown after inference}}
    %view = composer.view %idx, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    return %view : !composer.tensor
  }
}
