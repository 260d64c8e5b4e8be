// RUN: composer-opt %s -split-input-file --composer-squeeze-excite="min-channels=16 latent-channels=4" 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-squeeze-excite="min-channels=16 latent-channels=0.5" 2>/dev/null | FileCheck %s --check-prefix=FRACTION
// RUN: composer-opt %s -split-input-file --composer-squeeze-excite 2>&1 >/dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: composer-opt %s -split-input-file --composer-squeeze-excite="min-channels=16" 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-squeeze-excite="min-channels=16" --composer-lower-to-aten 2>/dev/null | FileCheck %s --check-prefix=LOWERED
// RUN: not composer-opt %s --composer-squeeze-excite="latent-channels=0" 2>&1 | FileCheck %s --check-prefix=BAD
// Idempotent.
// RUN: composer-opt %s -split-input-file --composer-squeeze-excite="min-channels=16" 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-squeeze-excite="min-channels=16" --composer-squeeze-excite="min-channels=16" 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// A strided grouped conv with 32 channels gets a gate (before the relu that
// follows it); a 8-channel one does not.
module {
  composer.parameter @small.weight : !composer.tensor<32x3x3x3xf32>
  composer.parameter @block.conv.weight : !composer.tensor<32x16x3x3xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %sw = composer.get_param @small.weight : !composer.tensor
    %s = composer.conv2d %x, %sw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %w = composer.get_param @block.conv.weight : !composer.tensor
    %y = composer.conv2d %s, %w, %none {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %r = composer.relu %y : (!composer.tensor) -> !composer.tensor
    return %r : !composer.tensor
  }
}
// New weights named next to the conv, initialized at export as nn.Linear.
// CHECK: composer.parameter @block.conv.se.fc1.weight init("linear_default") : !composer.tensor<4x32xf32>
// CHECK: composer.parameter @block.conv.se.fc2.weight init("linear_default") : !composer.tensor<32x4xf32>
// CHECK-LABEL: func.func @forward
// CHECK: %[[S:.*]] = composer.conv2d
// CHECK-NOT: squeeze_excite
// CHECK: %[[Y:.*]] = composer.conv2d %[[S]]
// CHECK: %[[F1:.*]] = composer.get_param @block.conv.se.fc1.weight
// CHECK: %[[F2:.*]] = composer.get_param @block.conv.se.fc2.weight
// CHECK: %[[G:.*]] = composer.squeeze_excite %[[Y]], %[[F1]], %[[F2]]
// CHECK: composer.relu %[[G]]

// FRACTION: composer.parameter @block.conv.se.fc1.weight {{.*}} : !composer.tensor<16x32xf32>

// The default min-channels (128) matches nothing here.
// DEFAULT: warning: composer-squeeze-excite: 0 convolutions given squeeze-excite, 2 skipped
// DEFAULT: note: 2 skipped: channels < min-channels
// REPORT: remark: composer-squeeze-excite: 1 convolutions given squeeze-excite, 1 skipped
// REPORT: note: 1 skipped: channels < min-channels
// BAD: error: composer-squeeze-excite: latent-channels must be > 0

// LOWERED-LABEL: func.func @forward
// LOWERED: %[[Y:.*]] = composer.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 1, 1>, groups = 2
// LOWERED: %[[DIMS:.*]] = composer.constant([2, 3]) : !composer.list<!composer.int>
// LOWERED: %[[M:.*]] = composer.op "aten::mean"(%[[Y]], %[[DIMS]], %{{.*}}, %{{.*}})
// LOWERED: %[[W1:.*]] = composer.op "aten::type_as"(%{{.*}}, %[[M]])
// LOWERED: %[[H:.*]] = composer.linear %[[M]], %[[W1]]
// LOWERED: %[[R:.*]] = composer.relu %[[H]]
// LOWERED: %[[W2:.*]] = composer.op "aten::type_as"(%{{.*}}, %[[M]])
// LOWERED: %[[G:.*]] = composer.linear %[[R]], %[[W2]]
// LOWERED: %[[SIG:.*]] = composer.sigmoid %[[G]]
// LOWERED: %[[U1:.*]] = composer.op "aten::unsqueeze"(%[[SIG]]
// LOWERED: %[[U2:.*]] = composer.op "aten::unsqueeze"(%[[U1]]
// LOWERED: %[[OUT:.*]] = composer.mul %[[Y]], %[[U2]]
// LOWERED: composer.relu %[[OUT]]
