// RUN: composer-opt %s | FileCheck %s
// Printing is idempotent: the printed form parses back to the same types.
// RUN: composer-opt %s | composer-opt | FileCheck %s
// RUN: composer-opt %s -mlir-print-op-generic | composer-opt | FileCheck %s

// Parse/print round trip of every composer type. Each case passes values of
// the types through a function so that both the signature and the body print
// them.

//===----------------------------------------------------------------------===//
// !composer.tensor
//===----------------------------------------------------------------------===//

// Knows nothing; `<*xunk>` is the same type and prints the short way.
// CHECK-LABEL: func.func @tensor_unknown
// CHECK-SAME: (%[[A:.*]]: !composer.tensor, %[[B:.*]]: !composer.tensor) -> (!composer.tensor, !composer.tensor)
// CHECK: return %[[A]], %[[B]] : !composer.tensor, !composer.tensor
func.func @tensor_unknown(%a: !composer.tensor, %b: !composer.tensor<*xunk>)
    -> (!composer.tensor, !composer.tensor<*xunk>) {
  return %a, %b : !composer.tensor, !composer.tensor<*xunk>
}

// Knows only the dtype.
// CHECK-LABEL: func.func @tensor_unranked_dtype
// CHECK-SAME: (%[[A:.*]]: !composer.tensor<*xf32>, %[[B:.*]]: !composer.tensor<*xi64>) -> !composer.tensor<*xf32>
// CHECK: return %[[A]] : !composer.tensor<*xf32>
func.func @tensor_unranked_dtype(%a: !composer.tensor<*xf32>, %b: !composer.tensor<*xi64>)
    -> !composer.tensor<*xf32> {
  return %a : !composer.tensor<*xf32>
}

// Knows the rank, some dimensions and the dtype.
// CHECK-LABEL: func.func @tensor_ranked
// CHECK-SAME: (%[[A:.*]]: !composer.tensor<?x3x224x224xf32>, %[[B:.*]]: !composer.tensor<?x?xf32>, %[[C:.*]]: !composer.tensor<0x3xf16>)
// CHECK-SAME: -> !composer.tensor<?x3x224x224xf32>
// CHECK: return %[[A]] : !composer.tensor<?x3x224x224xf32>
func.func @tensor_ranked(%a: !composer.tensor<?x3x224x224xf32>, %b: !composer.tensor<?x?xf32>,
                         %c: !composer.tensor<0x3xf16>) -> !composer.tensor<?x3x224x224xf32> {
  return %a : !composer.tensor<?x3x224x224xf32>
}

// A 0-d tensor of known dtype.
// CHECK-LABEL: func.func @tensor_rank0
// CHECK-SAME: (%[[A:.*]]: !composer.tensor<f32>, %[[B:.*]]: !composer.tensor<i64>) -> !composer.tensor<f32>
func.func @tensor_rank0(%a: !composer.tensor<f32>, %b: !composer.tensor<i64>) -> !composer.tensor<f32> {
  return %a : !composer.tensor<f32>
}

// Every dtype a tensor can carry.
// CHECK-LABEL: func.func @tensor_dtypes
// CHECK-SAME: !composer.tensor<2xf16>, %{{.*}}: !composer.tensor<2xbf16>, %{{.*}}: !composer.tensor<2xf32>, %{{.*}}: !composer.tensor<2xf64>
// CHECK-SAME: !composer.tensor<2xi1>, %{{.*}}: !composer.tensor<2xi8>, %{{.*}}: !composer.tensor<2xi16>, %{{.*}}: !composer.tensor<2xi32>
// CHECK-SAME: !composer.tensor<2xi64>, %{{.*}}: !composer.tensor<2xui8>)
func.func @tensor_dtypes(%f16: !composer.tensor<2xf16>, %bf16: !composer.tensor<2xbf16>,
                         %f32: !composer.tensor<2xf32>, %f64: !composer.tensor<2xf64>,
                         %i1: !composer.tensor<2xi1>, %i8: !composer.tensor<2xi8>,
                         %i16: !composer.tensor<2xi16>, %i32: !composer.tensor<2xi32>,
                         %i64: !composer.tensor<2xi64>, %ui8: !composer.tensor<2xui8>) {
  return
}

// Knows the shape but not the dtype (the `<2x3xunk>` form of the type's
// documentation), including a 0-d tensor of unknown dtype. The printer writes
// these forms, so the parser must read them back.
// CHECK-LABEL: func.func @tensor_shape_unknown_dtype
// CHECK-SAME: (%[[A:.*]]: !composer.tensor<2x3xunk>, %[[B:.*]]: !composer.tensor<?x3xunk>, %[[C:.*]]: !composer.tensor<unk>)
// CHECK-SAME: -> !composer.tensor<2x3xunk>
// CHECK: return %[[A]] : !composer.tensor<2x3xunk>
func.func @tensor_shape_unknown_dtype(%a: !composer.tensor<2x3xunk>, %b: !composer.tensor<?x3xunk>,
                                      %c: !composer.tensor<unk>) -> !composer.tensor<2x3xunk> {
  return %a : !composer.tensor<2x3xunk>
}

