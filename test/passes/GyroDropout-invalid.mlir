// RUN: composer-opt %s -split-input-file -verify-diagnostics

// gyro_dropout's verifier.
func.func @bad_rate(%x: !composer.tensor, %t: !composer.bool, %m: !composer.tensor, %s: !composer.tensor, %n: !composer.tensor, %p: !composer.tensor) -> !composer.tensor {
  // expected-error @+1 {{p must be in [0, 1), got 1.000000e+00}}
  %0 = composer.gyro_dropout %x, %t masks %m selected %s step %n period %p {feature_dim = -1 : i64, p = 1.000000e+00 : f64, sigma = 4 : i64, tau = 2 : i64} : (!composer.tensor, !composer.bool, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
  return %0 : !composer.tensor
}

// -----

func.func @bad_tau(%x: !composer.tensor, %t: !composer.bool, %m: !composer.tensor, %s: !composer.tensor, %n: !composer.tensor, %p: !composer.tensor) -> !composer.tensor {
  // expected-error @+1 {{sigma and tau must be >= 1, got 4 and 0}}
  %0 = composer.gyro_dropout %x, %t masks %m selected %s step %n period %p {feature_dim = -1 : i64, p = 5.000000e-01 : f64, sigma = 4 : i64, tau = 0 : i64} : (!composer.tensor, !composer.bool, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
  return %0 : !composer.tensor
}

// -----

func.func @bad_dim(%x: !composer.tensor, %t: !composer.bool, %m: !composer.tensor, %s: !composer.tensor, %n: !composer.tensor, %p: !composer.tensor) -> !composer.tensor {
  // expected-error @+1 {{feature_dim must be 1 or -1, got 2}}
  %0 = composer.gyro_dropout %x, %t masks %m selected %s step %n period %p {feature_dim = 2 : i64, p = 5.000000e-01 : f64, sigma = 4 : i64, tau = 2 : i64} : (!composer.tensor, !composer.bool, !composer.tensor, !composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
  return %0 : !composer.tensor
}

// -----

func.func @bad_masks(%x: !composer.tensor, %t: !composer.bool, %m: !composer.tensor<8x3xf32>, %s: !composer.tensor, %n: !composer.tensor, %p: !composer.tensor) -> !composer.tensor {
  // expected-error @+1 {{masks must be sigma (4) x F, got '!composer.tensor<8x3xf32>'}}
  %0 = composer.gyro_dropout %x, %t masks %m selected %s step %n period %p {feature_dim = -1 : i64, p = 5.000000e-01 : f64, sigma = 4 : i64, tau = 2 : i64} : (!composer.tensor, !composer.bool, !composer.tensor<8x3xf32>, !composer.tensor, !composer.tensor, !composer.tensor) -> !composer.tensor
  return %0 : !composer.tensor
}

// -----

func.func @bad_selected(%x: !composer.tensor, %t: !composer.bool, %m: !composer.tensor, %s: !composer.tensor<3xi64>, %n: !composer.tensor, %p: !composer.tensor) -> !composer.tensor {
  // expected-error @+1 {{selected must hold tau (2) indices, got '!composer.tensor<3xi64>'}}
  %0 = composer.gyro_dropout %x, %t masks %m selected %s step %n period %p {feature_dim = -1 : i64, p = 5.000000e-01 : f64, sigma = 4 : i64, tau = 2 : i64} : (!composer.tensor, !composer.bool, !composer.tensor, !composer.tensor<3xi64>, !composer.tensor, !composer.tensor) -> !composer.tensor
  return %0 : !composer.tensor
}
