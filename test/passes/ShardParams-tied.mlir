// RUN: composer-opt %s --composer-shard-params 2>/dev/null | FileCheck %s
// RUN: composer-opt %s --composer-shard-params 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: not composer-opt %s --composer-activation-checkpointing="every=1" --composer-shard-params 2>&1 >/dev/null | FileCheck %s --check-prefix=CHECKPOINTED
// A layer whose weight the head reads too (tied weights): the layer cannot
// be a unit of its own, so its parameters join the root unit, with a note;
// the other layer stays a unit.
// REPORT: remark: composer-shard-params: 2 units sharded, 1 skipped
// REPORT: note: loc("blocks.0.fc"): 1 skipped: module 'blocks.0' shares parameter 'blocks.0.fc.weight' with code outside it (tied weights); its parameters join the root unit
module @tied {
  composer.parameter @blocks.0.fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @blocks.1.fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> {
    %none = composer.constant(none) : !composer.none loc("")
    %w0 = composer.get_param @blocks.0.fc.weight : !composer.tensor<8x8xf32> loc("blocks.0.fc")
    %h0 = composer.linear %x, %w0, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32> loc("blocks.0.fc")
    %s0 = composer.add %x, %h0 {alpha = 1 : i64} : (!composer.tensor<2x8xf32>, !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> loc("blocks.0")
    %w1 = composer.get_param @blocks.1.fc.weight : !composer.tensor<8x8xf32> loc("blocks.1.fc")
    %h1 = composer.linear %s0, %w1, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32> loc("blocks.1.fc")
    %s1 = composer.add %s0, %h1 {alpha = 1 : i64} : (!composer.tensor<2x8xf32>, !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> loc("blocks.1")
    %wh = composer.get_param @blocks.0.fc.weight : !composer.tensor<8x8xf32> loc("head")
    %y = composer.linear %s1, %wh, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32> loc("head")
    return %y : !composer.tensor<2x8xf32>
  }
}
// CHECK-LABEL: module @tied
// CHECK: composer.gather_unit ""({{.*}}) prefetch "blocks.1"
// CHECK-NOT: composer.checkpoint "blocks.0"
// CHECK: composer.checkpoint "blocks.1"
// CHECK: composer.gather_unit "blocks.1"

// A region of activation checkpointing cannot be taken out: tied weights
// across one stay an error, which says where.
// CHECKPOINTED: error: loc("blocks.0.fc"): composer-shard-params: parameter 'blocks.0.fc.weight' is read by the root unit and unit 'blocks.0'; a parameter belongs to one unit: choose units that contain every read of it (units=...)