//===----------------------------------------------------------------------===//
// Scalar and opaque-ish TorchScript types
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @scalars
// CHECK-SAME: (%[[INT:.*]]: !composer.int, %[[FLOAT:.*]]: !composer.float, %[[BOOL:.*]]: !composer.bool,
// CHECK-SAME: %[[STR:.*]]: !composer.str, %[[NONE:.*]]: !composer.none, %[[DEV:.*]]: !composer.device,
// CHECK-SAME: %[[DT:.*]]: !composer.dtype, %[[NUM:.*]]: !composer.number, %[[GEN:.*]]: !composer.generator,
// CHECK-SAME: %[[ANY:.*]]: !composer.any)
// CHECK-SAME: -> (!composer.int, !composer.float, !composer.bool, !composer.str, !composer.none, !composer.device, !composer.dtype, !composer.number, !composer.generator, !composer.any)
// CHECK: return %[[INT]], %[[FLOAT]], %[[BOOL]], %[[STR]], %[[NONE]], %[[DEV]], %[[DT]], %[[NUM]], %[[GEN]], %[[ANY]] :
func.func @scalars(%i: !composer.int, %f: !composer.float, %b: !composer.bool,
                   %s: !composer.str, %n: !composer.none, %d: !composer.device,
                   %dt: !composer.dtype, %num: !composer.number, %g: !composer.generator,
                   %any: !composer.any)
    -> (!composer.int, !composer.float, !composer.bool, !composer.str, !composer.none,
        !composer.device, !composer.dtype, !composer.number, !composer.generator,
        !composer.any) {
  return %i, %f, %b, %s, %n, %d, %dt, %num, %g, %any
      : !composer.int, !composer.float, !composer.bool, !composer.str, !composer.none,
        !composer.device, !composer.dtype, !composer.number, !composer.generator,
        !composer.any
}

//===----------------------------------------------------------------------===//
// Container types
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @list
// CHECK-SAME: (%{{.*}}: !composer.list<!composer.int>, %{{.*}}: !composer.list<!composer.tensor>,
// CHECK-SAME: %{{.*}}: !composer.list<!composer.list<!composer.tensor<*xf32>>>)
func.func @list(%a: !composer.list<!composer.int>, %b: !composer.list<!composer.tensor>,
                %c: !composer.list<!composer.list<!composer.tensor<*xf32>>>) {
  return
}

// CHECK-LABEL: func.func @optional
// CHECK-SAME: (%{{.*}}: !composer.optional<!composer.tensor>, %{{.*}}: !composer.optional<!composer.int>,
// CHECK-SAME: %{{.*}}: !composer.optional<!composer.list<!composer.optional<!composer.float>>>)
func.func @optional(%a: !composer.optional<!composer.tensor>, %b: !composer.optional<!composer.int>,
                    %c: !composer.optional<!composer.list<!composer.optional<!composer.float>>>) {
  return
}

// CHECK-LABEL: func.func @tuple
// CHECK-SAME: (%{{.*}}: !composer.tuple<>, %{{.*}}: !composer.tuple<!composer.int>,
// CHECK-SAME: %{{.*}}: !composer.tuple<!composer.int, !composer.tensor<*xf32>>,
// CHECK-SAME: %{{.*}}: !composer.tuple<!composer.tuple<>, !composer.tuple<!composer.str, !composer.none>>)
func.func @tuple(%a: !composer.tuple<>, %b: !composer.tuple<!composer.int>,
                 %c: !composer.tuple<!composer.int, !composer.tensor<*xf32>>,
                 %d: !composer.tuple<!composer.tuple<>, !composer.tuple<!composer.str, !composer.none>>) {
  return
}

// CHECK-LABEL: func.func @dict
// CHECK-SAME: (%{{.*}}: !composer.dict<!composer.str, !composer.tensor>,
// CHECK-SAME: %{{.*}}: !composer.dict<!composer.int, !composer.list<!composer.float>>)
func.func @dict(%a: !composer.dict<!composer.str, !composer.tensor>,
                %b: !composer.dict<!composer.int, !composer.list<!composer.float>>) {
  return
}

//===----------------------------------------------------------------------===//
// Class instances and unmodelled types
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @object
// CHECK-SAME: (%{{.*}}: !composer.object<"__torch__.Foo">,
// CHECK-SAME: %{{.*}}: !composer.object<"__torch__.torchvision.models.resnet.ResNet">)
func.func @object(%a: !composer.object<"__torch__.Foo">,
                  %b: !composer.object<"__torch__.torchvision.models.resnet.ResNet">) {
  return
}

// The annotation is an arbitrary string: quotes and newlines are escaped.
// CHECK-LABEL: func.func @opaque
// CHECK-SAME: (%{{.*}}: !composer.opaque<"Future[int]">,
// CHECK-SAME: %{{.*}}: !composer.opaque<"Dict[str, \22x\22]\0A">)
func.func @opaque(%a: !composer.opaque<"Future[int]">,
                  %b: !composer.opaque<"Dict[str, \"x\"]\n">) {
  return
}
