// RUN: composer-opt %s -split-input-file -verify-diagnostics

// The method ops' verifiers.
func.func @bad_method(%f: !composer.tensor, %t: !composer.bool) -> !composer.tensor {
  // expected-error @+1 {{method must be 'block' or 'sample', got 'layer'}}
  %0 = composer.stochastic_depth %f, %t {drop_rate = 2.000000e-01 : f64, method = "layer"} : (!composer.tensor, !composer.bool) -> !composer.tensor
  return %0 : !composer.tensor
}

// -----

func.func @bad_rate(%f: !composer.tensor, %t: !composer.bool) -> !composer.tensor {
  // expected-error @+1 {{drop_rate must be in [0, 1], got 1.5}}
  %0 = composer.stochastic_depth %f, %t {drop_rate = 1.500000e+00 : f64, method = "sample"} : (!composer.tensor, !composer.bool) -> !composer.tensor
  return %0 : !composer.tensor
}

// -----

func.func @bad_keep_rate(%t: !composer.bool) -> !composer.bool {
  // expected-error @+1 {{drop_rate must be in [0, 1], got -5.000000e-01}}
  %0 = composer.stochastic_depth_keep %t {drop_rate = -5.000000e-01 : f64} : (!composer.bool) -> !composer.bool
  return %0 : !composer.bool
}
