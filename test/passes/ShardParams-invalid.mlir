// RUN: not composer-opt %s --composer-shard-params 2>&1 | FileCheck %s
// RUN: not composer-opt %s --composer-shard-params --mlir-print-ir-after-failure 2>&1 | FileCheck %s --check-prefix=UNCHANGED

// A layer whose weight the head reads too (tied across units): each
// parameter belongs to one unit's shard, so the pass fails and says where.
module @tied {
  composer.parameter @blocks.0.fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> {
    %none = composer.constant(none) : !composer.none loc("")
    %w0 = composer.get_param @blocks.0.fc.weight : !composer.tensor<8x8xf32> loc("blocks.0.fc")
    %h0 = composer.linear %x, %w0, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32> loc("blocks.0.fc")
    %s0 = composer.add %x, %h0 {alpha = 1 : i64} : (!composer.tensor<2x8xf32>, !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> loc("blocks.0")
    %wh = composer.get_param @blocks.0.fc.weight : !composer.tensor<8x8xf32> loc("head")
    %y = composer.linear %s0, %wh, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32> loc("head")
    return %y : !composer.tensor<2x8xf32>
  }
}

// CHECK: error: loc("blocks.0.fc"): composer-shard-params: parameter 'blocks.0.fc.weight' is read by the root unit and unit 'blocks.0'; a parameter belongs to one unit: choose units that contain every read of it (units=...)
// CHECK-NOT: module

// The pass fails before it changes anything: no unit is outlined.
// UNCHANGED: IR Dump After ShardParams Failed
// UNCHANGED-NOT: composer.checkpoint
// UNCHANGED: composer.add
// UNCHANGED-NOT: composer.checkpoint
