// RUN: composer-opt %s -split-input-file --composer-mixed-precision 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-mixed-precision="dtype=f16 low-precision-norms=true" 2>/dev/null | FileCheck %s --check-prefix=F16
// RUN: composer-opt %s -split-input-file --composer-mixed-precision 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: not composer-opt %s --composer-mixed-precision="dtype=f64" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: composer-opt %s -split-input-file --composer-mixed-precision="device=cpu" 2>/dev/null | FileCheck %s --check-prefix=CPU
// RUN: composer-opt %s -split-input-file --composer-mixed-precision="device=cuda" 2>/dev/null | FileCheck %s --check-prefix=CUDA
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
// The layer norm's fp32 result and its weight are not cast again.
// CHECK: %[[N:.*]] = composer.layer_norm %[[HF]], %[[G:[^,]*]],
// CHECK-NOT: composer.to_dtype %[[G]]
// CHECK: %[[S:.*]] = composer.softmax %[[N]]
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

// REPORT: remark: composer-mixed-precision: 4 ops given their autocast dtype, 1 skipped
// REPORT: note: 1 skipped: no operand may be low
// BAD: for the --dtype option: Cannot find option named 'f64'!

// -----

// Known types: casts carry the dtype they produce; the rewritten op's result
// dtype becomes unknown, and the result cast back to fp32 keeps each
// function's signature.
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
// Every function's results, not only @forward's.
// CHECK-LABEL: func.func @typed
// CHECK-SAME: -> !composer.tensor<2x8xf32>
// CHECK: %[[H:.*]] = composer.linear
// CHECK: %[[HF:.*]] = composer.to_dtype %[[H]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: return %[[HF]] : !composer.tensor<2x8xf32>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32>
// CHECK: composer.to_dtype %[[X]] {{.*}} : (!composer.tensor<2x8xf32>) -> !composer.tensor<2x8xbf16>
// CHECK: %[[H:.*]] = composer.linear {{.*}} -> !composer.tensor<2x8xunk>
// CHECK: %[[HF:.*]] = composer.to_dtype %[[H]] {{.*}} : (!composer.tensor<2x8xunk>) -> !composer.tensor<2x8xf32>
// CHECK: return %[[HF]]

// -----

// Generic matmul-like ops, as traced attention and classifiers record them:
// aten::bmm, aten::addmm and a scripted 3-D convolution run in bf16, all
// their tensor operands cast (the softmax's fp32 output included: a bmm of
// fp32 and bf16 fails). The softmax reads a model input, whose dtype is the
// caller's: it is cast up when called if it is bf16 or fp16, as autocast
// casts an fp32-list op's input.
module {
  composer.parameter @fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @fc.bias : !composer.tensor<8xf32>
  composer.parameter @conv.weight : !composer.tensor<4x3x3x3x3xf32>
  func.func @forward(%x: !composer.tensor, %q: !composer.tensor, %v: !composer.tensor, %video: !composer.tensor) -> (!composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %one = composer.constant(1) : !composer.int
    %w = composer.get_param @fc.weight : !composer.tensor
    %b = composer.get_param @fc.bias : !composer.tensor
    %wt = composer.op "aten::t"(%w) : (!composer.tensor) -> !composer.tensor
    %h = composer.op "aten::addmm"(%b, %x, %wt, %one, %one) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %s = composer.softmax %q {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %a = composer.op "aten::bmm"(%s, %v) : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %cw = composer.get_param @conv.weight : !composer.tensor
    %strides = composer.constant([1, 1, 1]) : !composer.list<!composer.int>
    %pads = composer.constant([0, 0, 0]) : !composer.list<!composer.int>
    %c = composer.op "aten::conv3d"(%video, %cw, %none, %strides, %pads, %strides, %one) : (!composer.tensor, !composer.tensor, !composer.none, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.int) -> !composer.tensor
    return %h, %a, %c : !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:[^:]*]]: !composer.tensor, %[[Q:[^:]*]]: !composer.tensor, %[[V:[^:]*]]: !composer.tensor, %[[VIDEO:[^:]*]]: !composer.tensor)
