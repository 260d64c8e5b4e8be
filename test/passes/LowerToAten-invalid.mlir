// RUN: composer-opt %s -split-input-file -verify-diagnostics --composer-lower-to-aten -o /dev/null

// A filter of unknown size cannot be lowered: no pattern applies, and the
// conversion fails at the op.
module {
  func.func @unknown_filter(%x: !composer.tensor, %f: !composer.tensor) -> !composer.tensor {
    // expected-error@+1 {{failed to legalize operation 'composer.blur_pool2d' that was explicitly marked illegal}}
    %y = composer.blur_pool2d %x, %f {stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %y : !composer.tensor
  }
}
