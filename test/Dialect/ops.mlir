// RUN: composer-opt %s | FileCheck %s
// Printing is idempotent, in the custom and in the generic form.
// RUN: composer-opt %s | composer-opt | FileCheck %s
// RUN: composer-opt %s -mlir-print-op-generic | composer-opt | FileCheck %s

//===----------------------------------------------------------------------===//
// Model state
//===----------------------------------------------------------------------===//

// State_dict keys print bare where they are valid bare symbol names and quoted
// otherwise (nn.Sequential keys start with a digit).
// CHECK: composer.parameter @conv1.weight : !composer.tensor<8x3x3x3xf32>
// CHECK: composer.parameter @"0.weight" : !composer.tensor<4x4xf32>
// CHECK: composer.parameter @fc.bias frozen : !composer.tensor<10xf32>
// CHECK: composer.parameter @extra.scale init(dense<1.000000e+00> : tensor<4xf32>) : !composer.tensor<4xf32>
// CHECK: composer.parameter @extra.shift frozen init(dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>) : !composer.tensor<2xf32>
// CHECK: composer.buffer @bn1.running_mean : !composer.tensor<8xf32>
// CHECK: composer.buffer @bn1.num_batches_tracked frozen : !composer.tensor<i64>
composer.parameter @"conv1.weight" : !composer.tensor<8x3x3x3xf32>
composer.parameter @"0.weight" : !composer.tensor<4x4xf32>
composer.parameter @"fc.bias" frozen : !composer.tensor<10xf32>
composer.parameter @"extra.scale" init(dense<1.0> : tensor<4xf32>) : !composer.tensor<4xf32>
composer.parameter @"extra.shift" frozen init(dense<[0.0, 1.0]> : tensor<2xf32>) : !composer.tensor<2xf32>
composer.buffer @"bn1.running_mean" : !composer.tensor<8xf32>
composer.buffer @"bn1.num_batches_tracked" frozen : !composer.tensor<i64>

// The result type may know less than the declaration.
// CHECK-LABEL: func.func @get_param
// CHECK: %[[W:.*]] = composer.get_param @conv1.weight : <8x3x3x3xf32>
// CHECK: %[[W2:.*]] = composer.get_param @"0.weight" : !composer.tensor
// CHECK: %[[M:.*]] = composer.get_param @bn1.running_mean : <?xf32>
// CHECK: return %[[W]], %[[W2]], %[[M]]
func.func @get_param() -> (!composer.tensor<8x3x3x3xf32>, !composer.tensor, !composer.tensor<?xf32>) {
  %w = composer.get_param @"conv1.weight" : !composer.tensor<8x3x3x3xf32>
  %w2 = composer.get_param @"0.weight" : !composer.tensor
  %m = composer.get_param @"bn1.running_mean" : !composer.tensor<?xf32>
  return %w, %w2, %m : !composer.tensor<8x3x3x3xf32>, !composer.tensor, !composer.tensor<?xf32>
}