// CHECK: %[[WT:.*]] = composer.op "aten::t"
// CHECK: %[[BL:.*]] = composer.to_dtype %{{.*}} {{.*}}dtype = #composer.dtype<bf16>
// CHECK: %[[XL:.*]] = composer.to_dtype %[[X]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: %[[WTL:.*]] = composer.to_dtype %[[WT]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: composer.op "aten::addmm"(%[[BL]], %[[XL]], %[[WTL]],
// CHECK: %[[QF:.*]] = composer.op "aten::_autocast_to_full_precision"(%[[Q]], %{{.*}}, %{{.*}})
// CHECK: %[[S:.*]] = composer.softmax %[[QF]]
// CHECK: %[[SL:.*]] = composer.to_dtype %[[S]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: %[[VL:.*]] = composer.to_dtype %[[V]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: composer.op "aten::bmm"(%[[SL]], %[[VL]])
// CHECK: %[[VIDEOL:.*]] = composer.to_dtype %[[VIDEO]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: %[[CWL:.*]] = composer.to_dtype %{{.*}} {{.*}}dtype = #composer.dtype<bf16>
// CHECK: composer.op "aten::conv3d"(%[[VIDEOL]], %[[CWL]], %{{.*}}) :

// The cast up applies to CPU tensors, CUDA tensors or both, as the device.
// CPU-LABEL: func.func @forward(%arg0: !composer.tensor, %arg1: !composer.tensor, %arg2: !composer.tensor, %arg3: !composer.tensor) -> (!composer.tensor<*xf32>, !composer.tensor<*xf32>, !composer.tensor<*xf32>)
// CPU: composer.op "aten::addmm"
// CPU: %[[NO:.*]] = composer.constant(false)
// CPU-NEXT: %[[YES:.*]] = composer.constant(true)
// CPU-NEXT: composer.op "aten::_autocast_to_full_precision"(%{{.*}}, %[[NO]], %[[YES]])
// CUDA-LABEL: func.func @forward(%arg0: !composer.tensor, %arg1: !composer.tensor, %arg2: !composer.tensor, %arg3: !composer.tensor) -> (!composer.tensor<*xf32>, !composer.tensor<*xf32>, !composer.tensor<*xf32>)
// CUDA: composer.op "aten::addmm"
// CUDA: %[[YES:.*]] = composer.constant(true)
// CUDA-NEXT: %[[NO:.*]] = composer.constant(false)
// CUDA-NEXT: composer.op "aten::_autocast_to_full_precision"(%{{.*}}, %[[YES]], %[[NO]])

// REPORT: remark: composer-mixed-precision: 4 ops given their autocast dtype, 0 skipped

// -----

