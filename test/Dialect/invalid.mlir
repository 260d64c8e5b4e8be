// RUN: composer-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Tensor type parsing
//===----------------------------------------------------------------------===//

// expected-error@+1 {{expected a tensor dtype (f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8) or 'unk', got 'i7'}}
func.func @bad_dtype(%arg0: !composer.tensor<2x3xi7>)

// -----

//===----------------------------------------------------------------------===//
// Dtype and memory format attributes
//===----------------------------------------------------------------------===//

// expected-error@+1 {{expected a dtype (ui8, i8, i16, i32, i64, f16, f32, f64, i1, bf16), got 'complex'}}
func.func @bad_dtype_name() attributes {dtype = #composer.dtype<complex>}

// -----

// expected-error@+1 {{expected a dtype (ui8, i8, i16, i32, i64, f16, f32, f64, i1, bf16), got 'si8'}}
func.func @bad_dtype_signed_name() attributes {dtype = #composer.dtype<si8>}

// -----

// The number is not a name: dtypes print by name only.
// expected-error@+1 {{expected valid keyword}}
func.func @dtype_by_number() attributes {dtype = #composer.dtype<15>}

// -----

// expected-error@+1 {{expected a memory format (contiguous, preserve, channels_last, channels_last_3d), got 'nhwc'}}
func.func @bad_memory_format_name() attributes {format = #composer.memory_format<nhwc>}

// -----

func.func @to_dtype_int_dtype(%x: !composer.tensor) {
  // expected-error@+1 {{'composer.to_dtype' op attribute 'dtype' failed to satisfy constraint}}
  %0 = composer.to_dtype %x {dtype = 15 : i64, non_blocking = false, copy = false} : (!composer.tensor) -> !composer.tensor
  return
}

// -----

func.func @to_dtype_memory_format_as_dtype(%x: !composer.tensor) {
  // expected-error@+1 {{'composer.to_dtype' op attribute 'dtype' failed to satisfy constraint}}
  %0 = composer.to_dtype %x {dtype = #composer.memory_format<preserve>, non_blocking = false, copy = false} : (!composer.tensor) -> !composer.tensor
  return
}

// -----

func.func @contiguous_int_memory_format(%x: !composer.tensor) {
  // expected-error@+1 {{'composer.contiguous' op attribute 'memory_format' failed to satisfy constraint}}
  %0 = composer.contiguous %x {memory_format = 2 : i64} : (!composer.tensor) -> !composer.tensor
  return
}

// -----

func.func @softmax_int_dtype(%x: !composer.tensor) {
  // expected-error@+1 {{'composer.softmax' op attribute 'dtype' failed to satisfy constraint}}
  %0 = composer.softmax %x {dim = 1 : i64, dtype = 6 : i64} : (!composer.tensor) -> !composer.tensor
  return
}

// -----

// Signed integers are not tensor dtypes; only signless ones and ui8.
// expected-error@+1 {{expected a tensor dtype (f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8) or 'unk', got 'si8'}}
func.func @bad_dtype_signed(%arg0: !composer.tensor<*xsi8>)

// -----

// expected-error@+1 {{expected a tensor dtype (f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8) or 'unk', got 'ui16'}}
func.func @bad_dtype_unsigned(%arg0: !composer.tensor<4xui16>)

// -----

// expected-error@+1 {{expected a tensor dtype (f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8) or 'unk', got 'index'}}
func.func @bad_dtype_index(%arg0: !composer.tensor<4xindex>)

// -----

// expected-error@+1 {{expected a tensor dtype (f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8) or 'unk', got '!composer.int'}}
func.func @bad_dtype_composer_type(%arg0: !composer.tensor<4x!composer.int>)

// -----

// expected-error@+1 {{expected a tensor dtype (f16, bf16, f32, f64, i1, i8, i16, i32, i64, ui8) or 'unk', got 'tensor<2xf32>'}}
func.func @bad_dtype_builtin_tensor(%arg0: !composer.tensor<*xtensor<2xf32>>)

// -----

// expected-error@+1 {{expected 'x' in dimension list}}
func.func @unranked_without_x(%arg0: !composer.tensor<*>)

// -----

// expected-error@+1 {{unknown  type `foo` in dialect `composer`}}
func.func @unknown_type(%arg0: !composer.foo)

//===----------------------------------------------------------------------===//
// composer.parameter / composer.buffer
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'composer.parameter' op needs a non-empty state_dict key}}
composer.parameter @"" : !composer.tensor<2xf32>

// -----

// expected-error@+1 {{'composer.parameter' op state_dict key '.weight' has an empty path component}}
composer.parameter @".weight" : !composer.tensor<2xf32>

// -----

// expected-error@+1 {{'composer.parameter' op state_dict key 'layer1..weight' has an empty path component}}
composer.parameter @"layer1..weight" : !composer.tensor<2xf32>

// -----

// expected-error@+1 {{'composer.buffer' op state_dict key 'bn1.' has an empty path component}}
composer.buffer @"bn1." : !composer.tensor<2xf32>

// -----

// expected-error@+1 {{'composer.parameter' op needs a fully known shape and dtype, got '!composer.tensor<?x3xf32>'}}
composer.parameter @"fc.weight" : !composer.tensor<?x3xf32>

// -----

// expected-error@+1 {{'composer.parameter' op needs a fully known shape and dtype, got '!composer.tensor<*xf32>'}}
composer.parameter @"fc.weight" : !composer.tensor<*xf32>

// -----

// A shape a pass option could produce (10^12 channels squared): no tensor.
// expected-error@+1 {{'composer.parameter' op has more elements than 64 bits count: '!composer.tensor<1000000000000x1000000000000xf32>'}}
composer.parameter @"se.fc1.weight" : !composer.tensor<1000000000000x1000000000000xf32>

// -----

// expected-error@+1 {{'composer.buffer' op needs a fully known shape and dtype, got '!composer.tensor'}}
composer.buffer @"bn1.running_mean" : !composer.tensor

// -----

// expected-error@+1 {{'composer.parameter' op attribute 'type' failed to satisfy constraint: type attribute of composer tensor}}
composer.parameter @"fc.weight" : !composer.int

// -----

func.func @state_in_function() {
  // expected-error@+1 {{'composer.parameter' op expects parent op 'builtin.module'}}
  composer.parameter @w : !composer.tensor<2xf32>
  return
}

// -----

// expected-note@+1 {{see existing symbol definition here}}
composer.parameter @w : !composer.tensor<2xf32>
// expected-error@+1 {{redefinition of symbol named 'w'}}
composer.buffer @w : !composer.tensor<2xf32>

//===----------------------------------------------------------------------===//
// composer.get_param
//===----------------------------------------------------------------------===//

// -----

func.func @get_param_missing() {
  // expected-error@+1 {{'composer.get_param' op 'missing' does not name a composer.parameter or composer.buffer}}
  %0 = composer.get_param @missing : !composer.tensor
  return
}

// -----

func.func @get_param_of_function() {
  // expected-error@+1 {{'composer.get_param' op 'get_param_of_function' does not name a composer.parameter or composer.buffer}}
  %0 = composer.get_param @get_param_of_function : !composer.tensor
  return
}

// -----

composer.parameter @w : !composer.tensor<2x3xf32>
func.func @get_param_shape_contradiction() {
  // expected-error@+1 {{'composer.get_param' op result type '!composer.tensor<3x2xf32>' contradicts the declared type '!composer.tensor<2x3xf32>'}}
  %0 = composer.get_param @w : !composer.tensor<3x2xf32>
  return
}

// -----

composer.buffer @b : !composer.tensor<2x3xf32>
func.func @get_param_dtype_contradiction() {
  // expected-error@+1 {{'composer.get_param' op result type '!composer.tensor<*xf16>' contradicts the declared type '!composer.tensor<2x3xf32>'}}
  %0 = composer.get_param @b : !composer.tensor<*xf16>
  return
}

// -----

composer.parameter @w : !composer.tensor<2x3xf32>
func.func @get_param_rank_contradiction() {
  // expected-error@+1 {{'composer.get_param' op result type '!composer.tensor<?x?x?xf32>' contradicts the declared type '!composer.tensor<2x3xf32>'}}
  %0 = composer.get_param @w : !composer.tensor<?x?x?xf32>
  return
}

//===----------------------------------------------------------------------===//
// composer.get_attr / composer.set_attr
//===----------------------------------------------------------------------===//

// -----

func.func @get_attr_empty_path() {
  // expected-error@+1 {{'composer.get_attr' op expected a dotted attribute path, got ''}}
  %0 = composer.get_attr "" : !composer.bool
  return
}

// -----

func.func @get_attr_leading_dot() {
  // expected-error@+1 {{'composer.get_attr' op expected a dotted attribute path, got '.training'}}
  %0 = composer.get_attr ".training" : !composer.bool
  return
}

// -----

func.func @set_attr_empty_component(%t: !composer.bool) {
  // expected-error@+1 {{'composer.set_attr' op expected a dotted attribute path, got 'layer1..training'}}
  composer.set_attr "layer1..training", %t : !composer.bool
  return
}

// -----

func.func @set_attr_trailing_dot(%t: !composer.bool) {
  // expected-error@+1 {{'composer.set_attr' op expected a dotted attribute path, got 'bn1.'}}
  composer.set_attr "bn1.", %t : !composer.bool
  return
}

//===----------------------------------------------------------------------===//
// composer.constant
//===----------------------------------------------------------------------===//

// -----

func.func @constant_bool_as_int() {
  // expected-error@+1 {{'composer.constant' op value true is not a constant of type '!composer.int'}}
  %0 = composer.constant(true) : !composer.int
  return
}

// -----

func.func @constant_float_as_int() {
  // expected-error@+1 {{'composer.constant' op value 1.500000e+00 : f64 is not a constant of type '!composer.int'}}
  %0 = composer.constant(1.5) : !composer.int
  return
}

// -----

func.func @constant_str_as_float() {
  // expected-error@+1 {{'composer.constant' op value "x" is not a constant of type '!composer.float'}}
  %0 = composer.constant("x") : !composer.float
  return
}

// -----

// A bool is no more a float than it is an int (it must not become -1.0).
func.func @constant_bool_as_float() {
  // expected-error@+1 {{'composer.constant' op value true is not a constant of type '!composer.float'}}
  %0 = composer.constant(true) : !composer.float
  return
}

// -----

func.func @constant_float_as_bool() {
  // expected-error@+1 {{'composer.constant' op value 1.000000e+00 : f64 is not a constant of type '!composer.bool'}}
  %0 = composer.constant(1.0) : !composer.bool
  return
}

// -----

func.func @constant_str_as_number() {
  // expected-error@+1 {{'composer.constant' op value "x" is not a constant of type '!composer.number'}}
  %0 = composer.constant("x") : !composer.number
  return
}

// -----

func.func @constant_none_as_str() {
  // expected-error@+1 {{'composer.constant' op value unit is not a constant of type '!composer.str'}}
  %0 = composer.constant(none) : !composer.str
  return
}

// -----

func.func @constant_int_as_device() {
  // expected-error@+1 {{'composer.constant' op value 1 : i64 is not a constant of type '!composer.device'}}
  %0 = composer.constant(1) : !composer.device
  return
}

// -----

func.func @constant_int_as_none() {
  // expected-error@+1 {{'composer.constant' op value 1 : i64 is not a constant of type '!composer.none'}}
  %0 = composer.constant(1) : !composer.none
  return
}

// -----

func.func @constant_int_as_list() {
  // expected-error@+1 {{'composer.constant' op value 1 : i64 is not a constant of type '!composer.list<!composer.int>'}}
  %0 = composer.constant(1) : !composer.list<!composer.int>
  return
}

// -----

func.func @constant_str_as_tuple() {
  // expected-error@+1 {{'composer.constant' op value "a" is not a constant of type '!composer.tuple<!composer.str>'}}
  %0 = composer.constant("a") : !composer.tuple<!composer.str>
  return
}

// -----

func.func @constant_list_as_tensor() {
  // expected-error@+1 {{'composer.constant' op value [1] is not a constant of type '!composer.tensor'}}
  %0 = composer.constant([1]) : !composer.tensor
  return
}

// -----

func.func @constant_tensor_shape() {
  // expected-error@+1 {{'composer.constant' op tensor value of type 'tensor<2xf32>' contradicts result type '!composer.tensor<3xf32>'}}
  %0 = composer.constant(dense<1.0> : tensor<2xf32>) : !composer.tensor<3xf32>
  return
}

// -----

func.func @constant_tensor_rank() {
  // expected-error@+1 {{'composer.constant' op tensor value of type 'tensor<2xf32>' contradicts result type '!composer.tensor<2x1xf32>'}}
  %0 = composer.constant(dense<1.0> : tensor<2xf32>) : !composer.tensor<2x1xf32>
  return
}

// -----

func.func @constant_tensor_dtype() {
  // expected-error@+1 {{'composer.constant' op tensor value of type 'tensor<2xf32>' contradicts result type '!composer.tensor<*xf64>'}}
  %0 = composer.constant(dense<1.0> : tensor<2xf32>) : !composer.tensor<*xf64>
  return
}

// -----

func.func @constant_of_dtype_type() {
  // expected-error@+1 {{'composer.constant' op cannot hold a constant of type '!composer.dtype'}}
  %0 = composer.constant(6) : !composer.dtype
  return
}

// -----

func.func @constant_of_builtin_type() {
  // expected-error@+1 {{'composer.constant' op cannot hold a constant of type 'i64'}}
  %0 = composer.constant(1) : i64
  return
}

//===----------------------------------------------------------------------===//
// composer.op
//===----------------------------------------------------------------------===//

// -----

func.func @generic_no_namespace() {
  // expected-error@+1 {{'composer.op' op expected a node kind 'namespace::name', got 'size'}}
  composer.op "size"() : () -> ()
  return
}

// -----

func.func @generic_empty_namespace() {
  // expected-error@+1 {{'composer.op' op expected a node kind 'namespace::name', got '::size'}}
  composer.op "::size"() : () -> ()
  return
}

// -----

func.func @generic_empty_name() {
  // expected-error@+1 {{'composer.op' op expected a node kind 'namespace::name', got 'aten::'}}
  composer.op "aten::"() : () -> ()
  return
}

// -----

func.func @generic_empty_kind() {
  // expected-error@+1 {{'composer.op' op expected a node kind 'namespace::name', got ''}}
  composer.op ""() : () -> ()
  return
}

//===----------------------------------------------------------------------===//
// composer.if
//===----------------------------------------------------------------------===//

// -----

func.func @if_then_yield_type(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.if' op then region yields ('!composer.bool') but the op expects ('!composer.int')}}
  %0 = composer.if %c -> (!composer.int) {
    composer.yield %c : !composer.bool
  } else {
    composer.yield %n : !composer.int
  }
  return
}

// -----

func.func @if_else_yield_count(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.if' op else region yields () but the op expects ('!composer.int')}}
  %0 = composer.if %c -> (!composer.int) {
    composer.yield %n : !composer.int
  } else {
    composer.yield
  }
  return
}

// -----

// Tensor types need only not contradict each other.
func.func @if_yield_tensor_contradiction(%c: !composer.bool, %x: !composer.tensor<2xf32>) {
  // expected-error@+1 {{'composer.if' op then region yields ('!composer.tensor<2xf32>') but the op expects ('!composer.tensor<3xf32>')}}
  %0 = composer.if %c -> (!composer.tensor<3xf32>) {
    composer.yield %x : !composer.tensor<2xf32>
  } else {
    composer.yield %x : !composer.tensor<2xf32>
  }
  return
}

// -----

func.func @if_region_arguments(%c: !composer.bool) {
  // expected-error@+1 {{'composer.if' op regions take no arguments}}
  composer.if %c {
  ^bb0(%a: !composer.int):
    composer.yield
  } else {
    composer.yield
  }
  return
}

// -----

func.func @if_without_yield(%c: !composer.bool) {
  // expected-error@+1 {{'composer.if' op then region must end with composer.yield}}
  composer.if %c {
    %0 = composer.constant(1) : !composer.int
  } else {
    composer.yield
  }
  return
}

// -----

// An empty block is diagnosed, not dereferenced.
func.func @if_empty_block(%c: !composer.bool) {
  // expected-error-re@+1 {{{{empty block: expect at least a terminator|then region must end with composer.yield}}}}
  composer.if %c {
  ^bb0:
  } else {
    composer.yield
  }
  return
}

// -----

func.func @yield_outside(%c: !composer.bool) {
  // expected-error@+1 {{'composer.yield' op expects parent op to be one of 'composer.if, composer.loop, composer.checkpoint, composer.checkpoint_call'}}
  composer.yield
}

//===----------------------------------------------------------------------===//
// composer.loop
//===----------------------------------------------------------------------===//

// -----

func.func @loop_carries_vs_returns(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.loop' op carries ('!composer.int') but returns ('!composer.float')}}
  %0 = composer.loop %n, %c iter_args(%n : !composer.int) -> (!composer.float) {
  ^bb0(%i: !composer.int, %a: !composer.int):
    composer.yield %c, %a : !composer.bool, !composer.int
  }
  return
}

// -----

func.func @loop_returns_without_carrying(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.loop' op carries () but returns ('!composer.int')}}
  %0 = composer.loop %n, %c -> (!composer.int) {
  ^bb0(%i: !composer.int):
    composer.yield %c, %n : !composer.bool, !composer.int
  }
  return
}

// -----

func.func @loop_body_without_index(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.loop' op body must take the index (!composer.int) and the carried values}}
  %0 = composer.loop %n, %c iter_args(%n : !composer.int) -> (!composer.int) {
  ^bb0(%a: !composer.int):
    composer.yield %c, %a : !composer.bool, !composer.int
  }
  return
}

// -----

func.func @loop_body_index_type(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.loop' op body must take the index (!composer.int) and the carried values}}
  composer.loop %n, %c {
  ^bb0(%i: !composer.bool):
    composer.yield %c : !composer.bool
  }
  return
}

// -----

func.func @loop_body_no_arguments(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.loop' op body must take the index (!composer.int) and the carried values}}
  composer.loop %n, %c {
    composer.yield %c : !composer.bool
  }
  return
}

// -----

func.func @loop_yield_without_condition(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.loop' op body yields ('!composer.int') but the op expects ('!composer.bool', '!composer.int')}}
  %0 = composer.loop %n, %c iter_args(%n : !composer.int) -> (!composer.int) {
  ^bb0(%i: !composer.int, %a: !composer.int):
    composer.yield %a : !composer.int
  }
  return
}

// -----

func.func @loop_yield_condition_type(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.loop' op body yields ('!composer.int', '!composer.int') but the op expects ('!composer.bool', '!composer.int')}}
  %0 = composer.loop %n, %c iter_args(%n : !composer.int) -> (!composer.int) {
  ^bb0(%i: !composer.int, %a: !composer.int):
    composer.yield %a, %a : !composer.int, !composer.int
  }
  return
}

// -----

func.func @loop_yield_nothing(%c: !composer.bool, %n: !composer.int) {
  // expected-error@+1 {{'composer.loop' op body yields () but the op expects ('!composer.bool')}}
  composer.loop %n, %c {
  ^bb0(%i: !composer.int):
    composer.yield
  }
  return
}

// -----

// An empty block is diagnosed, not dereferenced.
func.func @loop_empty_block(%c: !composer.bool, %n: !composer.int) {
  // expected-error-re@+1 {{{{empty block: expect at least a terminator|body must end with composer.yield}}}}
  composer.loop %n, %c {
  ^bb0(%i: !composer.int):
  }
  return
}

//===----------------------------------------------------------------------===//
// composer.conv2d
//===----------------------------------------------------------------------===//

// -----

func.func @conv2d_stride_count(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op stride needs 2 values, got 1}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_stride_value(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op stride values must be >= 1, got 0}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 0>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_padding_count(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op padding needs 2 values, got 3}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_padding_value(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op padding values must be >= 0, got -1}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, -1>, dilation = array<i64: 1, 1>, groups = 1 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_dilation_count(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op dilation needs 2 values, got 0}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64>, groups = 1 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_dilation_value(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op dilation values must be >= 1, got 0}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 0, 1>, groups = 1 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_groups_zero(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op groups must be >= 1, got 0}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 0 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

// The groups check does not need a known weight.
func.func @conv2d_groups_negative(%x: !composer.tensor, %w: !composer.tensor, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op groups must be >= 1, got -2}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = -2 : i64}
      : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_groups_divisibility(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op out_channels 8 is not divisible by groups 3}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 3 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_weight_rank(%x: !composer.tensor, %w: !composer.tensor<8x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.conv2d' op weight must have rank 4, got '!composer.tensor<8x3x3xf32>'}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @conv2d_bias_type(%x: !composer.tensor, %w: !composer.tensor<8x3x3x3xf32>, %b: !composer.int) {
  // expected-error@+1 {{'composer.conv2d' op operand #2 must be tensor, optional tensor or None, but got '!composer.int'}}
  %0 = composer.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}
      : (!composer.tensor, !composer.tensor<8x3x3x3xf32>, !composer.int) -> !composer.tensor
  return
}

//===----------------------------------------------------------------------===//
// composer.convolution
//===----------------------------------------------------------------------===//

// -----

func.func @convolution_no_spatial_dims(%x: !composer.tensor, %w: !composer.tensor, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op expected 1 to 3 spatial dimensions, got 0}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64>, padding = array<i64>, dilation = array<i64>,
      transposed = false, output_padding = array<i64>, groups = 1 : i64, benchmark = false,
      deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @convolution_four_spatial_dims(%x: !composer.tensor, %w: !composer.tensor, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op expected 1 to 3 spatial dimensions, got 4}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 1, 1, 1, 1>, padding = array<i64: 0, 0, 0, 0>,
      dilation = array<i64: 1, 1, 1, 1>, transposed = false, output_padding = array<i64: 0, 0, 0, 0>,
      groups = 1 : i64, benchmark = false, deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
  return
}