// CHECK-LABEL: func.func @attrs
// CHECK: %[[T:.*]] = composer.get_attr "layer1.0.bn1.training" : !composer.bool
// CHECK: %[[N:.*]] = composer.get_attr "n" : !composer.int
// CHECK: composer.set_attr "layer1.0.bn1.training", %[[T]] : !composer.bool
// CHECK: composer.set_attr "n", %[[N]] : !composer.int
func.func @attrs() {
  %t = composer.get_attr "layer1.0.bn1.training" : !composer.bool
  %n = composer.get_attr "n" : !composer.int
  composer.set_attr "layer1.0.bn1.training", %t : !composer.bool
  composer.set_attr "n", %n : !composer.int
  return
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

// Scalars print without their builtin type; the parser gives it back.
// CHECK-LABEL: func.func @constants
// CHECK: composer.constant(1) : !composer.int
// CHECK: composer.constant(-7) : !composer.int
// CHECK: composer.constant(9223372036854775807) : !composer.int
// CHECK: composer.constant(2.500000e+00) : !composer.float
// CHECK: composer.constant(1.000000e+00) : !composer.float
// An int literal for a float is the float.
// CHECK: composer.constant(2.000000e+00) : !composer.float
// CHECK: composer.constant(true) : !composer.bool
// CHECK: composer.constant(false) : !composer.bool
// CHECK: composer.constant(3) : !composer.number
// CHECK: composer.constant(5.000000e-01) : !composer.number
// CHECK: composer.constant("hello") : !composer.str
// CHECK: composer.constant(none) : !composer.none
// CHECK: composer.constant("cuda:0") : !composer.device
// CHECK: composer.constant([1, -1]) : !composer.list<!composer.int>
// CHECK: composer.constant([]) : !composer.list<!composer.int>
// CHECK: composer.constant([1.500000e+00, 2.000000e+00]) : !composer.list<!composer.float>
// CHECK: composer.constant([1, "a"]) : !composer.tuple<!composer.int, !composer.str>
// CHECK: composer.constant(dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>) : !composer.tensor<2xf32>
// CHECK: composer.constant(dense<1> : tensor<2x2xi64>) : !composer.tensor
// CHECK: composer.constant(dense<0.000000e+00> : tensor<f32>) : !composer.tensor<*xf32>
func.func @constants() {
  %0 = composer.constant(1) : !composer.int
  %1 = composer.constant(-7) : !composer.int
  %2 = composer.constant(9223372036854775807) : !composer.int
  %3 = composer.constant(2.5) : !composer.float
  %4 = composer.constant(1.0) : !composer.float
  %5 = composer.constant(2.0) : !composer.float
  %6 = composer.constant(true) : !composer.bool
  %7 = composer.constant(false) : !composer.bool
  %8 = composer.constant(3) : !composer.number
  %9 = composer.constant(0.5) : !composer.number
  %10 = composer.constant("hello") : !composer.str
  %11 = composer.constant(none) : !composer.none
  %12 = composer.constant("cuda:0") : !composer.device
  %13 = composer.constant([1, -1]) : !composer.list<!composer.int>
  %14 = composer.constant([]) : !composer.list<!composer.int>
  %15 = composer.constant([1.5, 2.0]) : !composer.list<!composer.float>
  %16 = composer.constant([1, "a"]) : !composer.tuple<!composer.int, !composer.str>
  %17 = composer.constant(dense<[1.0, 2.0]> : tensor<2xf32>) : !composer.tensor<2xf32>
  %18 = composer.constant(dense<1> : tensor<2x2xi64>) : !composer.tensor
  %19 = composer.constant(dense<0.0> : tensor<f32>) : !composer.tensor<*xf32>
  return
}

// TorchScript models use float('inf') and float('nan') (masks, clamps): the
// printed form must read back as the same float, not as a huge integer.
// CHECK-LABEL: func.func @constants_nonfinite
// CHECK: composer.constant(0x7FF0000000000000{{( : f64)?}}) : !composer.float
// CHECK: composer.constant(0xFFF0000000000000{{( : f64)?}}) : !composer.float
// CHECK: composer.constant(0x7FF8000000000000{{( : f64)?}}) : !composer.float
// CHECK: composer.constant(0x7FF0000000000000{{( : f64)?}}) : !composer.number
func.func @constants_nonfinite() {
  %0 = composer.constant(0x7FF0000000000000 : f64) : !composer.float
  %1 = composer.constant(0xFFF0000000000000 : f64) : !composer.float
  %2 = composer.constant(0x7FF8000000000000 : f64) : !composer.float
  %3 = composer.constant(0x7FF0000000000000 : f64) : !composer.number
  return
}

//===----------------------------------------------------------------------===//
// The generic op
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @generic
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[I:.*]]: !composer.int)
// CHECK: %[[N:.*]] = composer.op "aten::size"(%[[X]], %[[I]]) : (!composer.tensor, !composer.int) -> !composer.int
// CHECK: %[[L:.*]] = composer.op "prim::ListConstruct"(%[[N]], %[[I]]) {attrs = {foo = 1 : i64, name = "bar"}} : (!composer.int, !composer.int) -> !composer.list<!composer.int>
// CHECK: %[[T:.*]]:2 = composer.op "prim::TupleUnpack"(%[[X]]) : (!composer.tensor) -> (!composer.tensor, !composer.tensor)
// CHECK: composer.op "prim::RaiseException"() : () -> ()
// CHECK: return %[[L]], %[[T]]#1
func.func @generic(%x: !composer.tensor, %i: !composer.int)
    -> (!composer.list<!composer.int>, !composer.tensor) {
  %n = composer.op "aten::size"(%x, %i) : (!composer.tensor, !composer.int) -> !composer.int
  %l = composer.op "prim::ListConstruct"(%n, %i) {attrs = {name = "bar", foo = 1 : i64}}
      : (!composer.int, !composer.int) -> !composer.list<!composer.int>
  %t:2 = composer.op "prim::TupleUnpack"(%x) : (!composer.tensor) -> (!composer.tensor, !composer.tensor)
  composer.op "prim::RaiseException"() : () -> ()
  return %l, %t#1 : !composer.list<!composer.int>, !composer.tensor
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

// A yielded value may know more than the result type says.
// CHECK-LABEL: func.func @if_results
// CHECK-SAME: (%[[C:.*]]: !composer.bool, %[[N:.*]]: !composer.int, %[[X:.*]]: !composer.tensor<2xf32>)
// CHECK: %[[R:.*]]:2 = composer.if %[[C]] -> (!composer.tensor, !composer.int) {
// CHECK-NEXT: composer.yield %[[X]], %[[N]] : !composer.tensor<2xf32>, !composer.int
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[NEG:.*]] = composer.op "aten::neg"(%[[X]]) : (!composer.tensor<2xf32>) -> !composer.tensor
// CHECK-NEXT: composer.yield %[[NEG]], %[[N]] : !composer.tensor, !composer.int
// CHECK-NEXT: }
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @if_results(%c: !composer.bool, %n: !composer.int, %x: !composer.tensor<2xf32>)
    -> (!composer.tensor, !composer.int) {
  %r:2 = composer.if %c -> (!composer.tensor, !composer.int) {
    composer.yield %x, %n : !composer.tensor<2xf32>, !composer.int
  } else {
    %neg = composer.op "aten::neg"(%x) : (!composer.tensor<2xf32>) -> !composer.tensor
    composer.yield %neg, %n : !composer.tensor, !composer.int
  }
  return %r#0, %r#1 : !composer.tensor, !composer.int
}

