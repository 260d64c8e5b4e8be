// RUN: composer-opt %s -split-input-file --composer-ghost-batchnorm="ghost-batch-size=4" 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-ghost-batchnorm 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-ghost-batchnorm 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-ghost-batchnorm --composer-ghost-batchnorm 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: not composer-opt %s --composer-ghost-batchnorm="ghost-batch-size=0" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: composer-opt %s -split-input-file --composer-ghost-batchnorm="ghost-batch-size=4" --composer-lower-to-aten 2>/dev/null | FileCheck %s --check-prefix=LOWERED

module {
  composer.parameter @bn.weight : !composer.tensor<8xf32>
  composer.parameter @bn.bias : !composer.tensor<8xf32>
  composer.buffer @bn.running_mean : !composer.tensor<8xf32>
  composer.buffer @bn.running_var : !composer.tensor<8xf32>
  func.func @forward(%x: !composer.tensor, %training: !composer.bool) -> !composer.tensor {
    %m = composer.constant(1.000000e-01) : !composer.float
    %w = composer.get_param @bn.weight : !composer.tensor
    %b = composer.get_param @bn.bias : !composer.tensor
    %rm = composer.get_param @bn.running_mean : !composer.tensor
    %rv = composer.get_param @bn.running_var : !composer.tensor
    %y = composer.batch_norm %x, %w, %b, %rm, %rv, %training, %m {cudnn_enabled = true, eps = 1.000000e-05 : f64} : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.bool, !composer.float) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool)
// CHECK: %[[M:.*]] = composer.constant(1.000000e-01)
// CHECK: %[[Y:.*]] = composer.ghost_batch_norm %[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[T]], %[[M]] {cudnn_enabled = true, eps = 1.000000e-05 : f64, ghost_batch_size = 4 : i64}
// CHECK-NOT: composer.batch_norm
// CHECK: return %[[Y]]
// REPORT: remark: composer-ghost-batchnorm: 1 batch norms made ghost, 0 skipped
// BAD: error: composer-ghost-batchnorm: ghost-batch-size must be >= 1, got 0

// Lowered: training cuts the batch into ceil(B / 4) chunks (torch.chunk)
// with momentum / that number; eval is one batch_norm.
// LOWERED-LABEL: func.func @forward
// LOWERED-SAME: (%[[X:.*]]: !composer.tensor, %[[T:.*]]: !composer.bool)
// LOWERED: %[[Y:.*]] = composer.if %[[T]] -> (!composer.tensor) {
// LOWERED: %[[ZERO:.*]] = composer.constant(0) : !composer.int
// LOWERED: %[[B:.*]] = composer.op "aten::size"(%[[X]], %[[ZERO]])
// LOWERED: %[[THREE:.*]] = composer.constant(3) : !composer.int
// LOWERED: %[[B3:.*]] = composer.op "aten::add"(%[[B]], %[[THREE]])
// LOWERED: %[[FOUR:.*]] = composer.constant(4) : !composer.int
// LOWERED: %[[K:.*]] = composer.op "aten::floordiv"(%[[B3]], %[[FOUR]])
// LOWERED: %[[CHUNKS:.*]] = composer.op "aten::chunk"(%[[X]], %[[K]], %{{.*}})
// LOWERED: %[[N:.*]] = composer.op "aten::len"(%[[CHUNKS]])
// LOWERED: %[[MN:.*]] = composer.op "aten::div"(%{{.*}}, %[[K]])
// LOWERED: %[[OUT:.*]] = composer.op "prim::ListConstruct"()
// LOWERED: composer.loop %[[N]], %{{.*}} {
// LOWERED: %[[C:.*]] = composer.op "aten::__getitem__"(%[[CHUNKS]], %{{.*}})
// LOWERED: %[[BN:.*]] = composer.batch_norm %[[C]], {{.*}}, %[[T]], %[[MN]]
// LOWERED: composer.op "aten::append"(%[[OUT]], %[[BN]])
// LOWERED: %[[CAT:.*]] = composer.cat %[[OUT]] {dim = 0 : i64}
// LOWERED: composer.yield %[[CAT]]
// LOWERED: } else {
// LOWERED: %[[E:.*]] = composer.batch_norm %[[X]]
// LOWERED: composer.yield %[[E]]
// LOWERED: return %[[Y]]

// -----

// No batch norm: a warning.
module {
  func.func @none(%x: !composer.tensor) -> !composer.tensor {
    return %x : !composer.tensor
  }
}
// REPORT: warning: composer-ghost-batchnorm: 0 batch norms made ghost, 0 skipped
