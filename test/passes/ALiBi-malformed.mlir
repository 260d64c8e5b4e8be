// Generic ops whose verifier checks only their kind, with fewer operands
// than their schema has: the attention analysis (ALiBi, the FLOP count)
// finds no attention in them and never reads an operand that is not there.
// RUN: composer-opt %s --composer-alibi 2>&1 | FileCheck %s
// RUN: composer-opt %s --report-costs=json --input-spec=2x4x8x8xf32 --peak-gflops=100 | FileCheck %s --check-prefix=COSTS

module {
  func.func @forward(%s: !composer.tensor) -> !composer.tensor {
    %m = composer.op "aten::masked_fill"(%s) : (!composer.tensor) -> !composer.tensor
    %a = composer.op "aten::add"(%m) : (!composer.tensor) -> !composer.tensor
    %p = composer.softmax %a {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %o = composer.op "aten::matmul"(%p) : (!composer.tensor) -> !composer.tensor
    return %o : !composer.tensor
  }
}
// CHECK: warning: composer-alibi: 0 attention sites given ALiBi biases
// COSTS: "attention_flops": 0,