// -----

// The stride sets the spatial rank; the other windows follow it.
func.func @convolution_padding_count(%x: !composer.tensor, %w: !composer.tensor, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op padding needs 1 values, got 2}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1>,
      transposed = false, output_padding = array<i64: 0>, groups = 1 : i64, benchmark = false,
      deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @convolution_stride_value(%x: !composer.tensor, %w: !composer.tensor, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op stride values must be >= 1, got 0}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 0, 1, 1>, padding = array<i64: 0, 0, 0>, dilation = array<i64: 1, 1, 1>,
      transposed = false, output_padding = array<i64: 0, 0, 0>, groups = 1 : i64, benchmark = false,
      deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @convolution_dilation_value(%x: !composer.tensor, %w: !composer.tensor, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op dilation values must be >= 1, got -1}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: -1>,
      transposed = false, output_padding = array<i64: 0>, groups = 1 : i64, benchmark = false,
      deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @convolution_weight_rank(%x: !composer.tensor, %w: !composer.tensor<4x3x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op weight must have rank 3, got '!composer.tensor<4x3x3x3xf32>'}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>,
      transposed = false, output_padding = array<i64: 0>, groups = 1 : i64, benchmark = false,
      deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor<4x3x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @convolution_groups_divisibility(%x: !composer.tensor, %w: !composer.tensor<4x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op out_channels 4 is not divisible by groups 3}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>,
      transposed = false, output_padding = array<i64: 0>, groups = 3 : i64, benchmark = false,
      deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor<4x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

func.func @convolution_groups_zero(%x: !composer.tensor, %w: !composer.tensor<4x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op groups must be >= 1, got 0}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>,
      transposed = false, output_padding = array<i64: 0>, groups = 0 : i64, benchmark = false,
      deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor<4x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

// A transposed convolution still needs at least one group.
func.func @convolution_transposed_groups_zero(%x: !composer.tensor, %w: !composer.tensor<4x3x3xf32>, %b: !composer.none) {
  // expected-error@+1 {{'composer.convolution' op groups must be >= 1, got 0}}
  %0 = composer.convolution %x, %w, %b {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>,
      transposed = true, output_padding = array<i64: 0>, groups = 0 : i64, benchmark = false,
      deterministic = false, cudnn_enabled = true, allow_tf32 = true}
      : (!composer.tensor, !composer.tensor<4x3x3xf32>, !composer.none) -> !composer.tensor
  return
}

// -----

module {
  // expected-error@+1 {{'composer.parameter' op channels_last needs a 4-D tensor, got '!composer.tensor<8xf32>'}}
  composer.parameter @bias channels_last : !composer.tensor<8xf32>
}