// CHECK-LABEL: func.func @if_no_results
// CHECK-SAME: (%[[C:.*]]: !composer.bool)
// CHECK: composer.if %[[C]] {
// CHECK-NEXT: composer.op "prim::RaiseException"() : () -> ()
// CHECK-NEXT: composer.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: composer.yield
// CHECK-NEXT: }
func.func @if_no_results(%c: !composer.bool) {
  composer.if %c {
    composer.op "prim::RaiseException"() : () -> ()
    composer.yield
  } else {
    composer.yield
  }
  return
}

// CHECK-LABEL: func.func @loop_iter_args
// CHECK-SAME: (%[[TRIP:.*]]: !composer.int, %[[C:.*]]: !composer.bool, %[[X:.*]]: !composer.tensor<2xf32>, %[[ACC:.*]]: !composer.int)
// CHECK: %[[R:.*]]:2 = composer.loop %[[TRIP]], %[[C]] iter_args(%[[X]], %[[ACC]] : !composer.tensor<2xf32>, !composer.int) -> (!composer.tensor<2xf32>, !composer.int) {
// CHECK-NEXT: ^bb0(%[[I:.*]]: !composer.int, %[[A:.*]]: !composer.tensor<2xf32>, %[[B:.*]]: !composer.int):
// CHECK-NEXT: %[[S:.*]] = composer.op "aten::add"(%[[B]], %[[I]]) : (!composer.int, !composer.int) -> !composer.int
// CHECK-NEXT: composer.yield %[[C]], %[[A]], %[[S]] : !composer.bool, !composer.tensor<2xf32>, !composer.int
// CHECK-NEXT: }
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @loop_iter_args(%trip: !composer.int, %c: !composer.bool, %x: !composer.tensor<2xf32>,
                          %acc: !composer.int) -> (!composer.tensor<2xf32>, !composer.int) {
  %r:2 = composer.loop %trip, %c iter_args(%x, %acc : !composer.tensor<2xf32>, !composer.int)
      -> (!composer.tensor<2xf32>, !composer.int) {
  ^bb0(%i: !composer.int, %a: !composer.tensor<2xf32>, %b: !composer.int):
    %s = composer.op "aten::add"(%b, %i) : (!composer.int, !composer.int) -> !composer.int
    composer.yield %c, %a, %s : !composer.bool, !composer.tensor<2xf32>, !composer.int
  }
  return %r#0, %r#1 : !composer.tensor<2xf32>, !composer.int
}

// CHECK-LABEL: func.func @loop_no_carried
// CHECK-SAME: (%[[TRIP:.*]]: !composer.int, %[[C:.*]]: !composer.bool)
// CHECK: composer.loop %[[TRIP]], %[[C]] {
// CHECK-NEXT: ^bb0(%{{.*}}: !composer.int):
// CHECK-NEXT: composer.yield %[[C]] : !composer.bool
// CHECK-NEXT: }
func.func @loop_no_carried(%trip: !composer.int, %c: !composer.bool) {
  composer.loop %trip, %c {
  ^bb0(%i: !composer.int):
    composer.yield %c : !composer.bool
  }
  return
}