// einsum (maxvit's attention) takes its operands as a list: they are cast in
// a list of its own, so the fp32 list's other users keep fp32 elements.
module {
  func.func @forward(%q: !composer.tensor, %v: !composer.tensor) -> (!composer.tensor, !composer.list<!composer.tensor>) {
    %eq = composer.constant("bij,bjk->bik") : !composer.str
    %none = composer.constant(none) : !composer.none
    %s = composer.softmax %q {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %l = composer.op "prim::ListConstruct"(%s, %v) : (!composer.tensor, !composer.tensor) -> !composer.list<!composer.tensor>
    %e = composer.op "aten::einsum"(%eq, %l, %none) : (!composer.str, !composer.list<!composer.tensor>, !composer.none) -> !composer.tensor
    return %e, %l : !composer.tensor, !composer.list<!composer.tensor>
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[Q:[^:]*]]: !composer.tensor, %[[V:[^:]*]]: !composer.tensor)
// CHECK: %[[S:.*]] = composer.softmax
// CHECK: %[[LIST:.*]] = composer.op "prim::ListConstruct"(%[[S]], %[[V]])
// CHECK: %[[SL:.*]] = composer.to_dtype %[[S]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: %[[VL:.*]] = composer.to_dtype %[[V]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: %[[LOW:.*]] = composer.op "prim::ListConstruct"(%[[SL]], %[[VL]])
// CHECK: %[[E:.*]] = composer.op "aten::einsum"(%{{.*}}, %[[LOW]], %{{.*}})
// CHECK: %[[EF:.*]] = composer.to_dtype %[[E]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: return %[[EF]], %[[LIST]]

// REPORT: remark: composer-mixed-precision: 2 ops given their autocast dtype, 0 skipped

// -----

// Attention's softmax: its input is a bf16 matmul's scores, and its result
// is only read by a bf16 matmul (through dropout), so its fp32 precision
// would never be read: it runs on the bf16 scores (the kernel accumulates in
// fp32) and is rounded once, as under CPU autocast. A softmax whose result
// is also returned, and a log_softmax on the same scores read through an
// fp32 cast, keep their fp32 inputs.
module {
  func.func @forward(%q: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor, %mask: !composer.tensor, %train: !composer.bool) -> (!composer.tensor, !composer.tensor, !composer.tensor) {
    %scale = composer.constant(1.250000e-01) : !composer.float
    %ninf = composer.constant(0xFFF0000000000000 : f64) : !composer.float
    %one = composer.constant(1) : !composer.int
    %none = composer.constant(none) : !composer.none
    %s = composer.matmul %q, %k : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %m = composer.op "aten::mul"(%s, %scale) : (!composer.tensor, !composer.float) -> !composer.tensor
    %f = composer.op "aten::masked_fill"(%m, %mask, %ninf) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %p = composer.softmax %f {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %d = composer.dropout %p, %train {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %a = composer.matmul %d, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %p2 = composer.softmax %f {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %b = composer.matmul %p2, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %ls = composer.op "aten::log_softmax"(%f, %one, %none) : (!composer.tensor, !composer.int, !composer.none) -> !composer.tensor
    %lf = composer.to_dtype %ls {copy = false, dtype = #composer.dtype<f32>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
    return %a, %p2, %lf : !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[S:.*]] = composer.matmul
// CHECK: %[[M:.*]] = composer.op "aten::mul"(%[[S]],
// CHECK: %[[F:.*]] = composer.op "aten::masked_fill"(%[[M]],
// CHECK-NOT: composer.to_dtype
// CHECK: %[[P:.*]] = composer.softmax %[[F]]
// CHECK: %[[D:.*]] = composer.dropout %[[P]]
// CHECK: %[[DL:.*]] = composer.to_dtype %[[D]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK: composer.matmul %[[DL]],
// CHECK: %[[FF:.*]] = composer.to_dtype %[[F]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: %[[P2:.*]] = composer.softmax %[[FF]]
// CHECK: %[[FF2:.*]] = composer.to_dtype %[[F]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: composer.op "aten::log_softmax"(%[[FF2]],
// CHECK: return %{{.*}}, %[[P2]],

// CPU-LABEL: func.func @forward
// CPU: %[[F:.*]] = composer.op "aten::masked_fill"
// CPU-NEXT: composer.softmax %[[F]]

// REPORT: remark: composer-mixed-precision: 6 ops given their autocast dtype, 0 skipped

// -----

// Ops that follow their inputs but need their float operands in one dtype.
// index_put_ writes into a bf16 `self` whose dtype is only known at run
// time: the fp32 values follow it (aten::type_as). lerp of a bf16 and an
// fp32 tensor runs in fp32, as type promotion would. nll_loss's target, a
// model input, is the caller's dtype: aten::_autocast_to_full_precision
// casts it up only if it is a bf16 or fp16 float (an integer target passes
// as it is). Ops whose operands are all fp32 (no bf16 value reaches them)
// are left alone.
module {
  composer.parameter @fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor, %y: !composer.tensor, %idx: !composer.list<!composer.optional<!composer.tensor>>, %target: !composer.tensor) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %half = composer.constant(5.000000e-01) : !composer.float
    %w = composer.get_param @fc.weight : !composer.tensor
    %h = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %r = composer.relu %h : (!composer.tensor) -> !composer.tensor
    %p = composer.op "aten::index_put_"(%r, %idx, %y, %false) : (!composer.tensor, !composer.list<!composer.optional<!composer.tensor>>, !composer.tensor, !composer.bool) -> !composer.tensor
    %l = composer.op "aten::lerp"(%y, %r, %half) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %one = composer.constant(1) : !composer.int
    %m = composer.constant(-100) : !composer.int
    %ls = composer.op "aten::log_softmax"(%r, %one, %none) : (!composer.tensor, !composer.int, !composer.none) -> !composer.tensor
    %loss = composer.op "aten::nll_loss"(%ls, %target, %none, %one, %m) : (!composer.tensor, !composer.tensor, !composer.none, !composer.int, !composer.int) -> !composer.tensor
    %f = composer.op "aten::lerp"(%x, %y, %half) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    return %p, %l, %loss, %f : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:[^:]*]]: !composer.tensor, %[[Y:[^:]*]]: !composer.tensor, %[[IDX:[^:]*]]: {{.*}}, %[[T:[^:]*]]: !composer.tensor)
// CHECK: %[[R:.*]] = composer.relu
// CHECK: %[[YL:.*]] = composer.op "aten::type_as"(%[[Y]], %[[R]])
// CHECK: composer.op "aten::index_put_"(%[[R]], %[[IDX]], %[[YL]],
// CHECK: %[[RF:.*]] = composer.to_dtype %[[R]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: composer.op "aten::lerp"(%[[Y]], %[[RF]],
// CHECK: %[[RF2:.*]] = composer.to_dtype %[[R]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: %[[LS:.*]] = composer.op "aten::log_softmax"(%[[RF2]],
// CHECK: %[[TF:.*]] = composer.op "aten::_autocast_to_full_precision"(%[[T]], %{{.*}}, %{{.*}})
// CHECK: composer.op "aten::nll_loss"(%[[LS]], %[[TF]],
// CHECK: composer.op "aten::lerp"(%[[X]], %[[Y]],

// REPORT: remark: composer-mixed-precision: 5 ops given their autocast dtype, 0 skipped

// -----

// A bf16 linear's output added to an fp32 residual: the promotion is made
// explicit (a cast up), so that TorchScript's autodiff, which does not cast
// gradients back as eager autograd does, gives the linear a bf16 gradient.
// An add of two values that may both be bf16 keeps their dtype.
module {
  composer.parameter @fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @fc.weight : !composer.tensor
    %h = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %r = composer.add %x, %h {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %g = composer.linear %h, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s = composer.add %h, %g {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %r, %s : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:[^:]*]]: !composer.tensor)
// CHECK: %[[H:.*]] = composer.linear
// CHECK: %[[HF:.*]] = composer.to_dtype %[[H]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: %[[R:.*]] = composer.add %[[X]], %[[HF]]
// CHECK: %[[G:.*]] = composer.linear %[[H]],
// CHECK: %[[S:.*]] = composer.add %[[H]], %[[G]]
// CHECK: %[[SF:.*]] = composer.to_dtype %[[S]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: return %[[R]], %[[SF]]

// REPORT: remark: composer-mixed-precision: 3 ops given their autocast dtype, 0 skipped

// -----

// The model's results keep their dtype: what the rewrite made bf16 goes back
// to fp32 at the return, elements of a returned tuple or dict too (built at
// once, or filled by aten::_set_item), so a loss computed outside the model
// runs in fp32 and meets fp32 targets. A result the model itself casts to
// bf16 stays bf16, and an fp32 result is not cast.
module {
  composer.parameter @fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor) -> (!composer.tuple<!composer.tensor, !composer.tensor>, !composer.tensor, !composer.tensor, !composer.dict<!composer.str, !composer.tensor>, !composer.dict<!composer.str, !composer.tensor>) {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @fc.weight : !composer.tensor
    %h = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %r = composer.relu %h : (!composer.tensor) -> !composer.tensor
    %t = composer.op "prim::TupleConstruct"(%r, %x) : (!composer.tensor, !composer.tensor) -> !composer.tuple<!composer.tensor, !composer.tensor>
    %b = composer.to_dtype %x {copy = false, dtype = #composer.dtype<bf16>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
    %own = composer.linear %b, %b, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s = composer.softmax %h {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %key = composer.constant("logits") : !composer.str
    %d = composer.op "prim::DictConstruct"(%key, %h) : (!composer.str, !composer.tensor) -> !composer.dict<!composer.str, !composer.tensor>
    %filled = composer.op "aten::dict"() : () -> !composer.dict<!composer.str, !composer.tensor>
    composer.op "aten::_set_item"(%filled, %key, %r) : (!composer.dict<!composer.str, !composer.tensor>, !composer.str, !composer.tensor) -> ()
    return %t, %own, %s, %d, %filled : !composer.tuple<!composer.tensor, !composer.tensor>, !composer.tensor, !composer.tensor, !composer.dict<!composer.str, !composer.tensor>, !composer.dict<!composer.str, !composer.tensor>
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:[^:]*]]: !composer.tensor)
// CHECK: %[[H:.*]] = composer.linear
// CHECK: %[[R:.*]] = composer.relu
// CHECK: %[[RF:.*]] = composer.to_dtype %[[R]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: %[[T:.*]] = composer.op "prim::TupleConstruct"(%[[RF]], %[[X]])
// CHECK: %[[OWN:.*]] = composer.linear
// CHECK: %[[S:.*]] = composer.softmax
// CHECK: %[[KEY:.*]] = composer.constant("logits")
// CHECK: %[[HF:.*]] = composer.to_dtype %[[H]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: %[[D:.*]] = composer.op "prim::DictConstruct"(%[[KEY]], %[[HF]])
// CHECK: %[[FILLED:.*]] = composer.op "aten::dict"()
// CHECK: %[[RF2:.*]] = composer.to_dtype %[[R]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: composer.op "aten::_set_item"(%[[FILLED]], %[[KEY]], %[[RF2]])
// CHECK-NOT: composer.to_dtype
// CHECK: return %[[T]], %[[OWN]], %[[S]], %[[D]], %[[FILLED]]

// REPORT: remark: composer-mixed-precision: 2 ops given their autocast dtype, 1 skipped

// -----

// Batch norm follows its input, as under autocast (on neither of its lists):
// the bf16 convolution output goes in as is, with the fp32 weight, bias and
// running statistics, and the relu after it stays bf16 (the next
// convolution's cast of it is a no-op at run time). relu6 (aten::hardtanh_) runs in fp32:
// LibTorch 1.13 has no bf16 CPU kernel for its backward.
module {
  composer.parameter @conv.weight : !composer.tensor<8x8x3x3xf32>
  composer.parameter @bn.weight : !composer.tensor<8xf32>
  composer.parameter @bn.bias : !composer.tensor<8xf32>
  composer.buffer @bn.running_mean : !composer.tensor<8xf32>
  composer.buffer @bn.running_var : !composer.tensor<8xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %true = composer.constant(true) : !composer.bool
    %m = composer.constant(1.000000e-01) : !composer.float
    %zero = composer.constant(0.000000e+00) : !composer.float
    %six = composer.constant(6.000000e+00) : !composer.float
    %cw = composer.get_param @conv.weight : !composer.tensor
    %w = composer.get_param @bn.weight : !composer.tensor
    %b = composer.get_param @bn.bias : !composer.tensor
    %rm = composer.get_param @bn.running_mean : !composer.tensor
    %rv = composer.get_param @bn.running_var : !composer.tensor
    %c = composer.conv2d %x, %cw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %n = composer.batch_norm %c, %w, %b, %rm, %rv, %true, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64} : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.bool, !composer.float) -> !composer.tensor
    %r = composer.relu %n : (!composer.tensor) -> !composer.tensor
    %d = composer.conv2d %r, %cw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %h = composer.op "aten::hardtanh_"(%d, %zero, %six) : (!composer.tensor, !composer.float, !composer.float) -> !composer.tensor
    return %h : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[CW:.*]] = composer.get_param @conv.weight
// CHECK: %[[W:.*]] = composer.get_param @bn.weight
// CHECK: %[[B:.*]] = composer.get_param @bn.bias
// CHECK: %[[RM:.*]] = composer.get_param @bn.running_mean
// CHECK: %[[RV:.*]] = composer.get_param @bn.running_var
// CHECK: %[[C:.*]] = composer.conv2d
// CHECK-NEXT: %[[N:.*]] = composer.batch_norm %[[C]], %[[W]], %[[B]], %[[RM]], %[[RV]],
// CHECK-NEXT: %[[R:.*]] = composer.relu %[[N]]
// CHECK-NEXT: %[[RL:.*]] = composer.to_dtype %[[R]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK-NEXT: %[[CWL:.*]] = composer.to_dtype %[[CW]] {{.*}}dtype = #composer.dtype<bf16>
// CHECK-NEXT: %[[D:.*]] = composer.conv2d %[[RL]], %[[CWL]],
// CHECK-NEXT: %[[DF:.*]] = composer.to_dtype %[[D]] {{.*}}dtype = #composer.dtype<f32>
// CHECK-NEXT: composer.op "aten::hardtanh_"(%[[DF]],

// REPORT: remark: composer-mixed-precision: 3 ops given their autocast dtype, 0 skipped

// -----

// An in-place fp32-class op whose operand is read again afterwards runs in
// its operand's dtype: cast, it would write into the cast's copy and the
// later read would miss the write. With its operand read nowhere else it is
// cast as its out-of-place kind would be.
module {
  composer.parameter @fc.weight : !composer.tensor<4x4xf32>
  func.func @forward(%x: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @fc.weight : !composer.tensor
    %y = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %e = composer.op "aten::exp_"(%y) : (!composer.tensor) -> !composer.tensor
    %s = composer.add %y, %e {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %z = composer.linear %x, %w, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %f = composer.op "aten::exp_"(%z) : (!composer.tensor) -> !composer.tensor
    return %s, %f : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[Y:.*]] = composer.linear
// CHECK-NEXT: %[[E:.*]] = composer.op "aten::exp_"(%[[Y]])
// CHECK: %[[Z:.*]] = composer.linear
// CHECK-NEXT: %[[ZF:.*]] = composer.to_dtype %[[Z]] {{.*}}dtype = #composer.dtype<f32>
// CHECK-NEXT: composer.op "aten::exp_"(%[[ZF]])

// -----

// Transposed convolutions, scripted (aten::conv_transpose2d) and traced
// (composer.convolution, transposed): CPU autocast keeps them in fp32, as
// LibTorch 1.13 has no bf16 CPU kernel for them, so they stay fp32 for the
// default device `any` and for `cpu`, and run in bf16 for `cuda`. The
// ordinary convolution before them runs in bf16 on every device.
module {
  composer.parameter @conv.weight : !composer.tensor<8x3x3x3xf32>
  composer.parameter @up.weight : !composer.tensor<8x4x2x2xf32>
  composer.parameter @up.bias : !composer.tensor<4xf32>
  func.func @forward(%x: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %c1 = composer.constant(1) : !composer.int
    %two = composer.constant([2, 2]) : !composer.list<!composer.int>
    %zero = composer.constant([0, 0]) : !composer.list<!composer.int>
    %one = composer.constant([1, 1]) : !composer.list<!composer.int>
    %cw = composer.get_param @conv.weight : !composer.tensor
    %uw = composer.get_param @up.weight : !composer.tensor
    %ub = composer.get_param @up.bias : !composer.tensor
    %c = composer.conv2d %x, %cw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %s = composer.op "aten::conv_transpose2d"(%c, %uw, %ub, %two, %zero, %zero, %c1, %one) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.list<!composer.int>, !composer.int, !composer.list<!composer.int>) -> !composer.tensor
    %t = composer.convolution %c, %uw, %ub {allow_tf32 = true, benchmark = false, cudnn_enabled = true, deterministic = false, dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>, transposed = true} : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    return %s, %t : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[C:.*]] = composer.conv2d
// CHECK: %[[CF:.*]] = composer.to_dtype %[[C]] {{.*}}dtype = #composer.dtype<f32>
// CHECK: %[[S:.*]] = composer.op "aten::conv_transpose2d"(%[[CF]],
// CHECK-NOT: bf16
// CHECK: %[[CF2:.*]] = composer.to_dtype %[[C]] {{.*}}dtype = #composer.dtype<f32>
// CHECK-NOT: bf16
// CHECK: %[[T:.*]] = composer.convolution %[[CF2]],
// CHECK-NOT: bf16
// CHECK: return %[[S]], %[[T]]

// CPU-LABEL: composer.parameter @up.weight
// CPU: %[[CF:.*]] = composer.to_dtype %{{.*}}dtype = #composer.dtype<f32>
// CPU-NEXT: composer.op "aten::conv_transpose2d"(%[[CF]],
// CPU: %[[CF2:.*]] = composer.to_dtype %{{.*}}dtype = #composer.dtype<f32>
// CPU: composer.convolution %[[CF2]],

// CUDA-LABEL: composer.parameter @up.weight
// CUDA: %[[CL:.*]] = composer.conv2d
// CUDA: %[[UWL:.*]] = composer.to_dtype %{{.*}} {{.*}}dtype = #composer.dtype<bf16>
// CUDA: %[[UBL:.*]] = composer.to_dtype %{{.*}} {{.*}}dtype = #composer.dtype<bf16>
// CUDA: composer.op "aten::conv_transpose2d"(%[[CL]], %[[UWL]], %[[UBL]],
// CUDA: %[[UWL2:.*]] = composer.to_dtype %{{.*}} {{.*}}dtype = #composer.dtype<bf16>
// CUDA: %[[UBL2:.*]] = composer.to_dtype %{{.*}} {{.*}}dtype = #composer.dtype<bf16>
// CUDA: composer.convolution %[[CL]], %[[UWL2]], %[[UBL2]]

// REPORT: remark: composer-mixed-precision: 3 ops given their autocast dtype, 0 skipped

// -----

// An fp32-list op casts up only what may be low, as autocast does: the fp64
// head's layer norm keeps its fp64 input and weight, and the fp32 head's
// layer norm casts up only its weight, which the model declares bf16.
module {
  composer.parameter @head64.weight : !composer.tensor<8xf64>
  composer.parameter @head32.weight : !composer.tensor<8xbf16>
  func.func @forward(%x64: !composer.tensor<4x8xf64>, %x32: !composer.tensor<4x8xf32>) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %w64 = composer.get_param @head64.weight : !composer.tensor
    %n64 = composer.layer_norm %x64, %w64, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor<4x8xf64>, !composer.tensor, !composer.none) -> !composer.tensor
    %w32 = composer.get_param @head32.weight : !composer.tensor
    %n32 = composer.layer_norm %x32, %w32, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor<4x8xf32>, !composer.tensor, !composer.none) -> !composer.tensor
    return %n64, %n32 : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X64:.*]]: !composer.tensor<4x8xf64>, %[[X32:.*]]: !composer.tensor<4x8xf32>)
