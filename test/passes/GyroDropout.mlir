// RUN: composer-opt %s -split-input-file --composer-gyro-dropout 2>/dev/null | FileCheck %s
// RUN: composer-opt %s -split-input-file --composer-gyro-dropout 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: composer-opt %s -split-input-file --composer-gyro-dropout="p=0.25 sigma=8 tau=4 period=100" 2>/dev/null | FileCheck %s --check-prefix=OPTIONS
// RUN: composer-opt %s -split-input-file --composer-gyro-dropout --composer-lower-to-aten 2>/dev/null | FileCheck %s --check-prefix=LOWERED

// Idempotent: the dropouts are gone after one run; a second finds no site.
// RUN: composer-opt %s -split-input-file --composer-gyro-dropout 2>/dev/null > %t.once.mlir
// RUN: composer-opt %s -split-input-file --composer-gyro-dropout --composer-gyro-dropout 2>/dev/null > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Bad options.
// RUN: not composer-opt %s --composer-gyro-dropout="p=1.0" 2>&1 | FileCheck %s --check-prefix=BADP
// RUN: not composer-opt %s --composer-gyro-dropout="p=-0.5" 2>&1 | FileCheck %s --check-prefix=NEGP
// RUN: not composer-opt %s --composer-gyro-dropout="sigma=0" 2>&1 | FileCheck %s --check-prefix=BADSIGMA
// RUN: not composer-opt %s --composer-gyro-dropout="tau=0" 2>&1 | FileCheck %s --check-prefix=BADTAU
// RUN: not composer-opt %s --composer-gyro-dropout="period=-1" 2>&1 | FileCheck %s --check-prefix=BADPERIOD
// RUN: not composer-opt %s --composer-gyro-dropout="p=half" 2>&1 | FileCheck %s --check-prefix=BADNUMBER
// BADP: error: composer-gyro-dropout: p must be in [0, 1), got 1.000000e+00
// NEGP: error: composer-gyro-dropout: p must be in [0, 1), got -5.000000e-01
// BADSIGMA: error: composer-gyro-dropout: sigma and tau must be >= 1, got 0 and 16
// BADTAU: error: composer-gyro-dropout: sigma and tau must be >= 1, got 256 and 0
// BADPERIOD: error: composer-gyro-dropout: period must be >= 0 (0: one epoch), got -1
// BADNUMBER: for the -p option: 'half' value invalid