//===----------------------------------------------------------------------===//
// Typed operators. Inherent attributes print sorted by name.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<1x3x32x32xf32>, %[[W:.*]]: !composer.tensor<8x3x3x3xf32>, %[[B:.*]]: !composer.tensor<8xf32>, %[[NONE:.*]]: !composer.none)
// CHECK: %[[R0:.*]] = composer.conv2d %[[X]], %[[W]], %[[B]] {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor<1x3x32x32xf32>, !composer.tensor<8x3x3x3xf32>, !composer.tensor<8xf32>) -> !composer.tensor
// CHECK: %[[R1:.*]] = composer.conv2d %[[X]], %[[W]], %[[NONE]] {dilation = array<i64: 2, 2>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 2, 1>} : (!composer.tensor<1x3x32x32xf32>, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor<1x8x14x28xf32>
// CHECK: return %[[R0]], %[[R1]]
func.func @conv2d(%x: !composer.tensor<1x3x32x32xf32>, %w: !composer.tensor<8x3x3x3xf32>,
                  %b: !composer.tensor<8xf32>, %none: !composer.none)
    -> (!composer.tensor, !composer.tensor<1x8x14x28xf32>) {
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64}
      : (!composer.tensor<1x3x32x32xf32>, !composer.tensor<8x3x3x3xf32>, !composer.tensor<8xf32>) -> !composer.tensor
  %1 = composer.conv2d %x, %w, %none {stride = array<i64: 2, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 2, 2>, groups = 1 : i64}
      : (!composer.tensor<1x3x32x32xf32>, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor<1x8x14x28xf32>
  return %0, %1 : !composer.tensor, !composer.tensor<1x8x14x28xf32>
}

// Depthwise: groups equal to the channels.
// CHECK-LABEL: func.func @conv2d_groups
// CHECK: composer.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor<4x1x3x3xf32>, !composer.optional<!composer.tensor>) -> !composer.tensor
func.func @conv2d_groups(%x: !composer.tensor, %w: !composer.tensor<4x1x3x3xf32>,
                         %b: !composer.optional<!composer.tensor>) -> !composer.tensor {
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64}
      : (!composer.tensor, !composer.tensor<4x1x3x3xf32>, !composer.optional<!composer.tensor>) -> !composer.tensor
  return %0 : !composer.tensor
}

// CHECK-LABEL: func.func @convolution
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[W:.*]]: !composer.tensor<8x3x3x3xf32>, %[[W1:.*]]: !composer.tensor<8x4x5xf32>, %[[B:.*]]: !composer.optional<!composer.tensor>)
// CHECK: %[[R0:.*]] = composer.convolution %[[X]], %[[W]], %[[B]] {allow_tf32 = true, benchmark = false, cudnn_enabled = true, deterministic = false, dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 0, 0>, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>, transposed = false} : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.optional<!composer.tensor>) -> !composer.tensor
// CHECK: %[[R1:.*]] = composer.convolution %[[X]], %[[W1]], %[[B]] {allow_tf32 = false, benchmark = true, cudnn_enabled = false, deterministic = true, dilation = array<i64: 1>, groups = 2 : i64, output_padding = array<i64: 0>, padding = array<i64: 2>, stride = array<i64: 3>, transposed = false} : (!composer.tensor, !composer.tensor<8x4x5xf32>, !composer.optional<!composer.tensor>) -> !composer.tensor
// CHECK: %[[R2:.*]] = composer.convolution %[[X]], %[[W]], %[[B]] {allow_tf32 = true, benchmark = false, cudnn_enabled = true, deterministic = false, dilation = array<i64: 1, 1>, groups = 1 : i64, output_padding = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>, transposed = true} : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.optional<!composer.tensor>) -> !composer.tensor
// CHECK: return %[[R0]], %[[R1]], %[[R2]]
func.func @convolution(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>,
                       %w1: !composer.tensor<8x4x5xf32>, %b: !composer.optional<!composer.tensor>)
    -> (!composer.tensor, !composer.tensor, !composer.tensor) {
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
      dilation = array<i64: 1, 1>, transposed = false, output_padding = array<i64: 0, 0>,
      groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true,
      allow_tf32 = true}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.optional<!composer.tensor>) -> !composer.tensor
  // 1-D, grouped.
  %1 = composer.convolution %x, %w1, %b {stride = array<i64: 3>, padding = array<i64: 2>,
      dilation = array<i64: 1>, transposed = false, output_padding = array<i64: 0>,
      groups = 2 : i64, benchmark = true, deterministic = true, cudnn_enabled = false,
      allow_tf32 = false}
      : (!composer.tensor, !composer.tensor<8x4x5xf32>, !composer.optional<!composer.tensor>) -> !composer.tensor
  // Transposed.
  %2 = composer.convolution %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>, transposed = true, output_padding = array<i64: 1, 1>,
      groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true,
      allow_tf32 = true}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.optional<!composer.tensor>) -> !composer.tensor
  return %0, %1, %2 : !composer.tensor, !composer.tensor, !composer.tensor
}

// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[P:.*]]: !composer.tensor<8xf32>, %[[NONE:.*]]: !composer.none, %[[T:.*]]: !composer.bool, %[[MOM:.*]]: !composer.float)
// CHECK: %[[R0:.*]] = composer.batch_norm %[[X]], %[[P]], %[[P]], %[[P]], %[[P]], %[[T]], %[[MOM]] {cudnn_enabled = true, eps = 1.000000e-05 : f64} : (!composer.tensor, !composer.tensor<8xf32>, !composer.tensor<8xf32>, !composer.tensor<8xf32>, !composer.tensor<8xf32>, !composer.bool, !composer.float) -> !composer.tensor
// CHECK: %[[R1:.*]] = composer.batch_norm %[[X]], %[[NONE]], %[[NONE]], %[[NONE]], %[[NONE]], %[[T]], %[[MOM]] {cudnn_enabled = false, eps = 1.000000e-03 : f64} : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.float) -> !composer.tensor
// CHECK: return %[[R0]], %[[R1]]
func.func @batch_norm(%x: !composer.tensor, %p: !composer.tensor<8xf32>, %none: !composer.none,
                      %training: !composer.bool, %momentum: !composer.float)
    -> (!composer.tensor, !composer.tensor) {
  %0 = composer.batch_norm %x, %p, %p, %p, %p, %training, %momentum {eps = 1.0e-05 : f64, cudnn_enabled = true}
      : (!composer.tensor, !composer.tensor<8xf32>, !composer.tensor<8xf32>, !composer.tensor<8xf32>,
         !composer.tensor<8xf32>, !composer.bool, !composer.float) -> !composer.tensor
  %1 = composer.batch_norm %x, %none, %none, %none, %none, %training, %momentum {eps = 1.0e-03 : f64, cudnn_enabled = false}
      : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none,
         !composer.bool, !composer.float) -> !composer.tensor
  return %0, %1 : !composer.tensor, !composer.tensor
}

// CHECK-LABEL: func.func @pooling
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK: %[[MAX:.*]] = composer.max_pool2d %[[X]] {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor
// CHECK: %[[AVG:.*]] = composer.avg_pool2d %[[MAX]] {ceil_mode = true, count_include_pad = false, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor
// CHECK: %[[DIV:.*]] = composer.avg_pool2d %[[AVG]] {ceil_mode = false, count_include_pad = true, divisor_override = 3 : i64, kernel_size = array<i64: 2, 2>, padding = array<i64: 1, 1>, stride = array<i64>} : (!composer.tensor) -> !composer.tensor
// CHECK: %[[ADA:.*]] = composer.adaptive_avg_pool2d %[[DIV]] {output_size = array<i64: 1, 1>} : (!composer.tensor) -> !composer.tensor
// CHECK: return %[[ADA]]
func.func @pooling(%x: !composer.tensor) -> !composer.tensor {
  %0 = composer.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>,
      padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, ceil_mode = false}
      : (!composer.tensor) -> !composer.tensor
  %1 = composer.avg_pool2d %0 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>,
      padding = array<i64: 0, 0>, ceil_mode = true, count_include_pad = false}
      : (!composer.tensor) -> !composer.tensor
  // An empty stride means the kernel size, as in the schema's default.
  %2 = composer.avg_pool2d %1 {kernel_size = array<i64: 2, 2>, stride = array<i64>,
      padding = array<i64: 1, 1>, ceil_mode = false, count_include_pad = true,
      divisor_override = 3 : i64}
      : (!composer.tensor) -> !composer.tensor
  %3 = composer.adaptive_avg_pool2d %2 {output_size = array<i64: 1, 1>} : (!composer.tensor) -> !composer.tensor
  return %3 : !composer.tensor
}

// CHECK-LABEL: func.func @linear_matmul
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<4x8xf32>, %[[W:.*]]: !composer.tensor<10x8xf32>, %[[B:.*]]: !composer.tensor<10xf32>, %[[NONE:.*]]: !composer.none)
// CHECK: %[[L0:.*]] = composer.linear %[[X]], %[[W]], %[[B]] : (!composer.tensor<4x8xf32>, !composer.tensor<10x8xf32>, !composer.tensor<10xf32>) -> !composer.tensor<4x10xf32>
// CHECK: %[[L1:.*]] = composer.linear %[[X]], %[[W]], %[[NONE]] : (!composer.tensor<4x8xf32>, !composer.tensor<10x8xf32>, !composer.none) -> !composer.tensor
// CHECK: %[[MM:.*]] = composer.matmul %[[L0]], %[[W]] : (!composer.tensor<4x10xf32>, !composer.tensor<10x8xf32>) -> !composer.tensor
// CHECK: return %[[L1]], %[[MM]]
func.func @linear_matmul(%x: !composer.tensor<4x8xf32>, %w: !composer.tensor<10x8xf32>,
                         %b: !composer.tensor<10xf32>, %none: !composer.none)
    -> (!composer.tensor, !composer.tensor) {
  %0 = composer.linear %x, %w, %b
      : (!composer.tensor<4x8xf32>, !composer.tensor<10x8xf32>, !composer.tensor<10xf32>) -> !composer.tensor<4x10xf32>
  %1 = composer.linear %x, %w, %none
      : (!composer.tensor<4x8xf32>, !composer.tensor<10x8xf32>, !composer.none) -> !composer.tensor
  %2 = composer.matmul %0, %w : (!composer.tensor<4x10xf32>, !composer.tensor<10x8xf32>) -> !composer.tensor
  return %1, %2 : !composer.tensor, !composer.tensor
}

