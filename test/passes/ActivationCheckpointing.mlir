// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing="every=2" 2>/dev/null | FileCheck %s --check-prefix=EVERY
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing="every=2" 2>&1 >/dev/null | FileCheck %s --check-prefix=EVERY-REPORT
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing="units=blocks.1,l*" 2>/dev/null | FileCheck %s --check-prefix=PATTERN
// RUN: not composer-opt %s -split-input-file --composer-activation-checkpointing="memory-budget-mb=0.0025" 2>&1 >/dev/null | FileCheck %s --check-prefix=BUDGET-REPORT
// RUN: not composer-opt %s -split-input-file --composer-activation-checkpointing="memory-budget-mb=0.0001" 2>&1 >/dev/null | FileCheck %s --check-prefix=TIGHT
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing --composer-lower-to-aten 2>/dev/null | FileCheck %s --check-prefix=ATEN
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing --composer-lower-to-aten 2>&1 >/dev/null | FileCheck %s --check-prefix=ATEN-REPORT
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing --composer-lower-to-runtime 2>/dev/null | FileCheck %s --check-prefix=RUNTIME

// Idempotent: a unit in a composer.checkpoint is no new site.
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing --composer-activation-checkpointing 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing="units=blocks.*,l0" 2>/dev/null > %t.patterns-once.mlir
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing="units=blocks.*,l0" --composer-activation-checkpointing="units=blocks.*,l0" 2>/dev/null > %t.patterns-twice.mlir
// RUN: diff %t.patterns-once.mlir %t.patterns-twice.mlir
// RUN: diff %t.once.mlir %t.patterns-once.mlir

// Bad options.
// RUN: not composer-opt %s --composer-activation-checkpointing="every=0" 2>&1 | FileCheck %s --check-prefix=BADEVERY
// RUN: not composer-opt %s --composer-activation-checkpointing="memory-budget-mb=-1" 2>&1 | FileCheck %s --check-prefix=BADBUDGET
// RUN: not composer-opt %s --composer-activation-checkpointing="every=2 memory-budget-mb=1" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not composer-opt %s --composer-activation-checkpointing="units=[h" 2>&1 | FileCheck %s --check-prefix=BADGLOB
// RUN: not composer-opt %s --composer-activation-checkpointing="units=," 2>&1 | FileCheck %s --check-prefix=NOUNITS
// BADEVERY: error: composer-activation-checkpointing: every must be at least 1, got 0
// BADBUDGET: error: composer-activation-checkpointing: memory-budget-mb must be at least 0, got -1.000000e+00
// BOTH: error: composer-activation-checkpointing: every and memory-budget-mb choose units each; give one
// BADGLOB: error: composer-activation-checkpointing: units: bad pattern '[h': invalid glob pattern, unmatched '['
// NOUNITS: error: composer-activation-checkpointing: units must be 'blocks' or glob patterns of module paths

