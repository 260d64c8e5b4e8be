// RUN: composer-opt %s -split-input-file --composer-shard-params 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-shard-params 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-shard-params="prefetch=false" 2>/dev/null | FileCheck %s --check-prefix=NOPREFETCH
// RUN: composer-opt %s -split-input-file --composer-shard-params="units=blocks.*" 2>&1 >/dev/null | FileCheck %s --check-prefix=PATTERN-REPORT
// RUN: composer-opt %s -split-input-file --composer-activation-checkpointing="every=2" --composer-shard-params 2>/dev/null | FileCheck %s --check-prefix=CHECKPOINTED
// RUN: composer-opt %s -split-input-file --composer-shard-params --composer-lower-to-runtime 2>/dev/null | FileCheck %s --check-prefix=RUNTIME
// RUN: composer-opt %s -split-input-file --composer-shard-params --composer-lower-to-aten 2>/dev/null | FileCheck %s --check-prefix=ATEN

// Idempotent: a model with gathers gets no new ones.
// RUN: composer-opt %s -split-input-file --composer-shard-params 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-shard-params --composer-shard-params 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// RUN: not composer-opt %s --composer-shard-params="units=[h" 2>&1 | FileCheck %s --check-prefix=BADGLOB
// BADGLOB: error: composer-shard-params: units: bad pattern '[h': invalid glob pattern, unmatched '['

