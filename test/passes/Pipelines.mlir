// Named pipelines and pipeline files.
// RUN: composer-opt %s --composer-mild 2>/dev/null | FileCheck %s --check-prefix=MILD
// RUN: composer-opt %s --composer-medium 2>/dev/null | FileCheck %s --check-prefix=MEDIUM
// RUN: composer-opt %s --composer-hot 2>&1 >/dev/null | FileCheck %s --check-prefix=HOT
// RUN: composer-opt %s --pass-pipeline-file=%S/Inputs/team-pipeline.txt 2>/dev/null | FileCheck %s --check-prefix=FILE
// RUN: not composer-opt %s --pass-pipeline-file=%S/Inputs/bad-pipeline.txt 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not composer-opt %s --pass-pipeline-file=%t.missing 2>&1 | FileCheck %s --check-prefix=MISSING

module {
  composer.parameter @conv.weight : !composer.tensor<32x16x3x3xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %w = composer.get_param @conv.weight : !composer.tensor
    %y = composer.conv2d %x, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %p = composer.max_pool2d %y {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor
    return %p : !composer.tensor
  }
}

// composer-mild blurs convolutions and pools and makes them channels_last.
// MILD: composer.parameter @conv.weight channels_last
// MILD-LABEL: func.func @forward
// MILD: composer.contiguous %{{.*}} {memory_format = #composer.memory_format<channels_last>}
// MILD: composer.blur_pool2d
// MILD: composer.conv2d
// MILD: composer.max_pool2d
// MILD: composer.blur_pool2d

// composer-medium adds bf16 autocast casts.
// MEDIUM: composer.parameter @conv.weight channels_last
// MEDIUM-LABEL: func.func @forward
// MEDIUM: composer.blur_pool2d
// MEDIUM: composer.to_dtype %{{.*}} {copy = false, dtype = #composer.dtype<bf16>
// MEDIUM: composer.conv2d

// composer-hot is medium with stochastic depth (no residual block here).
// HOT: remark: composer-blurpool:
// HOT: remark: composer-channels-last:
// HOT: warning: composer-stochastic-depth: 0 residual blocks made stochastic
// HOT: remark: composer-mixed-precision:

// The file's options apply: pools are left alone.
// FILE-LABEL: func.func @forward
// FILE: composer.blur_pool2d
// FILE: composer.conv2d
// FILE: composer.max_pool2d {{.*}}stride = array<i64: 2, 2>
// FILE-NOT: blur_pool2d

// BAD: 'no-such-pass' does not refer to a registered pass or pass pipeline
// BAD: error: invalid pipeline in '{{.*}}bad-pipeline.txt'
// MISSING: error: cannot read pipeline file '{{.*}}.missing'
