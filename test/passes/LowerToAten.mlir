// RUN: composer-opt %s -split-input-file --composer-lower-to-aten 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-lower-to-aten 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT

// blur_pool2d: a depthwise conv at padding 1, or, for inputs smaller than
// the filter, the input subsampled by the stride.
module {
  composer.buffer @b.filter init(dense<1.0> : tensor<1x1x3x3xf32>) : !composer.tensor<8x1x3x3xf32>
  func.func @blur(%x: !composer.tensor) -> !composer.tensor {
    %f = composer.get_param @b.filter : !composer.tensor
    %y = composer.blur_pool2d %x, %f {stride = array<i64: 2, 1>} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @blur
// CHECK-SAME: (%[[X:.*]]: !composer.tensor)
// CHECK: %[[F:.*]] = composer.get_param @b.filter
// CHECK: %[[H:.*]] = composer.op "aten::size"(%[[X]], %{{.*}})
// CHECK: %[[W:.*]] = composer.op "aten::size"(%[[X]], %{{.*}})
// CHECK: %[[MIN:.*]] = composer.op "prim::min"(%[[H]], %[[W]])
// CHECK: %[[SMALL:.*]] = composer.op "aten::lt"(%[[MIN]], %{{.*}})
// CHECK: %[[Y:.*]] = composer.if %[[SMALL]] -> (!composer.tensor) {
// Only the strided dimension (2) is subsampled.
// CHECK: %[[S:.*]] = composer.op "aten::slice"(%[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: aten::slice
// CHECK: composer.yield %[[S]]
// CHECK: } else {
// CHECK: %[[C:.*]] = composer.conv2d %[[X]], %[[F]], %{{.*}} {dilation = array<i64: 1, 1>, groups = 8 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 1>}
// CHECK: composer.yield %[[C]]
// CHECK: return %[[Y]]
// CHECK-NOT: blur_pool2d
// REPORT: remark: composer-lower-to-aten: 1 method ops lowered to aten

// -----

// Nothing to lower: no report (the usual case for an unchanged model).
module {
  func.func @plain(%x: !composer.tensor) -> !composer.tensor {
    return %x : !composer.tensor
  }
}
// CHECK-LABEL: func.func @plain
// REPORT-NOT: composer-lower-to-aten

