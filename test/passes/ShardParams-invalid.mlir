// RUN: not composer-opt %s --composer-shard-params="units=blocks.[" 2>&1 | FileCheck %s
// RUN: not composer-opt %s --composer-shard-params="units=," 2>&1 | FileCheck %s --check-prefix=EMPTY

// A units= pattern that is no glob is refused before anything changes.
module @layers {
  composer.parameter @blocks.0.fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> {
    %none = composer.constant(none) : !composer.none loc("")
    %w0 = composer.get_param @blocks.0.fc.weight : !composer.tensor<8x8xf32> loc("blocks.0.fc")
    %h0 = composer.linear %x, %w0, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32> loc("blocks.0.fc")
    return %h0 : !composer.tensor<2x8xf32>
  }
}

// CHECK: error: composer-shard-params: units: bad pattern 'blocks.['
// EMPTY: error: composer-shard-params: units must be 'blocks' or glob patterns of module paths