// Three residual layers, as a transformer's nn.Sequential of blocks
// imports: each op is located in the module it came from; the embedding
// before and the head after are the root's.
module @layers {
  composer.parameter @blocks.0.fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @blocks.1.fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @blocks.2.fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @head.weight : !composer.tensor<3x8xf32>
  func.func @forward(%x: !composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x3xf32> {
    %none = composer.constant(none) : !composer.none loc("")
    %e = composer.relu %x : (!composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("")
    %w0 = composer.get_param @blocks.0.fc.weight : !composer.tensor<8x8xf32> loc("blocks.0.fc")
    %t0 = composer.get_attr "blocks.0.drop.training" : !composer.bool loc("blocks.0.drop")
    %h0 = composer.linear %e, %w0, %none : (!composer.tensor<2x4x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x4x8xf32> loc("blocks.0.fc")
    %g0 = composer.gelu %h0 {approximate = "none"} : (!composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.0.act")
    %d0 = composer.dropout %g0, %t0 {p = 1.000000e-01 : f64} : (!composer.tensor<2x4x8xf32>, !composer.bool) -> !composer.tensor<2x4x8xf32> loc("blocks.0.drop")
    %s0 = composer.add %e, %d0 {alpha = 1 : i64} : (!composer.tensor<2x4x8xf32>, !composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.0")
    %w1 = composer.get_param @blocks.1.fc.weight : !composer.tensor<8x8xf32> loc("blocks.1.fc")
    %t1 = composer.get_attr "blocks.1.drop.training" : !composer.bool loc("blocks.1.drop")
    %h1 = composer.linear %s0, %w1, %none : (!composer.tensor<2x4x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x4x8xf32> loc("blocks.1.fc")
    %g1 = composer.gelu %h1 {approximate = "none"} : (!composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.1.act")
    %d1 = composer.dropout %g1, %t1 {p = 1.000000e-01 : f64} : (!composer.tensor<2x4x8xf32>, !composer.bool) -> !composer.tensor<2x4x8xf32> loc("blocks.1.drop")
    %s1 = composer.add %s0, %d1 {alpha = 1 : i64} : (!composer.tensor<2x4x8xf32>, !composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.1")
    %w2 = composer.get_param @blocks.2.fc.weight : !composer.tensor<8x8xf32> loc("blocks.2.fc")
    %t2 = composer.get_attr "blocks.2.drop.training" : !composer.bool loc("blocks.2.drop")
    %h2 = composer.linear %s1, %w2, %none : (!composer.tensor<2x4x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x4x8xf32> loc("blocks.2.fc")
    %g2 = composer.gelu %h2 {approximate = "none"} : (!composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.2.act")
    %d2 = composer.dropout %g2, %t2 {p = 1.000000e-01 : f64} : (!composer.tensor<2x4x8xf32>, !composer.bool) -> !composer.tensor<2x4x8xf32> loc("blocks.2.drop")
    %s2 = composer.add %s1, %d2 {alpha = 1 : i64} : (!composer.tensor<2x4x8xf32>, !composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.2")
    %wh = composer.get_param @head.weight : !composer.tensor<3x8xf32> loc("head")
    %y = composer.linear %s2, %wh, %none : (!composer.tensor<2x4x8xf32>, !composer.tensor<3x8xf32>, !composer.none) -> !composer.tensor<2x4x3xf32> loc("head")
    return %y : !composer.tensor<2x4x3xf32>
  }
}

// Each layer moves into a composer.checkpoint that takes the hidden state;
// the constant and the reads of its state and training flag are cloned in.
// Nothing is written, so nothing is preserved.
// CHECK-LABEL: module @layers
// CHECK: %[[E:.*]] = composer.relu
// CHECK: %[[U0:.*]] = composer.checkpoint "blocks.0"(%[[E]]) : (!composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: !composer.tensor<2x4x8xf32>):
// CHECK-NEXT: %[[W0:.*]] = composer.get_param @blocks.0.fc.weight
// CHECK-NEXT: %[[NONE:.*]] = composer.constant(none)
// CHECK-NEXT: %[[T0:.*]] = composer.get_attr "blocks.0.drop.training"
// CHECK-NEXT: %[[H0:.*]] = composer.linear %[[A0]], %[[W0]], %[[NONE]]
// CHECK-NEXT: composer.gelu
// CHECK-NEXT: %[[D0:.*]] = composer.dropout %{{.*}}, %[[T0]]
// CHECK-NEXT: %[[S0:.*]] = composer.add %[[A0]], %[[D0]]
// CHECK-NEXT: composer.yield %[[S0]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[U1:.*]] = composer.checkpoint "blocks.1"(%[[U0]])
// CHECK: %[[U2:.*]] = composer.checkpoint "blocks.2"(%[[U1]])
// CHECK: composer.linear %[[U2]]
// REPORT: remark: composer-activation-checkpointing: 3 units checkpointed, 0 skipped

// EVERY-REPORT: remark: composer-activation-checkpointing: 2 units checkpointed, 1 skipped
// EVERY-REPORT: note: {{.*}}1 skipped: not among every 2
// EVERY-LABEL: module @layers
// EVERY: composer.checkpoint "blocks.0"
// EVERY-NOT: composer.checkpoint "blocks.1"
// EVERY: composer.checkpoint "blocks.2"

// Patterns: blocks.1, and no module here starts with l.
// PATTERN-LABEL: module @layers
// PATTERN-NOT: composer.checkpoint "blocks.0"
// PATTERN: composer.checkpoint "blocks.1"
// PATTERN-NOT: composer.checkpoint "blocks.2"

// 3.3 KiB of activations (the relu, each layer's four 256-byte results and
// the head's); a checkpointed layer keeps its 256-byte input instead of
// its 1 KiB, so 2.6 KiB takes two layers, the first two. Where a size is
// unknown (@norm) there is no estimate.
// BUDGET-REPORT: remark: composer-activation-checkpointing: estimated activations 3.3 KiB, 1.8 KiB with 2 units checkpointed, budget 2.6 KiB
// BUDGET-REPORT: remark: composer-activation-checkpointing: 2 units checkpointed, 1 skipped
// BUDGET-REPORT: note: loc("blocks.2.fc"): 1 skipped: the budget holds without it
// TIGHT: warning: composer-activation-checkpointing: estimated activations 3.3 KiB, 1.1 KiB with 3 units checkpointed, budget 0.1 KiB: the budget cannot be met

// Lowered to aten, the layers are computed in place again, and a warning
// says once that this form saves nothing; lowered to the runtime, each is a
// composer.checkpoint_call.
// ATEN-REPORT: warning: loc("blocks.0"{{.*}}): checkpointed units lowered to aten run as unchecked code and save no memory; lower to the runtime (--lower-to=runtime) to recompute them
// ATEN-REPORT-NOT: checkpointed units lowered
// ATEN-REPORT: remark: composer-lower-to-aten: 3 method ops lowered to aten
// ATEN-REPORT: warning: loc("l0"{{.*}}): checkpointed units lowered to aten
// ATEN-REPORT-NOT: checkpointed units lowered
// ATEN-LABEL: module @layers
// ATEN-NOT: composer.checkpoint
// ATEN: composer.add
// ATEN: composer.add
// ATEN: composer.add
// RUNTIME-LABEL: module @layers
// RUNTIME: composer.checkpoint_call "blocks.0"
// RUNTIME: composer.checkpoint_call "blocks.1"
// RUNTIME: composer.checkpoint_call "blocks.2"
// RUNTIME-NOT: composer.checkpoint "

// -----

// A residual block with a batch norm, as a scripted torchvision BasicBlock
// imports: the norm writes its running statistics and, in an if, bumps its
// counter. All three are preserved, read beside the call. With no shape
// known, the memory budget cannot be estimated.
module @norm {
  composer.parameter @l0.conv.weight : !composer.tensor<8x8x3x3xf32>
  composer.buffer @l0.bn.running_mean : !composer.tensor<8xf32>
  composer.buffer @l0.bn.running_var : !composer.tensor<8xf32>
  composer.buffer @l0.bn.num_batches_tracked : !composer.tensor<i64>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none loc("l0")
    %one = composer.constant(1) : !composer.int loc("l0")
    %m = composer.constant(1.000000e-01) : !composer.float loc("l0")
    %w = composer.get_param @l0.conv.weight : !composer.tensor loc("l0.conv")
    %c = composer.conv2d %x, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor loc("l0.conv")
    %t = composer.get_attr "l0.bn.training" : !composer.bool loc("l0.bn")
    composer.if %t {
      %n = composer.get_param @l0.bn.num_batches_tracked : !composer.tensor loc("l0.bn")
      %a = composer.op "aten::add_"(%n, %one, %one) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor loc("l0.bn")
      composer.yield
    } else {
      composer.yield
    } loc("l0.bn")
    %rm = composer.get_param @l0.bn.running_mean : !composer.tensor loc("l0.bn")
    %rv = composer.get_param @l0.bn.running_var : !composer.tensor loc("l0.bn")
    %b = composer.batch_norm %c, %none, %none, %rm, %rv, %t, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64} : (!composer.tensor, !composer.none, !composer.none, !composer.tensor, !composer.tensor, !composer.bool, !composer.float) -> !composer.tensor loc("l0.bn")
    %s = composer.add %b, %x {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor loc("l0")
    %r = composer.relu %s : (!composer.tensor) -> !composer.tensor loc("l0.relu")
    return %r : !composer.tensor
  }
}

// CHECK-LABEL: module @norm
// CHECK: %[[N:.*]] = composer.get_param @l0.bn.num_batches_tracked
// CHECK-NEXT: %[[RM:.*]] = composer.get_param @l0.bn.running_mean
// CHECK-NEXT: %[[RV:.*]] = composer.get_param @l0.bn.running_var
// CHECK-NEXT: %[[R:.*]] = composer.checkpoint "l0"(%arg0) preserve(%[[N]], %[[RM]], %[[RV]]) : (!composer.tensor) -> !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor {
// CHECK: composer.if
// CHECK: composer.batch_norm
// CHECK: %[[OUT:.*]] = composer.relu
// CHECK-NEXT: composer.yield %[[OUT]]
// CHECK: return %[[R]]
// REPORT: remark: composer-activation-checkpointing: 1 units checkpointed, 0 skipped
// BUDGET-REPORT: error: loc("l0.conv"): composer-activation-checkpointing: memory-budget-mb needs every size known, and this result's is not; refine the types from input specs first (composer-opt --input-spec)
// RUNTIME-LABEL: module @norm
// RUNTIME: composer.checkpoint_call "l0"(%arg0) preserve(
// The preserved reads go with the call: each buffer is read once.
// ATEN-LABEL: module @norm
// ATEN: composer.get_param @l0.bn.running_mean
// ATEN-NOT: composer.get_param @l0.bn.running_mean
// ATEN: return

// -----

// Units the pass cannot form, each with its reason: m0 takes an int the
// root computes; between m1's ops runs an op of another module with
// effects; m2 gives a list to the root.
module @skips {
  composer.parameter @m0.fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @m1.fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @m2.fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor) -> (!composer.tensor, !composer.list<!composer.int>) {
    %none = composer.constant(none) : !composer.none loc("")
    %zero = composer.constant(0) : !composer.int loc("")
    %k = composer.op "aten::size"(%x, %zero) : (!composer.tensor, !composer.int) -> !composer.int loc("")
    %w0 = composer.get_param @m0.fc.weight : !composer.tensor loc("m0.fc")
    %h0 = composer.linear %x, %w0, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor loc("m0.fc")
    %p0 = composer.op "aten::mul"(%h0, %k) : (!composer.tensor, !composer.int) -> !composer.tensor loc("m0")
    %s0 = composer.add %x, %p0 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor loc("m0")
    %w1 = composer.get_param @m1.fc.weight : !composer.tensor loc("m1.fc")
    %h1 = composer.linear %s0, %w1, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor loc("m1.fc")
    %noise = composer.op "aten::rand_like"(%x, %none, %none, %none, %none, %none) : (!composer.tensor, !composer.none, !composer.none, !composer.none, !composer.none, !composer.none) -> !composer.tensor loc("other")
    %s1 = composer.add %s0, %h1 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor loc("m1")
    %w2 = composer.get_param @m2.fc.weight : !composer.tensor loc("m2.fc")
    %h2 = composer.linear %s1, %w2, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor loc("m2.fc")
    %s2 = composer.add %s1, %h2 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor loc("m2")
    %size = composer.op "aten::size"(%s2) : (!composer.tensor) -> !composer.list<!composer.int> loc("m2")
    %out = composer.add %s2, %noise {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor loc("")
    return %out, %size : !composer.tensor, !composer.list<!composer.int>
  }
}

// REPORT: warning: composer-activation-checkpointing: 0 units checkpointed, 3 skipped
// REPORT-DAG: note: {{.*}}1 skipped: module 'm0': it takes a value that is no tensor from outside
// REPORT-DAG: note: {{.*}}1 skipped: module 'm1': ops of module 'other' run between its ops
// REPORT-DAG: note: {{.*}}1 skipped: module 'm2': it gives a value that is no tensor to ops after it
// CHECK-LABEL: module @skips
// CHECK-NOT: composer.checkpoint