// CHECK: %[[W64:.*]] = composer.get_param @head64.weight
// CHECK-NEXT: %[[N64:.*]] = composer.layer_norm %[[X64]], %[[W64]],
// CHECK-NEXT: %[[W32:.*]] = composer.get_param @head32.weight
// CHECK-NEXT: %[[W32F:.*]] = composer.to_dtype %[[W32]] {copy = false, dtype = #composer.dtype<f32>
// CHECK-NEXT: composer.layer_norm %[[X32]], %[[W32F]],

// REPORT: remark: composer-mixed-precision: 1 ops given their autocast dtype, 1 skipped

// -----

// What an fp32 tensor with dimensions decides is not the caller's: an
// embedding's rows have its fp32 weight's dtype, and an input times an fp32
// parameter is fp32 by type promotion, so the layer norms after them get no
// cast. A layer norm after an input times a number does, and so does a
// softmax of an fp16 input under bf16.
module {
  composer.parameter @emb.weight : !composer.tensor<10x8xf32>
  composer.parameter @scale : !composer.tensor<8xf32>
  func.func @forward(%ids: !composer.tensor, %x: !composer.tensor, %h16: !composer.tensor<2x8xf16>) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %neg = composer.constant(-1) : !composer.int
    %two = composer.constant(2.000000e+00) : !composer.float
    %w = composer.get_param @emb.weight : !composer.tensor
    %e = composer.op "aten::embedding"(%w, %ids, %neg, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %ne = composer.layer_norm %e, %none, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor, !composer.none, !composer.none) -> !composer.tensor
    %s = composer.get_param @scale : !composer.tensor
    %xs = composer.op "aten::mul"(%x, %s) : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %nxs = composer.layer_norm %xs, %none, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor, !composer.none, !composer.none) -> !composer.tensor
    %x2 = composer.op "aten::mul"(%x, %two) : (!composer.tensor, !composer.float) -> !composer.tensor
    %nx2 = composer.layer_norm %x2, %none, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 8>} : (!composer.tensor, !composer.none, !composer.none) -> !composer.tensor
    %s16 = composer.softmax %h16 {dim = -1 : i64} : (!composer.tensor<2x8xf16>) -> !composer.tensor
    return %ne, %nxs, %nx2, %s16 : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: composer.parameter @emb.weight
// CHECK: %[[E:.*]] = composer.op "aten::embedding"
// CHECK-NEXT: composer.layer_norm %[[E]],
// CHECK: %[[XS:.*]] = composer.op "aten::mul"
// CHECK-NEXT: composer.layer_norm %[[XS]],
// CHECK: %[[X2:.*]] = composer.op "aten::mul"
// CHECK: %[[X2F:.*]] = composer.op "aten::_autocast_to_full_precision"(%[[X2]],
// CHECK-NEXT: composer.layer_norm %[[X2F]],
// CHECK: %[[H16F:.*]] = composer.op "aten::_autocast_to_full_precision"(%arg2,
// CHECK-NEXT: composer.softmax %[[H16F]]

// REPORT: remark: composer-mixed-precision: 2 ops given their autocast dtype, 2 skipped