// Two residual layers between an embedding and a head that share their
// weight (tied, as GPT-2's are), and a layer norm whose parameters are the
// root's too; the second layer scales by a buffer, which stays whole.
module @layers {
  composer.parameter @wte.weight : !composer.tensor<16x8xf32>
  composer.parameter @blocks.0.fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @blocks.0.fc.bias : !composer.tensor<8xf32>
  composer.parameter @blocks.1.fc.weight : !composer.tensor<8x8xf32>
  composer.buffer @blocks.1.scale : !composer.tensor<8xf32>
  composer.parameter @ln.weight : !composer.tensor<8xf32>
  func.func @forward(%ids: !composer.tensor<2x4xi64>) -> !composer.tensor<2x4x16xf32> {
    %none = composer.constant(none) : !composer.none loc("")
    %wte = composer.get_param @wte.weight : !composer.tensor<16x8xf32> loc("wte")
    %e = composer.op "aten::embedding"(%wte, %ids) : (!composer.tensor<16x8xf32>, !composer.tensor<2x4xi64>) -> !composer.tensor<2x4x8xf32> loc("wte")
    %w0 = composer.get_param @blocks.0.fc.weight : !composer.tensor<8x8xf32> loc("blocks.0.fc")
    %b0 = composer.get_param @blocks.0.fc.bias : !composer.tensor<8xf32> loc("blocks.0.fc")
    %h0 = composer.linear %e, %w0, %b0 : (!composer.tensor<2x4x8xf32>, !composer.tensor<8x8xf32>, !composer.tensor<8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.0.fc")
    %g0 = composer.gelu %h0 {approximate = "none"} : (!composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.0.act")
    %s0 = composer.add %e, %g0 {alpha = 1 : i64} : (!composer.tensor<2x4x8xf32>, !composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.0")
    %w1 = composer.get_param @blocks.1.fc.weight : !composer.tensor<8x8xf32> loc("blocks.1.fc")
    %h1 = composer.linear %s0, %w1, %none : (!composer.tensor<2x4x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x4x8xf32> loc("blocks.1.fc")
    %k1 = composer.get_param @blocks.1.scale : !composer.tensor<8xf32> loc("blocks.1")
    %m1 = composer.mul %h1, %k1 : (!composer.tensor<2x4x8xf32>, !composer.tensor<8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.1")
    %s1 = composer.add %s0, %m1 {alpha = 1 : i64} : (!composer.tensor<2x4x8xf32>, !composer.tensor<2x4x8xf32>) -> !composer.tensor<2x4x8xf32> loc("blocks.1")
    %lw = composer.get_param @ln.weight : !composer.tensor<8xf32> loc("ln")
    %n = composer.mul %s1, %lw : (!composer.tensor<2x4x8xf32>, !composer.tensor<8xf32>) -> !composer.tensor<2x4x8xf32> loc("ln")
    %wh = composer.get_param @wte.weight : !composer.tensor<16x8xf32> loc("head")
    %y = composer.linear %n, %wh, %none : (!composer.tensor<2x4x8xf32>, !composer.tensor<16x8xf32>, !composer.none) -> !composer.tensor<2x4x16xf32> loc("head")
    return %y : !composer.tensor<2x4x16xf32>
  }
}

// The root gathers the embedding (read twice: tied to the head) and the
// norm at the start of forward; each layer becomes a checkpoint whose
// region starts with its own gather. The buffer is read as it was. Each
// gather names the next one, in forward order.
// CHECK-LABEL: module @layers
// CHECK: func.func @forward(%[[IDS:.*]]: !composer.tensor<2x4xi64>)
// CHECK-NEXT: %[[WTE:.*]] = composer.get_param @wte.weight
// CHECK-NEXT: %[[LN:.*]] = composer.get_param @ln.weight
// CHECK-NEXT: %[[ROOT:.*]]:2 = composer.gather_unit ""(%[[WTE]], %[[LN]]) prefetch "blocks.0" : (!composer.tensor<16x8xf32>, !composer.tensor<8xf32>) -> (!composer.tensor<16x8xf32>, !composer.tensor<8xf32>)
// CHECK: %[[E:.*]] = composer.op "aten::embedding"(%[[ROOT]]#0, %[[IDS]])
// CHECK: %[[B0:.*]] = composer.checkpoint "blocks.0"(%[[E]])
// CHECK-NEXT: ^bb0(%[[A0:.*]]: !composer.tensor<2x4x8xf32>):
// CHECK-NEXT: %[[W0:.*]] = composer.get_param @blocks.0.fc.weight
// CHECK-NEXT: %[[BIAS0:.*]] = composer.get_param @blocks.0.fc.bias
// CHECK-NEXT: %[[G0:.*]]:2 = composer.gather_unit "blocks.0"(%[[W0]], %[[BIAS0]]) prefetch "blocks.1"
// CHECK-NEXT: composer.linear %[[A0]], %[[G0]]#0, %[[G0]]#1
// CHECK-NOT: composer.get_param @blocks.0
// CHECK: composer.yield
// CHECK: %[[B1:.*]] = composer.checkpoint "blocks.1"(%[[B0]])
// CHECK: %[[W1:.*]] = composer.get_param @blocks.1.fc.weight
// CHECK-NEXT: %[[G1:.*]] = composer.gather_unit "blocks.1"(%[[W1]]) : (!composer.tensor<8x8xf32>) -> !composer.tensor<8x8xf32>
// CHECK: %[[SCALE:.*]] = composer.get_param @blocks.1.scale
// CHECK-NEXT: composer.linear %{{.*}}, %[[G1]],
// CHECK-NEXT: composer.mul %{{.*}}, %[[SCALE]]
// CHECK: composer.yield
// CHECK: %[[N:.*]] = composer.mul %[[B1]], %[[ROOT]]#1
// CHECK-NEXT: composer.linear %[[N]], %[[ROOT]]#0,
// CHECK-NOT: composer.get_param
// CHECK: return
// REPORT: remark: composer-shard-params: 3 units sharded, 0 skipped
// NOPREFETCH-LABEL: module @layers
// NOPREFETCH-NOT: prefetch
// NOPREFETCH: composer.gather_unit ""(
// NOPREFETCH-NOT: prefetch
// NOPREFETCH: composer.gather_unit "blocks.0"(
// NOPREFETCH-NOT: prefetch
// NOPREFETCH: return

// A unit checkpointed already (activation checkpointing's every=2) is
// gathered in place; the other layer is outlined here.
// CHECKPOINTED-LABEL: module @layers
// CHECKPOINTED: composer.gather_unit ""({{.*}}) prefetch "blocks.0"
// CHECKPOINTED: composer.checkpoint "blocks.0"
// CHECKPOINTED: composer.gather_unit "blocks.0"({{.*}}) prefetch "blocks.1"
// CHECKPOINTED: composer.checkpoint "blocks.1"
// CHECKPOINTED: composer.gather_unit "blocks.1"(

// The runtime's operator takes the names and the list, and its results are
// unpacked; in the unit's region, which becomes a method, too.
// RUNTIME-LABEL: module @layers
// RUNTIME: %[[W:.*]] = composer.get_param @wte.weight
// RUNTIME-NEXT: %[[L:.*]] = composer.get_param @ln.weight
// RUNTIME-NEXT: %[[U:.*]] = composer.constant("") : !composer.str
// RUNTIME-NEXT: %[[P:.*]] = composer.constant("blocks.0") : !composer.str
// RUNTIME-NEXT: %[[LIST:.*]] = composer.op "prim::ListConstruct"(%[[W]], %[[L]])
// RUNTIME-NEXT: %[[CALL:.*]] = composer.op "composer::gather_unit"(%[[U]], %[[P]], %[[LIST]]) : (!composer.str, !composer.str, !composer.list<!composer.tensor>) -> !composer.list<!composer.tensor>
// RUNTIME-NEXT: composer.op "prim::ListUnpack"(%[[CALL]]) : (!composer.list<!composer.tensor>) -> (!composer.tensor<16x8xf32>, !composer.tensor<8xf32>)
// RUNTIME: composer.checkpoint_call "blocks.0"
// RUNTIME: composer.op "composer::gather_unit"
// RUNTIME: composer.checkpoint_call "blocks.1"
// RUNTIME: composer.constant("blocks.1") : !composer.str
// RUNTIME-NEXT: composer.constant("") : !composer.str
// RUNTIME: composer.op "composer::gather_unit"

// Lowered to aten, every gather is the identity and every unit runs in
// place: the original model.
// ATEN-LABEL: module @layers
// ATEN-NOT: gather_unit
// ATEN-NOT: checkpoint
// ATEN: composer.linear %{{.*}}, %[[W:.*]], %{{.*}} : (!composer.tensor<2x4x8xf32>, !composer.tensor<16x8xf32>, !composer.none)
// ATEN-NEXT: return

// -----


// A block without parameters needs no gather (with units=blocks.*; the
// residual matcher does not take a bare relu for a block); a block that
// takes a non-tensor from outside cannot be a unit, so its weight is the
// root's.
module @skips {
  composer.parameter @blocks.1.fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> {
    %none = composer.constant(none) : !composer.none loc("")
    %r0 = composer.relu %x : (!composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> loc("blocks.0.act")
    %s0 = composer.add %x, %r0 {alpha = 1 : i64} : (!composer.tensor<2x8xf32>, !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> loc("blocks.0")
    %c0 = composer.constant(0) : !composer.int loc("")
    %n = composer.op "aten::size"(%s0, %c0) : (!composer.tensor<2x8xf32>, !composer.int) -> !composer.int loc("")
    %w1 = composer.get_param @blocks.1.fc.weight : !composer.tensor<8x8xf32> loc("blocks.1.fc")
    %h1 = composer.linear %s0, %w1, %none : (!composer.tensor<2x8xf32>, !composer.tensor<8x8xf32>, !composer.none) -> !composer.tensor<2x8xf32> loc("blocks.1.fc")
    %v1 = composer.op "aten::view"(%h1, %n) : (!composer.tensor<2x8xf32>, !composer.int) -> !composer.tensor<2x8xf32> loc("blocks.1")
    %s1 = composer.add %s0, %v1 {alpha = 1 : i64} : (!composer.tensor<2x8xf32>, !composer.tensor<2x8xf32>) -> !composer.tensor<2x8xf32> loc("blocks.1")
    return %s1 : !composer.tensor<2x8xf32>
  }
}

// CHECK-LABEL: module @skips
// CHECK: %[[W:.*]] = composer.get_param @blocks.1.fc.weight
// CHECK-NEXT: %[[G:.*]] = composer.gather_unit ""(%[[W]])
// CHECK-NOT: composer.checkpoint
// CHECK: composer.linear %{{.*}}, %[[G]],
// PATTERN-REPORT: remark: composer-shard-params: 1 units sharded, 2 skipped
// PATTERN-REPORT: note: loc("blocks.0.act"): 1 skipped: module 'blocks.0' reads no parameters
// PATTERN-REPORT: note: loc("blocks.1"): 1 skipped: module 'blocks.1': it takes a value that is no tensor from outside; its parameters join the root unit
// With the root alone, parameters are not sharded while the step runs.
// REPORT: warning: composer-shard-params: no unit but the root was found, so every parameter is gathered for the whole step and only the gradients and the optimizer state stay sharded; name the units (units=...)

