// RUN: composer-opt %s -split-input-file --composer-alibi 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-alibi 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// Idempotent: a second run changes nothing and finds the biases.
// RUN: composer-opt %s -split-input-file --composer-alibi 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-alibi --composer-alibi 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// RUN: composer-opt %t.once.mlir -split-input-file --composer-alibi 2>&1 >/dev/null | FileCheck %s --check-prefix=AGAIN
// Plain aten: both lowerings accept the result as it is.
// RUN: composer-opt %s -split-input-file --composer-alibi --composer-lower-to-runtime 2>/dev/null > %t.runtime.mlir
// RUN: diff %t.once.mlir %t.runtime.mlir
// No options: Composer's max_sequence_length has no use here.
// RUN: not composer-opt %s --composer-alibi="max-sequence-length=8192" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: no such option max-sequence-length

// A traced GPT-2 block (4 heads, a constant): q and k split into heads by
// a view and a transpose, scores scaled and masked by a fixed-size causal
// buffer sliced to the sequence length; the position embedding is added to
// the token embedding.
module {
  composer.parameter @tok.weight : !composer.tensor<101x32xf32>
  composer.parameter @pos.weight : !composer.tensor<16x32xf32>
  composer.buffer @attn.mask : !composer.tensor<1x1x16x16xi1>
  func.func @forward(%idx: !composer.tensor, %q: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor, %train: !composer.bool) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %c-2 = composer.constant(-2) : !composer.int
    %c-1 = composer.constant(-1) : !composer.int
    %c0 = composer.constant(0) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %c2 = composer.constant(2) : !composer.int
    %c3 = composer.constant(3) : !composer.int
    %c4 = composer.constant(4) : !composer.int
    %c8 = composer.constant(8) : !composer.int
    %max = composer.constant(9223372036854775807) : !composer.int
    %cpu = composer.constant("cpu") : !composer.device
    %ninf = composer.constant(0xFFF0000000000000 : f64) : !composer.float
    %t = composer.op "aten::size"(%idx, %c1) : (!composer.tensor, !composer.int) -> !composer.int
    %positions = composer.op "aten::arange"(%c0, %t, %c4, %none, %cpu, %false) : (!composer.int, !composer.int, !composer.int, !composer.none, !composer.device, !composer.bool) -> !composer.tensor
    %wt = composer.get_param @tok.weight : !composer.tensor
    %tok = composer.op "aten::embedding"(%wt, %idx, %c-1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %wp = composer.get_param @pos.weight : !composer.tensor
    %pos = composer.op "aten::embedding"(%wp, %positions, %c-1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %pos1 = composer.op "aten::unsqueeze"(%pos, %c0) : (!composer.tensor, !composer.int) -> !composer.tensor
    %x = composer.add %tok, %pos1 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %shape = composer.op "prim::ListConstruct"(%c2, %t, %c4, %c8) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %qv = composer.view %q, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %qh = composer.op "aten::transpose"(%qv, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %kv = composer.view %k, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %kh = composer.op "aten::transpose"(%kv, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %kt = composer.op "aten::transpose"(%kh, %c-2, %c-1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %scores = composer.matmul %qh, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %scale = composer.constant(dense<0.353553385> : tensor<f32>) : !composer.tensor
    %scaled = composer.mul %scores, %scale : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %buf = composer.get_param @attn.mask : !composer.tensor
    %s0 = composer.op "aten::slice"(%buf, %c0, %c0, %max, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %s1 = composer.op "aten::slice"(%s0, %c1, %c0, %max, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %s2 = composer.op "aten::slice"(%s1, %c2, %c0, %t, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %s3 = composer.op "aten::slice"(%s2, %c3, %c0, %t, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %notmask = composer.op "aten::bitwise_not"(%s3) : (!composer.tensor) -> !composer.tensor
    %masked = composer.op "aten::masked_fill"(%scaled, %notmask, %ninf) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %p = composer.softmax %masked {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %pd = composer.dropout %p, %train {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %vv = composer.view %v, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %vh = composer.op "aten::transpose"(%vv, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %y = composer.matmul %pd, %vh : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %x, %y : !composer.tensor, !composer.tensor
  }
}
// The position table stays, frozen; the mask buffer stays, checked at
// export.
// CHECK-LABEL: module
// CHECK-DAG: composer.parameter @tok.weight : !composer.tensor<101x32xf32>
// CHECK-DAG: composer.parameter @pos.weight frozen : !composer.tensor<16x32xf32>
// CHECK-DAG: composer.buffer @attn.mask init("tril_ones") : !composer.tensor<1x1x16x16xi1>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[IDX:[^:]*]]: !composer.tensor, %[[Q:[^:]*]]: !composer.tensor, %[[K:[^:]*]]: !composer.tensor
// CHECK-NOT: aten::arange
// CHECK-NOT: @pos.weight
// CHECK: %[[TOK:.*]] = composer.op "aten::embedding"(%{{.*}}, %[[IDX]],
// CHECK-NOT: aten::embedding
// CHECK: %[[SCORES:.*]] = composer.matmul
// CHECK: %[[SCALED:.*]] = composer.mul %[[SCORES]]
// CHECK-NOT: @attn.mask
// CHECK-NOT: aten::slice
// The causal mask of the scores' size: tril(ones([1, 1, Tq, Tk]), 0).
// CHECK: %[[TQ:.*]] = composer.op "aten::size"(%[[SCALED]], %{{.*}})
// CHECK: %[[TK:.*]] = composer.op "aten::size"(%[[SCALED]], %{{.*}})
// CHECK: %[[SHAPE:.*]] = composer.op "prim::ListConstruct"(%{{.*}}, %{{.*}}, %[[TQ]], %[[TK]])
// CHECK: %[[BOOL:.*]] = composer.constant(11) : !composer.int
// CHECK: %[[ONES:.*]] = composer.op "aten::ones"(%[[SHAPE]], %[[BOOL]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[TRIL:.*]] = composer.op "aten::tril"(%[[ONES]], %{{.*}})
// CHECK: %[[NOT:.*]] = composer.op "aten::bitwise_not"(%[[TRIL]])
// CHECK: %[[MASKED:.*]] = composer.op "aten::masked_fill"(%[[SCALED]], %[[NOT]],
// The bias -m_h |i - j|: i the last Tq of Tk positions, j all of them.
// CHECK: %[[QUERIES:.*]] = composer.op "aten::size"(%[[MASKED]], %{{.*}})
// CHECK: %[[KEYS:.*]] = composer.op "aten::size"(%[[MASKED]], %{{.*}})
// CHECK: %[[DEVICE:.*]] = composer.op "prim::device"(%[[MASKED]])
// CHECK: %[[FIRST:.*]] = composer.op "aten::sub"(%[[KEYS]], %[[QUERIES]]) : (!composer.int, !composer.int)
// CHECK: %[[I:.*]] = composer.op "aten::arange"(%[[FIRST]], %[[KEYS]],
// CHECK: %[[J:.*]] = composer.op "aten::arange"(%[[KEYS]],
// CHECK: %[[IC:.*]] = composer.op "aten::unsqueeze"(%[[I]],
// CHECK: %[[D:.*]] = composer.op "aten::sub"(%[[J]], %[[IC]],
// CHECK: %[[ABS:.*]] = composer.op "aten::abs"(%[[D]])
// CHECK: %[[SLOPES:.*]] = composer.constant([-2.500000e-01, -6.250000e-02, -1.562500e-02, -3.906250e-03]) : !composer.list<!composer.float>
// CHECK: %[[ST:.*]] = composer.op "aten::tensor"(%[[SLOPES]], %{{.*}}, %[[DEVICE]], %{{.*}})
// CHECK: %[[SV:.*]] = composer.op "aten::view"(%[[ST]], %{{.*}})
// CHECK: %[[B:.*]] = composer.op "aten::mul"(%[[SV]], %[[ABS]])
// CHECK: %[[BIAS:.*]] = composer.op "aten::type_as"(%[[B]], %[[MASKED]])
// CHECK: %[[BIASED:.*]] = composer.add %[[MASKED]], %[[BIAS]] {alpha = 1 : i64}
// CHECK: composer.softmax %[[BIASED]] {composer.alibi, dim = -1 : i64}
// CHECK: return %[[TOK]],

// REPORT: remark: composer-alibi: 1 attention sites given ALiBi biases, 0 skipped
// REPORT: remark: composer-alibi: 1 position embeddings removed, 0 skipped
// REPORT: remark: composer-alibi: 1 fixed-size causal masks rebuilt from the sequence length, 0 skipped
// AGAIN: warning: composer-alibi: 0 attention sites given ALiBi biases, 1 skipped
// AGAIN: note: 1 skipped: already has an ALiBi bias

// -----

// H = 6, not a power of two: the slopes of 4, then every other slope of 8.
// A scripted head count (a module attribute) elsewhere: the slopes are
// computed from it when run. HF GPT-2's causal mask,
// where(bias[:, :, Tk - Tq:Tk, :Tk], scores, min): the tril's diagonal is
// the row start.
module {
  composer.buffer @h.bias : !composer.tensor<1x1x8x8xi1>
  func.func @forward(%q: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor, %b: !composer.int, %t: !composer.int, %start: !composer.int) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %c-2 = composer.constant(-2) : !composer.int
    %c-1 = composer.constant(-1) : !composer.int
    %c0 = composer.constant(0) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %c2 = composer.constant(2) : !composer.int
    %c3 = composer.constant(3) : !composer.int
    %c4 = composer.constant(4) : !composer.int
    %c6 = composer.constant(6) : !composer.int
    %min = composer.constant(-3.4028234663852886E+38) : !composer.float
    %shape = composer.op "prim::ListConstruct"(%b, %t, %c6, %c4) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %perm = composer.constant([0, 2, 1, 3]) : !composer.list<!composer.int>
    %qv = composer.op "aten::view"(%q, %shape) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %qh = composer.op "aten::permute"(%qv, %perm) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %kv = composer.op "aten::view"(%k, %shape) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %kh = composer.op "aten::permute"(%kv, %perm) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %kt = composer.op "aten::transpose"(%kh, %c-1, %c-2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %scores = composer.matmul %qh, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %buf = composer.get_param @h.bias : !composer.tensor
    %s0 = composer.op "aten::slice"(%buf, %c2, %start, %t, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %s1 = composer.op "aten::slice"(%s0, %c3, %none, %t, %c1) : (!composer.tensor, !composer.int, !composer.none, !composer.int, !composer.int) -> !composer.tensor
    %where = composer.op "aten::where"(%s1, %scores, %min) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %p = composer.softmax %where {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %vv = composer.op "aten::view"(%v, %shape) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %vh = composer.op "aten::permute"(%vv, %perm) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %y = composer.matmul %p, %vh : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %heads = composer.get_attr "attn.heads" : !composer.int
    %shape2 = composer.op "prim::ListConstruct"(%b, %t, %heads, %c4) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %q2 = composer.view %q, %shape2 : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %q2h = composer.op "aten::transpose"(%q2, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %scores2 = composer.matmul %q2h, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %p2 = composer.softmax %scores2 {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y2 = composer.matmul %p2, %vh : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y, %y2 : !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: module
// CHECK: composer.buffer @h.bias init("tril_ones") : !composer.tensor<1x1x8x8xi1>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[START:[^:]*]]: !composer.int)
// CHECK: %[[SCORES:.*]] = composer.matmul
// CHECK: %[[ONES:.*]] = composer.op "aten::ones"
// CHECK: %[[TRIL:.*]] = composer.op "aten::tril"(%[[ONES]], %[[START]])
// CHECK: %[[WHERE:.*]] = composer.op "aten::where"(%[[TRIL]], %[[SCORES]],
// CHECK: composer.constant([-2.500000e-01, -6.250000e-02, -1.562500e-02, -3.906250e-03, -5.000000e-01, -1.250000e-01]) : !composer.list<!composer.float>
// CHECK: composer.softmax %{{.*}} {composer.alibi, dim = -1 : i64}
// H from the attribute: n = 2^floor(log2(H + 1/2)), head i has
// 2^(-8 e / n), e = i + 1 below n, else i - n + 1/2.
// CHECK: %[[HEADS:.*]] = composer.get_attr "attn.heads"
// CHECK: %[[H:.*]] = composer.op "aten::scalar_tensor"(%[[HEADS]],
// CHECK: %[[HH:.*]] = composer.op "aten::add"(%[[H]],
// CHECK: %[[LOG:.*]] = composer.op "aten::log2"(%[[HH]])
// CHECK: %[[FLOOR:.*]] = composer.op "aten::floor"(%[[LOG]])
// CHECK: %[[N:.*]] = composer.op "aten::exp2"(%[[FLOOR]])
// CHECK: %[[IDX:.*]] = composer.op "aten::arange"(%[[HEADS]],
// CHECK: %[[BELOW:.*]] = composer.op "aten::add"(%[[IDX]],
// CHECK: %[[SUB:.*]] = composer.op "aten::sub"(%[[IDX]], %[[N]],
// CHECK: %[[ABOVE:.*]] = composer.op "aten::add"(%[[SUB]],
// CHECK: %[[LT:.*]] = composer.op "aten::lt"(%[[IDX]], %[[N]])
// CHECK: %[[E:.*]] = composer.op "aten::where"(%[[LT]], %[[BELOW]], %[[ABOVE]])
// CHECK: %[[E8:.*]] = composer.op "aten::mul"(%[[E]],
// CHECK: %[[EN:.*]] = composer.op "aten::div"(%[[E8]], %[[N]])
// CHECK: %[[M:.*]] = composer.op "aten::exp2"(%[[EN]])
// CHECK: composer.op "aten::neg"(%[[M]])
// CHECK: composer.softmax %{{.*}} {composer.alibi, dim = -1 : i64}

// REPORT: remark: composer-alibi: 2 attention sites given ALiBi biases, 0 skipped
// REPORT: remark: composer-alibi: 1 fixed-size causal masks rebuilt from the sequence length, 0 skipped
// AGAIN: warning: composer-alibi: 0 attention sites given ALiBi biases, 2 skipped
// AGAIN: note: 2 skipped: already has an ALiBi bias

// -----

// nn.MultiheadAttention, scripted: heads merged into the batch, [B*H, T, D]
// from view(T, B * H, D) with H a module attribute, and bmm; its fused
// fast path, which takes no bias, is turned off (its condition is also
// the early-return flag). The bias goes on [B, H, Tq, Tk].
module {
  func.func @forward(%q: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor, %x: !composer.tensor, %fast: !composer.bool) -> !composer.tensor {
    %c-2 = composer.constant(-2) : !composer.int
    %c-1 = composer.constant(-1) : !composer.int
    %c0 = composer.constant(0) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %c8 = composer.constant(8) : !composer.int
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %heads = composer.get_attr "mha.num_heads" : !composer.int
    %r:2 = composer.if %fast -> (!composer.bool, !composer.tensor) {
      %f:2 = composer.op "aten::_native_multi_head_attention"(%x, %x, %x, %c8, %heads, %none, %none, %none, %none, %none, %false, %false, %none) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int, !composer.none, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.bool, !composer.none) -> (!composer.tensor, !composer.tensor)
      composer.yield %fast, %f#0 : !composer.bool, !composer.tensor
    } else {
      composer.yield %false, %x : !composer.bool, !composer.tensor
    }
    %out = composer.if %r#0 -> (!composer.tensor) {
      composer.yield %r#1 : !composer.tensor
    } else {
      %size = composer.op "aten::size"(%x) : (!composer.tensor) -> !composer.list<!composer.int>
      %dims:3 = composer.op "prim::ListUnpack"(%size) : (!composer.list<!composer.int>) -> (!composer.int, !composer.int, !composer.int)
      %bh = composer.op "aten::mul"(%dims#1, %heads) : (!composer.int, !composer.int) -> !composer.int
      %shape = composer.op "prim::ListConstruct"(%dims#0, %bh, %c8) : (!composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
      %qv = composer.view %q, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
      %qb = composer.op "aten::transpose"(%qv, %c0, %c1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
      %kt = composer.op "aten::transpose"(%k, %c-2, %c-1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
      %scores = composer.op "aten::bmm"(%qb, %kt) : (!composer.tensor, !composer.tensor) -> !composer.tensor
      %p = composer.softmax %scores {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
      %y = composer.op "aten::bmm"(%p, %v) : (!composer.tensor, !composer.tensor) -> !composer.tensor
      composer.yield %y : !composer.tensor
    }
    return %out : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[FAST:[^:]*]]: !composer.bool)
// CHECK: %[[NEVER:.*]] = composer.constant(false) : !composer.bool
// CHECK: %[[HEADS:.*]] = composer.get_attr "mha.num_heads"
// CHECK: %[[R:.*]]:2 = composer.if %[[NEVER]]
// CHECK: composer.yield %[[NEVER]], %{{.*}}
// CHECK: composer.if %[[R]]#0
// CHECK: %[[SCORES:.*]] = composer.op "aten::bmm"
// CHECK: %[[TQ:.*]] = composer.op "aten::size"(%[[SCORES]], %{{.*}})
// CHECK: %[[TK:.*]] = composer.op "aten::size"(%[[SCORES]], %{{.*}})
// CHECK: composer.op "aten::scalar_tensor"(%[[HEADS]],
// CHECK: %[[BIAS:.*]] = composer.op "aten::type_as"
// CHECK: %[[SPLIT:.*]] = composer.op "prim::ListConstruct"(%{{.*}}, %[[HEADS]], %[[TQ]], %[[TK]])
// CHECK: %[[S4:.*]] = composer.op "aten::reshape"(%[[SCORES]], %[[SPLIT]])
// CHECK: %[[SUM:.*]] = composer.add %[[S4]], %[[BIAS]]
// CHECK: %[[MERGED:.*]] = composer.op "prim::ListConstruct"(%{{.*}}, %[[TQ]], %[[TK]])
// CHECK: %[[S3:.*]] = composer.op "aten::reshape"(%[[SUM]], %[[MERGED]])
// CHECK: composer.softmax %[[S3]] {composer.alibi, dim = -1 : i64}

// REPORT: remark: composer-alibi: 1 attention sites given ALiBi biases, 0 skipped
// AGAIN: warning: composer-alibi: 0 attention sites given ALiBi biases, 1 skipped
// AGAIN: note: 1 skipped: already has an ALiBi bias

// -----

// Layouts read at run time, masks left as they are, lookups that are not
// sites; softmaxes that weigh no values are not sites either.
module {
  composer.parameter @emb.weight : !composer.tensor<16x8xf32>
  composer.parameter @types.weight : !composer.tensor<2x8xf32>
  composer.buffer @position_ids : !composer.tensor<1x16xi64>
  composer.buffer @token_type_ids : !composer.tensor<1x16xi64>
  composer.buffer @wide.mask : !composer.tensor<2x1x16x16xi1>
  composer.buffer @strided.mask : !composer.tensor<1x1x16x16xi1>
  func.func @forward(%q: !composer.tensor, %k: !composer.tensor, %v: !composer.tensor, %x: !composer.tensor, %b: !composer.int, %t: !composer.int) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %c-2 = composer.constant(-2) : !composer.int
    %c-1 = composer.constant(-1) : !composer.int
    %c0 = composer.constant(0) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %c2 = composer.constant(2) : !composer.int
    %c3 = composer.constant(3) : !composer.int
    %c4 = composer.constant(4) : !composer.int
    %c8 = composer.constant(8) : !composer.int
    %max = composer.constant(9223372036854775807) : !composer.int
    %ninf = composer.constant(0xFFF0000000000000 : f64) : !composer.float
    %kt = composer.op "aten::transpose"(%k, %c-2, %c-1) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    // view(B, T, -1, D): H is the scores' size(-3) when run.
    %shape = composer.op "prim::ListConstruct"(%b, %t, %c-1, %c8) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %qv = composer.view %q, %shape : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %qh = composer.op "aten::transpose"(%qv, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %s2 = composer.matmul %qh, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %p2 = composer.softmax %s2 {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y2 = composer.matmul %p2, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    // HF's split_heads, view(list(x.size()[:-1]) + [4, 8]) then
    // permute(0, 2, 1, 3): H = 4 from the end of the concatenated list.
    %sizes = composer.op "aten::size"(%q) : (!composer.tensor) -> !composer.list<!composer.int>
    %lead = composer.op "aten::slice"(%sizes, %none, %c-1, %c1) : (!composer.list<!composer.int>, !composer.none, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %copy = composer.op "aten::list"(%lead) : (!composer.list<!composer.int>) -> !composer.list<!composer.int>
    %hd = composer.op "prim::ListConstruct"(%c4, %c8) : (!composer.int, !composer.int) -> !composer.list<!composer.int>
    %split = composer.op "aten::add"(%copy, %hd) : (!composer.list<!composer.int>, !composer.list<!composer.int>) -> !composer.list<!composer.int>
    %perm = composer.constant([0, 2, 1, 3]) : !composer.list<!composer.int>
    %qs = composer.op "aten::view"(%q, %split) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %qp = composer.op "aten::permute"(%qs, %perm) : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %s3 = composer.matmul %qp, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %p3 = composer.softmax %s3 {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y3 = composer.matmul %p3, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    // A classifier's softmax: not a site.
    %p5 = composer.softmax %x {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    // Masks the pass cannot rebuild (the sites themselves are biased): a
    // buffer with a leading dimension above 1, a slice with step 2.
    %heads = composer.op "prim::ListConstruct"(%b, %t, %c4, %c8) : (!composer.int, !composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %q4 = composer.view %q, %heads : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %q4h = composer.op "aten::transpose"(%q4, %c1, %c2) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %s6 = composer.matmul %q4h, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %wide = composer.get_param @wide.mask : !composer.tensor
    %m6 = composer.op "aten::masked_fill"(%s6, %wide, %ninf) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %p6 = composer.softmax %m6 {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y6 = composer.matmul %p6, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %strided = composer.get_param @strided.mask : !composer.tensor
    %st = composer.op "aten::slice"(%strided, %c3, %none, %t, %c2) : (!composer.tensor, !composer.int, !composer.none, !composer.int, !composer.int) -> !composer.tensor
    %m7 = composer.op "aten::masked_fill"(%s6, %st, %ninf) : (!composer.tensor, !composer.tensor, !composer.float) -> !composer.tensor
    %p7 = composer.softmax %m7 {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y7 = composer.matmul %p7, %v : (!composer.tensor, !composer.tensor) -> !composer.tensor
    // BERT's embeddings: positions from the position_ids buffer sliced to
    // the sequence length (removed; export checks the buffer holds 0..15),
    // token types from a buffer of the same shape into a table of 2 rows,
    // which cannot hold positions 0..15 (not a site).
    %wt = composer.get_param @types.weight : !composer.tensor
    %tids = composer.get_param @token_type_ids : !composer.tensor
    %ts0 = composer.op "aten::slice"(%tids, %c0, %c0, %max, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %ts1 = composer.op "aten::slice"(%ts0, %c1, %none, %t, %c1) : (!composer.tensor, !composer.int, !composer.none, !composer.int, !composer.int) -> !composer.tensor
    %te = composer.op "aten::embedding"(%wt, %ts1, %c-1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %x0 = composer.add %x, %te {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %w = composer.get_param @emb.weight : !composer.tensor
    %ids = composer.get_param @position_ids : !composer.tensor
    %idslice = composer.op "aten::slice"(%ids, %c1, %c0, %t, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %e1 = composer.op "aten::embedding"(%w, %idslice, %c-1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %x1 = composer.add %x0, %e1 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y2, %y3, %p5, %y6, %y7, %x1 : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// CHECK-LABEL: module
// CHECK-DAG: composer.parameter @emb.weight frozen : !composer.tensor<16x8xf32>
// CHECK-DAG: composer.parameter @types.weight : !composer.tensor<2x8xf32>
// CHECK-DAG: composer.buffer @position_ids init("arange") : !composer.tensor<1x16xi64>
// CHECK-DAG: composer.buffer @token_type_ids : !composer.tensor<1x16xi64>
// CHECK-DAG: composer.buffer @wide.mask : !composer.tensor<2x1x16x16xi1>
// CHECK-DAG: composer.buffer @strided.mask : !composer.tensor<1x1x16x16xi1>
// CHECK-LABEL: func.func @forward
// The view's -1: H = size(scores, -3), the slopes computed from it.
// CHECK: %[[S2:.*]] = composer.matmul
// CHECK: %[[MINUS3:.*]] = composer.constant(-3) : !composer.int
// CHECK: %[[H2:.*]] = composer.op "aten::size"(%[[S2]], %[[MINUS3]]) : (!composer.tensor, !composer.int) -> !composer.int
// CHECK: composer.op "aten::scalar_tensor"(%[[H2]],
// CHECK: composer.softmax %{{.*}} {composer.alibi
// HF's list: 4 heads, constant slopes.
// CHECK: composer.op "aten::permute"
// CHECK: composer.constant([-2.500000e-01, -6.250000e-02, -1.562500e-02, -3.906250e-03])
// CHECK: composer.softmax %{{.*}} {composer.alibi
// CHECK: composer.softmax %{{.*}} {dim = -1 : i64}
// CHECK-COUNT-2: composer.softmax %{{.*}} {composer.alibi
// CHECK-NOT: @position_ids
// CHECK: %[[TE:.*]] = composer.op "aten::embedding"(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: aten::embedding
// CHECK: %[[X0:.*]] = composer.add %{{.*}}, %[[TE]]
// CHECK-NOT: aten::embedding
// CHECK: return {{.*}}, %[[X0]] :

// REPORT: remark: composer-alibi: 4 attention sites given ALiBi biases, 0 skipped
// REPORT: remark: composer-alibi: 1 position embeddings removed, 0 skipped
// REPORT: warning: composer-alibi: 0 fixed-size causal masks rebuilt from the sequence length, 2 skipped
// REPORT-DAG: note: 1 skipped: the mask buffer is not [1, ..., 1, N, M]
// REPORT-DAG: note: 1 skipped: the mask buffer is sliced other than with step 1
// AGAIN: warning: composer-alibi: 0 attention sites given ALiBi biases, 4 skipped
// AGAIN: note: 4 skipped: already has an ALiBi bias

// -----

// Scores typed [B, H, Tq, Tk] (composer-refine-types' shapes) give H when
// no view shows it: 8 heads.
module {
  func.func @forward(%q: !composer.tensor<2x8x16x4xf32>, %kt: !composer.tensor<2x8x4x16xf32>, %v: !composer.tensor<2x8x16x4xf32>) -> !composer.tensor {
    %s = composer.matmul %q, %kt : (!composer.tensor<2x8x16x4xf32>, !composer.tensor<2x8x4x16xf32>) -> !composer.tensor<2x8x16x16xf32>
    %p = composer.softmax %s {dim = 3 : i64} : (!composer.tensor<2x8x16x16xf32>) -> !composer.tensor<2x8x16x16xf32>
    %y = composer.matmul %p, %v : (!composer.tensor<2x8x16x16xf32>, !composer.tensor<2x8x16x4xf32>) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: composer.constant([-5.000000e-01, -2.500000e-01, -1.250000e-01, -6.250000e-02, -3.125000e-02, -1.562500e-02, -7.812500e-03, -3.906250e-03])
// CHECK: %[[BIASED:.*]] = composer.add %{{.*}}, %{{.*}} {alpha = 1 : i64} : (!composer.tensor<2x8x16x16xf32>, !composer.tensor) -> !composer.tensor<2x8x16x16xf32>
// CHECK: composer.softmax %[[BIASED]] {composer.alibi, dim = 3 : i64}

// REPORT: remark: composer-alibi: 1 attention sites given ALiBi biases, 0 skipped
// AGAIN: warning: composer-alibi: 0 attention sites given ALiBi biases, 1 skipped
// AGAIN: note: 1 skipped: already has an ALiBi bias

// -----

// A fused attention alone: its scores are not in the graph.
module {
  func.func @forward(%x: !composer.tensor, %heads: !composer.int) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %c8 = composer.constant(8) : !composer.int
    %f:2 = composer.op "aten::_native_multi_head_attention"(%x, %x, %x, %c8, %heads, %none, %none, %none, %none, %none, %false, %false, %none) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int, !composer.none, !composer.none, !composer.none, !composer.none, !composer.none, !composer.bool, !composer.bool, !composer.none) -> (!composer.tensor, !composer.tensor)
    return %f#0 : !composer.tensor
  }
}
// CHECK-LABEL: func.func @forward
// CHECK: aten::_native_multi_head_attention

// REPORT: warning: composer-alibi: 0 attention sites given ALiBi biases, 1 skipped
// REPORT: note: 1 skipped: fused attention (aten::_native_multi_head_attention): its scores are not in the graph

// -----

// Rotary position embeddings (LLaMA): q and k are x * cos + rotate(x) * sin
// with cos and sin sliced from buffers. ALiBi would be a second position
// encoding: the site is skipped with that reason, and nothing changes.
module {
  composer.buffer @rotary.cos : !composer.tensor<16x4xf32>
  composer.buffer @rotary.sin : !composer.tensor<16x4xf32>
  func.func @forward(%q: !composer.tensor<2x2x8x4xf32>, %qr: !composer.tensor<2x2x8x4xf32>, %k: !composer.tensor<2x2x8x4xf32>, %kr: !composer.tensor<2x2x8x4xf32>, %v: !composer.tensor<2x2x8x4xf32>) -> !composer.tensor {
    %zero = composer.constant(0) : !composer.int
    %one = composer.constant(1) : !composer.int
    %t = composer.constant(8) : !composer.int
    %last = composer.constant(-1) : !composer.int
    %before = composer.constant(-2) : !composer.int
    %cosTable = composer.get_param @rotary.cos : !composer.tensor
    %cos = composer.op "aten::slice"(%cosTable, %zero, %zero, %t, %one) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %sinTable = composer.get_param @rotary.sin : !composer.tensor
    %sin = composer.op "aten::slice"(%sinTable, %zero, %zero, %t, %one) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %q1 = composer.mul %q, %cos : (!composer.tensor<2x2x8x4xf32>, !composer.tensor) -> !composer.tensor
    %q2 = composer.mul %qr, %sin : (!composer.tensor<2x2x8x4xf32>, !composer.tensor) -> !composer.tensor
    %qrot = composer.add %q1, %q2 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %k1 = composer.mul %k, %cos : (!composer.tensor<2x2x8x4xf32>, !composer.tensor) -> !composer.tensor
    %k2 = composer.mul %kr, %sin : (!composer.tensor<2x2x8x4xf32>, !composer.tensor) -> !composer.tensor
    %krot = composer.add %k1, %k2 {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %kt = composer.op "aten::transpose"(%krot, %before, %last) : (!composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %s = composer.matmul %qrot, %kt : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %p = composer.softmax %s {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %y = composer.matmul %p, %v : (!composer.tensor, !composer.tensor<2x2x8x4xf32>) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: composer.buffer @rotary.cos
// CHECK: func.func @forward
// CHECK-NOT: composer.alibi
// CHECK: composer.softmax %{{.*}} {dim = -1 : i64}

// REPORT: warning: composer-alibi: 0 attention sites given ALiBi biases, 1 skipped
// REPORT: note: 1 skipped: q and k carry rotary position embeddings (products with position tables); ALiBi would add a second position encoding
// AGAIN: warning: composer-alibi: 0 attention sites given ALiBi biases, 1 skipped

// -----

// BERT's token types: a buffer of zeros sliced to the sequence length (a
// size of the input), into a table of 2 rows. It becomes zeros of that
// length on the buffer's device, so that the model runs past 16 tokens;
// export checks that the buffer holds zeros.
module {
  composer.parameter @types.weight : !composer.tensor<2x8xf32>
  composer.buffer @token_type_ids : !composer.tensor<1x16xi64>
  func.func @forward(%ids: !composer.tensor, %x: !composer.tensor) -> !composer.tensor {
    %false = composer.constant(false) : !composer.bool
    %c-1 = composer.constant(-1) : !composer.int
    %c0 = composer.constant(0) : !composer.int
    %c1 = composer.constant(1) : !composer.int
    %max = composer.constant(9223372036854775807) : !composer.int
    %t = composer.op "aten::size"(%ids, %c1) : (!composer.tensor, !composer.int) -> !composer.int
    %b = composer.op "aten::size"(%ids, %c0) : (!composer.tensor, !composer.int) -> !composer.int
    %wt = composer.get_param @types.weight : !composer.tensor
    %tids = composer.get_param @token_type_ids : !composer.tensor
    %ts0 = composer.op "aten::slice"(%tids, %c0, %c0, %max, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %ts1 = composer.op "aten::slice"(%ts0, %c1, %c0, %t, %c1) : (!composer.tensor, !composer.int, !composer.int, !composer.int, !composer.int) -> !composer.tensor
    %bt = composer.op "prim::ListConstruct"(%b, %t) : (!composer.int, !composer.int) -> !composer.list<!composer.int>
    %tx = composer.op "aten::expand"(%ts1, %bt, %false) : (!composer.tensor, !composer.list<!composer.int>, !composer.bool) -> !composer.tensor
    %te = composer.op "aten::embedding"(%wt, %tx, %c-1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %y = composer.add %x, %te {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: module
// CHECK: composer.buffer @token_type_ids init("zeros") : !composer.tensor<1x16xi64>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[IDS:[a-z0-9]+]]: !composer.tensor
// CHECK: %[[T:.*]] = composer.op "aten::size"(%[[IDS]], %{{.*}})
// CHECK: %[[TIDS:.*]] = composer.get_param @token_type_ids
// CHECK-NOT: aten::slice
// CHECK: %[[ONE:.*]] = composer.constant(1) : !composer.int
// CHECK: %[[SIZES:.*]] = composer.op "prim::ListConstruct"(%[[ONE]], %[[T]])
// CHECK: %[[ZEROS:.*]] = composer.op "aten::new_zeros"(%[[TIDS]], %[[SIZES]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: aten::slice
// CHECK: composer.op "aten::expand"(%[[ZEROS]],

// REPORT: warning: composer-alibi: 0 attention sites given ALiBi biases, 0 skipped
// REPORT: remark: composer-alibi: 1 fixed-size token-type buffers rebuilt from the sequence length, 0 skipped
// AGAIN: warning: composer-alibi: 0 attention sites given ALiBi biases, 0 skipped
