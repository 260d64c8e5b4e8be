// RUN: composer-opt %s --composer-gyro-dropout 2>&1 >/dev/null | FileCheck %s
// Stochastic depth's own ifs (decided by stochastic_depth_keep) are in
// both forms alike: the dropout it moved into one is not counted there.
// RUN: composer-opt %s --composer-stochastic-depth --composer-gyro-dropout 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER-SD

// A site inside a branch of the model's own if is counted once per branch
// a script keeps, while a trace records the branch it ran: the report says
// so, once, at the first such site.
module {
  composer.parameter @block.fc.weight : !composer.tensor<8x8xf32>
  composer.parameter @head.fc.weight : !composer.tensor<8x8xf32>
  func.func @forward(%x: !composer.tensor<2x8xf32>, %c: !composer.bool) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %train = composer.get_attr "training" : !composer.bool
    %w = composer.get_param @block.fc.weight : !composer.tensor
    %h = composer.linear %x, %w, %none : (!composer.tensor<2x8xf32>, !composer.tensor, !composer.none) -> !composer.tensor
    %d = composer.dropout %h, %train {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %r = composer.add %x, %d {alpha = 1 : i64} : (!composer.tensor<2x8xf32>, !composer.tensor) -> !composer.tensor
    %y = composer.if %c -> (!composer.tensor) {
      %hw = composer.get_param @head.fc.weight : !composer.tensor
      %o = composer.linear %r, %hw, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
      %od = composer.dropout %o, %train {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
      composer.yield %od : !composer.tensor
    } else {
      composer.yield %r : !composer.tensor
    }
    return %r, %y : !composer.tensor, !composer.tensor
  }
}
// CHECK: remark: composer-gyro-dropout: 2 dropouts made gyro, 0 skipped
// CHECK: Report-branches.mlir:[[# @LINE - 9]]:13: note: 1 of these sites are inside an if's branches: a scripted model keeps every branch, a traced one only the branch it ran, so their counts can differ

// AFTER-SD: remark: composer-stochastic-depth: 1 residual blocks made stochastic, 0 skipped
// AFTER-SD-NOT: note:
// AFTER-SD: remark: composer-gyro-dropout: 2 dropouts made gyro, 0 skipped
// AFTER-SD: note: 1 of these sites are inside an if's branches