// `inplace` selects the in-place schema; without it nothing is printed.
// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK: %[[R0:.*]] = composer.relu %[[X]] : (!composer.tensor) -> !composer.tensor
// CHECK: %[[R1:.*]] = composer.relu %[[R0]] inplace : (!composer.tensor) -> !composer.tensor
// CHECK: %[[S0:.*]] = composer.sigmoid %[[R1]] : (!composer.tensor) -> !composer.tensor
// CHECK: %[[S1:.*]] = composer.sigmoid %[[S0]] inplace : (!composer.tensor) -> !composer.tensor
// CHECK: %[[U0:.*]] = composer.silu %[[S1]] : (!composer.tensor) -> !composer.tensor
// CHECK: %[[U1:.*]] = composer.silu %[[U0]] inplace : (!composer.tensor) -> !composer.tensor
// CHECK: %[[H0:.*]] = composer.hardswish %[[U1]] : (!composer.tensor) -> !composer.tensor
// CHECK: %[[H1:.*]] = composer.hardswish %[[H0]] inplace : (!composer.tensor) -> !composer.tensor
// CHECK: %[[G0:.*]] = composer.gelu %[[H1]] {approximate = "none"} : (!composer.tensor) -> !composer.tensor
// CHECK: %[[G1:.*]] = composer.gelu %[[G0]] {approximate = "tanh"} : (!composer.tensor) -> !composer.tensor
// CHECK: return %[[G1]]
func.func @unary(%x: !composer.tensor) -> !composer.tensor {
  %0 = composer.relu %x : (!composer.tensor) -> !composer.tensor
  %1 = composer.relu %0 inplace : (!composer.tensor) -> !composer.tensor
  %2 = composer.sigmoid %1 : (!composer.tensor) -> !composer.tensor
  %3 = composer.sigmoid %2 inplace : (!composer.tensor) -> !composer.tensor
  %4 = composer.silu %3 : (!composer.tensor) -> !composer.tensor
  %5 = composer.silu %4 inplace : (!composer.tensor) -> !composer.tensor
  %6 = composer.hardswish %5 : (!composer.tensor) -> !composer.tensor
  %7 = composer.hardswish %6 inplace : (!composer.tensor) -> !composer.tensor
  %8 = composer.gelu %7 {approximate = "none"} : (!composer.tensor) -> !composer.tensor
  %9 = composer.gelu %8 {approximate = "tanh"} : (!composer.tensor) -> !composer.tensor
  return %9 : !composer.tensor
}

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<2x3xf32>, %[[Y:.*]]: !composer.tensor)
// CHECK: %[[A0:.*]] = composer.add %[[X]], %[[Y]] {alpha = 1 : i64} : (!composer.tensor<2x3xf32>, !composer.tensor) -> !composer.tensor
// CHECK: %[[A1:.*]] = composer.add %[[X]], %[[A0]] {alpha = 5.000000e-01 : f64} : (!composer.tensor<2x3xf32>, !composer.tensor) -> !composer.tensor
// CHECK: %[[A2:.*]] = composer.add %[[X]], %[[A1]] inplace {alpha = 1 : i64} : (!composer.tensor<2x3xf32>, !composer.tensor) -> !composer.tensor<2x3xf32>
// CHECK: %[[M0:.*]] = composer.mul %[[A2]], %[[Y]] : (!composer.tensor<2x3xf32>, !composer.tensor) -> !composer.tensor
// CHECK: %[[M1:.*]] = composer.mul %[[M0]], %[[Y]] inplace : (!composer.tensor, !composer.tensor) -> !composer.tensor
// CHECK: return %[[M1]]
func.func @binary(%x: !composer.tensor<2x3xf32>, %y: !composer.tensor) -> !composer.tensor {
  %0 = composer.add %x, %y {alpha = 1 : i64} : (!composer.tensor<2x3xf32>, !composer.tensor) -> !composer.tensor
  %1 = composer.add %x, %0 {alpha = 0.5 : f64} : (!composer.tensor<2x3xf32>, !composer.tensor) -> !composer.tensor
  %2 = composer.add %x, %1 inplace {alpha = 1 : i64} : (!composer.tensor<2x3xf32>, !composer.tensor) -> !composer.tensor<2x3xf32>
  %3 = composer.mul %2, %y : (!composer.tensor<2x3xf32>, !composer.tensor) -> !composer.tensor
  %4 = composer.mul %3, %y inplace : (!composer.tensor, !composer.tensor) -> !composer.tensor
  return %4 : !composer.tensor
}

