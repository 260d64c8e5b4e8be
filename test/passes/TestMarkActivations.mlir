// The test-only method of test/lib, loaded as a pass plugin: its op is
// found by the lowering drivers, its sites reported, with no list edited
// outside its own file.
// RUN: composer-opt %s --load-dialect-plugin=%composer_build/lib/ComposerTestMethod.so --load-pass-plugin=%composer_build/lib/ComposerTestMethod.so --pass-pipeline='builtin.module(composer-test-mark-activations)' 2>/dev/null | FileCheck %s
// RUN: composer-opt %s --load-dialect-plugin=%composer_build/lib/ComposerTestMethod.so --load-pass-plugin=%composer_build/lib/ComposerTestMethod.so --pass-pipeline='builtin.module(composer-test-mark-activations)' 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s --load-dialect-plugin=%composer_build/lib/ComposerTestMethod.so --load-pass-plugin=%composer_build/lib/ComposerTestMethod.so --pass-pipeline='builtin.module(composer-test-mark-activations,composer-test-mark-activations)' 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// RUN: composer-opt %s --load-dialect-plugin=%composer_build/lib/ComposerTestMethod.so --load-pass-plugin=%composer_build/lib/ComposerTestMethod.so --pass-pipeline='builtin.module(composer-test-mark-activations,composer-lower-to-aten)' 2>&1 | FileCheck %s --check-prefix=LOWERED
// RUN: composer-opt %s --load-dialect-plugin=%composer_build/lib/ComposerTestMethod.so --load-pass-plugin=%composer_build/lib/ComposerTestMethod.so --pass-pipeline='builtin.module(composer-test-mark-activations,composer-lower-to-runtime)' 2>&1 | FileCheck %s --check-prefix=LOWERED
// A method pass: --report-costs compares it with the others.
// RUN: composer-opt %s --load-dialect-plugin=%composer_build/lib/ComposerTestMethod.so --load-pass-plugin=%composer_build/lib/ComposerTestMethod.so --report-costs --input-spec=2x4xf32 --peak-gflops=100 | FileCheck %s --check-prefix=COSTS
// Without the plugin, the pass does not exist.
// RUN: not composer-opt %s --pass-pipeline='builtin.module(composer-test-mark-activations)' 2>&1 | FileCheck %s --check-prefix=ABSENT

// A typed and a generic activation are marked; the linear is not one.
module {
  composer.parameter @fc.weight : !composer.tensor<4x4xf32>
  func.func @forward(%x: !composer.tensor<2x4xf32>) -> !composer.tensor<2x4xf32> {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @fc.weight : !composer.tensor<4x4xf32>
    %y = composer.linear %x, %w, %none : (!composer.tensor<2x4xf32>, !composer.tensor<4x4xf32>, !composer.none) -> !composer.tensor<2x4xf32>
    %r = composer.relu %y : (!composer.tensor<2x4xf32>) -> !composer.tensor<2x4xf32>
    %g = composer.op "aten::silu"(%r) : (!composer.tensor<2x4xf32>) -> !composer.tensor<2x4xf32>
    return %g : !composer.tensor<2x4xf32>
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: %[[Y:.*]] = composer.linear
// CHECK-NEXT: %[[R:.*]] = composer.relu %[[Y]]
// CHECK-NEXT: %[[MR:.*]] = composer_test.mark %[[R]] : (!composer.tensor<2x4xf32>) -> !composer.tensor<2x4xf32>
// CHECK-NEXT: %[[G:.*]] = composer.op "aten::silu"(%[[MR]])
// CHECK-NEXT: %[[MG:.*]] = composer_test.mark %[[G]]
// CHECK-NEXT: return %[[MG]]

// REPORT: remark: composer-test-mark-activations: 2 activations marked, 0 skipped
// Idempotent: a second run finds only marked activations (a warning, since
// it changes nothing).
// AGAIN: remark: composer-test-mark-activations: 2 activations marked, 0 skipped
// AGAIN: warning: composer-test-mark-activations: 0 activations marked, 2 skipped
// AGAIN: note: 2 skipped: already marked

// LOWERED-NOT: composer_test.mark
// LOWERED: remark: composer-lower-to-{{aten|runtime}}: 2
// LOWERED-NOT: composer_test.mark
// LOWERED: %[[R:.*]] = composer.relu
// LOWERED: %[[CR:.*]] = composer.op "aten::clone"(%[[R]], %{{.*}}) : (!composer.tensor<2x4xf32>, !composer.none) -> !composer.tensor<2x4xf32>
// LOWERED-NEXT: %[[G:.*]] = composer.op "aten::silu"(%[[CR]])
// LOWERED: %[[CG:.*]] = composer.op "aten::clone"(%[[G]], %{{.*}})
// LOWERED-NEXT: return %[[CG]]

// COSTS: composer-test-mark-activations 2 0 (0) 0 (0) 160 1.00

// ABSENT: composer-test-mark-activations
