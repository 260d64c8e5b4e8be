// FLOP counts of --report-costs equal hand-computed ones for a conv + linear
// model (conventions in include/composer/Dialect/FlopCost.h: a multiply-add
// is 2 FLOPs, a bias add or an elementwise op 1 FLOP per element, data
// movement free; backward counts the gradients autograd computes).
//
// RUN: composer-opt %s --report-costs=json --input-spec=2x3x8x8xf32 --peak-gflops=100 | FileCheck %s
// RUN: composer-opt %s --composer-freeze-layers=num-layers=1 -o %t.frozen.mlir 2>/dev/null
// RUN: composer-opt %t.frozen.mlir --report-costs=json --input-spec=2x3x8x8xf32 --peak-gflops=100 | FileCheck %s --check-prefix=FROZEN
// RUN: composer-opt %s --report-costs --input-spec=2x3x8x8xf32 --peak-gflops=100,200 | FileCheck %s --check-prefix=TEXT

// Forward, input 2x3x8x8:
//   conv 3->4, 3x3, padding 1, bias: output 2x4x8x8 = 512 elements, each
//     3*3*3 = 27 multiply-adds: 2 * 512 * 27 = 27648, + 512 bias = 28160
//   relu: 512
//   flatten: 0
//   linear 256->10, bias: output 2x10 = 20 elements, each 256
//     multiply-adds: 2 * 20 * 256 = 10240, + 20 bias = 10260
//   total 28160 + 512 + 10260 = 38932
// Backward, every parameter trained:
//   conv: the input (data) needs no gradient, the weight does: 28160
//   relu: 512
//   linear: input gradient 10260 + weight gradient 10260 = 20520
//   total 28160 + 512 + 20520 = 49192
// No attention in a convolution and a linear.
// CHECK:      "attention_flops": 0,
// CHECK-NEXT: "backward_flops": 49192,
// CHECK-NEXT: "buffer_elements_added": 0,
// CHECK-NEXT: "buffers_added": 0,
// CHECK-NEXT: "flops": 88124,
// CHECK-NEXT: "flops_ratio": 1,
// CHECK-NEXT: "forward_flops": 38932,
// CHECK-NEXT: "kind": "model",
// CHECK:      "step_seconds": null,
// CHECK-NEXT: "time_ratio": null,
// CHECK-NEXT: "uncounted_ops": 0,
// CHECK-NEXT: "unknown_trip_count_loops": 0,
// CHECK-NEXT: "verdict": "reference"
// Weight standardization adds a standardize_weight of the 4x3x3x3 = 108
// element weight, 5 FLOPs per element forward (mean, variance, normalize)
// and once more backward: 38932 + 540 = 39472 and 49192 + 540 = 49732.
// CHECK:      "backward_flops": 49732,
// CHECK:      "forward_flops": 39472,
// CHECK-NEXT: "kind": "pass",
// CHECK-NEXT: "mfu": null,
// CHECK-NEXT: "name": "composer-weight-standardization",

// First layer frozen (composer-freeze-layers num-layers=1: conv's weight
// frozen, a stop_gradient before the linear): forward unchanged, 38932;
// backward only the linear's weight gradient, 10260 (conv, relu and the
// linear's input need no gradient).
// FROZEN:      "backward_flops": 10260,
// FROZEN:      "forward_flops": 38932,
// FROZEN-NEXT: "kind": "model",

// TEXT: peak: 100.0 GFLOP/s fp32, 200.0 bf16: --peak-gflops
// TEXT: variant sites +params (elems) +buffers (elems)  FLOPs/step      x   step ms      x    MFU  verdict
// TEXT-NEXT: (model as given) - 0 (0) 0 (0) 88.1K   1.00 - - -  reference
// TEXT: composer-weight-standardization 1 0 (0) 0 (0) 89.2K   1.01 - - -  not measurable here (no weights in .mlir input; time a .pt)

module {
  composer.parameter @"conv.weight" : !composer.tensor<4x3x3x3xf32>
  composer.parameter @"conv.bias" : !composer.tensor<4xf32>
  composer.parameter @"fc.weight" : !composer.tensor<10x256xf32>
  composer.parameter @"fc.bias" : !composer.tensor<10xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %w = composer.get_param @"conv.weight" : !composer.tensor
    %b = composer.get_param @"conv.bias" : !composer.tensor
    %conv = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
        dilation = array<i64: 1, 1>, groups = 1 : i64}
        : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    %relu = composer.relu %conv : (!composer.tensor) -> !composer.tensor
    %flat = composer.flatten %relu {start_dim = 1 : i64, end_dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %fw = composer.get_param @"fc.weight" : !composer.tensor
    %fb = composer.get_param @"fc.bias" : !composer.tensor
    %fc = composer.linear %flat, %fw, %fb : (!composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
    return %fc : !composer.tensor
  }
}