// CHECK-LABEL: func.func @normalization
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[P:.*]]: !composer.tensor<16xf32>, %[[NONE:.*]]: !composer.none)
// CHECK: %[[LN:.*]] = composer.layer_norm %[[X]], %[[P]], %[[P]] {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 16>} : (!composer.tensor, !composer.tensor<16xf32>, !composer.tensor<16xf32>) -> !composer.tensor
// CHECK: %[[LN2:.*]] = composer.layer_norm %[[LN]], %[[NONE]], %[[NONE]] {cudnn_enable = false, eps = 1.000000e-03 : f64, normalized_shape = array<i64: 4, 16>} : (!composer.tensor, !composer.none, !composer.none) -> !composer.tensor
// CHECK: %[[GN:.*]] = composer.group_norm %[[LN2]], %[[P]], %[[NONE]] {cudnn_enabled = true, eps = 1.000000e-05 : f64, num_groups = 4 : i64} : (!composer.tensor, !composer.tensor<16xf32>, !composer.none) -> !composer.tensor
// CHECK: return %[[GN]]
func.func @normalization(%x: !composer.tensor, %p: !composer.tensor<16xf32>, %none: !composer.none)
    -> !composer.tensor {
  %0 = composer.layer_norm %x, %p, %p {normalized_shape = array<i64: 16>, eps = 1.0e-05 : f64, cudnn_enable = true}
      : (!composer.tensor, !composer.tensor<16xf32>, !composer.tensor<16xf32>) -> !composer.tensor
  %1 = composer.layer_norm %0, %none, %none {normalized_shape = array<i64: 4, 16>, eps = 1.0e-03 : f64, cudnn_enable = false}
      : (!composer.tensor, !composer.none, !composer.none) -> !composer.tensor
  %2 = composer.group_norm %1, %p, %none {num_groups = 4 : i64, eps = 1.0e-05 : f64, cudnn_enabled = true}
      : (!composer.tensor, !composer.tensor<16xf32>, !composer.none) -> !composer.tensor
  return %2 : !composer.tensor
}

