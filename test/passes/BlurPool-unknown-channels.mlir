// RUN: composer-opt %s --composer-blurpool --composer-lower-to-aten 2>/dev/null | FileCheck %s --check-prefix=ATEN
// RUN: composer-opt %s --composer-blurpool --composer-lower-to-runtime 2>/dev/null | FileCheck %s --check-prefix=RUNTIME

// A max pool whose channel count is unknown (no input spec, no convolution
// or norm behind it): its 1 x 1 x 3 x 3 filter is expanded to the input's
// channels C when run, and C is also the depthwise conv's groups.
module {
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %p = composer.max_pool2d %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor
    return %p : !composer.tensor
  }
}

// ATEN: composer.buffer @maxpool.blurpool.filter init({{.*}}) : !composer.tensor<1x1x3x3xf32>
// ATEN-LABEL: func.func @forward
// ATEN: %[[P:.*]] = composer.max_pool2d {{.*}}stride = array<i64: 1, 1>}
// ATEN: %[[F:.*]] = composer.get_param @maxpool.blurpool.filter
// ATEN: } else {
// The filter takes the input's dtype (bf16 after mixed precision).
// ATEN: %[[FT:.*]] = composer.op "aten::type_as"(%[[F]], %[[P]])
// ATEN: %[[ONE:.*]] = composer.constant(1) : !composer.int
// ATEN: %[[C:.*]] = composer.op "aten::size"(%[[P]], %[[ONE]])
// ATEN: %[[SHAPE:.*]] = composer.op "prim::ListConstruct"(%[[C]], %{{.*}}, %{{.*}}, %{{.*}})
// ATEN: %[[E:.*]] = composer.op "aten::expand"(%[[FT]], %[[SHAPE]], %{{.*}})
// ATEN: %[[Y:.*]] = composer.op "aten::conv2d"(%[[P]], %[[E]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C]])
// ATEN: composer.yield %[[Y]]
// ATEN-NOT: blur_pool2d

// The fused runtime op takes the 1 x 1 x 3 x 3 filter as it is.
// RUNTIME: composer.buffer @maxpool.blurpool.filter init({{.*}}) : !composer.tensor<1x1x3x3xf32>
// RUNTIME-LABEL: func.func @forward
// RUNTIME: %[[F:.*]] = composer.get_param @maxpool.blurpool.filter
// RUNTIME: composer.op "composer::blur_max_pool2d"(%{{.*}}, %[[F]],