// A GPT-style stream: dropout after the embeddings (F from the embedding's
// width), a module called twice (its calls share one state), a traced
// dropout (constant flag) after a linear and an activation, one on an input
// whose type gives F.
module @stream {
  composer.parameter @tok.weight : !composer.tensor<101x32xf32>
  composer.parameter @fc.weight : !composer.tensor<48x32xf32>
  func.func @forward(%idx: !composer.tensor, %x: !composer.tensor<4x8xf32>) -> (!composer.tensor, !composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %m1 = composer.constant(-1) : !composer.int
    %w = composer.get_param @tok.weight : !composer.tensor
    %e = composer.op "aten::embedding"(%w, %idx, %m1, %false, %false) : (!composer.tensor, !composer.tensor, !composer.int, !composer.bool, !composer.bool) -> !composer.tensor
    %t = composer.get_attr "drop.training" : !composer.bool loc("drop")
    %d0 = composer.dropout %e, %t {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor loc("drop")
    %d1 = composer.dropout %d0, %t {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor loc("drop")
    %fw = composer.get_param @fc.weight : !composer.tensor
    %h = composer.linear %d1, %fw, %none : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %g = composer.gelu %h {approximate = "none"} : (!composer.tensor) -> !composer.tensor
    %d2 = composer.dropout %g, %false {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor loc("blocks.0.drop")
    %t3 = composer.get_attr "head.drop.training" : !composer.bool loc("head.drop")
    %d3 = composer.dropout %x, %t3 {p = 1.000000e-01 : f64} : (!composer.tensor<4x8xf32>, !composer.bool) -> !composer.tensor loc("head.drop")
    return %d1, %d2, %d3 : !composer.tensor, !composer.tensor, !composer.tensor
  }
}
// The stream's dropouts with the default options (p 0.5, sigma 256, tau
// 16, period 0: one epoch): masks 256 x F per module, F = 32 (the
// embedding's width), 48 (the linear's out features, through the gelu), 8
// (the input's type). The module called twice reads one set of buffers.
// The traced dropout reads its module's training flag; the others keep
// theirs. One period buffer for the model.
// CHECK-LABEL: module @stream
// CHECK: composer.buffer @drop.preselect_masks init("dropout_mask:0.5") : !composer.tensor<256x32xf32>
// CHECK-NEXT: composer.buffer @drop.selected_indices init(dense<0> : tensor<16xi64>) : !composer.tensor<16xi64>
// CHECK-NEXT: composer.buffer @drop.training_step init(dense<0> : tensor<i64>) : !composer.tensor<i64>
// CHECK-NEXT: composer.buffer @_composer_gyro_dropout.period init(dense<0> : tensor<i64>) : !composer.tensor<i64>
// CHECK-NEXT: composer.buffer @blocks.0.drop.preselect_masks init("dropout_mask:0.5") : !composer.tensor<256x48xf32>
// CHECK-NEXT: composer.buffer @blocks.0.drop.selected_indices
// CHECK-NEXT: composer.buffer @blocks.0.drop.training_step
// CHECK-NEXT: composer.buffer @head.drop.preselect_masks init("dropout_mask:0.5") : !composer.tensor<256x8xf32>
// CHECK-NEXT: composer.buffer @head.drop.selected_indices
// CHECK-NEXT: composer.buffer @head.drop.training_step
// CHECK-NOT: composer.buffer
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[IDX:.*]]: !composer.tensor, %[[X:.*]]: !composer.tensor<4x8xf32>)
// CHECK: %[[E:.*]] = composer.op "aten::embedding"
// CHECK: %[[T:.*]] = composer.get_attr "drop.training"
// CHECK: %[[M:.*]] = composer.get_param @drop.preselect_masks : <256x32xf32>
// CHECK: %[[S:.*]] = composer.get_param @drop.selected_indices : <16xi64>
// CHECK: %[[N:.*]] = composer.get_param @drop.training_step : <i64>
// CHECK: %[[P:.*]] = composer.get_param @_composer_gyro_dropout.period : <i64>
// CHECK: %[[D0:.*]] = composer.gyro_dropout %[[E]], %[[T]] masks %[[M]] selected %[[S]] step %[[N]] period %[[P]] {feature_dim = -1 : i64, p = 5.000000e-01 : f64, sigma = 256 : i64, tau = 16 : i64}
// CHECK: composer.get_param @drop.preselect_masks
// CHECK: %[[D1:.*]] = composer.gyro_dropout %[[D0]], %[[T]] masks
// CHECK: %[[G:.*]] = composer.gelu
// CHECK: %[[TT:.*]] = composer.get_attr "blocks.0.drop.training" : !composer.bool
// CHECK: %[[D2:.*]] = composer.gyro_dropout %[[G]], %[[TT]] masks {{.*}} {feature_dim = -1 : i64
// CHECK: %[[HT:.*]] = composer.get_attr "head.drop.training"
// CHECK: %[[D3:.*]] = composer.gyro_dropout %[[X]], %[[HT]] masks {{.*}} : (!composer.tensor<4x8xf32>,
// CHECK: return %[[D1]], %[[D2]], %[[D3]]
// CHECK-NOT: composer.dropout
// REPORT: remark: composer-gyro-dropout: 4 dropouts made gyro, 0 skipped

// Every option: the masks' rows and initializer, the indices, the period.
// OPTIONS-LABEL: module @stream
// OPTIONS: composer.buffer @drop.preselect_masks init("dropout_mask:0.25") : !composer.tensor<8x32xf32>
// OPTIONS-NEXT: composer.buffer @drop.selected_indices init(dense<0> : tensor<4xi64>) : !composer.tensor<4xi64>
// OPTIONS-NEXT: composer.buffer @drop.training_step init(dense<0> : tensor<i64>) : !composer.tensor<i64>
// OPTIONS-NEXT: composer.buffer @_composer_gyro_dropout.period init(dense<100> : tensor<i64>) : !composer.tensor<i64>
// OPTIONS: composer.gyro_dropout {{.*}} {feature_dim = -1 : i64, p = 2.500000e-01 : f64, sigma = 8 : i64, tau = 4 : i64}

// Lowered to aten (LowerToAten.mlir checks the composition).
// LOWERED-LABEL: module @stream
// LOWERED-NOT: composer.gyro_dropout
// LOWERED: composer.op "aten::randint"
// LOWERED-NOT: composer.gyro_dropout
// LOWERED: return

// -----

// Generic forms: nn.Dropout2d's feature_dropout on a convolution's output
// (masks over its 6 channels) and an in-place aten::dropout_ whose input
// nothing reads afterwards, after a layer norm and a residual add.
module @generic {
  composer.parameter @conv.weight : !composer.tensor<6x3x3x3xf32>
  func.func @forward(%x: !composer.tensor, %y: !composer.tensor, %r: !composer.tensor) -> (!composer.tensor, !composer.tensor) {
    %none = composer.constant(none) : !composer.none
    %p = composer.constant(2.000000e-01) : !composer.float
    %cw = composer.get_param @conv.weight : !composer.tensor
    %c = composer.conv2d %x, %cw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
    %t = composer.get_attr "features.training" : !composer.bool loc("features")
    %f = composer.op "aten::feature_dropout"(%c, %p, %t) : (!composer.tensor, !composer.float, !composer.bool) -> !composer.tensor loc("features")
    %n = composer.layer_norm %y, %none, %none {cudnn_enable = true, eps = 1.000000e-05 : f64, normalized_shape = array<i64: 24>} : (!composer.tensor, !composer.none, !composer.none) -> !composer.tensor
    %s = composer.add %r, %n {alpha = 1 : i64} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    %t2 = composer.get_attr "mlp.drop.training" : !composer.bool loc("mlp.drop")
    %d = composer.op "aten::dropout_"(%s, %p, %t2) : (!composer.tensor, !composer.float, !composer.bool) -> !composer.tensor loc("mlp.drop")
    return %f, %d : !composer.tensor, !composer.tensor
  }
}
// feature_dropout masks the channels (feature_dim 1; 6 from the
// convolution's weight); the in-place dropout_ after a residual add of a
// layer norm (24) becomes a gyro_dropout, as nothing reads its input again.
// CHECK-LABEL: module @generic
// CHECK: composer.buffer @features.preselect_masks init("dropout_mask:0.5") : !composer.tensor<256x6xf32>
// CHECK: composer.buffer @mlp.drop.preselect_masks init("dropout_mask:0.5") : !composer.tensor<256x24xf32>
// CHECK-LABEL: func.func @forward
// CHECK: %[[C:.*]] = composer.conv2d
// CHECK: %[[T:.*]] = composer.get_attr "features.training"
// CHECK: %[[F:.*]] = composer.gyro_dropout %[[C]], %[[T]] masks {{.*}} {feature_dim = 1 : i64, p = 5.000000e-01 : f64, sigma = 256 : i64, tau = 16 : i64}
// CHECK: %[[S:.*]] = composer.add
// CHECK: %[[T2:.*]] = composer.get_attr "mlp.drop.training"
// CHECK: %[[D:.*]] = composer.gyro_dropout %[[S]], %[[T2]] masks {{.*}} {feature_dim = -1 : i64
// CHECK: return %[[F]], %[[D]]
// CHECK-NOT: aten::feature_dropout
// CHECK-NOT: aten::dropout_
// REPORT: remark: composer-gyro-dropout: 2 dropouts made gyro, 0 skipped

// -----

// Skipped: attention probabilities (no feature count to find), a 1-D
// input, an in-place dropout whose input is read afterwards.
module @skipped {
  composer.parameter @fc.weight : !composer.tensor<16x16xf32>
  func.func @forward(%q: !composer.tensor, %v: !composer.tensor<16xf32>, %x: !composer.tensor<2x16xf32>) -> (!composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor<2x16xf32>) {
    %t = composer.get_attr "training" : !composer.bool
    %a = composer.softmax %q {dim = -1 : i64} : (!composer.tensor) -> !composer.tensor
    %d0 = composer.dropout %a, %t {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
    %d1 = composer.dropout %v, %t {p = 1.000000e-01 : f64} : (!composer.tensor<16xf32>, !composer.bool) -> !composer.tensor
    %d2 = composer.dropout %x, %t inplace {p = 1.000000e-01 : f64} : (!composer.tensor<2x16xf32>, !composer.bool) -> !composer.tensor
    return %d0, %d1, %d2, %x : !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor<2x16xf32>
  }
}
// CHECK-LABEL: module @skipped
// CHECK-NOT: composer.buffer
// CHECK-COUNT-3: composer.dropout
// CHECK-NOT: composer.gyro_dropout
// REPORT: warning: composer-gyro-dropout: 0 dropouts made gyro, 3 skipped
// REPORT: note: 1 skipped: feature dimension unknown
// REPORT: note: 1 skipped: input has no feature dimension beside the batch
// REPORT: note: 1 skipped: in-place dropout whose input is read afterwards

// -----

// No dropout: nothing to do, a warning.
module @none {
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    return %x : !composer.tensor
  }
}
// CHECK-LABEL: module @none
// CHECK-NOT: composer.buffer
// REPORT: warning: composer-gyro-dropout: 0 dropouts made gyro, 0 skipped

// -----

// A dropout after GPT-2's Conv1D (weight [in, out], sizes as a trace
// records them): its features are the weight's dimension 1.
module {
  composer.parameter @h.c_fc.weight : !composer.tensor<48x96xf32>
  composer.parameter @h.c_fc.bias : !composer.tensor<96xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %false = composer.constant(false) : !composer.bool
    %zero = composer.constant(0) : !composer.int
    %one = composer.constant(1) : !composer.int
    %two = composer.constant(2) : !composer.int
    %last = composer.constant(-1) : !composer.int
    %out = composer.constant(96) : !composer.int
    %d0 = composer.op "aten::size"(%x, %zero) : (!composer.tensor, !composer.int) -> !composer.int
    %d1 = composer.op "aten::size"(%x, %one) : (!composer.tensor, !composer.int) -> !composer.int
    %d2 = composer.op "aten::size"(%x, %two) : (!composer.tensor, !composer.int) -> !composer.int
    %flat = composer.op "prim::ListConstruct"(%last, %d2) : (!composer.int, !composer.int) -> !composer.list<!composer.int>
    %x2 = composer.view %x, %flat : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %w = composer.get_param @h.c_fc.weight : !composer.tensor
    %b = composer.get_param @h.c_fc.bias : !composer.tensor
    %h2 = composer.op "aten::addmm"(%b, %x2, %w, %one, %one) : (!composer.tensor, !composer.tensor, !composer.tensor, !composer.int, !composer.int) -> !composer.tensor
    %sizes = composer.op "prim::ListConstruct"(%d0, %d1, %out) : (!composer.int, !composer.int, !composer.int) -> !composer.list<!composer.int>
    %h = composer.view %h2, %sizes : (!composer.tensor, !composer.list<!composer.int>) -> !composer.tensor
    %train = composer.get_attr "training" : !composer.bool
    %y = composer.dropout %h, %train {p = 1.000000e-01 : f64} : (!composer.tensor, !composer.bool) -> !composer.tensor
    return %y : !composer.tensor
  }
}
// CHECK-LABEL: composer.parameter @h.c_fc.weight : !composer.tensor<48x96xf32>
// CHECK: composer.buffer @preselect_masks init("dropout_mask:0.5") : !composer.tensor<256x96xf32>
// CHECK: composer.gyro_dropout {{.*}} {feature_dim = -1 : i64

// REPORT: remark: composer-gyro-dropout: 1 dropouts made gyro, 0 skipped