// CHECK-LABEL: func.func @dropout_softmax
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool)
// CHECK: %[[D0:.*]] = composer.dropout %[[X]], %[[T]] {p = 5.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
// CHECK: %[[D1:.*]] = composer.dropout %[[D0]], %[[T]] inplace {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
// CHECK: %[[S0:.*]] = composer.softmax %[[D1]] {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
// CHECK: %[[S1:.*]] = composer.softmax %[[S0]] {dim = 1 : i64, dtype = #composer.dtype<f32>} : (!composer.tensor) -> !composer.tensor
// CHECK: return %[[S1]]
func.func @dropout_softmax(%x: !composer.tensor, %train: !composer.bool) -> !composer.tensor {
  %0 = composer.dropout %x, %train {p = 0.5 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
  %1 = composer.dropout %0, %train inplace {p = 0.1 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
  %2 = composer.softmax %1 {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
  %3 = composer.softmax %2 {dim = 1 : i64, dtype = #composer.dtype<f32>} : (!composer.tensor) -> !composer.tensor
  return %3 : !composer.tensor
}

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:.*]]: !composer.tensor<2x3x4xf32>, %[[SIZE:.*]]: !composer.list<!composer.int>, %[[TS:.*]]: !composer.list<!composer.tensor>)
// CHECK: %[[F:.*]] = composer.flatten %[[X]] {end_dim = -1 : i64, start_dim = 1 : i64} : (!composer.tensor<2x3x4xf32>) -> !composer.tensor<2x12xf32>
// CHECK: %[[SHAPE:.*]] = composer.constant([-1, 6]) : !composer.list<!composer.int>
// CHECK: %[[V:.*]] = composer.view %[[F]], %[[SHAPE]] : (!composer.tensor<2x12xf32>, !composer.list<!composer.int>) -> !composer.tensor
// CHECK: %[[R:.*]] = composer.reshape %[[V]], %[[SIZE]] : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
// CHECK: %[[C:.*]] = composer.cat %[[TS]] {dim = 0 : i64} : (!composer.list<!composer.tensor>) -> !composer.tensor
// CHECK: return %[[R]], %[[C]]
func.func @shapes(%x: !composer.tensor<2x3x4xf32>, %size: !composer.list<!composer.int>,
                  %tensors: !composer.list<!composer.tensor>) -> (!composer.tensor, !composer.tensor) {
  %0 = composer.flatten %x {start_dim = 1 : i64, end_dim = -1 : i64} : (!composer.tensor<2x3x4xf32>) -> !composer.tensor<2x12xf32>
  %shape = composer.constant([-1, 6]) : !composer.list<!composer.int>
  %1 = composer.view %0, %shape : (!composer.tensor<2x12xf32>, !composer.list<!composer.int>) -> !composer.tensor
  %2 = composer.reshape %1, %size : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
  %3 = composer.cat %tensors {dim = 0 : i64} : (!composer.list<!composer.tensor>) -> !composer.tensor
  return %2, %3 : !composer.tensor, !composer.tensor
}

// CHECK-LABEL: func.func @casts
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK: %[[T0:.*]] = composer.to_dtype %[[X]] {copy = false, dtype = #composer.dtype<f16>, non_blocking = false} : (!composer.tensor) -> !composer.tensor
// CHECK: %[[T1:.*]] = composer.to_dtype %[[T0]] {copy = true, dtype = #composer.dtype<f32>, memory_format = #composer.memory_format<preserve>, non_blocking = true} : (!composer.tensor) -> !composer.tensor
// CHECK: %[[C:.*]] = composer.contiguous %[[T1]] {memory_format = #composer.memory_format<contiguous>} : (!composer.tensor) -> !composer.tensor
// CHECK: return %[[C]]
func.func @casts(%x: !composer.tensor) -> !composer.tensor {
  %0 = composer.to_dtype %x {dtype = #composer.dtype<f16>, non_blocking = false, copy = false} : (!composer.tensor) -> !composer.tensor
  %1 = composer.to_dtype %0 {dtype = #composer.dtype<f32>, non_blocking = true, copy = true, memory_format = #composer.memory_format<preserve>}
      : (!composer.tensor) -> !composer.tensor
  %2 = composer.contiguous %1 {memory_format = #composer.memory_format<contiguous>} : (!composer.tensor) -> !composer.tensor
  return %2 : !composer.tensor
}

// Dtypes and memory formats print by name; every name round-trips.
// CHECK-LABEL: func.func @torch_enum_names
// CHECK-SAME: dtypes = [#composer.dtype<ui8>, #composer.dtype<i8>, #composer.dtype<i16>, #composer.dtype<i32>, #composer.dtype<i64>, #composer.dtype<f16>, #composer.dtype<f32>, #composer.dtype<f64>, #composer.dtype<i1>, #composer.dtype<bf16>]
// CHECK-SAME: formats = [#composer.memory_format<contiguous>, #composer.memory_format<preserve>, #composer.memory_format<channels_last>, #composer.memory_format<channels_last_3d>]
// CHECK: composer.to_dtype %{{.*}} {copy = false, dtype = #composer.dtype<bf16>, memory_format = #composer.memory_format<channels_last>, non_blocking = false}
// CHECK: composer.softmax %{{.*}} {dim = -1 : i64, dtype = #composer.dtype<i64>}
// CHECK: composer.contiguous %{{.*}} {memory_format = #composer.memory_format<channels_last_3d>}
func.func @torch_enum_names(%x: !composer.tensor) -> !composer.tensor attributes {
    dtypes = [#composer.dtype<ui8>, #composer.dtype<i8>, #composer.dtype<i16>,
              #composer.dtype<i32>, #composer.dtype<i64>, #composer.dtype<f16>,
              #composer.dtype<f32>, #composer.dtype<f64>, #composer.dtype<i1>,
              #composer.dtype<bf16>],
    formats = [#composer.memory_format<contiguous>, #composer.memory_format<preserve>,
               #composer.memory_format<channels_last>,
               #composer.memory_format<channels_last_3d>]} {
  %0 = composer.to_dtype %x {dtype = #composer.dtype<bf16>, non_blocking = false, copy = false,
      memory_format = #composer.memory_format<channels_last>} : (!composer.tensor) -> !composer.tensor
  %1 = composer.softmax %0 {dim = -1 : i64, dtype = #composer.dtype<i64>} : (!composer.tensor) -> !composer.tensor
  %2 = composer.contiguous %1 {memory_format = #composer.memory_format<channels_last_3d>} : (!composer.tensor) -> !composer.tensor
  return %2 : !composer.tensor
}
